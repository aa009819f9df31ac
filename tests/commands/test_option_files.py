"""Files named by options (--termination-message-path, --ledger, --signing-key) and the
decision.json that summary reads: regular files only, judged by where a symlink leads.

Real CLI runs in a subprocess with a timeout: a FIFO regression fails instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ragwarrant.sidefiles import read_regular

TIMEOUT = 60


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragwarrant", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _run(root: Path, out: Path, *extra: str | Path) -> subprocess.CompletedProcess[str]:
    return _cli("run", "--input", root, "--output", out, *extra)


def _error_code(out: Path) -> str:
    return orjson.loads((out / "decision.json").read_bytes())["error"]["code"]


@pytest.mark.parametrize("where", ["in", "out"])
def test_termination_message_link_into_a_run_directory_is_refused(
    make_input, tmp_path, where
) -> None:
    """A termination-message path that is a symlink to a file of the input (or output) exits
    64 path-inside-run-directory and leaves that file unchanged."""
    root, out = make_input(), tmp_path / "o"
    target = root / "contract.yaml" if where == "in" else out / "decision.json"
    if where == "out":
        assert _run(root, out).returncode == 0
    before = target.read_bytes()
    link = tmp_path / "tm"
    link.symlink_to(target)
    assert _run(root, out, "--termination-message-path", link).returncode == 64
    if where == "in":  # the output's decision.json is replaced by the ERROR record
        assert target.read_bytes() == before
    assert _error_code(out) == "path-inside-run-directory"


def test_ledger_link_into_the_input_is_refused(make_input, tmp_path) -> None:
    """--ledger through a symlink to an input file exits 64 and appends nothing to it."""
    root, out = make_input(), tmp_path / "o"
    notes = root / "notes.txt"
    notes.write_bytes(b"")
    link = tmp_path / "led.jsonl"
    link.symlink_to(notes)
    assert _run(root, out, "--ledger", link).returncode == 64
    assert notes.read_bytes() == b""
    assert _error_code(out) == "ledger-inside-run-directory"


@pytest.mark.parametrize(
    ("flag", "code"),
    [
        ("--termination-message-path", "path-not-regular-file"),
        ("--ledger", "path-not-regular-file"),
        ("--summary-json", "path-not-regular-file"),
    ],
)
def test_fifo_side_file_is_refused_without_blocking(make_input, tmp_path, flag, code) -> None:
    """A FIFO given as a written side file exits 64 before deciding (no hang, no exit 70)."""
    root, out = make_input(), tmp_path / "o"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = _run(root, out, flag, fifo)
    assert result.returncode == 64, result.stderr
    assert _error_code(out) == code


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_signing_key_that_is_not_a_regular_file_is_refused(make_input, tmp_path, kind) -> None:
    """--signing-key naming a FIFO or /dev/zero exits 66 signing-key-unreadable, unsigned."""
    root, out = make_input(), tmp_path / "o"
    key = tmp_path / "key.pem"
    if kind == "fifo":
        os.mkfifo(key)
    else:
        key = Path("/dev/zero")
    result = _run(root, out, "--signing-key", key)
    assert result.returncode == 66, result.stderr
    assert _error_code(out) == "signing-key-unreadable"


def test_termination_message_is_rewritten_in_place_and_through_an_outside_link(
    make_input, tmp_path
) -> None:
    """A regular file (Kubernetes bind-mounts one) is rewritten in place, same inode; a link to
    a file outside the run directories is followed and stays a link."""
    root = make_input()
    plain = tmp_path / "termination-log"
    plain.write_bytes(b"old content that is longer than the decision line " * 200)
    inode = plain.stat().st_ino
    assert _run(root, tmp_path / "o1", "--termination-message-path", plain).returncode == 0
    assert plain.read_text().startswith("PROMOTE: ")
    assert plain.read_text().count("\n") == 1
    assert plain.stat().st_ino == inode
    link = tmp_path / "tm-link"
    link.symlink_to(tmp_path / "elsewhere.txt")
    assert _run(root, tmp_path / "o2", "--termination-message-path", link).returncode == 0
    assert link.is_symlink()
    assert (tmp_path / "elsewhere.txt").read_text().startswith("PROMOTE: ")


@pytest.fixture
def committed(make_input, tmp_path) -> Path:
    """A completed PROMOTE run's output directory."""
    out = tmp_path / "done"
    assert _run(make_input(), out).returncode == 0
    return out


