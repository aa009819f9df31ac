"""Wall time of the engine self-test, beside whole runs measured in the same process.

The self-test (``ragwarrant.selftest.run_selftest``) runs before every ``ragwarrant run``; the
target is that it adds under one second to a run. This script times it ``--repeat`` times (the
first, cold call separately: it loads the lexical calibration and warms numpy), and, as the
reference, times complete ``run_job`` calls on the two committed examples (each of which includes
one self-test), so the self-test's share of a run is visible.

Usage: python bench/bench_selftest.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ragwarrant.pipeline import run_job
from ragwarrant.selftest import run_selftest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = ["corroboration-demo", "ragtruth-generators"]


def main() -> None:
    """Print self-test times (cold, median, max) and whole-run times of the examples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    t0 = time.perf_counter()
    report = run_selftest()
    cold = time.perf_counter() - t0
    assert report.passed, "the self-test failed; run `ragwarrant selftest`"
    warm = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run_selftest()
        warm.append(time.perf_counter() - t0)
    print(f"self-test: {len(report.cases)} planted cases")
    print(f"  cold (first call)  {cold * 1000:8.1f} ms")
    print(f"  warm median        {statistics.median(warm) * 1000:8.1f} ms   (n={args.repeat})")
    print(f"  warm max           {max(warm) * 1000:8.1f} ms")
    print("target: < 1000 ms added to a run")
    print()
    print("reference: whole `run_job` on the committed examples (self-test included)")
    for name in EXAMPLES:
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            outcome = run_job(REPO / "examples" / name, Path(out), on_stage=lambda *a, **k: None)
            took = time.perf_counter() - t0
        share = statistics.median(warm) / took
        print(
            f"  {name:<22} {took * 1000:8.1f} ms  {outcome.decision_class.value:<12} "
            f"self-test share {share:.1%}"
        )


if __name__ == "__main__":
    main()
