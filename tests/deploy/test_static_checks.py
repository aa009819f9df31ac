"""Offline linters on every deployment file: checkov, hadolint, cfn-lint, the compose schema.

checkov runs with --skip-download and CKV_SKIP_PACKAGE_UPDATE_CHECK=True (it reaches the network
otherwise). Every skip must be written in the scanned file with a reason. Each linter also gets a
broken copy of a file, to show that it bites.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .conftest import DIGEST_IMAGE, OVERLAYS, ROOT, missing

DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"
CFN = ROOT / "deploy" / "cloud" / "aws-batch" / "job-definition.yaml"
COMPOSE = ROOT / "deploy" / "compose" / "compose.yaml"
COMPOSE_COMMAND = [
    "run",
    "--input",
    "/in",
    "--output",
    "/out",
    "--ledger",
    "/ledger/ledger.jsonl",
]


def _checkov(tool: Callable[[str], Path], framework: str, *files: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "CKV_SKIP_PACKAGE_UPDATE_CHECK": "True", "BC_SKIP_MAPPING": "TRUE"}
    argv = [str(tool("checkov")), "--skip-download", "--framework", framework, "-o", "json"]
    for f in files:
        argv += ["-f", str(f)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
    reports = json.loads(done.stdout)
    return reports if isinstance(reports, list) else [reports]


def _assert_clean(reports: list[dict[str, Any]], min_passed: int) -> None:
    passed = 0
    for report in reports:
        assert "summary" in report, report  # an empty-summary dict means nothing was scanned
        summary = report["summary"]
        assert summary["parsing_errors"] == 0, report
        failed = report["results"]["failed_checks"]
        assert summary["failed"] == 0, [(c["check_id"], c["resource"]) for c in failed]
        for skip in report["results"].get("skipped_checks", []):
            reason = (skip["check_result"].get("suppress_comment") or "").strip()
            assert len(reason) >= 20 and not reason.startswith("No comment"), skip["check_id"]
        passed += summary["passed"]
    assert passed >= min_passed


def test_checkov_dockerfile(tool: Callable[[str], Path]) -> None:
    """checkov finds no failed check in the Dockerfile; each skip carries a reason."""
    _assert_clean(_checkov(tool, "dockerfile", DOCKERFILE), min_passed=20)


def test_checkov_kustomize_output(tool: Callable[[str], Path], kustomized: dict[str, Path]) -> None:
    """checkov finds no failed check in any overlay's kustomize output."""
    _assert_clean(_checkov(tool, "kubernetes", *kustomized.values()), min_passed=100)


def test_checkov_rendered_output(tool: Callable[[str], Path], rendered: dict[str, Path]) -> None:
    """checkov finds no failed check in `ragwarrant k8s render` output (image by digest)."""
    _assert_clean(_checkov(tool, "kubernetes", *rendered.values()), min_passed=100)


def test_checkov_flags_a_privileged_pod(
    tool: Callable[[str], Path], rendered: dict[str, Path], tmp_path: Path
) -> None:
    """checkov does fail a rendered Job made privileged (the scan really looks at the pod)."""
    docs = [d for d in yaml.safe_load_all(rendered["job"].read_text()) if d]
    job = next(d for d in docs if d["kind"] == "Job")
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privileged"] = True
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all(docs))
    (report,) = _checkov(tool, "kubernetes", bad)
    assert "CKV_K8S_16" in {c["check_id"] for c in report["results"]["failed_checks"]}


def test_checkov_cloudformation(tool: Callable[[str], Path]) -> None:
    """checkov parses the AWS Batch template with no failure (it has no Batch-specific check)."""
    (report,) = _checkov(tool, "cloudformation", CFN)
    if "results" not in report:
        # checkov 3 prints a bare summary when no check applies to any resource in the file.
        assert report == {**report, "failed": 0, "parsing_errors": 0}, report
    else:
        _assert_clean([report], min_passed=0)