def _runs_with(committed: Path, tmp_path: Path, kind: str) -> Path:
    """A runs directory: ``ok`` (the committed run) and ``bad`` whose decision.json is ``kind``."""
    runs = tmp_path / "runs"
    shutil.copytree(committed, runs / "ok")
    bad = runs / "bad"
    if kind == "outside-link":
        shutil.copytree(committed, bad)
        outside = tmp_path / "outside.json"
        outside.write_bytes((bad / "decision.json").read_bytes())
        (bad / "decision.json").unlink()
        (bad / "decision.json").symlink_to(outside)
    else:
        bad.mkdir()
        if kind == "fifo":
            os.mkfifo(bad / "decision.json")
        else:
            (bad / "decision.json").symlink_to("/dev/zero")
    return runs


@pytest.mark.parametrize("kind", ["fifo", "device", "outside-link"])
def test_summary_all_reports_a_special_decision_json_as_an_error_row(
    committed, tmp_path, kind
) -> None:
    """summary --all never hangs on a FIFO or device decision.json, nor shows a decision.json
    linked from outside: that run's row is unreadable and the collection exits 65."""
    runs = _runs_with(committed, tmp_path, kind)
    result = _cli("summary", "--all", runs, "--format", "json")
    assert result.returncode == 65, result.stderr
    rows = {r["name"]: r for r in orjson.loads(result.stdout)["rows"]}
    assert (rows["ok"]["status"], rows["ok"]["run_class"]) == ("decided", "PROMOTE")
    assert (rows["bad"]["status"], rows["bad"]["run_class"]) == ("unreadable", None)


@pytest.mark.parametrize("kind", ["fifo", "device", "outside-link"])
def test_summary_refuses_a_special_decision_json(committed, tmp_path, kind) -> None:
    """summary OUTDIR on a FIFO, device or outside-linked decision.json exits 66, at once."""
    runs = _runs_with(committed, tmp_path, kind)
    result = _cli("summary", runs / "bad")
    assert result.returncode == 66, result.stderr
    assert "decision-unreadable" in result.stdout + result.stderr


@pytest.mark.parametrize("name", ["report.md", "manifest.json", "decision.intoto.json"])
def test_verify_fails_on_an_output_that_is_a_symlink(committed, tmp_path, name) -> None:
    """An output replaced by a link to an identical copy outside the directory fails verify."""
    copy = tmp_path / f"copy-{name}"
    copy.write_bytes((committed / name).read_bytes())
    (committed / name).unlink()
    (committed / name).symlink_to(copy)
    result = _cli("verify", committed)
    assert result.returncode == 65, result.stdout
    assert f"{name}: symlink" in result.stdout + result.stderr


def test_read_regular_caps_the_size(tmp_path) -> None:
    """A file past the limit is refused unread (EFBIG); one at the limit is read whole."""
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, limit=10) == b"x" * 10
    with pytest.raises(OSError, match="larger than 9 bytes"):
        read_regular(path, limit=9)


@pytest.mark.parametrize("verb", ["verify", "show"])
def test_ledger_commands_refuse_a_fifo(tmp_path, verb) -> None:
    """`ledger verify|show` on a FIFO exits 66 ledger-unreadable at once, never waits on it."""
    fifo = tmp_path / "ledger.jsonl"
    os.mkfifo(fifo)
    result = _cli("ledger", verb, fifo)
    assert result.returncode == 66, result.stderr
    assert "ledger-unreadable" in result.stderr
