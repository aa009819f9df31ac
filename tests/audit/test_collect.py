"""`collect_decisions` and `ragwarrant summary --all`: one row per run, whatever its state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragwarrant.audit.collect import Collection, RowStatus, RunRow, collect_decisions
from ragwarrant.cli import main
from ragwarrant.errors import InputError

from .conftest import EXAMPLE, Run


def _fan_out(pristine_run: Run, root: Path, tmp_path: Path) -> Path:
    """Lay out a fan-out: 0 and 2 decided, 1 an ERROR run (invalid contract), 3 partial (no
    manifest), 4 unreadable, 5 empty (pod died), team-a-long-run-name decided, .hidden ignored."""
    for name in ("0", "2", "team-a-long-run-name"):
        shutil.copytree(pristine_run.output_dir, root / name)
    bad_in = tmp_path / "bad-in"
    shutil.copytree(EXAMPLE, bad_in)
    (bad_in / "contract.yaml").write_text("id: broken\n")
    assert main(["run", "--input", str(bad_in), "--output", str(root / "1")]) == 78
    shutil.copytree(pristine_run.output_dir, root / "3")
    (root / "3" / "manifest.json").unlink()
    shutil.copytree(pristine_run.output_dir, root / "4")
    (root / "4" / "decision.json").write_text('{"schema_version": "1"')
    (root / "5").mkdir()
    (root / ".hidden").mkdir()
    return root


def test_every_kind_of_directory_is_one_row(pristine_run: Run, tmp_path: Path) -> None:
    """Decided, ERROR, partial, unreadable and empty directories each give one row, in index
    order, with the class and exit code the run wrote; expected indexes without a directory are
    missing rows."""
    root = _fan_out(pristine_run, tmp_path / "out", tmp_path)
    expected = json.loads((pristine_run.output_dir / "decision.json").read_text())
    rows = collect_decisions(root, expect=8).rows
    assert [r.name for r in rows] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "team-a-long-run-name",
    ]
    by = {r.name: r for r in rows}
    for name in ("0", "2", "team-a-long-run-name"):
        assert by[name].status is RowStatus.DECIDED
        assert (by[name].run_class, by[name].exit_code) == (
            expected["run_class"],
            expected["exit_code"],
        )
        assert by[name].contract_id == expected["contract"]["id"]
    assert (by["1"].status, by["1"].run_class, by["1"].exit_code) == (
        RowStatus.DECIDED,
        "ERROR",
        78,
    )
    assert by["1"].detail.startswith("contract-")
    assert by["3"].status is RowStatus.PARTIAL and "manifest" in by["3"].detail
    assert by["4"].status is RowStatus.UNREADABLE
    assert [by[n].status for n in ("5", "6", "7")] == [RowStatus.MISSING] * 3


def test_decision_changed_after_the_run_is_partial(pristine_run: Run, tmp_path: Path) -> None:
    """A decision.json whose bytes the manifest does not record is not counted as decided."""
    shutil.copytree(pristine_run.output_dir, tmp_path / "out" / "0")
    path = tmp_path / "out" / "0" / "decision.json"
    path.write_bytes(path.read_bytes() + b"\n")
    (row,) = collect_decisions(tmp_path / "out").rows
    assert row.status is RowStatus.PARTIAL and "differs" in row.detail


def test_counts_group_decided_rows_by_class(pristine_run: Run, tmp_path: Path) -> None:
    """counts() gives decided rows by class, other rows by status."""
    root = _fan_out(pristine_run, tmp_path / "out", tmp_path)
    cls = json.loads((pristine_run.output_dir / "decision.json").read_text())["run_class"]
    counts = collect_decisions(root).counts()
    assert counts == {cls: 3, "ERROR": 1, "missing": 1, "partial": 1, "unreadable": 1}


def test_unlistable_root_is_an_input_error(tmp_path: Path) -> None:
    """A root that is not a directory: InputError, exit 66."""
    with pytest.raises(InputError) as info:
        collect_decisions(tmp_path / "absent")
    assert int(info.value.exit_code) == 66 and info.value.code == "collect-root-unreadable"


def test_summary_all_prints_text_and_json(
    pristine_run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`summary --all OUT` prints a table with one line per run; --format json the same rows."""
    root = _fan_out(pristine_run, tmp_path / "out", tmp_path)
    capsys.readouterr()
    assert main(["summary", "--all", str(root), "--expect", "7"]) == 78  # run 1's error
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith(f"8 runs under {root}:")
    assert [line.split()[0] for line in text[2:]] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "team-a-long-run-name",
    ]
    status_at = {line.index(line.split()[1]) for line in text[1:]}  # "status" and each status
    assert len(status_at) == 1, text  # aligned, though "team-a-long-run-name" is 20 characters
    long_detail = next(line for line in text if line.startswith("1 "))
    assert "… (+" in long_detail and "characters; --json has it whole)" in long_detail
    assert main(["summary", "--all", str(root), "--format", "json"]) == 78
    data = json.loads(capsys.readouterr().out)
    assert main(["summary", "--all", str(root), "--json"]) == 78
    assert json.loads(capsys.readouterr().out) == data
    assert data["total"] == 7 and len(data["rows"]) == 7 and data["exit_code"] == 78
    assert data["rows"][1] == {
        **data["rows"][1],
        "name": "1",
        "run_class": "ERROR",
        "exit_code": 78,
    }


