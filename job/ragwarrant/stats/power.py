"""How many more paired examples would likely resolve an inconclusive one-sided test."""

from __future__ import annotations

import math
from statistics import NormalDist

_Z = NormalDist().inv_cdf

#: A hint above this multiple of the current units (at least 30 units) is not printed: the
#: effect is then too close to the threshold for any feasible sample to resolve it.
HINT_MAX_FACTOR = 100


#: A gap of at most this many units in the last place of the larger of estimate and threshold
#: is rounding noise (e.g. every delta computed as candidate - baseline = -margin in floats).
ROUNDING_ULPS = 16


def resolvable_gap(estimate: float, threshold: float) -> float:
    """``estimate - threshold`` (oriented, metric units), or 0.0 when it is rounding noise.

    An estimate within ``ROUNDING_ULPS`` units in the last place (``math.ulp``) of the
    threshold sits at it: no sample size resolves it, so no "more units" hint may be derived
    from it (a run whose every delta is exactly -margin once read "about 1199 more clusters
    would likely resolve it", from an estimate of -0.049999999999999996 against -0.05).
    """
    gap = estimate - threshold
    if abs(gap) <= ROUNDING_ULPS * math.ulp(max(abs(estimate), abs(threshold))):
        return 0.0
    return gap


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
        max(0, ceil(n* - n)), or None when the estimate is at or beyond the threshold (or
        within rounding of it, ``resolvable_gap``), the
        standard error is zero, or the count is not feasible (``feasible_hint``).
    """
    gap = resolvable_gap(estimate, threshold)
    if gap <= 0 or standard_error <= 0 or not math.isfinite(standard_error):
        return None
    z = _Z(1 - alpha) + _Z(power)
    needed = n * (standard_error * z / gap) ** 2
    return feasible_hint(max(0, math.ceil(needed - n)), gap, n)
