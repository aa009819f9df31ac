"""The job under the hardened profile, for real: bubblewrap as uid 65532, no capabilities.

Profile: drop to uid/gid 65532 with ``setpriv`` (no groups, empty bounding/inheritable sets,
no_new_privs) and only then start ``bwrap``: new user, mount, pid, ipc, uts, cgroup and network
namespaces (only an isolated loopback), ``--cap-drop ALL``, a read-only root holding only /usr, the
Python runtime and the project, a tmpfs ``/tmp``, the input read-only at ``/in``, the output at
``/out``, and a writable ``/dev/termination-log`` as Kubernetes provides it.

The host directories are first bind-mounted, as root, into a private staging tmpfs inside an
``unshare --mount`` namespace: uid 65532 cannot traverse /root (where pyenv's Python lives) or a CI
clone's parents, and the sandbox must not need it to. Needs root, util-linux and bubblewrap.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ragwarrant.outputs import OUTPUT_FILES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ragtruth-generators"
UID = 65532
DECISION_CODES = {"PROMOTE": 0, "REJECT": 10, "INCONCLUSIVE": 11, "BLOCK": 12}
OUTPUTS = set(OUTPUT_FILES)


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (setpriv to uid 65532, private mount namespace)"
    for tool in ("bwrap", "setpriv", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed; run scripts/install-ci-tools.sh"
    return None


@pytest.fixture(scope="module", autouse=True)
def _require_sandbox() -> None:
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("RAGWARRANT_REQUIRE_DEPLOY_TOOLS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def _tree_digest(root: Path) -> dict[str, tuple[int, str]]:
    """Return {relative path: (mode, sha256)} of every entry under ``root``."""
    out: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        out[rel] = (st.st_mode, digest)
    return out


class Sandbox:
    """Runs a command in the hardened profile; host paths are staged, then bound at their path."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.out = workdir / "out"
        self.out.mkdir()
        os.chown(self.out, UID, UID)
        self.termination_log = workdir / "termination-log"
        self.termination_log.touch()
        os.chown(self.termination_log, UID, UID)
        venv = Path(sys.prefix)
        python_home = Path(os.path.realpath(sys.base_prefix))
        # (host path, path in the sandbox, writable)
        self.binds: list[tuple[Path, str, bool]] = [
            (python_home, str(python_home), False),
            (venv, str(venv), False),
            (ROOT / "job", str(ROOT / "job"), False),
            (self.out, "/out", True),
            (self.termination_log, "/dev/termination-log", True),
        ]

    def run(
        self,
        input_dir: Path,
        argv: list[str],
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` with ``input_dir`` at /in; return the completed process (text output)."""
        binds = [*self.binds, (input_dir, "/in", False)]
        stage = self.workdir / "stage"
        stage.mkdir(exist_ok=True)
        prepare = [f"mount -t tmpfs -o mode=0755 ragwarrant-stage {stage}"]
        bwrap = [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--symlink",
            "usr/bin",
            "/bin",
            "--symlink",
            "usr/sbin",
            "/sbin",
            "--ro-bind",
            "/etc/ld.so.cache",
            "/etc/ld.so.cache",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
        ]
        for i, (host, target, writable) in enumerate(binds):
            staged = stage / str(i)
            kind = "-d" if host.is_dir() else "-f"
            make = f"mkdir {staged}" if host.is_dir() else f"touch {staged}"
            prepare += [f"test {kind} {host}", make, f"mount --bind {host} {staged}"]
            if not writable:
                prepare.append(f"mount -o remount,bind,ro {staged}")
            bwrap += ["--bind" if writable else "--ro-bind", str(staged), target]
        env = {
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "PATH": f"{sys.prefix}/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(extra_env or {}),
        }
        bwrap += ["--remount-ro", "/", "--chdir", "/out", "--clearenv"]
        for key, value in env.items():
            bwrap += ["--setenv", key, value]
        bwrap += argv
        drop = [
            "setpriv",
            f"--reuid={UID}",
            f"--regid={UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        script = " && ".join(prepare) + ' && exec "$@"'
        return subprocess.run(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-euc",
                script,
                "sh",
                *drop,
                *bwrap,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


@pytest.fixture()
def sandbox() -> Iterator[Sandbox]:
    # Not tmp_path: pytest's base directory is private to root, and nothing under it is bound.
    workdir = Path(tempfile.mkdtemp(prefix="ragwarrant-hardened-"))
    workdir.chmod(0o755)  # the staging tmpfs inside it is opened by uid 65532
    try:
        yield Sandbox(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


PROBE = r"""
import json, os, socket
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
def writable(path):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        os.unlink(path)
        return True
    except OSError as exc:
        return exc.errno
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    outside = True
except OSError as exc:
    outside = exc.errno
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "caps": {k: status[k].strip() for k in status if k.startswith("Cap")},
    "no_new_privs": status["NoNewPrivs"].strip(),
    "root": writable("/probe"), "usr": writable("/usr/probe"), "in": writable("/in/probe"),
    "tmp": writable("/tmp/probe"), "out": writable("/out/probe"),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "outside": outside,
}))
"""


def test_sandbox_is_the_hardened_profile(sandbox: Sandbox) -> None:
    """In the sandbox: uid/gid 65532, no capabilities, read-only root and /in, no network."""
    done = sandbox.run(EXAMPLE, [sys.executable, "-c", PROBE])
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["uid"], seen["gid"]) == (UID, UID)
    assert seen["groups"] in ([], [UID])
    assert set(seen["caps"].values()) == {"0000000000000000"}, seen["caps"]
    assert seen["no_new_privs"] == "1"
    erofs = 30
    assert (seen["root"], seen["usr"], seen["in"]) == (erofs, erofs, erofs)
    assert seen["tmp"] is True and seen["out"] is True
    assert seen["interfaces"] == ["lo"]
    assert seen["outside"] is not True
    assert os.listdir(sandbox.out) == []


def _ragwarrant() -> list[str]:
    return [sys.executable, "-m", "ragwarrant", "run", "--input", "/in", "--output", "/out"]


def _expected_code(input_dir: Path, tmp: Path) -> int:
    """Return the exit code of the same input run without any sandbox (the reference)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragwarrant",
            "run",
            "--input",
            str(input_dir),
            "--output",
            str(tmp),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode


def _run_and_check(sandbox: Sandbox, input_dir: Path, reference_out: Path) -> tuple[int, dict]:
    inputs_before = _tree_digest(input_dir)
    package_before = sorted(p.as_posix() for p in (ROOT / "job").rglob("*"))
    done = sandbox.run(input_dir, _ragwarrant())
    # Nothing written outside /out: the input is byte-identical, no file appeared in the package
    # (its contents are not compared: other sessions may edit it while the tests run), and /out
    # holds the outputs only, each owned by the job's uid.
    assert _tree_digest(input_dir) == inputs_before, "the input changed during the hardened run"
    assert sorted(p.as_posix() for p in (ROOT / "job").rglob("*")) == package_before
    written = list(sandbox.out.rglob("*"))
    assert written, "the job wrote nothing to /out"
    assert all(p.lstat().st_uid == UID and not p.is_symlink() for p in written), written
    assert done.returncode == _expected_code(input_dir, reference_out), done.stderr[-2000:]
    decision = json.loads((sandbox.out / "decision.json").read_text())
    return done.returncode, decision


def expected_example_outcome() -> tuple[str, int]:
    """Return (run class, exit code) that examples/README.md states for the shipped example.

    Raises:
        AssertionError: the README no longer has its "The run class is **X** and the exit code
            is **N**." sentence.
    """
    import re

    text = (ROOT / "examples" / "README.md").read_text()
    found = re.findall(
        r"The run class is \*\*([A-Z]+)\*\* and the exit code is \*\*(\d+)\*\*", text
    )
    assert len(found) == 1, "examples/README.md must state the example's run class and exit code"
    return found[0][0], int(found[0][1])


def test_shipped_example_decides_under_the_hardened_profile(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The shipped example decides as examples/README.md states (and as unsandboxed); only /out."""
    code, decision = _run_and_check(sandbox, EXAMPLE, tmp_path / "reference")
    assert (decision["run_class"], code) == expected_example_outcome()
    assert DECISION_CODES[decision["run_class"]] == code == decision["exit_code"]
    assert set(p.name for p in sandbox.out.iterdir()) >= OUTPUTS
    # The one-line summary for Kubernetes' termination message.
    message = sandbox.termination_log.read_text()
    assert message.strip() and "\n" not in message.strip()
    assert decision["run_class"] in message


def _edited_example(tmp: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    target = tmp / "input"
    shutil.copytree(EXAMPLE, target)
    contract = target / "contract.yaml"
    data = yaml.safe_load(contract.read_text())
    edit(data)
    contract.write_text(yaml.safe_dump(data, sort_keys=False))
    return target


def test_reject_under_the_hardened_profile(sandbox: Sandbox) -> None:
    """A clearly worse candidate with a 0.0001 margin is a REJECT (exit 10) in the sandbox too."""

    def edit(c: dict) -> None:  # type: ignore[type-arg]
        c["candidates"] = [x for x in c["candidates"] if x["policy_id"] == "llama-2-7b-chat"]
        c["quality_metrics"][0]["margin_abs"] = 0.0001

    input_dir = _edited_example(sandbox.workdir, edit)
    code, decision = _run_and_check(sandbox, input_dir, sandbox.workdir / "reference")
    assert (code, decision["run_class"]) == (10, "REJECT")


def test_invalid_contract_under_the_hardened_profile(sandbox: Sandbox) -> None:
    """A contract that fails validation exits 78 and still writes its decision record to /out."""

    def edit(c: dict) -> None:  # type: ignore[type-arg]
        c["statistics"]["alpha"] = "five percent"

    input_dir = _edited_example(sandbox.workdir, edit)
    code, decision = _run_and_check(sandbox, input_dir, sandbox.workdir / "reference")
    assert code == 78
    assert decision["exit_code"] == 78 and decision["error"]["exit_code"] == 78
