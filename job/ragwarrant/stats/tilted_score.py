"""A score check on unit deltas with the variance of the least favourable null distribution.

The percentile bootstrap estimates the spread of the mean delta from the sample. When a loss
beyond the margin comes from a few units with large losses (a Likert score that drops from 5 to
1 on 5 % of examples, the rest tied), the sample holds fewer of them than the truth at the
margin would, the bootstrap's spread is too small and it PROMOTEs a candidate at the margin in
6.5-8 % of runs at alpha = 0.05. Tango's score test avoids this for 0/1 metrics by taking the
variance under the null hypothesis (``stats.paired_binary``); this module does the same for any
metric.

For unit deltas u_1..u_G (pairs, or cluster means) and H0: mean = theta, the least favourable
null distribution is the exponential tilt of the empirical distribution with mean theta,
w_i ∝ exp(lambda u_i) (Efron 1981, "Nonparametric standard errors and confidence intervals",
Canadian Journal of Statistics 9:139–172; DiCiccio & Romano 1990, "Nonparametric confidence
limits by resampling methods and least favorable families", International Statistical Review
58:59–76; Davison & Hinkley 1997, "Bootstrap Methods and their Application", §4.4). Its
variance v0 = sum_i w_i (u_i - theta)^2 gives the score statistic

    z = (mean(u) - theta) / sqrt(v0 / G),

referred to Student's t with G - 1 degrees of freedom. On 0/1 data it is the score test for a
proportion. When no unit lies below theta the tilt does not exist and the check has nothing to
add (p-value 0): a loss that no sampled unit shows cannot be seen by any test of this kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ragwarrant.stats.distributions import t_cdf
from ragwarrant.stats.roots import bisect

_XTOL = 1e-12


@dataclass(frozen=True)
class TiltedScore:
    """Result of ``tilted_score_test``.

    Attributes:
        p_value: one-sided p-value of H0: mean <= threshold (0 when no unit lies below it).
        lower_bound: the one-sided (1 - alpha) lower bound of the score check, computed only
            when it does not reject (then <= threshold); None when it rejects.
    """

    p_value: float
    lower_bound: float | None


class _Tilt:
    """Sorted unit deltas u, their mean, and x = (u - theta) / scale for a null mean theta.

    Each evaluation of the tilted moments reuses two scratch buffers (no allocation and no page
    faults per Newton or bisection step); u is sorted ascending, so the largest exponent lies at
    an end of x and no pass is spent finding it. The weighted sums are numpy's pairwise sums,
    not BLAS dot products, whose partial sums follow the number of BLAS threads: the result does
    not depend on the machine's core count or on what other threads run.
    """

    def __init__(self, unit_delta: np.ndarray) -> None:
        self.u = np.sort(np.asarray(unit_delta, dtype=np.float64))  # same floats in any order
        self.mean = float(self.u.mean())
        self.x = np.empty(self.u.size)
        self.w = np.empty(self.u.size)
        self.wx = np.empty(self.u.size)

    def moments(self, lam: float) -> tuple[float, float]:
        """(mean, variance) of x under weights proportional to exp(lam x)."""
        a = np.multiply(self.x, lam, out=self.w)
        w = np.exp(np.subtract(a, max(a[0], a[-1]), out=a), out=a)  # in (0, 1], the largest 1
        total = float(w.sum())
        wx = np.multiply(w, self.x, out=self.wx)
        mean = float(wx.sum()) / total
        wx *= self.x
        return mean, max(float(wx.sum()) / total - mean * mean, 0.0)

    def null_variance(self, theta: float) -> float | None:
        """v0, the variance about ``theta`` of the exponential tilt with mean ``theta``; None
        when theta lies outside (min(u), max(u)) and no tilt has mean theta.

        The tilted mean K'(lambda) of the cumulant generating function increases in lambda
        (its derivative is the tilted variance), so a safeguarded Newton keeps a bracket
        [low, high] with K'(low) < 0 < K'(high) and bisects when a step leaves it.
        """
        c = np.subtract(self.u, theta, out=self.x)
        if not (c[0] < 0.0 < c[-1]):
            return None
        scale = float(max(-c[0], c[-1]))
        np.divide(c, scale, out=self.x)
        low, high, lam = -1.0, 1.0, 0.0
        while self.moments(low)[0] > 0.0:
            low *= 2.0
        while self.moments(high)[0] < 0.0:
            high *= 2.0
        for _ in range(200):
            mean, var = self.moments(lam)
            if abs(mean) <= _XTOL or high - low <= _XTOL:
                break  # the moments at the returned lambda, not computed again
            low, high = (lam, high) if mean < 0.0 else (low, lam)
            step = lam - mean / var if var > 0.0 else low - 1.0
            lam = step if low < step < high else 0.5 * (low + high)
        else:
            mean, var = self.moments(lam)
        return (var + mean * mean) * scale * scale

    def p_value(self, theta: float) -> float:
        """The check's one-sided p-value of H0: mean <= theta (Student's t survival)."""
        if self.mean <= theta:
            return 1.0
        v0 = self.null_variance(theta)
        if v0 is None or v0 <= 0.0:
            return 0.0
        g = self.u.size
        return t_cdf(-(self.mean - theta) / math.sqrt(v0 / g), g - 1)


def tilted_score_test(unit_delta: np.ndarray, threshold: float, alpha: float) -> TiltedScore:
    """Score check of H0: mean delta <= threshold with the least favourable null variance.

    The lower bound is the theta in (min(u), threshold] where the p-value crosses ``alpha``:
    at theta = min(u) no tilt exists (p-value 0) and at ``threshold`` the p-value is above
    alpha, so a crossing lies between (``stats.roots.bisect``, to ``_XTOL``). When the deltas
    are equal up to rounding (the mean rounds to min(u), where the p-value is 1), there is no
    crossing: the bound is then min(u), the least any tilt allows (fails closed).

    Args:
        unit_delta: shape (G,) finite oriented unit deltas (positive = candidate better), G >= 2.
        threshold: the value the mean must exceed (-margin_abs).
        alpha: one-sided level in (0, 0.5).

    Returns:
        TiltedScore; its p-value is <= alpha exactly when the check rejects, and its lower
        bound (computed only when it does not) is at or below ``threshold``.
    """
    tilt = _Tilt(unit_delta)
    p = tilt.p_value(threshold)
    if p <= alpha:
        return TiltedScore(p_value=p, lower_bound=None)
    low = float(tilt.u[0])
    if low >= threshold or tilt.p_value(low) >= alpha:
        bound = min(low, threshold)
    else:
        bound = bisect(lambda theta: tilt.p_value(theta) - alpha, low, threshold, xtol=_XTOL)
    return TiltedScore(p_value=p, lower_bound=min(threshold, bound))


tilted_score_test.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
