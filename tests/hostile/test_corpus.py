"""Every hostile input ends with its documented exit code, a decision record naming the error,
and no byte changed outside the output directory (the corpus: ``tests/hostile/corpus.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from ragwarrant import cli
from tests.hostile.corpus import CASES, Case, build_sandbox


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """(mode, size, mtime) of every entry under ``root`` but ``out/``, links not followed."""
    seen = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        rel_folder = Path(folder).relative_to(root)
        dirs[:] = [d for d in dirs if not (rel_folder == Path(".") and d == "out")]
        for name in [*dirs, *names]:
            st = (Path(folder) / name).lstat()
            seen[(rel_folder / name).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return seen


def recorded_codes(out: Path) -> str:
    """The text of the run's records: the ERROR's code, or a BLOCK's failed checks."""
    texts = [
        (out / n).read_text()
        for n in ("decision.json", "validation_report.json")
        if (out / n).is_file()
    ]
    return "\n".join(texts)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The case exits with its code, records its error code (on stderr when the output
    directory itself is refused, exit 73), and writes only under out/."""
    build_sandbox(tmp_path)
    case.build(tmp_path)
    before = snapshot(tmp_path)
    args = ["run", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    codes = [cli.main(args) for _ in range(case.runs)]
    assert codes[-1] == case.exit_code, codes
    assert snapshot(tmp_path) == before
    if case.exit_code == 73:
        stderr = capsys.readouterr().err
        assert case.code in stderr and case.says in stderr
        return
    records = recorded_codes(tmp_path / "out")
    assert case.code in records and case.says in records
    if case.exit_code not in (0, 10, 11, 12):
        error = orjson.loads((tmp_path / "out" / "decision.json").read_bytes())["error"]
        assert error["code"] == case.code
        assert str(tmp_path) not in error["message"]  # no absolute path echoed
