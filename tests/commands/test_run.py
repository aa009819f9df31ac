"""``ragwarrant run``: the stdout decision line, --summary-json, --exit-mode."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from tests.conftest import simulate

from ragwarrant import cli
from ragwarrant.commands.run import BLAS_THREADS_VARIABLE, ProgressLine, pin_blas_threads

REPO = Path(__file__).resolve().parents[2]


def test_stdout_ends_with_the_decision_line(make_input, tmp_path, capsys) -> None:
    """stdout's last line is the one-line decision with its next step (logs are elsewhere)."""
    assert cli.main(["run", "--input", str(make_input()), "--output", str(tmp_path / "o")]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("PROMOTE (exit 0): cand=PROMOTE — next: ")


def test_summary_json_is_written(make_input, tmp_path) -> None:
    """--summary-json receives {run_class, exit_code, next_step, candidates}."""
    path = tmp_path / "summary.json"
    args = ["run", "--input", str(make_input()), "--output", str(tmp_path / "o")]
    assert cli.main([*args, "--summary-json", str(path)]) == 0
    doc = orjson.loads(path.read_bytes())
    assert (doc["run_class"], doc["exit_code"], [c["class"] for c in doc["candidates"]]) == (
        "PROMOTE",
        0,
        ["PROMOTE"],
    )


def test_summary_json_is_written_for_an_error(tmp_path) -> None:
    """An ERROR run (no input) still writes the machine summary, with the error's exit code."""
    path = tmp_path / "summary.json"
    args = ["run", "--input", str(tmp_path / "nope"), "--output", str(tmp_path / "o")]
    assert cli.main([*args, "--summary-json", str(path)]) == 66
    doc = orjson.loads(path.read_bytes())
    assert (doc["run_class"], doc["exit_code"]) == ("ERROR", 66)


def test_an_error_withheld_by_hygiene_is_published_as_withheld(make_input, tmp_path) -> None:
    """An ERROR whose message holds a secret: the termination message and --summary-json carry
    the record as written (withheld), never the raw message."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    def secret_key(c):
        c[token] = 1  # an unknown contract key: contract-invalid (78), naming the key

    term, summary = tmp_path / "term", tmp_path / "summary.json"
    args = ["run", "--input", str(make_input(mutate=secret_key)), "--output", str(tmp_path / "o")]
    extra = ["--termination-message-path", str(term), "--summary-json", str(summary)]
    assert cli.main([*args, *extra]) == 78
    assert term.read_text() == (
        "ERROR: contract-invalid: message withheld by publication hygiene "
        "(see validation_report.json)\n"
    )
    doc = orjson.loads(summary.read_bytes())
    assert (doc["run_class"], doc["exit_code"]) == ("ERROR", 78)
    assert token not in summary.read_text()


@pytest.mark.parametrize(("mode", "expected"), [("class", 10), ("status", 0)])
def test_exit_mode(make_input, tmp_path, mode: str, expected: int) -> None:
    """A REJECT exits 10 under --exit-mode class and 0 under status."""
    root = make_input(data=simulate(300, quality_delta=-0.3))
    args = ["run", "--input", str(root), "--output", str(tmp_path / mode), "--exit-mode", mode]
    assert cli.main(args) == expected
    assert orjson.loads((tmp_path / mode / "decision.json").read_bytes())["run_class"] == "REJECT"


def test_exit_mode_from_the_environment_keeps_error_codes(tmp_path, monkeypatch) -> None:
    """RAGWARRANT_EXIT_MODE=status sets the default; an error keeps its code (66)."""
    monkeypatch.setenv("RAGWARRANT_EXIT_MODE", "status")
    args = ["run", "--input", str(tmp_path / "nope"), "--output", str(tmp_path / "o")]
    assert cli.main(args) == 66


def test_unknown_exit_mode_is_a_usage_error(make_input, tmp_path) -> None:
    """An exit mode that is neither class nor status is a usage error (64)."""
    args = ["run", "--input", str(make_input()), "--output", str(tmp_path / "o")]
    assert cli.main([*args, "--exit-mode", "loud"]) == 64


def test_progress_line_rewrites_one_line_per_source_and_candidate() -> None:
    """On a terminal, source_read and candidate_evaluated rewrite one line; others clear it."""
    stream = io.StringIO()
    progress = ProgressLine(stream)
    progress("source_read", source_id="results", adapter="generic", rows=400, elapsed_s=0.01)
    progress("candidate_evaluated", policy_id="cand", index=1, of=2, gates=13, elapsed_s=0.2)
    progress("run_finished", run_class="PROMOTE")
    assert stream.getvalue() == (
        "\r\x1b[Kread results: 400 rows in 0.01 s\r\x1b[K[1/2] cand: 13 gates in 0.2 s\r\x1b[K"
    )


def test_a_reader_that_closes_stdout_costs_no_decision(make_input, tmp_path) -> None:
    """``ragwarrant run ... | head -0``: the committed decision stays and its code is returned;
    a closed pipe used to turn a PROMOTE into an ERROR record, exit 70 (trial-int)."""
    import subprocess
    import sys

    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "ragwarrant", "run", "--input", str(make_input())]
    proc = subprocess.Popen(
        [*cmd, "--output", str(out)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the decision line is printed
    assert proc.wait(timeout=300) == 0
    assert orjson.loads((out / "decision.json").read_bytes())["run_class"] == "PROMOTE"
    assert not (out / "history").exists()


def _blas_threads_after_a_run(out, blas_variable: str | None) -> tuple[int, list[int]]:
    """(exit code, BLAS pool sizes) of a fresh interpreter after ``run`` on the shipped example."""
    probe = (
        "from ragwarrant.cli import main\nfrom threadpoolctl import threadpool_info\n"
        "code = main(['run', '--input', 'examples/ragtruth-generators', '--output', "
        f"{str(out)!r}])\n"
        "blas = [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "print(code, sorted(set(blas)))"
    )
    env = {k: v for k, v in os.environ.items() if k != BLAS_THREADS_VARIABLE}
    if blas_variable is not None:
        env[BLAS_THREADS_VARIABLE] = blas_variable
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, env=env, check=True
    )
    code, _, sizes = proc.stdout.strip().splitlines()[-1].partition(" ")
    return int(code), json.loads(sizes)


def test_run_loads_blas_with_one_thread(tmp_path) -> None:
    """A cold ``run`` leaves numpy's and scipy's BLAS with one thread each (issue 13)."""
    assert _blas_threads_after_a_run(tmp_path / "out", None) == (0, [1])


def test_run_keeps_the_operators_blas_threads(tmp_path) -> None:
    """An ``OPENBLAS_NUM_THREADS`` the operator set is kept: the probe sees a pool of 2."""
    assert _blas_threads_after_a_run(tmp_path / "out", "2") == (0, [2])


def test_blas_variable_untouched_once_numpy_is_loaded() -> None:
    """In a process that already imported numpy, setting the variable would change nothing."""
    environ: dict[str, str] = {}
    assert "numpy" in sys.modules
    assert pin_blas_threads(environ) is False
    assert environ == {}


def test_operators_blas_variable_is_kept() -> None:
    """A value already in the environment is never overwritten."""
    environ = {BLAS_THREADS_VARIABLE: "3"}
    assert pin_blas_threads(environ) is False
    assert environ == {BLAS_THREADS_VARIABLE: "3"}


@pytest.mark.parametrize(
    ("flag", "where", "code"),
    [
        ("--ledger", "in", "ledger-inside-run-directory"),
        ("--ledger", "out", "ledger-inside-run-directory"),
        ("--summary-json", "in", "path-inside-run-directory"),
        ("--summary-json", "out", "path-inside-run-directory"),
        ("--termination-message-path", "in", "path-inside-run-directory"),
    ],
)
def test_side_file_inside_a_run_directory_is_refused_and_not_written(
    make_input, tmp_path, flag, where, code
) -> None:
    """A ledger, summary or termination file inside --input or --output exits 64, writes nothing
    into the input, and leaves an output that verifies (the ERROR path wrote the ledger anyway)."""
    from ragwarrant.audit.verify import verify_output_dir

    root, out = make_input(), tmp_path / "o"
    before = sorted(p.name for p in root.rglob("*"))
    side = (root if where == "in" else out) / "side.json"
    assert cli.main(["run", "--input", str(root), "--output", str(out), flag, str(side)]) == 64
    assert sorted(p.name for p in root.rglob("*")) == before
    assert not side.exists()
    decision = orjson.loads((out / "decision.json").read_bytes())
    assert decision["error"]["code"] == code
    assert verify_output_dir(out).ok


def test_platform_variables_in_paths_are_expanded(make_input, tmp_path, monkeypatch) -> None:
    """--input and --output name the platform's execution id and task index as ${NAME}."""
    source = make_input()
    (tmp_path / "in").mkdir()
    source.rename(tmp_path / "in" / "3")
    monkeypatch.setenv("TASK_INDEX", "3")
    monkeypatch.setenv("EXECUTION", "exec-1")
    code = cli.main(["run", "--input", f"{tmp_path}/in/${{TASK_INDEX}}",
                     "--output", f"{tmp_path}/out/${{EXECUTION}}/${{TASK_INDEX}}"])  # fmt: skip
    assert code == 0 and (tmp_path / "out" / "exec-1" / "3" / "manifest.json").is_file()


@pytest.mark.parametrize("value", [None, ""])
def test_an_unset_platform_variable_fails_before_writing(
    make_input, tmp_path, monkeypatch, capsys, value: str | None
) -> None:
    """An unset or empty ${NAME} is a usage error (64): nothing written, not even to bare /out."""
    monkeypatch.delenv("RAGWARRANT_TEST_UNSET", raising=False)
    if value is not None:
        monkeypatch.setenv("RAGWARRANT_TEST_UNSET", value)
    out = tmp_path / "out"
    code = cli.main(["run", "--input", str(make_input()),
                     "--output", f"{out}/${{RAGWARRANT_TEST_UNSET}}"])  # fmt: skip
    assert code == 64 and not out.exists()
    captured = capsys.readouterr()
    assert "run-variable-unset" in captured.err
    # the one stdout line every run error prints (contracts/exit-codes.md), parsed or not
    assert captured.out.splitlines()[-1].startswith("ERROR (exit 64): run-variable-unset — next: ")


def test_an_empty_path_is_a_usage_error_never_the_current_directory(
    make_input, tmp_path, monkeypatch, capsys
) -> None:
    """``run --input ""`` said output-inside-input, ``run --output ""`` and ``init --output ""``
    wrote into the current directory (trial B): an empty path is refused (64), nothing written."""
    inp = make_input()
    export = next(p for p in inp.rglob("*.csv"))
    monkeypatch.chdir(tmp_path)
    for argv in (
        ["run", "--input", "", "--output", "out"],
        ["run", "--input", str(inp), "--output", ""],
        ["init", "--from", str(export), "--output", ""],
    ):
        assert cli.main(argv) == 64, argv
        assert "path-empty" in capsys.readouterr().err, argv
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([inp.name])


def test_a_ledger_in_a_missing_directory_names_that_directory(make_input, tmp_path, capsys):
    """--ledger in a directory that does not exist: exit 73 before the run, naming the
    directory (by its name: the record withholds --ledger's value), never the host path."""
    out, ledger = tmp_path / "out", tmp_path / "no-such-dir" / "ledger.jsonl"
    assert cli.main(["run", "--input", str(make_input()), "--output", str(out),
                     "--ledger", str(ledger)]) == 73  # fmt: skip
    err = capsys.readouterr().err
    assert "'no-such-dir'" in err
    assert "ledger_append_failed" not in err  # no append to the ledger whose error this is
    error = json.loads((out / "decision.json").read_text())["error"]
    assert error["code"] == "ledger-unwritable" and "'no-such-dir'" in error["message"]
    assert str(tmp_path) not in error["message"] and not ledger.parent.exists()


def test_an_empty_input_or_output_variable_falls_back_to_the_mount(monkeypatch) -> None:
    """RAGWARRANT_INPUT/OUTPUT set but empty mean /in and /out (a shell's ``${VAR:-/in}``),
    never the current directory."""
    import argparse

    from ragwarrant.commands import run

    monkeypatch.setenv("RAGWARRANT_INPUT", "")
    monkeypatch.setenv("RAGWARRANT_OUTPUT", "")
    parser = argparse.ArgumentParser()
    run.register(parser.add_subparsers())
    args = parser.parse_args(["run"])
    assert (args.input, args.output) == (Path("/in"), Path("/out"))
