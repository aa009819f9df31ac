"""How many more paired examples would likely resolve an inconclusive one-sided test."""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["HINT_MAX_FACTOR", "additional_pairs_needed", "feasible_hint"]

_Z = NormalDist().inv_cdf

#: A hint above this multiple of the current units (at least 30 units) is not printed: the
#: effect is then too close to the threshold for any feasible sample to resolve it.
HINT_MAX_FACTOR = 100


def feasible_hint(more: int, gap: float, n_units: int) -> int | None:
    """``more`` when it is a useful hint, else None.

    None when the estimate is at or beyond the threshold (``gap`` = estimate - threshold <= 0,
    oriented: more data at this effect would more likely confirm the loss than resolve it), or
    when ``more`` exceeds ``HINT_MAX_FACTOR`` × max(n_units, 30) (the difference is too small to
    resolve with feasible data; a count of millions would only mislead).
    """
    if gap <= 0 or more > HINT_MAX_FACTOR * max(n_units, 30):
        return None
    return more


def additional_pairs_needed(
    estimate: float, threshold: float, standard_error: float, n: int, alpha: float, power: float
) -> int | None:
    """Additional pairs for a one-sided test at ``alpha`` to reach ``power`` at the observed effect.

    Assumes the standard error shrinks as 1/sqrt(n) (normal approximation; e.g. Chow, Shao &
    Wang 2008, §3.1): n* = n × (SE × (z_{1-alpha} + z_{power}) / |estimate - threshold|)^2.

    Args:
        estimate: observed statistic (oriented, metric units).
        threshold: the bound it must clear (e.g. -margin_abs, or 0 for a claim).
        standard_error: bootstrap standard error at the current n.
        n: current paired n (or number of clusters for a cluster bootstrap).

    Returns:
        max(0, ceil(n* - n)), or None when the estimate is at or beyond the threshold, the
        standard error is zero, or the count is not feasible (``feasible_hint``).
    """
    gap = estimate - threshold
    if gap <= 0 or standard_error <= 0 or not math.isfinite(standard_error):
        return None
    z = _Z(1 - alpha) + _Z(power)
    needed = n * (standard_error * z / gap) ** 2
    return feasible_hint(max(0, math.ceil(needed - n)), gap, n)
