"""Validity study of improvement claims: the false-claim rate when the candidate gains nothing.

A claim (``cost_reduction`` on mean cost, ``latency_reduction`` on p95 latency, ...) holds when
its one-sided lower bound on the oriented delta is above 0; a required claim that holds falsely
is a false PROMOTE. Costs and latencies are right-skewed, and the plain percentile bound is
liberal for the mean of skewed data in small samples. For paired lognormal values whose
candidate and baseline arms have the same distribution (true delta 0 in mean and in every
quantile) this runs, on the SAME replicates:

- ``rule``: the engine's claim gate, ``gates.claims.gate_claims`` (the expanded percentile
  bound with the Monte Carlo guard, ``stats.onesided.OrientedBootstrap.test_greater``;
  Hesterberg 2015, Davison & Hinkley 1997 §2.5.2, Gandy 2009; for a mean claim also the paired
  t-test, ``stats.onesided.clustered_t_test``: both must reject);
- ``percentile``: the plain percentile bound that claims used before
  (``OrientedBootstrap.percentile_test``; Efron & Tibshirani 1993, §13.3);
- ``t``: the paired t-test lower bound (mean claims only), the textbook reference.

It prints the false-claim rate at delta 0 with its Clopper–Pearson 95 % interval
(``scipy.stats.binomtest(...).proportion_ci(method="exact")``), the coverage of the lower bound
(share at or below 0) and the power when the candidate's values are 10 % lower (a real 10 %
reduction of the mean and of every quantile). A benchmark, not a test: rerun it to refresh the
"Claims" part of ``docs/validity.md``.

Usage: python bench/validity_claims.py --replicates 2000 [--workers 2] [--write docs/validity.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validity as v  # noqa: E402  (the validity study's writer)

from ragwarrant.contract import ClaimSet  # noqa: E402
from ragwarrant.gates.claims import gate_claims  # noqa: E402
from ragwarrant.outputs import GateStatus  # noqa: E402
from ragwarrant.stats.onesided import oriented_bootstrap  # noqa: E402

ALPHA = 0.05
REDUCTION = 0.10  # the true reduction at which power is measured
SIZES = (30, 100, 400)
STATISTICS = ("mean", "p95")
METHODS = ("rule", "percentile", "t")
BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"
_CLAIM = ClaimSet.model_validate({"items": [{"kind": "cost-reduction", "metric": "cost"}]})


def paired_costs(rng: np.random.Generator, n: int, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Shape (n,) candidate and baseline costs: lognormal, correlated through a shared example
    effect (log sd 0.5) with arm noise (log sd 0.8); the candidate's values times ``factor``."""
    shared = 0.5 * rng.normal(size=n)
    base = np.exp(shared + 0.8 * rng.normal(size=n))
    cand = np.exp(shared + 0.8 * rng.normal(size=n)) * factor
    return cand, base


def _t_lower(cand: np.ndarray, base: np.ndarray) -> float:
    d = base - cand  # oriented: lower cost is better
    return float(d.mean() - sps.t.ppf(1 - ALPHA, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))


def _one(stat: str, n: int, factor: float, r: int, resamples: int) -> dict[str, float]:
    """Lower bounds and claim flags of every method on one replicate (NaN: not applicable)."""
    cand, base = paired_costs(np.random.default_rng([2029, n, r, int(factor * 100)]), n, factor)
    rng = np.random.default_rng([2030, n, r])
    (boot,) = oriented_bootstrap(cand[:, None], base[:, None], [stat], [-1], None, resamples, rng)
    sample = (base - cand, np.arange(n)) if stat == "mean" else None
    (rule,) = gate_claims(_CLAIM, [boot], [stat], ALPHA, 0.8, [sample])
    plain = boot.percentile_test(0.0, ALPHA, power=0.8)
    passed = rule.status is GateStatus.PASS
    out = {"rule_lcb": float(rule.lower_bound or 0.0), "rule_pass": float(passed)}
    out |= {"percentile_lcb": plain.lower_bound, "percentile_pass": float(plain.rejects)}
    t_lcb = _t_lower(cand, base) if stat == "mean" else math.nan
    return out | {"t_lcb": t_lcb, "t_pass": float(t_lcb > 0) if stat == "mean" else math.nan}


