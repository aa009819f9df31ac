"""The scipy.special kernels in stats.distributions return scipy.stats' floats, bit for bit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from ragwarrant.stats.distributions import beta_ppf, binom_cdf, t_cdf, t_ppf
from tests.conftest import REPO

# Degrees of freedom G - 1 of the expanded percentile bound: few clusters to 10^6 pairs.
DFS = (1, 2, 3, 4, 5, 7, 9, 10, 19, 29, 49, 99, 438, 999, 4390, 99_999, 999_999)
# One-sided levels, Holm- and look-split levels among them, and a dense grid.
LEVELS = (1e-9, 1e-4, 0.001, 0.0025, 0.005, 0.01, 0.0125, 0.025, 0.05, 0.1, 0.2, 0.5, 0.95)


def _bits(x: object) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(np.int64)


def test_t_ppf_is_scipy_stats_t_ppf():
    """t_ppf(q, df) == scipy.stats.t.ppf(q, df) to the bit, the sign of a zero quantile too."""
    # stdtrit(4, 0.4999999999999999) is -0.0; scipy.stats adds loc = 0 and returns 0.0
    qs = sorted({*LEVELS, 0.4999999999999999, *np.linspace(1e-6, 1 - 1e-6, 61).tolist()})
    for df in DFS:
        ours = [t_ppf(q, df) for q in qs]
        assert (_bits(ours) == _bits(sps.t.ppf(qs, df))).all(), df


def test_t_cdf_is_scipy_stats_t_cdf():
    """t_cdf(x, df) == scipy.stats.t.cdf(x, df) to the bit, tails included."""
    xs = [-1e3, -40.0, -6.5, -2.0, -1.6448536269514722, -0.3, -0.0, 0.0, 1e-9, 0.7, 3.0, 1e3]
    xs += np.linspace(-12, 12, 97).tolist()
    for df in DFS:
        ours = [t_cdf(x, df) for x in xs]
        assert (_bits(ours) == _bits(sps.t.cdf(xs, df))).all(), df


@pytest.mark.parametrize("resamples", [20, 439, 2000, 10_000])
def test_beta_ppf_is_scipy_stats_beta_ppf(resamples):
    """beta_ppf(1 - alpha, k + 1, B - k) == scipy.stats.beta.ppf on every k of the guard."""
    k = np.arange(resamples, dtype=np.float64)
    for alpha in (0.001, 0.01, 0.025, 0.05, 0.1, 1 / 6):
        ours = beta_ppf(1 - alpha, k + 1, resamples - k)
        theirs = sps.beta.ppf(1 - alpha, k + 1, resamples - k)
        assert (_bits(ours) == _bits(theirs)).all(), alpha
        assert float(beta_ppf(1 - alpha, 3.0, resamples - 2.0)) == theirs[2]


def test_binom_cdf_is_scipy_stats_binom_cdf():
    """binom_cdf(k, n, p) == scipy.stats.binom.cdf(k, n, p) for every k, the edges of p too."""
    for n in (1, 2, 5, 30, 439, 4391):
        ks = np.arange(n + 1)
        for p in (0.0, 1e-6, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0):
            ours = [binom_cdf(int(k), n, p) for k in ks]
            assert (_bits(ours) == _bits(sps.binom.cdf(ks, n, p))).all(), (n, p)


def test_the_noninferiority_rule_imports_no_scipy_stats():
    """Importing and running the decision rule (bootstrap and Tango) leaves scipy.stats and
    scipy.optimize unloaded."""
    probe = (
        "import sys, numpy as np\n"
        "from ragwarrant.stats.noninferiority import test_noninferiority\n"
        "rng = np.random.default_rng(0)\n"
        "base = rng.uniform(0.1, 0.9, 60)\n"
        "cand = base + 0.02\n"
        "cand[:2] -= 0.05  # two worse units: the exact bound (beta, binomial) is reached too\n"
        "def loaded():\n"
        "    heavy = ('scipy.stats', 'scipy.optimize')\n"
        "    return sorted(m for m in sys.modules if m.startswith(heavy))\n"
        "for kind, b, c in (('continuous', base, cand), ('binary', base > 0.5, cand > 0.5)):\n"
        "    test_noninferiority(c.astype(float), b.astype(float), kind=kind, margin_abs=0.05,\n"
        "                        alpha=0.05, rng=rng, resamples=500, scale=(0.0, 1.0))\n"
        "    print(kind, [m for m in loaded() if m == 'scipy.stats' or m == 'scipy.optimize'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split("\n")[:2] == ["continuous []", "binary []"]
