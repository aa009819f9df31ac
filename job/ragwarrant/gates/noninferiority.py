"""Quality noninferiority: an intersection-union test over metrics and protected slices.

Each (metric, slice) is its own one-sided test at the full alpha; the candidate passes only if
every one passes, so no alpha split is needed (Berger 1982, Technometrics 24:295–300).
"""

from __future__ import annotations

from ragwarrant.gates._testing import OrientedTest
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.power import additional_pairs_needed

__all__ = ["gate_noninferiority"]


def gate_noninferiority(
    metric: str,
    slice_value: str | None,
    test: OrientedTest,
    margin_abs: float,
    alpha: float,
    power: float,
) -> GateResult:
    """Test H0: delta <= -margin against H1: delta > -margin on oriented paired deltas.

    Pass when LCB(delta) >= -margin; a confirmed loss (fail) when UCB(delta) < -margin;
    otherwise inconclusive, with the additional pairs likely to resolve it at ``power``.
    Bounds are one-sided percentile bounds at ``alpha``, in metric units, positive = better.
    """
    lcb, ucb = test.lower(alpha), test.upper(alpha)
    threshold = -margin_abs
    where = f"{metric}" + (f" on slice {slice_value!r}" if slice_value is not None else "")
    more = None
    if lcb >= threshold:
        status = GateStatus.PASS
        reason = f"{where}: lower bound {lcb:+.4g} >= -margin {threshold:+.4g}: noninferior"
    elif ucb < threshold:
        status = GateStatus.FAIL
        reason = (
            f"{where}: upper bound {ucb:+.4g} < -margin {threshold:+.4g}: "
            "a confirmed loss beyond the margin"
        )
    else:
        status = GateStatus.INCONCLUSIVE
        more = additional_pairs_needed(
            test.estimate, threshold, test.standard_error(), test.n_units, alpha, power
        )
        reason = (
            f"{where}: the interval [{lcb:+.4g}, {ucb:+.4g}] straddles -margin {threshold:+.4g}; "
            + (
                "the estimate is inside the margin, "
                "so more data would more likely show noninferiority"
                if test.estimate > threshold
                else "the estimate is beyond the margin, "
                "so more data would more likely confirm a loss"
            )
        )
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
        p_value=test.p_greater(threshold),
        n=test.n,
        reason=reason,
        more_paired_n=more,
        details={"resampled_units": test.n_units},
    )
