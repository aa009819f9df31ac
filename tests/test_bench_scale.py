"""bench/bench_scale.py still runs (tiny sizes); its figures are printed, not asserted."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytest.importorskip("kubernetes", reason="the render step needs the 'k8s' extra")


def test_scale_benchmark_runs(tmp_path):
    """Rendering, validating, scanning and collecting 5 contracts runs and prints every step."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_scale.py"), "--contracts", "5",
         "--decisions", "5", "--dir", str(tmp_path)],
        capture_output=True, text=True, cwd=str(REPO), timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    steps = {line.split()[0] for line in proc.stdout.splitlines()[1:] if line.strip()}
    assert {"render", "dry-run", "scan", "collect"} <= steps
    assert "INVALID" not in proc.stdout
