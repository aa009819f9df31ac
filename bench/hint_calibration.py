"""Calibration of the "more units needed" hint: followed, does it resolve about 80 % of cases?

An INCONCLUSIVE noninferiority gate states how many more paired examples (or clusters) would
likely resolve it at 80 % power (``stats.power.additional_pairs_needed``: the normal-theory
sample size at the observed effect and standard error, Chow, Shao & Wang 2008, §3.1). This
benchmark follows the hint as a team would: for each replicate whose first test is
INCONCLUSIVE with a count, it draws that many more units from the same data-generating process,
tests the extended sample again and records whether the gate is resolved (it passes, or the
upper bound falls below -margin: a confirmed loss).

On the SAME replicates it does the same with a textbook reference: the paired t-test (on
cluster or example means when the units are clusters or repetitions) whose hint is the same
formula with the t-test's own standard error, followed and judged by the t-test at alpha.

The data are the generators of ``bench/validity.py`` (binary pairs, Likert 1-5, right-skewed
continuous, clusters of 5), each started small enough that it is often INCONCLUSIVE, at a true
delta of 0 (an equivalent candidate) and of -margin/4. Rates carry Clopper-Pearson 95 %
intervals. A hint that is calibrated resolves about 80 % of the cases that follow it; one
computed from a noisy first sample cannot be exact (the observed effect of an INCONCLUSIVE
sample is biased towards the margin, which makes the hint ask for more).

A benchmark, not a test: rerun it to refresh the "hint" part of ``docs/validity.md``.

Usage: python bench/hint_calibration.py --replicates 1000 [--write docs/validity.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validity as v  # noqa: E402  (the validity study's generators)

from ragwarrant.stats.noninferiority import MetricKind, test_noninferiority  # noqa: E402
from ragwarrant.stats.power import additional_pairs_needed  # noqa: E402

ALPHA = 0.05
POWER = 0.8
BEGIN, END = "<!-- hint:begin -->", "<!-- hint:end -->"


@dataclass(frozen=True)
class HintScenario:
    """A generator factory (units -> generator), its metric and the first sample's units."""

    name: str
    kind: MetricKind
    margin: float
    scale: tuple[float, float]
    factory: Callable[[int], v.Generator]
    first_units: int
    unit_size: int = 1  # examples per unit (clusters of 5)


SCENARIOS = [
    HintScenario("binary", "binary", 0.05, (0, 1), v._binary, 120),
    HintScenario("likert-1-5", "ordinal", 0.25, (1, 5), v._likert, 40),
    HintScenario("skewed", "continuous", 0.05, (-5, 5), v._skewed, 60),
    HintScenario("clusters-x5", "continuous", 0.05, (-5, 5), v._clustered, 15, 5),
]
TRUTHS = {"Δ = 0": 0.0, "Δ = −margin/4": -0.25}  # multiples of the margin


def _extend(first: v.Sample, more: v.Sample) -> v.Sample:
    """``first`` followed by ``more``, with ``more``'s cluster labels shifted past ``first``'s."""
    groups = None
    if first.groups is not None and more.groups is not None:
        groups = np.concatenate([first.groups, more.groups + int(first.groups.max()) + 1])
    return replace(
        first,
        candidate=np.concatenate([first.candidate, more.candidate]),
        baseline=np.concatenate([first.baseline, more.baseline]),
        groups=groups,
    )


def _rule(sc: HintScenario, s: v.Sample, seed: list[int]) -> tuple[str, int | None]:
    """The engine's rule on ``s``: ('pass' | 'loss' | 'inconclusive', units needed)."""
    res = test_noninferiority(
        s.candidate,
        s.baseline,
        kind=sc.kind,
        margin_abs=sc.margin,
        alpha=ALPHA,
        rng=np.random.default_rng(seed),
        scale=sc.scale,
        groups=s.groups,
        power=POWER,
    )
    if res.rejects:
        return "pass", None
    if res.upper_bound < -sc.margin:
        return "loss", None
    return "inconclusive", res.more_units_needed


def _t(sc: HintScenario, s: v.Sample) -> tuple[str, int | None]:
    """The paired t-test on unit deltas: the same outcome classes and its own hint."""
    d = v._unit_deltas(s)
    se = float(np.std(d, ddof=1)) / math.sqrt(d.size)
    q = float(sps.t.ppf(1 - ALPHA, d.size - 1))
    est = float(d.mean())
    if est - q * se > -sc.margin:
        return "pass", None
    if est + q * se < -sc.margin:
        return "loss", None
    return "inconclusive", additional_pairs_needed(est, -sc.margin, se, d.size, ALPHA, POWER)


