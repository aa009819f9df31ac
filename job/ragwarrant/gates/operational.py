"""Informational cost and latency deltas: one ``operational:<metric>`` gate per operational metric.

The contract's ``operational_metrics`` are compared even when no claim is made on them, so a
candidate five times dearer per token is visible in decision.json, report.md and report.html.
These gates never decide: their status is ``not-applicable`` and ``decision`` ignores their kind.

Bounds are the two-sided (1 - alpha) bootstrap percentile interval of the oriented delta
(Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13), from the same paired
(cluster) bootstrap as the claim gates (``stats.onesided``).
"""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import OperationalMetric
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.bootstrap import statistic_value
from ragwarrant.stats.onesided import OrientedBootstrap

OPERATIONAL_KIND = "operational"
"""The gate kind of an informational operational delta (never classified)."""


def _amount(value: float, unit: str, *, signed: bool) -> str:
    """``+$0.00022`` for usd (two significant digits), else ``+35 ms`` (three)."""
    sign = ("+" if value >= 0 else "-") if signed else ("-" if value < 0 else "")
    if unit.lower() == "usd":
        return f"{sign}${abs(value):.2g}"
    return f"{sign}{abs(value):.3g} {unit}"


def difference_in_reader_terms(
    metric: OperationalMetric, oriented_estimate: float, baseline: np.ndarray, *, gain: bool = False
) -> str:
    """The candidate's difference from the baseline, un-oriented, with its relative size.

    ``"the candidate costs +$0.00022 per request (+12 %, baseline $0.0018)"`` for a mean in
    usd; ``"the candidate's p95 latency_ms is +35 ms (+12 %, baseline 290 ms)"`` otherwise.
    The sign is candidate − baseline (``+`` = the candidate costs more, or is slower), whatever
    the metric's direction; the percentage is of the baseline's statistic on the same paired
    examples, and is left out when that is 0.

    Args:
        metric: the contract's operational metric (unit, statistic, direction).
        oriented_estimate: the gate's estimate (positive = candidate better).
        baseline: shape (n,), the baseline's paired values in metric units, n >= 1.
        gain: word it as the oriented gain instead (``"mean gain -$0.00022 per request (-12 %,
            baseline $0.0018; positive = candidate better)"``), the sign of a claim's bounds.
    """
    delta = oriented_estimate if gain else metric.direction.sign * oriented_estimate
    level = statistic_value(baseline, metric.statistic)
    share = f"{100 * delta / level:+.0f} %, " if level else ""
    base = _amount(level, metric.unit, signed=False)
    amount = _amount(delta, metric.unit, signed=True)
    per = " per request" * (metric.statistic == "mean" and metric.unit.lower() == "usd")
    if gain:
        convention = "positive = candidate better"
        return f"{metric.statistic} gain {amount}{per} ({share}baseline {base}; {convention})"
    if per:
        return f"the candidate costs {amount}{per} ({share}baseline {base})"
    return f"the candidate's {metric.statistic} {metric.id} is {amount} ({share}baseline {base})"


def gate_operational(
    metric: OperationalMetric,
    test: OrientedBootstrap | None,
    alpha: float,
    paired_n: int,
    baseline: np.ndarray | None = None,
) -> GateResult:
    """The informational delta of one operational metric, candidate − baseline, oriented.

    Args:
        metric: the contract's operational metric (its statistic, unit and direction).
        test: the oriented bootstrap of its delta (positive = candidate cheaper or faster), or
            None when fewer than two examples are paired (then nothing is estimated).
        alpha: the contract's alpha; the interval is two-sided at confidence 1 - alpha.
        paired_n: paired examples (reported when ``test`` is None).
        baseline: shape (paired_n,), the baseline's paired values, for the reason's reading in
            the reader's terms (``difference_in_reader_terms``); None leaves it out.

    Returns:
        A ``GateResult`` of kind ``operational``, status ``not-applicable``; estimate and bounds
        are None, with the reason saying so, when nothing could be estimated.
    """
    statistic = f"{metric.statistic} delta in {metric.unit}, oriented (positive = candidate better)"
    common = {
        "id": f"{OPERATIONAL_KIND}:{metric.id}",
        "kind": OPERATIONAL_KIND,
        "status": GateStatus.NOT_APPLICABLE,
        "metric": metric.id,
        "statistic": statistic,
        "alpha": alpha,
    }
    if test is None:
        return GateResult.model_validate(
            {
                **common,
                "n": paired_n,
                "reason": f"{metric.id}: informational; not estimated: {paired_n} paired "
                "example(s), at least 2 needed",
            }
        )
    low, high = test.lower(alpha / 2), test.upper(alpha / 2)
    reading = (
        f"{difference_in_reader_terms(metric, test.estimate, baseline)}; "
        if baseline is not None and baseline.size
        else ""
    )
    return GateResult.model_validate(
        {
            **common,
            "estimate": test.estimate,
            "lower_bound": low,
            "upper_bound": high,
            "n": test.n,
            "reason": f"{metric.id}: {reading}informational, never decides: "
            f"{metric.statistic} delta {test.estimate:+.4g} {metric.unit}, "
            f"two-sided {1 - alpha:.0%} interval [{low:+.4g}, {high:+.4g}] "
            "(positive = candidate better)",
            "details": {"interval": "two-sided", "resampled_units": test.n_units},
        }
    )
