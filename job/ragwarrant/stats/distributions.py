"""The few distribution functions the tests need, from scipy.special's kernels.

``scipy.stats`` costs about 1 s of CPU to import (issue 13), on every run that decides; these
are the ``scipy.special`` kernels its distributions call, so the values are scipy.stats' own,
bit for bit, for arguments inside the support (``tests/stats/test_distributions.py``):

- ``t_ppf`` / ``t_cdf``: ``scipy.stats.t.ppf`` / ``.cdf`` (``stdtrit`` / ``stdtr``, Cephes);
- ``beta_ppf``: ``scipy.stats.beta.ppf`` (``_beta_ppf``, Boost's ``ibeta_inv``);
- ``binom_cdf``: ``scipy.stats.binom.cdf`` (``_binom_cdf``, Boost), 1 at or above ``n``.

The modules are imported on first use, not at import time.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["beta_ppf", "binom_cdf", "t_cdf", "t_ppf"]


def t_ppf(q: float, df: float) -> float:
    """Student t quantile: the x with P(T_df <= x) = q, for q in (0, 1) and df > 0."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def t_cdf(x: float, df: float) -> float:
    """Student t CDF P(T_df <= x) for df > 0 (0 and 1 at -inf and +inf)."""
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    from scipy.special import stdtr

    return float(stdtr(df, x))


def beta_ppf(q: float | np.ndarray, a: float | np.ndarray, b: float | np.ndarray) -> np.ndarray:
    """Beta(a, b) quantile for q in (0, 1) and a, b > 0, elementwise; shape of the broadcast."""
    from scipy.special._ufuncs import _beta_ppf

    return np.asarray(_beta_ppf(q, a, b), dtype=np.float64)


def binom_cdf(k: int, n: int, p: float) -> float:
    """Binomial CDF P(X <= k) for X ~ Bin(n, p), k >= 0 an integer, p in [0, 1]."""
    if k >= n:
        return 1.0
    from scipy.special._ufuncs import _binom_cdf

    return float(_binom_cdf(float(k), n, p))
