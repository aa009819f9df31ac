"""Tango's score test and interval against a published example and closed forms."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from ragwarrant.stats.paired_binary import DiscordantPairs, tango_test


def test_interval_matches_published_example():
    """Cavo et al. (2012) data (b=6, c=16, n=161): 95 % CI -0.1240 to -0.0054 (Fagerland 2017)."""
    res = tango_test(6, 16, 161, -0.05, 0.025)
    assert res.estimate == pytest.approx(-0.0621, abs=5e-5)
    assert res.lower_bound == pytest.approx(-0.1240, abs=5e-5)
    assert res.upper_bound == pytest.approx(-0.0054, abs=5e-5)


def test_all_tied_pairs_closed_form():
    """With no discordant pair, Z(-m) = sqrt(n m / (1 - m)) and the bound is -z^2 / (n + z^2)."""
    n, m, alpha = 30, 0.05, 0.05
    z = NormalDist().inv_cdf(1 - alpha)
    assert DiscordantPairs(0, 0, n).score(-m) == pytest.approx(math.sqrt(n * m / (1 - m)))
    res = tango_test(0, 0, n, -m, alpha)
    assert res.lower_bound == pytest.approx(-(z * z) / (n + z * z), rel=1e-9)
    assert res.p_value == pytest.approx(1 - NormalDist().cdf(math.sqrt(n * m / (1 - m))))
    assert res.p_value > alpha  # 30 tied pairs cannot rule out a 5-point loss


@pytest.mark.parametrize(("b", "c", "n"), [(3, 9, 40), (10, 4, 120), (0, 2, 25), (5, 0, 60)])
def test_p_value_and_lower_bound_agree(b, c, n):
    """p <= alpha exactly when the lower bound is above the threshold (one test, one answer)."""
    res = tango_test(b, c, n, -0.1, 0.05)
    assert (res.p_value <= 0.05) == (res.lower_bound > -0.1)
    assert DiscordantPairs(b, c, n).score(res.lower_bound) == pytest.approx(
        NormalDist().inv_cdf(0.95), abs=1e-6
    )
