"""The benchmarks still run (tiny sizes): a benchmark that crashes measures nothing.

Figures are not asserted here; the benchmarks print them beside their references.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        ("bench_job.py", ["--sizes", "2000", "--scipy-max", "2000"], "LCB q1 scipy"),
        ("bench_telemetry.py", ["--rows", "20000"], "rows"),
        ("bench_selftest.py", ["--repeat", "2"], "self-test"),
        ("hint_calibration.py", ["--replicates", "20", "--only", "skewed"], "| skewed |"),
        ("validity_ppi.py", ["--replicates", "5"], "| 0.70 | 0.3 | 300 | ppi++ |"),
        (
            "validity.py",
            [
                "--replicates",
                "4",
                "--workers",
                "1",
                "--resamples",
                "200",
                "--only",
                "small-skewed-slice-n12,small-right-skewed-slice-n12,"
                "informative-missing-exclude-n300",
            ],
            "| informative-missing-exclude-n300 | rule |",
        ),
        (
            "validity_small_rules.py",
            ["--replicates", "2", "--workers", "1"],
            "| small-skewed-slice-n30 | boot-t-half |",
        ),
        (
            "validity_claims.py",
            ["--replicates", "8", "--workers", "1", "--resamples", "200"],
            "| mean | 30 | rule |",
        ),
        ("bench_fanout.py", ["--k", "2"], "| 2 |"),
        (
            "bench_startup.py",
            ["--repeat", "1"],
            "heavy packages imported by ragwarrant --version: []",
        ),
    ],
)
def test_benchmark_runs(script, args, expect, tmp_path):
    """Each benchmark runs to completion on tiny inputs and prints its table."""
    extra = ["--dir", str(tmp_path)] if script in ("bench_telemetry.py", "bench_fanout.py") else []
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args, *extra],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert expect in proc.stdout


def test_new_user_trial_runs_and_judges_cases():
    """Two new-user cases run through the CLI: a contract refusal and an ambiguous header BLOCK."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "new_user_trial.py"), "--only", "alpha", "twins"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "| statistics.alpha: 0.5 | 78 | ERROR |" in proc.stdout
    assert (
        "| header twins differing in case | 12 | BLOCK | evidence-ambiguous-column" in proc.stdout
    )