def test_summary_of_one_run_is_unchanged(
    pristine_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --all, `summary OUTDIR` still prints one run and returns its exit code."""
    expected = json.loads((pristine_run.output_dir / "decision.json").read_text())
    assert main(["summary", str(pristine_run.output_dir)]) == expected["exit_code"]
    assert capsys.readouterr().out.startswith(f"decision: {expected['run_class']}")


def _row(name: str, status: RowStatus, run_class: str | None, code: int | None) -> RunRow:
    detail = "no manifest.json: the run did not complete" if status is RowStatus.PARTIAL else ""
    return RunRow(name, status, run_class, code, None, detail)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("PROMOTE", 0), ("PROMOTE", 0)], 0),
        ([("PROMOTE", 0), ("BLOCK", 12), ("REJECT", 10)], 12),
        ([("REJECT", 10), ("INCONCLUSIVE", 11)], 11),
        ([("BLOCK", 12), ("ERROR", 78)], 78),
        ([("PROMOTE", 0), (RowStatus.MISSING, None)], 66),
        ([("PROMOTE", 0), (RowStatus.PARTIAL, 0)], 66),
        ([("PROMOTE", 0), (RowStatus.UNREADABLE, None)], 65),
        ([], 66),
    ],
)
def test_exit_code_is_the_worst_run(rows: list[tuple[object, int | None]], expected: int) -> None:
    """A fan-out exits with its worst run's code: one BLOCK among PROMOTEs exits 12; a run
    without a committed decision counts as 66 (missing, no manifest) or 65 (unreadable)."""
    built = [
        _row(str(i), k, None, None)
        if isinstance(k, RowStatus) and k is not RowStatus.PARTIAL
        else _row(str(i), k, "PROMOTE", code)
        if isinstance(k, RowStatus)
        else _row(str(i), RowStatus.DECIDED, str(k), code)
        for i, (k, code) in enumerate(rows)
    ]
    assert Collection("out", tuple(built)).exit_code() == expected


def test_run_directory_linked_outside_the_root_is_unreadable(
    pristine_run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory that is a symlink out of OUT is `unreadable` (65), as a decision.json
    symlink out of its run is; a link to a run inside OUT is read."""
    root = tmp_path / "out"
    shutil.copytree(pristine_run.output_dir, root / "0")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(pristine_run.output_dir, elsewhere)
    (root / "1").symlink_to(elsewhere, target_is_directory=True)
    (root / "2").symlink_to(root / "0", target_is_directory=True)
    rows = {r.name: r for r in collect_decisions(root).rows}
    assert rows["1"].status is RowStatus.UNREADABLE and rows["1"].run_class is None
    assert "outside" in rows["1"].detail
    assert rows["0"].status is rows["2"].status is RowStatus.DECIDED
    assert main(["summary", "--all", str(root), "--format", "json"]) == 65
    data = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in data["rows"]] == ["decided", "unreadable", "decided"]