def _follow(sc: HintScenario, delta: float, r: int, method: str) -> tuple[bool, int] | None:
    """One replicate under ``method``: (resolved after following the hint, hint), or None when
    the first test resolved or gave no count."""
    first = sc.factory(sc.first_units)(np.random.default_rng([2027, r]), delta)

    def judge(s: v.Sample, k: int) -> tuple[str, int | None]:
        return _rule(sc, s, [11, r, k]) if method == "rule" else _t(sc, s)

    outcome, more = judge(first, 0)
    if outcome != "inconclusive" or not more:
        return None
    extra = sc.factory(more)(np.random.default_rng([2028, r]), delta)
    return judge(_extend(first, extra), 1)[0] != "inconclusive", more


@dataclass(frozen=True)
class Row:
    """The hint's record under one method, scenario and truth."""

    scenario: str
    truth: str
    method: str
    replicates: int
    followed: int
    resolved: int
    median_hint: float


def measure(sc: HintScenario, truth: str, replicates: int, method: str) -> Row:
    """Follow ``method``'s hint on ``replicates`` samples of ``sc`` at ``truth``."""
    delta = TRUTHS[truth] * sc.margin
    done = [x for r in range(replicates) if (x := _follow(sc, delta, r, method)) is not None]
    hints = [more for _, more in done]
    return Row(
        sc.name,
        truth,
        method,
        replicates,
        len(done),
        sum(ok for ok, _ in done),
        float(np.median(hints)) if hints else math.nan,
    )


def _cp(k: int, n: int) -> str:
    if n == 0:
        return "—"
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def format_table(rows: list[Row], unit_sizes: dict[str, int]) -> str:
    """Markdown: one row per scenario, truth and method."""
    head = (
        "| scenario | true Δ | method | followed / replicates | resolved after following "
        "[CP 95 %] | median hint (units) | examples per unit |\n|---|---|---|---|---|---|---|\n"
    )
    body = [
        f"| {r.scenario} | {r.truth} | {r.method} | {r.followed} / {r.replicates} | "
        f"{_cp(r.resolved, r.followed)} | {r.median_hint:.0f} | {unit_sizes[r.scenario]} |"
        for r in rows
    ]
    return head + "\n".join(body) + "\n"


def run(replicates: int, only: set[str] | None = None) -> list[Row]:
    """Every scenario (or those in ``only``), both truths, both methods."""
    chosen = [sc for sc in SCENARIOS if only is None or sc.name in only]
    return [
        measure(sc, truth, replicates, method)
        for sc in chosen
        for truth in TRUTHS
        for method in ("rule", "t")
    ]


def main() -> None:
    """Run, print the table and optionally write it between the hint markers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--write", default=None, help="markdown file, e.g. docs/validity.md")
    args = parser.parse_args()
    rows = run(args.replicates, set(args.only.split(",")) if args.only else None)
    table = format_table(rows, {sc.name: sc.unit_size for sc in SCENARIOS})
    print(table)
    if args.write:
        cmd = "python bench/hint_calibration.py " + " ".join(sys.argv[1:])
        text = (
            f'## The "more units needed" hint, followed: `{cmd}` '
            f"({datetime.date.today().isoformat()})\n\n{_INTRO}\n\n{table}"
        )
        v.replace_generated(Path(args.write), text, (BEGIN, END), first=False)


_INTRO = (
    "Each replicate starts with a sample small enough to be often INCONCLUSIVE; when the first "
    "test is INCONCLUSIVE with a count, that many more units are drawn from the same process "
    "and the extended sample is tested again. *Resolved* = it passes or the upper bound falls "
    "below −margin. The hint aims at 80 % power at the observed effect, so a calibrated hint "
    "resolves about 80 % of the cases that follow it. `rule` is the engine "
    "(`stats.noninferiority.test_noninferiority`, its own `more_units_needed`); `t` is the "
    "paired t-test with the same sample-size formula on its own standard error "
    "(Chow, Shao & Wang 2008, §3.1), on the same replicates."
)


if __name__ == "__main__":
    main()
