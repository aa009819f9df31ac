"""A reader that closes stdout early (``| head -1``) never turns a command's result into 70."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragwarrant import cli


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One run of the shipped example with a ledger: (output directory, ledger file)."""
    base = tmp_path_factory.mktemp("closed-stdout")
    out, ledger = base / "out", base / "ledger.jsonl"
    args = ["run", "--input", "examples/ragtruth-generators", "--output", str(out)]
    assert cli.main([*args, "--ledger", str(ledger)]) == 0
    return out, ledger


def _exit_with_stdout_closed(args: list[str]) -> int:
    """The exit code of ``ragwarrant ARGS`` whose reader closed the pipe before any output."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragwarrant", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the command prints
    return proc.wait(timeout=300)


def test_verify_keeps_its_result_when_stdout_is_closed(recorded_run) -> None:
    """``verify OUT | head -1`` exits 0 for an intact run and 65 for a tampered one, never 70."""
    out, _ = recorded_run
    assert _exit_with_stdout_closed(["verify", "--no-replay", str(out)]) == 0
    (out / "planted.txt").write_text("x")
    try:
        assert _exit_with_stdout_closed(["verify", "--no-replay", str(out)]) == 65
    finally:
        (out / "planted.txt").unlink()


def test_ledger_verify_keeps_its_result_when_stdout_is_closed(recorded_run) -> None:
    """``ledger verify FILE | head -1`` exits 0 for an intact chain, 65 for an edited one."""
    _, ledger = recorded_run
    assert _exit_with_stdout_closed(["ledger", "verify", str(ledger)]) == 0
    edited = ledger.with_name("edited.jsonl")
    edited.write_bytes(ledger.read_bytes().replace(b'"seq":1', b'"seq":7', 1))
    assert _exit_with_stdout_closed(["ledger", "verify", str(edited)]) == 65


def test_writelines_to_a_closed_pipe_is_swallowed_like_write() -> None:
    """``verify`` and ``ledger`` print with ``writelines``: a reader gone mid-way costs nothing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = io.TextIOWrapper(os.fdopen(write_end, "wb"), write_through=True)
    out = cli._ClosedPipeTolerantStdout(stream)
    out.writelines(f"line {i}\n" for i in range(10_000))  # the first write meets the closed pipe
    out.flush()
    stream.close()
