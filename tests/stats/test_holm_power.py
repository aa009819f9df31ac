"""Holm's procedure and the sample-size hint against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.power import additional_pairs_needed


def test_holm_levels():
    """Holm tests the smallest p at alpha/m, the next at alpha/(m-1); ties keep input order."""
    p = np.array([0.04, 0.001, 0.03])
    assert np.allclose(holm_levels(p, 0.05), [0.05, 0.05 / 3, 0.025])
    assert np.allclose(holm_levels(np.array([0.01, 0.02, 0.02]), 0.05), [0.05 / 3, 0.025, 0.05])


def test_additional_pairs_closed_form():
    """n* = n (SE (z_a + z_b) / gap)^2 minus the pairs already seen."""
    n, se, gap = 100, 0.02, 0.03
    z = norm.ppf(0.95) + norm.ppf(0.8)
    expected = math.ceil(n * (se * z / gap) ** 2 - n)
    assert additional_pairs_needed(-0.02, -0.05, se, n, 0.05, 0.8) == expected
    assert additional_pairs_needed(-0.05, -0.05, se, n, 0.05, 0.8) is None
    assert additional_pairs_needed(0.5, 0.0, 0.001, n, 0.05, 0.8) == 0
