"""stats.roots.bisect finds brentq's roots to its tolerance and refuses a bad bracket."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq

from ragwarrant.stats.paired_binary import DiscordantPairs
from ragwarrant.stats.roots import bisect


@pytest.mark.parametrize(
    ("f", "a", "b"),
    [
        (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
        (lambda x: math.cos(x) - x, 0.0, 1.0),
        (lambda x: math.exp(-x) - 0.3, 5.0, 0.0),  # decreasing, bracket given backwards
        (lambda d: DiscordantPairs(3, 9, 60).score(d) - 1.6448536269514722, -0.999, 0.999),
    ],
)
def test_root_agrees_with_brentq_to_the_tolerance(f, a, b):
    """Each root is within 1e-11 of brentq's on the same bracket."""
    assert abs(bisect(f, a, b) - brentq(f, min(a, b), max(a, b), xtol=1e-14)) < 1e-11


def test_an_endpoint_root_is_returned_and_a_bad_bracket_refused():
    """A zero at an end is that end; no sign change raises ValueError."""
    assert bisect(lambda x: x - 1.0, 1.0, 2.0) == 1.0
    with pytest.raises(ValueError, match="differ in sign"):
        bisect(lambda x: x * x + 1.0, -1.0, 1.0)
