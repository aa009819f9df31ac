"""Informational cost and latency deltas: one ``operational:<metric>`` gate per operational metric.

The contract's ``operational_metrics`` are compared even when no claim is made on them, so a
candidate five times dearer per token is visible in decision.json, report.md and report.html.
These gates never decide: their status is ``not-applicable`` and ``decision`` ignores their kind.

Bounds are the two-sided (1 - alpha) bootstrap percentile interval of the oriented delta
(Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13), from the same paired
(cluster) bootstrap as the claim gates (``stats.onesided``).
"""

from __future__ import annotations

from ragwarrant.contract import OperationalMetric
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.onesided import OrientedBootstrap

__all__ = ["OPERATIONAL_KIND", "gate_operational"]

OPERATIONAL_KIND = "operational"
"""The gate kind of an informational operational delta (never classified)."""


def gate_operational(
    metric: OperationalMetric, test: OrientedBootstrap | None, alpha: float, paired_n: int
) -> GateResult:
    """The informational delta of one operational metric, candidate − baseline, oriented.

    Args:
        metric: the contract's operational metric (its statistic, unit and direction).
        test: the oriented bootstrap of its delta (positive = candidate cheaper or faster), or
            None when fewer than two examples are paired (then nothing is estimated).
        alpha: the contract's alpha; the interval is two-sided at confidence 1 - alpha.
        paired_n: paired examples (reported when ``test`` is None).

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
    return GateResult.model_validate(
        {
            **common,
            "estimate": test.estimate,
            "lower_bound": low,
            "upper_bound": high,
            "n": test.n,
            "reason": f"{metric.id}: informational, never decides: {metric.statistic} delta "
            f"{test.estimate:+.4g} {metric.unit}, two-sided {1 - alpha:.0%} interval "
            f"[{low:+.4g}, {high:+.4g}] (positive = candidate better)",
            "details": {"interval": "two-sided", "resampled_units": test.n_units},
        }
    )
