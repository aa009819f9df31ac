"""The small-sample skewness check of the noninferiority rule (issue 33)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import ragwarrant.stats.noninferiority as ni
from ragwarrant.stats.onesided import johnson_t


def _slice(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """12 pairs at the margin -0.10 whose deltas have a long lower tail."""
    rng = np.random.default_rng(seed)
    base = rng.beta(5, 2, 12)
    return base - 0.1 - 0.15 * (rng.exponential(1, 12) - 1), base


def test_johnson_t_matches_the_published_statistic():
    """t1 = (y + mu3/(6 s^2 n) + mu3 y^2/(3 s^4)) sqrt(n)/s, y = mean - mu0 (Johnson 1978)."""
    for seed in range(5):
        c, b = _slice(seed)
        d = c - b
        x = d + 0.1
        n, xb, s2 = x.size, x.mean(), x.var(ddof=1)
        m3 = np.mean((x - xb) ** 3)
        t1 = (xb + m3 / (6 * s2 * n) + m3 / (3 * s2**2) * xb**2) / np.sqrt(s2 / n)
        res = johnson_t(d, -0.1, 0.05)
        assert res.p_value == pytest.approx(1 - sps.t.cdf(t1, n - 1))
        assert (res.lower_bound > -0.1) == (t1 > sps.t.ppf(0.95, n - 1))


def test_a_long_lower_tail_in_a_small_slice_is_not_passed():
    """A sample the bootstrap passes, with a loss tail Johnson's t sees: not noninferior."""
    c, b = _slice(20)
    kw = {"kind": "continuous", "margin_abs": 0.1, "alpha": 0.05, "scale": (0, 1)}
    res = ni.test_noninferiority(c, b, rng=np.random.default_rng(1), **kw)
    assert not res.rejects
    assert "skewness-corrected t check (Johnson 1978)" in res.method_steps
    assert res.lower_bound == pytest.approx(-1.0)  # no finite Johnson bound: the scale floor
    big = ni.test_noninferiority(np.tile(c, 5), np.tile(b, 5), rng=np.random.default_rng(1), **kw)
    assert "skewness-corrected t check (Johnson 1978)" not in big.method_steps