def test_hadolint_clean(tool: Callable[[str], Path]) -> None:
    """hadolint reports nothing on the Dockerfile."""
    done = subprocess.run(
        [str(tool("hadolint")), str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout


def test_hadolint_bites(tool: Callable[[str], Path], tmp_path: Path) -> None:
    """hadolint fails a Dockerfile with an unpinned apt-get install."""
    bad = tmp_path / "Dockerfile"
    bad.write_text(DOCKERFILE.read_text() + "\nRUN apt-get update && apt-get install -y curl\n")
    done = subprocess.run(
        [str(tool("hadolint")), str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "DL3008" in done.stdout


def _cfn_lint(tool: Callable[[str], Path], path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool("cfn-lint")), str(path)], capture_output=True, text=True, check=False
    )


def test_cfn_lint_clean(tool: Callable[[str], Path]) -> None:
    """cfn-lint reports nothing on the AWS Batch template."""
    done = _cfn_lint(tool, CFN)
    assert done.returncode == 0, done.stdout + done.stderr


def test_cfn_lint_bites(tool: Callable[[str], Path], tmp_path: Path) -> None:
    """cfn-lint fails the template with a misspelt container property."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(CFN.read_text().replace("ReadonlyRootFilesystem:", "ReadOnlyRootFileSystem:"))
    assert _cfn_lint(tool, bad).returncode != 0


def _compose_config(path: Path, *more: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("docker-compose")
    if exe is None:
        missing("docker-compose (Debian package; validates against its compose schema)")
    assert exe is not None
    (path.parent / "out").mkdir(exist_ok=True)
    (path.parent / "ledger").mkdir(exist_ok=True)
    files = [a for f in (path, *more) for a in ("-f", str(f))]
    return subprocess.run(
        [exe, *files, "config"],
        capture_output=True,
        text=True,
        check=False,
        cwd=path.parent,
    )


def test_compose_file_validates_with_the_hardened_profile(tmp_path: Path) -> None:
    """The compose file passes the compose schema and carries the issue's hardened profile."""
    copy = tmp_path / "compose.yaml"
    shutil.copy(COMPOSE, copy)
    shutil.copytree(ROOT / "examples", tmp_path.parent / "examples", dirs_exist_ok=True)
    done = _compose_config(copy)
    assert done.returncode == 0, done.stderr
    service = yaml.safe_load(done.stdout)["services"]["ragwarrant"]
    assert service["read_only"] is True
    assert service["cap_drop"] == ["ALL"]
    assert service["security_opt"] == ["no-new-privileges:true"]
    assert service["network_mode"] == "none"
    assert service["user"] == "65532:65532"
    assert any(t.startswith("/tmp") for t in service["tmpfs"])
    assert service["mem_limit"] and service["pids_limit"] > 0
    mounts = {v["target"]: v for v in service["volumes"]}
    assert mounts["/in"]["read_only"] is True and not mounts["/out"].get("read_only")
    assert Path(mounts["/in"]["source"]).name == "ragtruth-generators"
    # The evidence ledger: its own writable bind mount, passed to the job.
    assert mounts["/ledger"]["type"] == "bind" and not mounts["/ledger"].get("read_only")
    assert Path(mounts["/ledger"]["source"]) == tmp_path / "ledger"
    assert service["command"] == COMPOSE_COMMAND
    # No key needed by default: no secret, no --signing-key.
    assert "secrets" not in service and "--signing-key" not in service["command"]


def test_compose_signing_override_adds_the_key_as_a_secret(tmp_path: Path) -> None:
    """compose.yaml + compose.signing.yaml: the key is a compose secret passed as --signing-key;
    everything else (profile, mounts, the rest of the command) is unchanged."""
    for name in ("compose.yaml", "compose.signing.yaml"):
        shutil.copy(COMPOSE.parent / name, tmp_path / name)
    shutil.copytree(ROOT / "examples", tmp_path.parent / "examples", dirs_exist_ok=True)
    (tmp_path / "signing.pem").write_text("not read by `config`\n")
    alone = _compose_config(tmp_path / "compose.yaml")
    both = _compose_config(tmp_path / "compose.yaml", tmp_path / "compose.signing.yaml")
    assert alone.returncode == 0 and both.returncode == 0, alone.stderr + both.stderr
    plain = yaml.safe_load(alone.stdout)["services"]["ragwarrant"]
    signed_config = yaml.safe_load(both.stdout)
    signed = signed_config["services"]["ragwarrant"]
    assert signed["command"] == [
        *COMPOSE_COMMAND,
        "--signing-key",
        "/run/secrets/signing_key",
    ]
    assert signed["secrets"] in (["signing_key"], [{"source": "signing_key"}])
    assert Path(signed_config["secrets"]["signing_key"]["file"]) == tmp_path / "signing.pem"
    for service in (signed, plain):  # the merge may reorder the list
        service["volumes"] = sorted(service["volumes"], key=lambda v: v["target"])
    assert {k: v for k, v in signed.items() if k not in ("command", "secrets")} == {
        k: v for k, v in plain.items() if k != "command"
    }


def test_compose_schema_bites(tmp_path: Path) -> None:
    """The compose validation rejects a misspelt service key."""
    bad = tmp_path / "compose.yaml"
    bad.write_text(
        COMPOSE.read_text().replace("read_only: true\n    cap_drop", "readonly: true\n    cap_drop")
    )
    assert "readonly" in bad.read_text()
    assert _compose_config(bad).returncode != 0


def test_rendered_image_is_the_one_asked_for(rendered: dict[str, Path]) -> None:
    """Sanity of the checkov input: the rendered Job uses the digest image it was given."""
    assert DIGEST_IMAGE in rendered["job"].read_text()
    assert set(rendered) == set(OVERLAYS)


def test_dockerfile_runtime_stage_facts() -> None:
    """Numeric USER 65532:65532, no HEALTHCHECK, digest-pinned overridable base, job entrypoint."""
    text = DOCKERFILE.read_text()
    runtime = text.split(" AS runtime")[1]
    assert re.search(r"^USER 65532:65532$", runtime, re.M)
    assert "HEALTHCHECK" not in re.sub(r"#.*", "", text)
    assert re.search(r"^ARG BASE_IMAGE=localhost/ragwarrant-base:bookworm$", text, re.M)
    assert re.findall(r"^FROM (\S+)", text, re.M) == ["${BASE_IMAGE}", "${BASE_IMAGE}"]
    assert "--require-hashes" in text
    assert 'ENTRYPOINT ["ragwarrant"]' in runtime
    assert 'CMD ["run", "--input", "/in", "--output", "/out"]' in runtime
    assert "COPY examples/ragtruth-generators/ /in/" in runtime


def test_ci_builds_the_dockerfile_default_base() -> None:
    """The Dockerfile's default base is the one CI builds: `make image` (deploy.mk,
    build-image.sh) and bootstrap-base.sh take their default from the Dockerfile's ARG line, and
    no file names another default."""
    read_default = "sed -n 's/^ARG BASE_IMAGE=//p' deploy/docker/Dockerfile"
    for rel in ("deploy/deploy.mk", "scripts/deploy/build-image.sh",
                "scripts/deploy/bootstrap-base.sh"):  # fmt: skip
        text = (ROOT / rel).read_text()
        assert read_default in text, rel
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert "localhost/ragwarrant-base:bookworm" not in code, rel
    done = subprocess.run(
        ["sh", "-c", read_default], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "localhost/ragwarrant-base:bookworm"


def test_lock_pins_every_runtime_dependency_with_hashes() -> None:
    """requirements.lock pins each pyproject dependency (==) and every pin carries a sha256."""
    import tomllib

    lock = (ROOT / "deploy" / "docker" / "requirements.lock").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", lock, re.M))
    norm = {re.sub(r"[-_.]+", "-", k).lower() for k in pins}
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for dep in deps:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", dep).group()).lower()  # type: ignore[union-attr]
        assert name in norm, (
            f"{name} is in pyproject.toml but not in requirements.lock: run scripts/deploy/lock.sh"
        )
    blocks = re.split(r"\n(?=[A-Za-z0-9_.-]+==)", lock)
    for block in blocks[1:] if not re.match(r"[A-Za-z]", blocks[0]) else blocks:
        assert "--hash=sha256:" in block, block.splitlines()[0]
    assert {"setuptools", "wheel"} <= norm


def test_dockerignore_keeps_the_context_small() -> None:
    """The build context is an allow-list: no venv, git history, outputs or build tree."""
    lines = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert lines[0] == "*"
    allowed = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    assert allowed == {
        "pyproject.toml",
        "README.md",
        "job",
        "examples",
        "deploy/docker/requirements.lock",
        "deploy/docker/wheels",
        "deploy/docker/slim.txt",
        "deploy/docker/slim_venv.py",
    }
