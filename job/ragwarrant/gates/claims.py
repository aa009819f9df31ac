"""Improvement claims: each must be supported by its own one-sided confidence bound.

Claims joined by ``any`` form a union, tested with Holm's step-down procedure at family-wise
level alpha; claims joined by ``all`` form an intersection, each at alpha.
"""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import Claim, ClaimSet
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.onesided import OrientedBootstrap

__all__ = ["claim_family_p_value", "gate_claims"]


def _claim_gate(
    claim: Claim,
    statistic: str,
    boot: OrientedBootstrap,
    level: float,
    alpha: float,
    power: float,
    established: bool,
    family_note: str,
) -> GateResult:
    test = boot.test_greater(0.0, level, power=power)
    lcb = test.lower_bound
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
        p_value=test.p_value,
        n=test.n,
        reason=reason + family_note,
        more_paired_n=more,
        details={"resampled_units": test.n_units},
    )


def _p_values(tests: list[OrientedBootstrap]) -> np.ndarray:
    return np.array([t.p_greater(0.0) for t in tests])


def gate_claims(
    claims: ClaimSet,
    tests: list[OrientedBootstrap],
    statistics: list[str],
    alpha: float,
    power: float,
) -> list[GateResult]:
    """One gate per declared claim, aligned with ``claims.items``.

    ``any``: Holm step-down over the claims' p-values (H0: oriented delta <= 0); a claim holds
    when its lower bound at its Holm level is above 0; the step-down stops at the first claim that
    does not hold. ``all``: each claim at ``alpha``. A claim whose upper bound at ``alpha`` is
    <= 0 fails (no-benefit).
    """
    k = len(claims.items)
    if claims.join == "all" or k == 1:
        levels = np.full(k, alpha)
        established = [t.test_greater(0.0, alpha, power=power).rejects for t in tests]
        note = "" if k == 1 else " (all claims must hold)"
    else:
        p = _p_values(tests)
        levels = holm_levels(p, alpha)
        established = [False] * k
        for i in np.argsort(p, kind="stable"):
            if tests[i].test_greater(0.0, float(levels[i]), power=power).rejects:
                established[i] = True
            else:
                break
        note = f" (Holm over {k} claims joined by any)"
    return [
        _claim_gate(c, s, t, float(lv), alpha, power, e, note)
        for c, s, t, lv, e in zip(claims.items, statistics, tests, levels, established, strict=True)
    ]


def claim_family_p_value(claims: ClaimSet, tests: list[OrientedBootstrap]) -> float:
    """A p-value for "the declared claims hold".

    The max over claims for ``join: all``; the Holm-adjusted min for ``join: any``.
    """
    p = _p_values(tests)
    if claims.join == "all":
        return float(p.max())
    m = p.size
    ordered = np.sort(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * ordered)
    return float(min(1.0, adjusted[0]))
