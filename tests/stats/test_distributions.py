"""The scipy.special kernels give scipy.stats' values bit for bit, without importing it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from ragwarrant.stats.distributions import beta_ppf, binom_cdf, t_cdf, t_ppf


@pytest.mark.parametrize("df", [1, 2, 5, 29, 30, 99, 1999, 10**6])
def test_t_matches_scipy_stats(df):
    """Quantiles and CDF values equal scipy.stats.t's exactly."""
    for q in (1e-6, 0.001, 0.0125, 0.025, 0.05, 0.2, 0.4999):
        assert t_ppf(q, df) == float(sps.t.ppf(q, df))
    for x in (-np.inf, -40.0, -2.5, -0.3, 0.0, 1.7, 12.0, np.inf):
        assert t_cdf(x, df) == float(sps.t.cdf(x, df))


@pytest.mark.parametrize("b", [2000, 10_000])
def test_beta_ppf_matches_scipy_stats(b):
    """The Clopper-Pearson upper bounds of every count k of B equal scipy.stats.beta.ppf's."""
    k = np.arange(b, dtype=np.float64)
    for level in (0.95, 0.99, 0.999):
        assert np.array_equal(beta_ppf(level, k + 1, b - k), sps.beta.ppf(level, k + 1, b - k))


@pytest.mark.parametrize("n", [2, 7, 30, 1000, 10**6])
def test_binom_cdf_matches_scipy_stats(n):
    """CDF values equal scipy.stats.binom.cdf's, including k = n (exactly 1)."""
    for k in sorted({0, 1, 2, n // 3, n - 1, n}):
        for p in (1e-4, 0.02, 0.5, 0.97, 1.0):
            assert binom_cdf(k, n, p) == float(sps.binom.cdf(k, n, p))


def test_noninferiority_does_not_import_scipy_stats():
    """A bootstrap noninferiority test leaves scipy.stats unimported (about 1 s of CPU)."""
    code = (
        "import sys, numpy as np\n"
        "from ragwarrant.stats.noninferiority import test_noninferiority\n"
        "rng = np.random.default_rng(1); b = rng.random(200); c = b + rng.normal(0, 0.1, 200)\n"
        "test_noninferiority(c, b, kind='continuous', margin_abs=0.05, alpha=0.05,\n"
        "                    rng=rng, scale=(-1.0, 2.0))\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
