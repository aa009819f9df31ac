"""The largest magnitude the statistics aggregate without float64 overflow."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ragwarrant.stats.magnitude import max_safe_magnitude
from ragwarrant.stats.onesided import clustered_t_test


def test_max_safe_magnitude_closed_form() -> None:
    """sqrt(float64 max) / (4 n): 1.117e152 for 30 examples."""
    assert max_safe_magnitude(30) == math.sqrt(np.finfo(np.float64).max) / 120
    assert max_safe_magnitude(0) == max_safe_magnitude(1)


@pytest.mark.parametrize("n", [2, 30, 1000])
def test_values_at_the_limit_aggregate_without_overflow(n: int) -> None:
    """Deltas of values at +-limit (the worst pairing) give a finite t-test, without a warning."""
    m = max_safe_magnitude(n)
    delta = np.where(np.arange(n) % 2 == 0, 2 * m, -2 * m)  # candidate +m vs baseline -m, and back
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = clustered_t_test(delta, np.arange(n), 0.0, 0.05, power=0.8)
    assert math.isfinite(result.lower_bound) and math.isfinite(result.upper_bound)


def test_values_far_beyond_the_limit_overflow() -> None:
    """The limit is not idle: 1e300 costs overflow the same test (why the gate refuses them)."""
    delta = np.array([1e300, -1e300, 3e299, -2e299])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="overflow"):
            clustered_t_test(delta, np.arange(4), 0.0, 0.05, power=0.8)
