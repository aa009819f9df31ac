"""Quality noninferiority: an intersection-union test over metrics and protected slices.

Each (metric, slice) is its own one-sided test at the full alpha; the candidate passes only if
every one passes, so no alpha split is needed (Berger 1982, Technometrics 24:295–300).
"""

from __future__ import annotations

import math

from ragwarrant.display import quoted
from ragwarrant.outputs import GateResult, GateStatus, Scalar
from ragwarrant.stats.noninferiority import MAX_RESAMPLES
from ragwarrant.stats.onesided import OneSidedTest


def p_floor(test: OneSidedTest) -> float | None:
    """The smallest p-value the guarded bootstrap can show at level ``test.alpha``, when it
    exceeds that alpha (no sample then reaches it); else None.

    With no replicate at or beyond -margin among ``MAX_RESAMPLES`` B, the Monte Carlo guard's
    p-value is the Clopper-Pearson upper bound 1 - alpha^(1/B), about ln(1/alpha)/B
    (``stats.onesided.mc_decision``): above alpha for alpha below about 1e-4.
    """
    if not test.method.startswith("guarded"):
        return None
    floor = -math.expm1(math.log(test.alpha) / MAX_RESAMPLES)
    return floor if floor > test.alpha else None


def _inconclusive_reason(where: str, test: OneSidedTest) -> str:
    """Why the test is inconclusive, then the hint in its own unit (clusters as clusters, pairs
    as pairs); never "about 0 more": without a useful count, why (``p_floor``, the estimate too
    close to -margin)."""
    lcb, ucb, threshold = test.lower_bound, test.upper_bound, test.threshold
    if test.degenerate_reason is not None:
        why = (
            f"{where}: {test.degenerate_reason}; "
            f"the lower bound {lcb:+.4g} does not exclude -margin {threshold:+.4g}"
        )
    elif lcb > threshold:  # the bound clears -margin; the p-value does not reach alpha
        why = (
            f"{where}: the lower bound {lcb:+.4g} is above -margin {threshold:+.4g} but p "
            f"{test.p_value:.3g} > alpha {test.alpha:g}"
        )
    else:
        why = (
            f"{where}: the interval [{lcb:+.4g}, {ucb:+.4g}] straddles -margin {threshold:+.4g}; "
            + (
                "the estimate is inside the margin, so more data would more likely show "
                "noninferiority"
                if test.estimate > threshold
                else "the estimate is beyond the margin, so more data would more likely confirm "
                "a loss"
            )
        )
    if (floor := p_floor(test)) is not None:
        return (
            f"{why}; alpha {test.alpha:g} is below the smallest p-value the bootstrap can show "
            f"({floor:.2g} with {MAX_RESAMPLES:,} resamples): more data would not resolve it, "
            "an alpha of at least that would"
        )
    if test.more_units_needed:
        unit = "clusters" if test.unit_name == "clusters" else "paired examples"
        return f"{why}; about {test.more_units_needed} more {unit} would likely resolve it"
    if lcb > threshold:
        return f"{why}: not every check of the test rejects yet"
    if test.estimate > threshold and test.degenerate_reason is None:
        return f"{why}; the estimate is too close to -margin for a feasible sample to resolve it"
    return why


def gate_noninferiority(
    metric: str,
    slice_value: str | None,
    test: OneSidedTest,
    margin_abs: float,
    alpha: float,
    power: float,
) -> GateResult:
    """Test H0: delta <= -margin against H1: delta > -margin on oriented paired deltas.

    Pass only when the stats test rejects H0 at ``alpha`` (its p-value <= alpha and its lower
    bound strictly above -margin: ``stats.noninferiority.test_noninferiority``); a confirmed
    loss (fail) when the upper bound is below -margin; otherwise inconclusive, with the
    additional units (pairs or clusters, as the reason says) likely to resolve it at ``power``.
    Bounds are one-sided at ``alpha``, in metric units, positive = better.

    Args:
        test: a ``OneSidedTest`` from ``stats.noninferiority.test_noninferiority``; its method is
            recorded in ``method``, its unit and any degenerate reason in ``details``.
        margin_abs: the margin in metric units (the test's threshold is -margin_abs).
        power: kept for a uniform gate signature; the test computed its hint at this power.
    """
    del margin_abs, power  # the test carries its threshold and hint
    lcb, ucb, threshold = test.lower_bound, test.upper_bound, test.threshold
    where = f"{metric}" + (f" on slice {quoted(slice_value)}" if slice_value is not None else "")
    more = None
    if test.rejects:
        status = GateStatus.PASS
        reason = (
            f"{where}: lower bound {lcb:+.4g} > -margin {threshold:+.4g} and p "
            f"{test.p_value:.3g} <= alpha {alpha:g}: noninferior"
        )
    elif ucb < threshold:
        status = GateStatus.FAIL
        reason = (
            f"{where}: upper bound {ucb:+.4g} < -margin {threshold:+.4g}: "
            "a confirmed loss beyond the margin"
        )
    else:
        status = GateStatus.INCONCLUSIVE
        more = None if p_floor(test) is not None else test.more_units_needed or None
        reason = _inconclusive_reason(where, test)
    details: dict[str, Scalar] = {
        "resampled_units": test.n_units,
        "units": test.unit_name,
        "degenerate_reason": test.degenerate_reason,
    }
    if status is GateStatus.INCONCLUSIVE and (floor := p_floor(test)) is not None:
        details["p_floor"] = floor
    gid = f"noninferiority:{metric}" + (f"@{slice_value}" if slice_value is not None else "")
    return GateResult(
        id=gid,
        kind="noninferiority",
        status=status,
        metric=metric,
        slice=slice_value,
        statistic="mean paired delta, oriented (positive = candidate better)",
        estimate=test.estimate,
        lower_bound=lcb,
        upper_bound=ucb,
        threshold=threshold,
        alpha=alpha,
        p_value=test.p_value,
        n=test.n,
        reason=reason,
        more_paired_n=more,
        method=test.method,
        method_steps=list(test.method_steps),
        details=details,
    )


def gate_too_few_pairs(
    metric: str, slice_value: str | None, n: int, minimum: int, margin_abs: float, alpha: float
) -> GateResult:
    """A test with fewer pairs than its ``min_paired_n`` (a protected slice's): INCONCLUSIVE,
    not tested.

    Below ``min_paired_n`` the contract trusts no bound (a small slice seldom shows a long
    tail of losses; docs/validity.md, issue 33); a slice too small to decide is not defective
    evidence, so the candidate is not BLOCKed: it stays unresolved until the slice has
    ``minimum`` pairs (``more_paired_n`` = minimum - n; ``details.paired_n``,
    ``details.min_paired_n``).
    """
    where = f"{metric}" + (f" on slice {quoted(slice_value)}" if slice_value is not None else "")
    return GateResult(
        id=f"noninferiority:{metric}" + (f"@{slice_value}" if slice_value is not None else ""),
        kind="noninferiority",
        status=GateStatus.INCONCLUSIVE,
        metric=metric,
        slice=slice_value,
        threshold=-margin_abs,
        alpha=alpha,
        n=n,
        reason=f"{where}: paired n {n} is below min_paired_n {minimum}, so it is not tested; "
        f"{minimum - n} more paired examples would let it be decided",
        more_paired_n=minimum - n,
        method="not tested: paired n below min_paired_n",
        details={"paired_n": n, "min_paired_n": minimum, "units": "pairs"},
    )
