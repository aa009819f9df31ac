"""The real image under the compose profile, with podman: PROMOTE, REJECT, invalid contract.

Runs only with RAGWARRANT_CONTAINER_TEST=1 (`make container-test`, after `make image`): it needs
root, podman with runc, and the image $RAGWARRANT_IMAGE (default localhost/ragwarrant:dev).
Two ways in: `podman run` with the compose profile spelt out, and deploy/compose/compose.yaml
itself through podman-compose (`up --exit-code-from`), as a user runs it with docker compose.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import EXAMPLE, ROOT, expected_example_outcome

IMAGE = os.environ.get("RAGWARRANT_IMAGE", "localhost/ragwarrant:dev")
CONF = os.environ.get("CONTAINERS_CONF", str(ROOT / "deploy" / "podman" / "containers.conf"))
UID = 65532
CLASS_CODES = {"PROMOTE": 0, "REJECT": 10, "INCONCLUSIVE": 11, "BLOCK": 12}
# The compose file's profile, as podman flags.
PROFILE = [
    "--read-only",
    "--tmpfs",
    "/tmp:size=256m,mode=1777",
    "--network",
    "none",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--user",
    f"{UID}:{UID}",
    "--memory",
    "2g",
    "--pids-limit",
    "256",
]

pytestmark = pytest.mark.skipif(
    os.environ.get("RAGWARRANT_CONTAINER_TEST") != "1",
    reason="container test: run `make image container-test`",
)


def _env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": CONF}


@pytest.fixture(scope="module", autouse=True)
def _image_present() -> None:
    done = subprocess.run(["podman", "image", "exists", IMAGE], env=_env(), check=False)
    assert done.returncode == 0, f"{IMAGE} is missing: run `make image` first"


@pytest.fixture()
def workdir(tmp_path: Path) -> Iterator[Path]:
    tmp_path.chmod(0o755)
    yield tmp_path


def _outdir(parent: Path) -> Path:
    out = parent / "out"
    out.mkdir()
    os.chown(out, UID, UID)
    return out


def _podman_run(out: Path, input_dir: Path | None) -> subprocess.CompletedProcess[str]:
    mounts = ["-v", f"{out}:/out"]
    if input_dir is not None:
        mounts += ["-v", f"{input_dir}:/in:ro"]
    return subprocess.run(
        ["podman", "run", "--rm", *PROFILE, *mounts, IMAGE],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
        check=False,
    )


def _edited(parent: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    target = parent / "input"
    shutil.copytree(EXAMPLE, target)
    contract = target / "contract.yaml"
    data = yaml.safe_load(contract.read_text())
    edit(data)
    contract.write_text(yaml.safe_dump(data, sort_keys=False))
    return target


def _reject(c: dict[str, Any]) -> None:
    c["candidates"] = [x for x in c["candidates"] if x["policy_id"] == "llama-2-7b-chat"]
    c["quality_metrics"][0]["margin_abs"] = 0.0001


def _invalid(c: dict[str, Any]) -> None:
    c["statistics"]["alpha"] = "five percent"


def _reference_code(input_dir: Path, out: Path) -> int:
    """The same input decided by the project's own venv, outside any container."""
    import sys

    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ragwarrant",
            "run",
            "--input",
            str(input_dir),
            "--output",
            str(out),
        ],
        capture_output=True,
        check=False,
    ).returncode


def _decision(out: Path) -> dict[str, Any]:
    return json.loads((out / "decision.json").read_text())


def test_image_configuration() -> None:
    """The image runs as 65532:65532, has the job as entrypoint and no healthcheck."""
    done = subprocess.run(
        ["podman", "image", "inspect", IMAGE],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    config = json.loads(done.stdout)[0]["Config"]
    assert config["User"] == f"{UID}:{UID}"
    assert config["Entrypoint"] == ["ragwarrant"]
    assert config["Cmd"] == ["run", "--input", "/in", "--output", "/out"]
    assert "Healthcheck" not in config or not config["Healthcheck"]


def test_embedded_example_decides_like_the_shipped_one(workdir: Path) -> None:
    """A bare run (no /in mount) decides the embedded example, as the venv does outside."""
    out = _outdir(workdir)
    done = _podman_run(out, None)
    code = done.returncode
    assert code in CLASS_CODES.values(), done.stderr[-2000:]
    decision = _decision(out)
    assert (decision["run_class"], code) == expected_example_outcome()
    assert CLASS_CODES[decision["run_class"]] == code == decision["exit_code"]
    assert code == _reference_code(EXAMPLE, workdir / "reference")
    assert all(p.stat().st_uid == UID for p in out.iterdir())


def test_reject_exits_10(workdir: Path) -> None:
    """A clearly worse candidate held to a 0.0001 margin: REJECT, exit 10."""
    out = _outdir(workdir)
    done = _podman_run(out, _edited(workdir, _reject))
    assert done.returncode == 10, done.stderr[-2000:]
    assert _decision(out)["run_class"] == "REJECT"


def test_invalid_contract_exits_78(workdir: Path) -> None:
    """A contract failing validation: exit 78, and the error is recorded in decision.json."""
    out = _outdir(workdir)
    done = _podman_run(out, _edited(workdir, _invalid))
    assert done.returncode == 78, done.stderr[-2000:]
    assert _decision(out)["error"]["exit_code"] == 78


def _podman_compose() -> str:
    for candidate in (ROOT / "build" / "deploy-tools" / "venv" / "bin" / "podman-compose",):
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("podman-compose")
    assert found, "podman-compose is missing: run scripts/install-ci-tools.sh"
    return found


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        ("example", None, None),
        ("reject", _reject, 10),
        ("invalid", _invalid, 78),
    ],
)
def test_compose_up_exit_code_from(
    workdir: Path, name: str, edit: Any, expected: int | None
) -> None:
    """`compose up --exit-code-from ragwarrant` on deploy/compose/compose.yaml: the job's code."""
    compose_dir = workdir / "deploy" / "compose"
    compose_dir.mkdir(parents=True)
    shutil.copy(ROOT / "deploy" / "compose" / "compose.yaml", compose_dir / "compose.yaml")
    examples = workdir / "examples"
    examples.mkdir()
    if edit is None:
        shutil.copytree(EXAMPLE, examples / name)
        expected = _reference_code(EXAMPLE, workdir / "reference")
    else:
        _edited(workdir, edit).rename(examples / name)
    out = _outdir(compose_dir)
    env = {**_env(), "RAGWARRANT_IMAGE": IMAGE, "RAGWARRANT_INPUT": name}
    project = ["-p", f"ragwarrant-test-{name}", "-f", "compose.yaml"]
    try:
        done = subprocess.run(
            [_podman_compose(), *project, "up", "--no-build", "--exit-code-from", "ragwarrant"],
            capture_output=True,
            text=True,
            env=env,
            cwd=compose_dir,
            timeout=600,
            check=False,
        )
    finally:
        subprocess.run(
            [_podman_compose(), *project, "down"],
            capture_output=True,
            env=env,
            cwd=compose_dir,
            check=False,
        )
    assert done.returncode == expected, done.stdout[-2000:] + done.stderr[-2000:]
    assert _decision(out)["exit_code"] == expected
