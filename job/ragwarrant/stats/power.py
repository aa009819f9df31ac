"""How many more paired examples would likely resolve an inconclusive one-sided test."""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["additional_pairs_needed"]

_Z = NormalDist().inv_cdf


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
        max(0, ceil(n* - n)), or None when the estimate sits on the threshold or the standard
        error is zero (no sample size resolves it at this effect).
    """
    gap = abs(estimate - threshold)
    if gap == 0 or standard_error <= 0 or not math.isfinite(standard_error):
        return None
    z = _Z(1 - alpha) + _Z(power)
    needed = n * (standard_error * z / gap) ** 2
    return max(0, math.ceil(needed - n))
