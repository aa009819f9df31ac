"""Candidate small-sample checks for the noninferiority rule, on the same replicates (issue 33).

Every candidate is the job's rule without its small-sample skewness check (``core``: the
guarded bootstrap with the tilted score check) AND one more one-sided test of the unit deltas:

- ``t``: the paired t-test; ``johnson``: Johnson's (1978, JASA 73:536–544) skewness-corrected t
  (the check before issue 33's third trial); ``hall``: Hall's (1992, JRSS B 54:221–228) cubic
  transformation of t with the estimated skewness g1; ``hall-penalized``: the same with the
  skewness min(g1, 0) - SE0 (SE0 = sqrt(6 (n - 2) / ((n + 1)(n + 3))), never crediting right
  skew); ``hall-G1-SES``: with min(G1 - SES, 0), G1 the adjusted skewness and SES its standard
  error (Joanes & Gill 1998); ``boot-t``: the studentized bootstrap at alpha;
  ``boot-t-half``: at alpha / 2 (the job's check, ``stats.onesided.studentized_lower``).

Data come from ``bench/validity.py``'s generators. Prints, per scenario, each candidate's
false-PROMOTE rate at the margin with its Clopper–Pearson 95 % interval and its power at
delta = 0. A benchmark, not a test.

Usage: python bench/validity_small_rules.py --replicates 2000 [--workers 2]
"""

from __future__ import annotations

import argparse
import math
from multiprocessing import Pool

import numpy as np
from scipy import stats as sps
from validity import SCENARIOS, Scenario, _cp, _skewed_losses

import ragwarrant.stats.noninferiority as ni
from ragwarrant.stats.onesided import studentized_lower

ALPHA = 0.05
CHOSEN = {sc.name: sc for sc in SCENARIOS}
EXTRA = [
    Scenario(f"small-skewed-slice-n{n}", "continuous", 0.1, (0, 1), _skewed_losses(n))
    for n in (20, 30)
]
NAMES = [
    "small-skewed-slice-n12",
    "small-right-skewed-slice-n12",
    "slice-bounded-n15",
    "small-skewed-slice-n20",
    "small-skewed-slice-n30",
]
CHOSEN |= {sc.name: sc for sc in EXTRA}


def _t_lower(d: np.ndarray, level: float = ALPHA) -> float:
    return float(d.mean() - sps.t.ppf(1 - level, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))


def _johnson_lower(d: np.ndarray) -> float:
    """Johnson's t1 = t + g/(6 sqrt n) + g t^2/(3 sqrt n) inverted on its increasing branch."""
    n, m, s = d.size, d.mean(), d.std(ddof=1)
    g = np.mean((d - m) ** 3) / s**3
    a, c, q = g / (3 * math.sqrt(n)), g / (6 * math.sqrt(n)), sps.t.ppf(1 - ALPHA, n - 1)
    if a == 0:
        return float(m - s / math.sqrt(n) * (q - c))
    disc = 1 - 4 * a * (c - q)
    if disc < 0 or (a < 0 and (-1 + math.sqrt(disc)) / (2 * a) > -1 / (2 * a)):
        return -math.inf
    return float(m - s / math.sqrt(n) * (-1 + math.sqrt(disc)) / (2 * a))


def _hall_lower(d: np.ndarray, gamma: float) -> float:
    """Hall's g(T) = T + aT^2/3 + a^2T^3/27 + a/6, a = gamma / sqrt(n), inverted."""
    n, m, s = d.size, d.mean(), d.std(ddof=1)
    q = sps.t.ppf(1 - ALPHA, n - 1)
    a = gamma / math.sqrt(n)
    tq = q if a == 0 else 3 / a * (np.cbrt(1 + a * (q - a / 6)) - 1)
    return float(m - s / math.sqrt(n) * tq)


def _boot_t_lower(d: np.ndarray, alpha: float, rng: np.random.Generator) -> float:
    """The studentized bound at alpha / 2; -inf where it has none (too many flat resamples)."""
    bound = studentized_lower(d, -1e9, alpha, rng, 10_000).lower_bound
    return -math.inf if bound is None else bound


def _bounds(d: np.ndarray, rng: np.random.Generator) -> dict[str, float]:
    n, m = d.size, d.mean()
    g1 = np.mean((d - m) ** 3) / d.std(ddof=1) ** 3
    b1 = np.mean((d - m) ** 3) / np.mean((d - m) ** 2) ** 1.5
    big_g1 = b1 * math.sqrt(n * (n - 1)) / (n - 2)
    se0 = math.sqrt(6 * (n - 2) / ((n + 1) * (n + 3)))
    ses = math.sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3)))
    return {
        "t": _t_lower(d),
        "johnson": _johnson_lower(d),
        "hall": _hall_lower(d, g1),
        "hall-penalized": _hall_lower(d, min(g1, 0) - se0),
        "hall-G1-SES": _hall_lower(d, min(big_g1 - ses, 0)),
        "boot-t": _boot_t_lower(d, 2 * ALPHA, rng),
        "boot-t-half": _boot_t_lower(d, ALPHA, rng),
    }


def _core_rejects(
    sc: Scenario, cand: np.ndarray, base: np.ndarray, rng: np.random.Generator
) -> bool:
    """The job's rule without its small-sample skewness check."""
    saved = ni._Question.skew_guard
    ni._Question.skew_guard = lambda q, bound, b: bound  # type: ignore[method-assign,assignment]
    try:
        return ni.test_noninferiority(
            cand, base, kind=sc.kind, margin_abs=sc.margin, alpha=ALPHA, rng=rng, scale=sc.scale
        ).rejects
    finally:
        ni._Question.skew_guard = saved  # type: ignore[method-assign]


def _one(args: tuple[int, int, int]) -> tuple[int, int, dict[str, bool]]:
    i, zero, r = args
    sc = CHOSEN[NAMES[i]]
    s = sc.generate(np.random.default_rng([2033, i, zero, r]), 0.0 if zero else -sc.margin)
    rng = np.random.default_rng([33, i, zero, r])
    core = _core_rejects(sc, s.candidate, s.baseline, rng)
    passes = {
        k: core and lb > -sc.margin for k, lb in _bounds(s.candidate - s.baseline, rng).items()
    }
    return i, zero, {"core": core} | passes


def main() -> None:
    """Run every candidate on every scenario and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(i, z, r) for i in range(len(NAMES)) for z in (0, 1) for r in range(args.replicates)]
    tally: dict[tuple[int, int, str], int] = {}
    with Pool(args.workers) as pool:
        for i, z, out in pool.imap_unordered(_one, jobs, chunksize=50):
            for k, v in out.items():
                tally[(i, z, k)] = tally.get((i, z, k), 0) + int(v)
    methods = [
        "core",
        "t",
        "johnson",
        "hall",
        "hall-penalized",
        "hall-G1-SES",
        "boot-t",
        "boot-t-half",
    ]
    print(f"{args.replicates} replicates per scenario and delta; rule = core AND the method\n")
    print("| scenario | method | false-PROMOTE at −margin [CP 95 %] | power at Δ = 0 |")
    print("|---|---|---|---|")
    for i, name in enumerate(NAMES):
        for k in methods:
            fp = tally.get((i, 0, k), 0)
            lo, hi = _cp(fp, args.replicates)
            power = tally.get((i, 1, k), 0) / args.replicates
            print(
                f"| {name} | {k} | {fp / args.replicates:.3f} [{lo:.3f}, {hi:.3f}] | {power:.3f} |"
            )


if __name__ == "__main__":
    main()
