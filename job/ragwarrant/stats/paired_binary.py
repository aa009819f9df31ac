"""Tango's score test and interval for a paired difference of proportions.

Method: Tango T. (1998), "Equivalence test and confidence interval for the difference in
proportions for the paired-sample design", Statistics in Medicine 17:891–908 (correction:
Statistics in Medicine 1999, 18:3511). Checked against the worked example of Fagerland,
Lydersen & Laake (2017), *Statistical Analysis of Contingency Tables*, ch. 8 (Cavo et al. 2012
data; R package ``contingencytables``).

For n pairs with b pairs where only the candidate scores 1 and c pairs where only the baseline
scores 1, the difference of proportions is delta = (b - c) / n. For H0: delta = delta0 the score
statistic is

    Z(delta0) = (b - c - n delta0) / sqrt(n (2 q21 + delta0 (1 - delta0)))

with q21 the maximum-likelihood estimate of P(baseline 1, candidate 0) restricted to
delta = delta0: q21 = (sqrt(B^2 - 4AC) - B) / (2A), A = 2n, B = -b - c + (2n - b + c) delta0,
C = -c delta0 (1 - delta0). Z decreases in delta0; the one-sided (1 - alpha) bounds solve
Z(delta0) = ±z_{1-alpha}. With no discordant pair the statistic stays defined for delta0 != 0,
so an all-tied sample gives an honest, nonzero-width interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from ragwarrant.stats.roots import bisect

_N = NormalDist()
_EDGE = 1e-12


@dataclass(frozen=True)
class DiscordantPairs:
    """n paired 0/1 outcomes by their discordant pairs: b where only the candidate scores 1,
    c where only the baseline does (delta = (b - c) / n)."""

    b: int
    c: int
    n: int

    def null_variance(self, delta0: float) -> float:
        """Per-pair variance of the paired difference under H0: delta = delta0, 2 q21 + delta0
        (1 - delta0), with q21 the restricted MLE of the module docstring."""
        b, c, n = self.b, self.c, self.n
        a_ = 2.0 * n
        b_ = -b - c + (2.0 * n - b + c) * delta0
        c_ = -c * delta0 * (1.0 - delta0)
        q21 = (math.sqrt(max(b_ * b_ - 4.0 * a_ * c_, 0.0)) - b_) / (2.0 * a_)
        return 2.0 * q21 + delta0 * (1.0 - delta0)

    def score(self, delta0: float) -> float:
        """Tango's score statistic Z(delta0) for H0: delta = delta0, delta0 in (-1, 1).

        Large values speak for delta > delta0; 0 when b - c = n delta0 exactly.
        """
        num = self.b - self.c - self.n * delta0
        if num == 0:
            return 0.0
        var = self.n * self.null_variance(delta0)
        if var <= 0:
            return math.copysign(math.inf, num)
        return num / math.sqrt(var)

    def solve(self, z: float) -> float:
        """delta0 in [-1, 1] with Z(delta0) = z (Z decreases in delta0)."""
        lo, hi = -1.0 + _EDGE, 1.0 - _EDGE

        def f(d: float) -> float:
            return self.score(d) - z

        if f(lo) <= 0:
            return -1.0
        if f(hi) >= 0:
            return 1.0
        return bisect(f, lo, hi, xtol=1e-12)


@dataclass(frozen=True)
class PairedBinaryScore:
    """Tango's one-sided test of H0: delta <= threshold on paired 0/1 outcomes.

    Attributes:
        estimate: (b - c) / n. lower_bound, upper_bound: one-sided (1 - alpha) score bounds.
        p_value: 1 - Phi(Z(threshold)). b, c, n: the discordant counts and the number of pairs.
        null_variance, observed_variance: per-pair variances of the difference under H0 and at
            the estimate (for the sample-size hint).
    """

    estimate: float
    lower_bound: float
    upper_bound: float
    p_value: float
    b: int
    c: int
    n: int
    null_variance: float
    observed_variance: float


def tango_test(b: int, c: int, n: int, threshold: float, alpha: float) -> PairedBinaryScore:
    """Tango's score test of H0: delta <= threshold vs H1: delta > threshold, and its bounds.

    Args:
        b: pairs where only the candidate scores 1; c: pairs where only the baseline scores 1.
        n: all pairs (n >= 1); threshold: in (-1, 1), e.g. -margin_abs.
        alpha: one-sided level of both bounds.

    Returns:
        PairedBinaryScore; the p-value and the lower bound agree: p <= alpha exactly when the
        lower bound is at or above the threshold (up to root-finding tolerance).
    """
    z = _N.inv_cdf(1.0 - alpha)
    estimate = (b - c) / n
    pairs = DiscordantPairs(b, c, n)
    stat = pairs.score(threshold)
    return PairedBinaryScore(
        estimate=estimate,
        lower_bound=pairs.solve(z),
        upper_bound=pairs.solve(-z),
        p_value=_N.cdf(-stat) if math.isfinite(stat) else (0.0 if stat > 0 else 1.0),
        b=b,
        c=c,
        n=n,
        null_variance=pairs.null_variance(threshold),
        observed_variance=(b + c) / n - estimate * estimate,
    )
