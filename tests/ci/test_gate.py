"""The CI integrations, run locally: the action's gate script and the GitLab template's script."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

GATE = REPO / "scripts" / "ci" / "gate.sh"
PROMOTE_EXAMPLE = REPO / "examples" / "ragtruth-generators"
INCONCLUSIVE_EXAMPLE = REPO / "examples" / "handbook-exports"
BIN = Path(sys.executable).parent


def _gate(tmp_path: Path, example: Path, **env: str) -> subprocess.CompletedProcess[str]:
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    full = {
        **os.environ,
        "RAGWARRANT_INPUT": str(example),
        "RAGWARRANT_OUTPUT": str(tmp_path / "out"),
        "RAGWARRANT_CMD": str(BIN / "ragwarrant"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        **env,
    }
    return subprocess.run(
        ["bash", str(GATE)], env=full, capture_output=True, text=True, check=False, timeout=300
    )


def _outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "outputs").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_promote_passes_and_writes_the_step_summary(tmp_path: Path) -> None:
    """PROMOTE: exit 0, outputs class/exit-code/outcome, the report in the step summary."""
    done = _gate(tmp_path, PROMOTE_EXAMPLE)
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp_path) == {"class": "PROMOTE", "exit-code": "0", "outcome": "pass"}
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### ragwarrant: PROMOTE (exit 0) — step pass")
    assert "PROMOTE: candidate gpt-3.5-turbo-0613 may replace the baseline" in summary
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_inconclusive_fails_by_default_with_its_exit_code(tmp_path: Path) -> None:
    """INCONCLUSIVE fails the step by default and exits 11."""
    done = _gate(tmp_path, INCONCLUSIVE_EXAMPLE)
    assert done.returncode == 11
    assert _outputs(tmp_path) == {"class": "INCONCLUSIVE", "exit-code": "11", "outcome": "fail"}


def test_inconclusive_may_pass(tmp_path: Path) -> None:
    """With RAGWARRANT_INCONCLUSIVE=pass (the action's inconclusive input) it passes."""
    done = _gate(tmp_path, INCONCLUSIVE_EXAMPLE, RAGWARRANT_INCONCLUSIVE="pass")
    assert done.returncode == 0
    assert _outputs(tmp_path)["outcome"] == "pass"


def test_error_is_a_failure_with_the_error_code(tmp_path: Path) -> None:
    """A missing contract is ERROR (exit 78), never a pass."""
    empty = tmp_path / "in"
    empty.mkdir()
    done = _gate(tmp_path, empty, RAGWARRANT_INCONCLUSIVE="pass")
    assert done.returncode == 78
    assert _outputs(tmp_path) == {"class": "ERROR", "exit-code": "78", "outcome": "fail"}


def test_bad_inconclusive_setting_is_a_usage_error(tmp_path: Path) -> None:
    """An inconclusive setting other than pass/fail is refused before running (exit 64)."""
    done = _gate(tmp_path, PROMOTE_EXAMPLE, RAGWARRANT_INCONCLUSIVE="maybe")
    assert done.returncode == 64 and not (tmp_path / "out").exists()


def test_action_runs_the_gate_script_and_applies_its_outcome() -> None:
    """action.yml is a composite action whose gate step calls scripts/ci/gate.sh with the inputs."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")
    assert "scripts/ci/gate.sh" in gate["run"]
    assert gate["env"]["RAGWARRANT_INCONCLUSIVE"] == "${{ inputs.inconclusive }}"
    upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))
    assert upload["if"].startswith("always()")
    assert set(action["outputs"]) == {"class", "exit-code", "outcome"}
    assert action["inputs"]["inconclusive"]["default"] == "fail"


def test_gitlab_template_script_runs_locally(tmp_path: Path) -> None:
    """The template's script and after_script, run by bash on the example, PROMOTE (exit 0)."""
    template = yaml.safe_load((REPO / "ci" / "gitlab" / "ragwarrant.gitlab-ci.yml").read_text())
    job = template[".ragwarrant"]
    assert job["allow_failure"] == {"exit_codes": [11]}
    work = tmp_path / "project"
    shutil.copytree(PROMOTE_EXAMPLE, work / "in")
    env = {**os.environ, **job["variables"], "PATH": f"{BIN}:{os.environ['PATH']}"}
    script = "set -e\n" + "\n".join(job["script"])
    done = subprocess.run(
        ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    after = subprocess.run(
        ["bash", "-c", "\n".join(job["after_script"])],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "decision: PROMOTE (exit 0)" in after.stdout
    assert (work / "ragwarrant-out" / "decision.json").is_file()
    junit = job["artifacts"]["reports"]["junit"].replace("${RAGWARRANT_OUTPUT}", "ragwarrant-out")
    assert (work / junit).is_file()


def _stub_python(tmp_path: Path) -> tuple[Path, Path]:
    """A ``python`` on PATH that records its arguments instead of installing anything."""
    bin_dir, log = tmp_path / "stub-bin", tmp_path / "python-args"
    bin_dir.mkdir()
    stub = bin_dir / "python"
    stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{log}"\n')
    stub.chmod(0o755)
    return bin_dir, log


def test_action_pins_every_action_by_commit() -> None:
    """Every `uses:` names a full 40-hex commit: a moved tag cannot change what runs."""
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses), uses


def test_action_installs_its_own_source_by_default(tmp_path: Path) -> None:
    """With no `package:` the install step installs the action's own directory, never a name
    from the package index."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["inputs"]["package"]["default"] == ""
    install = next(s for s in action["runs"]["steps"] if "pip install" in s.get("run", ""))
    assert install["env"]["PACKAGE"] == "${{ inputs.package }}"
    bin_dir, log = _stub_python(tmp_path)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PACKAGE": "", "GITHUB_ACTION_PATH": str(REPO)}
    subprocess.run(["bash", "-c", install["run"]], env=env, check=True, timeout=60)
    args = log.read_text().splitlines()
    assert args[:3] == ["-m", "pip", "install"] and args[-1] == str(REPO)


def _gitlab_job() -> dict:
    template = yaml.safe_load((REPO / "ci" / "gitlab" / "ragwarrant.gitlab-ci.yml").read_text())
    return template[".ragwarrant"]


def test_gitlab_template_installs_nothing_by_name(tmp_path: Path) -> None:
    """Without ragwarrant in the image and without RAGWARRANT_SOURCE the job stops (exit 78)
    before pip runs; with RAGWARRANT_SOURCE it installs exactly that source."""
    job = _gitlab_job()
    assert "RAGWARRANT_PACKAGE" not in job["variables"]
    assert job["variables"]["RAGWARRANT_SOURCE"] == ""
    bin_dir, log = _stub_python(tmp_path)
    env = {**job["variables"], "PATH": f"{bin_dir}:/usr/bin:/bin"}
    install = job["script"][0]
    done = subprocess.run(
        ["bash", "-c", install], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 78 and "RAGWARRANT_SOURCE" in done.stderr
    assert not log.exists()
    env["RAGWARRANT_SOURCE"] = str(REPO)
    subprocess.run(["bash", "-c", install], env=env, check=True, timeout=60)
    assert log.read_text().splitlines()[-1] == str(REPO)