def _job(args: tuple[str, int, float, int, int, int]) -> list[dict[str, float]]:
    stat, n, factor, start, stop, resamples = args
    return [_one(stat, n, factor, r, resamples) for r in range(start, stop)]


def _cp(k: int, n: int) -> str:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def summarise(stat: str, n: int, null: list[dict[str, float]], alt: list[dict[str, float]]) -> str:
    """Table rows of every applicable method for one statistic and size."""
    rows = []
    for m in METHODS:
        passes = np.array([x[f"{m}_pass"] for x in null])
        if np.all(np.isnan(passes)):
            continue
        lcb = np.array([x[f"{m}_lcb"] for x in null])
        power = float(np.mean([x[f"{m}_pass"] for x in alt]))
        k = int(np.sum(passes))
        ok = sps.binomtest(k, passes.size).proportion_ci(method="exact").high <= ALPHA + 0.01
        verdict = ("ok" if ok else "MISS: rate") if m == "rule" else ""
        rows.append(
            f"| {stat} | {n} | {m} | {_cp(k, passes.size)} | {np.mean(lcb <= 0):.3f} | "
            f"{power:.3f} | {verdict} |"
        )
    return "\n".join(rows)


def run(replicates: int, resamples: int, workers: int) -> str:
    """The whole table (markdown)."""
    chunk = max(1, math.ceil(replicates / (4 * max(workers, 1))))
    cells = [(s, n, f) for s in STATISTICS for n in SIZES for f in (1.0, 1.0 - REDUCTION)]
    jobs = [
        (s, n, f, a, min(a + chunk, replicates), resamples)
        for s, n, f in cells
        for a in range(0, replicates, chunk)
    ]
    rows: dict[tuple[str, int, float], list[dict[str, float]]] = {}
    with Pool(workers) as pool:
        for job, res in zip(jobs, pool.imap(_job, jobs), strict=True):
            rows.setdefault(job[:3], []).extend(res)
    head = (
        "| statistic | pairs | method | false claim at Δ = 0 [CP 95 %] | coverage of LCB | "
        "power at a 10 % reduction | target |\n|---|---|---|---|---|---|---|\n"
    )
    body = [
        summarise(s, n, rows[(s, n, 1.0)], rows[(s, n, 1.0 - REDUCTION)])
        for s in STATISTICS
        for n in SIZES
    ]
    return head + "\n".join(body) + "\n"


def main() -> None:
    """Run the study, print the table and optionally write it between the claims markers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write", default=None, help="markdown file, e.g. docs/validity.md")
    args = parser.parse_args()
    table = run(args.replicates, args.resamples, args.workers)
    print(table)
    if args.write:
        cmd = "python bench/validity_claims.py " + " ".join(sys.argv[1:])
        text = f"## Claims: `{cmd}` ({datetime.date.today().isoformat()})\n\n{_INTRO}\n\n{table}"
        v.replace_generated(Path(args.write), text, (BEGIN, END), first=False)


_INTRO = (
    "Paired lognormal costs (log sd 0.5 shared by the pair, 0.8 per arm), the candidate's arm "
    "distributed as the baseline's (true delta 0 in the mean and in the p95: a passing claim is "
    "false) or 10 % lower (power). One-sided alpha 0.05, B = 2,000 resamples; `rule` = the "
    "engine's claim gate (`gates.claims.gate_claims`: the expanded percentile with the Monte "
    "Carlo guard, and for a mean claim also the paired t-test, both must reject), "
    "`percentile` = the plain percentile bound claims used "
    "before, `t` = the paired t-test (mean only), all on the same replicates. Target (issue 10's, "
    "applied to claims): upper CP bound ≤ alpha + 0.01."
)


if __name__ == "__main__":
    main()
