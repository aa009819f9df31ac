"""Quality noninferiority: an intersection-union test over metrics and protected slices.

Each (metric, slice) is its own one-sided test at the full alpha; the candidate passes only if
every one passes, so no alpha split is needed (Berger 1982, Technometrics 24:295–300).
"""

from __future__ import annotations

from ragwarrant.outputs import GateResult, GateStatus, Scalar
from ragwarrant.stats.onesided import OneSidedTest, OrientedBootstrap

__all__ = ["gate_noninferiority"]


def _inconclusive_reason(where: str, test: OneSidedTest) -> str:
    lcb, ucb, threshold = test.lower_bound, test.upper_bound, test.threshold
    if test.degenerate_reason is not None:
        return (
            f"{where}: {test.degenerate_reason}; "
            f"the lower bound {lcb:+.4g} does not exclude -margin {threshold:+.4g}"
        )
    return (
        f"{where}: the interval [{lcb:+.4g}, {ucb:+.4g}] straddles -margin {threshold:+.4g}; "
        + (
            "the estimate is inside the margin, so more data would more likely show noninferiority"
            if test.estimate > threshold
            else "the estimate is beyond the margin, so more data would more likely confirm a loss"
        )
    )


def gate_noninferiority(
    metric: str,
    slice_value: str | None,
    test: OneSidedTest | OrientedBootstrap,
    margin_abs: float,
    alpha: float,
    power: float,
) -> GateResult:
    """Test H0: delta <= -margin against H1: delta > -margin on oriented paired deltas.

    Pass when the stats test rejects H0 at ``alpha``; a confirmed loss (fail) when the upper
    bound is below -margin; otherwise inconclusive, with the additional units likely to resolve
    it at ``power``. Bounds are one-sided at ``alpha``, in metric units, positive = better.

    Args:
        test: a ``OneSidedTest`` from ``stats.noninferiority.test_noninferiority`` (its method,
            unit and any degenerate reason are recorded in ``details``), or an
            ``OrientedBootstrap`` tested here by the first landing's inclusive percentile rule
            (LCB >= -margin), kept until the integrator wires the issue-10 rule.
    """
    record_method = isinstance(test, OneSidedTest)
    if isinstance(test, OrientedBootstrap):
        test = test.test_greater(-margin_abs, alpha, power=power, inclusive=True)
    lcb, ucb, threshold = test.lower_bound, test.upper_bound, test.threshold
    where = f"{metric}" + (f" on slice {slice_value!r}" if slice_value is not None else "")
    more = None
    if test.rejects:
        status = GateStatus.PASS
        cmp = ">" if record_method else ">="
        reason = f"{where}: lower bound {lcb:+.4g} {cmp} -margin {threshold:+.4g}: noninferior"
    elif ucb < threshold:
        status = GateStatus.FAIL
        reason = (
            f"{where}: upper bound {ucb:+.4g} < -margin {threshold:+.4g}: "
            "a confirmed loss beyond the margin"
        )
    else:
        status = GateStatus.INCONCLUSIVE
        more = test.more_units_needed
        reason = _inconclusive_reason(where, test)
    details: dict[str, Scalar] = {"resampled_units": test.n_units}
    if record_method:
        details.update(method=test.method, units=test.unit_name)
        if test.degenerate_reason is not None:
            details["degenerate_reason"] = test.degenerate_reason
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
        details=details,
    )
