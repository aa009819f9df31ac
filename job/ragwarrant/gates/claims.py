"""Improvement claims: each must be supported by its own one-sided confidence bound.

Claims joined by ``any`` form a union, tested with Holm's step-down procedure at family-wise
level alpha; claims joined by ``all`` form an intersection, each at alpha.

A claim on a mean must also pass the tilted score check (``stats.tilted_score``) at its level:
the percentile bootstrap alone established a cost reduction that did not exist in 8.3 % of runs
when the candidate is cheaper on most examples and much dearer on a few (n = 60, alpha 0.05;
third trial; 4.5 % with the check), which takes the variance of the least favourable null
distribution. Claims on p50 or p95 are decided by the bootstrap alone.
"""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import Claim, ClaimSet
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.onesided import OrientedBootstrap
from ragwarrant.stats.tilted_score import tilted_score_test

__all__ = ["claim_family_p_value", "gate_claims"]


def _score_p(deltas: np.ndarray | None, level: float) -> float:
    """The tilted score check's p-value for H0: mean oriented delta <= 0 (0 when not run)."""
    return 0.0 if deltas is None else tilted_score_test(deltas, 0.0, level).p_value


def _holds(boot: OrientedBootstrap, deltas: np.ndarray | None, level: float, power: float) -> bool:
    """The bootstrap and the tilted score check both reject H0: oriented delta <= 0."""
    rejects = boot.test_greater(0.0, level, power=power).rejects
    return rejects and _score_p(deltas, level) <= level


def _claim_gate(
    claim: Claim,
    statistic: str,
    boot: OrientedBootstrap,
    level: float,
    alpha: float,
    power: float,
    established: bool,
    family_note: str,
    deltas: np.ndarray | None = None,
) -> GateResult:
    test = boot.test_greater(0.0, level, power=power)
    lcb = test.lower_bound
    score_p = _score_p(deltas, level)
    if not established and lcb > 0 and score_p > level:
        family_note = (
            f"; the tilted score check's p-value {score_p:.3g} is above the level {level:.4g}"
            + family_note
        )
    ucb_alpha = boot.test_greater(0.0, alpha, power=power).upper_bound
    more = None
    if established:
        status = GateStatus.PASS
        reason = (
            f"{claim.kind.value} on {claim.metric}: lower bound {lcb:+.4g} > 0 at level {level:.4g}"
        )
    elif ucb_alpha <= 0:
        status = GateStatus.FAIL
        reason = (
            f"{claim.kind.value} on {claim.metric}: "
            f"upper bound at alpha {alpha:g} {ucb_alpha:+.4g} <= 0: "
            "no gain (no-benefit)"
        )
    else:
        status = GateStatus.INCONCLUSIVE
        more = test.more_units_needed
        reason = (
            f"{claim.kind.value} on {claim.metric}: lower bound {lcb:+.4g} at level {level:.4g} "
            f"does not exclude 0 (upper bound at alpha {alpha:g}: {ucb_alpha:+.4g}); "
            + (
                "the estimate shows a gain, so more data would more likely establish the claim"
                if test.estimate > 0
                else "the estimate shows no gain, so more data would more likely show no benefit"
            )
        )
    return GateResult(
        id=f"claim:{claim.kind.value}:{claim.metric}",
        kind="claim",
        status=status,
        metric=claim.metric,
        statistic=f"{statistic} delta, oriented (positive = candidate better)",
        estimate=test.estimate,
        lower_bound=lcb,
        upper_bound=test.upper_bound,
        threshold=0.0,
        alpha=level,
        p_value=max(test.p_value, score_p),
        n=test.n,
        reason=reason + family_note,
        more_paired_n=more,
        details={"resampled_units": test.n_units},
    )


def _p_values(
    tests: list[OrientedBootstrap], deltas: list[np.ndarray | None], alpha: float
) -> np.ndarray:
    return np.array(
        [max(t.p_greater(0.0), _score_p(d, alpha)) for t, d in zip(tests, deltas, strict=True)]
    )


def gate_claims(
    claims: ClaimSet,
    tests: list[OrientedBootstrap],
    statistics: list[str],
    alpha: float,
    power: float,
    deltas: list[np.ndarray | None] | None = None,
) -> list[GateResult]:
    """One gate per declared claim, aligned with ``claims.items``.

    ``any``: Holm step-down over the claims' p-values (H0: oriented delta <= 0); a claim holds
    when its lower bound at its Holm level is above 0; the step-down stops at the first claim that
    does not hold. ``all``: each claim at ``alpha``. A claim whose upper bound at ``alpha`` is
    <= 0 fails (no-benefit). ``deltas``: per claim, the oriented unit deltas of a mean claim
    for the tilted score check, or None (a quantile statistic: the bootstrap alone decides).
    """
    k = len(claims.items)
    units: list[np.ndarray | None] = list(deltas) if deltas is not None else [None] * k
    if claims.join == "all" or k == 1:
        levels = np.full(k, alpha)
        established = [_holds(t, d, alpha, power) for t, d in zip(tests, units, strict=True)]
        note = "" if k == 1 else " (all claims must hold)"
    else:
        p = _p_values(tests, units, alpha)
        levels = holm_levels(p, alpha)
        established = [False] * k
        for i in np.argsort(p, kind="stable"):
            if _holds(tests[i], units[i], float(levels[i]), power):
                established[i] = True
            else:
                break
        note = f" (Holm over {k} claims joined by any)"
    return [
        _claim_gate(c, s, t, float(lv), alpha, power, e, note, d)
        for c, s, t, lv, e, d in zip(
            claims.items, statistics, tests, levels, established, units, strict=True
        )
    ]


def claim_family_p_value(
    claims: ClaimSet,
    tests: list[OrientedBootstrap],
    deltas: list[np.ndarray | None] | None = None,
    alpha: float = 0.05,
) -> float:
    """A p-value for "the declared claims hold".

    The max over claims for ``join: all``; the Holm-adjusted min for ``join: any``. Each claim's
    p-value is the larger of the bootstrap's and the tilted score check's (``deltas``).
    """
    units: list[np.ndarray | None] = list(deltas) if deltas is not None else [None] * len(tests)
    p = _p_values(tests, units, alpha)
    if claims.join == "all":
        return float(p.max())
    m = p.size
    ordered = np.sort(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * ordered)
    return float(min(1.0, adjusted[0]))
