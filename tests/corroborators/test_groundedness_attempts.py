"""Smoke test of bench/groundedness_attempts.py on the small official-layout fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.corroborators.ragtruth_files import make_official


def test_attempts_script_prints_one_row_per_attempt_and_task(tmp_path: Path) -> None:
    """Every candidate feature and combiner gets a row per task type; no response text."""
    directory = make_official(tmp_path / "d")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "groundedness_attempts.py"),
            "--ragtruth-dir",
            str(directory),
            "--tasks",
            "QA",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = [line for line in done.stdout.splitlines() if line.startswith("| QA |")]
    assert len(rows) == 9 + 4 + 5 + 6 + 1
    assert any("sentence model on spans, mean" in r for r in rows)
    assert any("mean_overlap" in r for r in rows)
