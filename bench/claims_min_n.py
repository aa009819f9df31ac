"""False-claim rate of a mean improvement claim at a handful of pairs, symmetric noise.

The candidate gains nothing (both arms 10 plus the same symmetric noise: normal, Laplace or
Student t with 3 df); each replicate runs the engine's claim gate (``gates.claims.gate_claims``:
for a mean claim the guarded bootstrap, paired t-test and tilted score check, all must reject;
for a p95 claim the bootstrap) on n pairs at one-sided alpha 0.05 and counts a PASS as a false
claim. It prints the rate with its Clopper–Pearson 95 %
interval (``scipy.stats.binomtest(...).proportion_ci(method="exact")``) per noise and n, with
the gate's floor ``gates.claims.MIN_CLAIM_UNITS`` switched off (``--no-floor``, the rates that
justify it) or on. A benchmark, not a test (docs/validity.md, "Claims").

Usage: python bench/claims_min_n.py --replicates 1000 [--workers 2] [--statistic p95] [--no-floor]
"""

from __future__ import annotations

import argparse
from multiprocessing import Pool

import numpy as np
from scipy import stats as sps

from ragwarrant.contract import ClaimSet
from ragwarrant.gates import claims
from ragwarrant.gates.claims import gate_claims
from ragwarrant.outputs import GateStatus
from ragwarrant.stats.onesided import oriented_bootstrap

ALPHA = 0.05
SIZES = (5, 8, 10, 15, 20)
NOISES = ("normal", "laplace", "t3")
_CLAIM = ClaimSet.model_validate({"items": [{"kind": "cost-reduction", "metric": "cost"}]})


def arm(rng: np.random.Generator, noise: str, n: int) -> np.ndarray:
    """Shape (n,) one arm's values: 10 plus symmetric noise (both arms alike: no true gain)."""
    if noise == "normal":
        return 10 + rng.normal(size=n)
    if noise == "laplace":
        return 10 + rng.laplace(size=n)
    return 10 + rng.standard_t(3, size=n)


def _passes(job: tuple[str, str, int, int, int]) -> int:
    """How many of replicates ``start .. stop`` falsely establish the claim (lower is better)."""
    stat, noise, n, start, stop = job
    k = 0
    for r in range(start, stop):
        data = np.random.default_rng([2031, n, r, NOISES.index(noise)])
        cand, base = arm(data, noise, n), arm(data, noise, n)
        rng = np.random.default_rng([2032, n, r])
        (boot,) = oriented_bootstrap(cand[:, None], base[:, None], [stat], [-1], None, 2000, rng)
        sample = (base - cand, np.arange(n)) if stat == "mean" else None
        (gate,) = gate_claims(_CLAIM, [boot], [stat], ALPHA, 0.8, [sample])
        k += gate.status is GateStatus.PASS
    return k


def _cp(k: int, n: int) -> str:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def main() -> None:
    """Print the false-claim table (markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--statistic", choices=("mean", "p95"), default="mean")
    parser.add_argument("--no-floor", action="store_true", help="claims on any n >= 2")
    args = parser.parse_args()
    if args.no_floor:
        claims.MIN_CLAIM_UNITS = 2  # type: ignore[misc]  # read at call time; workers fork
    step = max(1, args.replicates // 8)
    cells = [(noise, n) for noise in NOISES for n in SIZES]
    jobs = [
        (args.statistic, noise, n, a, min(a + step, args.replicates))
        for noise, n in cells
        for a in range(0, args.replicates, step)
    ]
    with Pool(args.workers) as pool:
        counts = pool.map(_passes, jobs)
    totals: dict[tuple[str, int], int] = {}
    for job, k in zip(jobs, counts, strict=True):
        totals[job[1:3]] = totals.get(job[1:3], 0) + k
    print("| statistic | noise | pairs | false claim at Δ = 0 [CP 95 %] |\n|---|---|---|---|")
    for noise, n in cells:
        rate = _cp(totals[(noise, n)], args.replicates)
        print(f"| {args.statistic} | {noise} | {n} | {rate} |")


if __name__ == "__main__":
    main()
