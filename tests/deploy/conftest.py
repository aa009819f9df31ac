"""Fixtures of the deployment checks: repository paths, the lint/validate tools, rendered manifests.

The tools (kubernetes-validate, checkov, cfn-lint, hadolint, docker-compose) are installed by
scripts/install-ci-tools.sh into build/deploy-tools/ (checkov in a venv of its own), never into the
project's venv. A missing tool skips its test on a developer machine; with
RAGWARRANT_REQUIRE_DEPLOY_TOOLS=1 (set by .ci/run and `make deploy-check`) it fails instead, so CI
cannot go green by skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "build" / "deploy-tools"
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("job", "cronjob", "indexed", "job-signed")
# The workload kind of each overlay; job-signed is the Job plus the signing-key Secret mount.
OVERLAY_KIND = {"job": "job", "cronjob": "cronjob", "indexed": "indexed", "job-signed": "job"}
SIGNED = {"job-signed"}
SIGNING_SECRET = "ragwarrant-signing-key"
LEDGER_CLAIM = "ragwarrant-ledger"
# The oldest version we support (ragwarrant.k8s.MIN_KUBERNETES_VERSION) first, then newer ones.
KUBERNETES_VERSIONS = ("1.29.0", "1.33.0", "1.35.0", "1.37.0")
EXAMPLE = ROOT / "examples" / "ragtruth-generators"


def _required() -> bool:
    return os.environ.get("RAGWARRANT_REQUIRE_DEPLOY_TOOLS") == "1"


def missing(what: str) -> None:
    """Skip (developer machine) or fail (CI) because ``what`` is not installed."""
    message = f"{what} is not installed; run scripts/install-ci-tools.sh"
    if _required():
        pytest.fail(message)
    pytest.skip(message)


def find_tool(name: str) -> Path:
    """Return the path of a deployment tool, or skip/fail when it is absent."""
    for candidate in (TOOLS / "venv" / "bin" / name, TOOLS / "checkov" / "bin" / name):
        if candidate.is_file():
            return candidate
    found = shutil.which(name)
    if found is None:
        missing(name)
    return Path(found)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def tool() -> Callable[[str], Path]:
    """Return ``find_tool``."""
    return find_tool


@pytest.fixture(scope="session")
def k8s_client() -> Any:
    """Return ``kubernetes.client`` (the ``k8s`` extra), or skip/fail."""
    try:
        import kubernetes.client
    except ImportError:
        missing("the kubernetes client (pip install -e '.[k8s]')")
    return kubernetes.client


@pytest.fixture(scope="session")
def kustomized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Return, per overlay, a file holding ``kubectl kustomize deploy/k8s/overlays/<overlay>``."""
    kubectl = find_tool("kubectl")
    out = tmp_path_factory.mktemp("kustomize")
    files = {}
    for overlay in OVERLAYS:
        done = subprocess.run(
            [str(kubectl), "kustomize", str(K8S / "overlays" / overlay)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        files[overlay] = out / f"{overlay}.yaml"
        files[overlay].write_text(done.stdout)
    return files


def load_docs(path: Path) -> list[dict[str, Any]]:
    """Return the YAML documents of a manifest file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def workload(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the single Job or CronJob of a manifest stream."""
    found = [d for d in docs if d["kind"] in ("Job", "CronJob")]
    assert len(found) == 1, [d["kind"] for d in docs]
    return found[0]


def job_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """Return the JobSpec of a Job or of a CronJob's job template."""
    return obj["spec"]["jobTemplate"]["spec"] if obj["kind"] == "CronJob" else obj["spec"]


def expected_example_outcome() -> tuple[str, int]:
    """Return (run class, exit code) that examples/README.md states for the shipped example.

    Raises:
        AssertionError: the README no longer has its "The run class is **X** and the exit code
            is **N**." sentence.
    """
    text = (ROOT / "examples" / "README.md").read_text()
    found = re.findall(
        r"The run class is \*\*([A-Z]+)\*\* and the exit code is \*\*(\d+)\*\*", text
    )
    assert len(found) == 1, "examples/README.md must state the example's run class and exit code"
    return found[0][0], int(found[0][1])


def _markdown_tables(path: Path) -> list[tuple[list[str], list[list[str]]]]:
    """Return each markdown table of ``path`` as (lower-case header cells, body rows)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    header: list[str] | None = None
    for line in path.read_text().splitlines():
        if not line.lstrip().startswith("|"):
            header = None
            continue
        cells = [c.strip().strip("`*").strip().lower() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            tables.append((header, []))
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
            tables[-1][1].append(cells)
    return tables


def exit_code_rows() -> dict[int, bool]:
    """Return {code: retryable} from the `run` table of contracts/exit-codes.md.

    That table is the one with a ``code`` and a ``retry?`` column (cells start ``yes``/``no``);
    other tables (``verify``'s codes) are not scheduled jobs and are skipped.

    Raises:
        AssertionError: the file, the table or a readable cell is missing.
    """
    path = ROOT / "contracts" / "exit-codes.md"
    assert path.is_file(), f"{path} is missing"
    runs = [
        (h, body)
        for h, body in _markdown_tables(path)
        if "code" in h and any(c.startswith("retry") for c in h)
    ]
    assert len(runs) == 1, f"{path}: expected one table with `code` and `retry?` columns"
    header, body = runs[0]
    code_col = header.index("code")
    retry_col = next(i for i, c in enumerate(header) if c.startswith("retry"))
    rows: dict[int, bool] = {}
    for cells in body:
        code, retry = cells[code_col], cells[retry_col]
        assert re.fullmatch(r"\d+", code), f"{path}: not a code: {cells!r}"
        assert retry.startswith(("yes", "no")), f"{path}: retry? must start yes/no: {cells!r}"
        rows[int(code)] = retry.startswith("yes")
    assert rows, f"{path}: the `run` table is empty"
    return rows


def other_table_codes() -> set[int]:
    """Return the codes of the tables of contracts/exit-codes.md without a `retry?` column."""
    path = ROOT / "contracts" / "exit-codes.md"
    return {
        int(cells[h.index("code")])
        for h, body in _markdown_tables(path)
        if "code" in h and not any(c.startswith("retry") for c in h)
        for cells in body
        if re.fullmatch(r"\d+", cells[h.index("code")])
    }


def exit_code_table() -> list[int]:
    """Return the codes listed in contracts/exit-codes.md, in table order."""
    return list(exit_code_rows())


DIGEST_IMAGE = "registry.example/ragwarrant@sha256:" + "0" * 64


def render(*argv: str, verb: str = "render") -> int:
    """Run ``ragwarrant k8s VERB ARGV`` through the command module's own parser."""
    import argparse

    from ragwarrant.commands import k8s

    parser = argparse.ArgumentParser(prog="ragwarrant")
    k8s.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["k8s", verb, *argv])
    return int(args.handler(args))


@pytest.fixture(scope="session")
def rendered(k8s_client: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Return, per overlay, a file written by ``ragwarrant k8s render`` for the shipped example.

    The ``job-signed`` entry is ``--kind job --signing-key-secret ragwarrant-signing-key``.
    """
    out = tmp_path_factory.mktemp("render")
    strict = K8S / "overlays" / "indexed" / "contracts" / "contract-1.yaml"
    files = {}
    for overlay in OVERLAYS:
        kind = OVERLAY_KIND[overlay]
        contracts = [str(EXAMPLE / "contract.yaml")]
        if kind == "indexed":
            contracts.append(str(strict))
        argv = ["--kind", kind, "--image", DIGEST_IMAGE, "--evidence-dir", str(EXAMPLE)]
        for c in contracts:
            argv += ["--contract", c]
        if overlay in SIGNED:
            argv += ["--signing-key-secret", SIGNING_SECRET]
        files[overlay] = out / f"{overlay}.yaml"
        assert render(*argv, "--out", str(files[overlay])) == 0
    return files


# Pod Security Standards "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards,
# policy version latest): the volume types it allows, and the checks below.
RESTRICTED_VOLUME_TYPES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
     "projected", "secret"}
)  # fmt: skip
_SECCOMP_ALLOWED = {"RuntimeDefault", "Localhost"}


def restricted_violations(
    pod: dict[str, Any], containers: list[dict[str, Any]], volumes: list[dict[str, Any]]
) -> list[str]:
    """Return what keeps a pod from Pod Security "restricted" ([] when it meets it).

    ``pod`` is the pod-level securityContext (plus ``hostNetwork``/``hostPID``/``hostIPC`` when
    set), ``containers`` the containers, ``volumes`` the pod's volumes.
    """
    found = []
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            found.append(flag)
    for volume in volumes:
        if not set(volume) - {"name"} <= RESTRICTED_VOLUME_TYPES:
            found.append(f"volume {volume['name']}: type not allowed")
    pod_sc = pod.get("securityContext", {})
    for c in containers:
        sc, name = c.get("securityContext", {}), c.get("name", "?")
        if sc.get("privileged"):
            found.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation is not false")
        if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is not True:
            found.append(f"{name}: runAsNonRoot is not true")
        if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
            found.append(f"{name}: runAsUser 0")
        profile = sc.get("seccompProfile", pod_sc.get("seccompProfile", {}))
        if profile.get("type") not in _SECCOMP_ALLOWED:
            found.append(f"{name}: seccompProfile is not RuntimeDefault or Localhost")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            found.append(f"{name}: capabilities do not drop ALL")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: adds capabilities")
        if c.get("ports") and any(p.get("hostPort") for p in c["ports"]):
            found.append(f"{name}: hostPort")
    return found
