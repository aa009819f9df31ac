"""Tests of bench/groundedness_metrics.py: cluster-bootstrap F1 gain and within-generator AUC."""

from __future__ import annotations

import numpy as np
import pytest
from groundedness_metrics import gain_interval, within_group_auc
from scipy.stats import mannwhitneyu


def test_within_group_auc_is_pooled_mann_whitney_over_same_group_pairs() -> None:
    """Sum of per-group U over per-group pairs; scipy's U gives the same numbers."""
    s = np.array([0.9, 0.1, 0.5, 0.8, 0.2, 0.4, 0.4])
    y = np.array([True, False, True, True, False, False, True])
    g = np.array(["a", "a", "a", "b", "b", "b", "b"])
    u = sum(mannwhitneyu(s[(g == k) & y], s[(g == k) & ~y]).statistic for k in ("a", "b"))
    assert within_group_auc(s, y, g) == pytest.approx(u / (2 * 1 + 2 * 2))


def test_generator_only_score_has_within_group_auc_one_half() -> None:
    """A score that only names the group ranks nothing within a group."""
    g = np.array(["a"] * 4 + ["b"] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0], bool)
    assert within_group_auc((g == "b").astype(float), y, g) == 0.5
    assert within_group_auc(np.zeros(2), np.array([True, True]), np.array(["a", "a"])) is None


def test_gain_interval_point_and_bounds() -> None:
    """The gain is F1(gate) − F1(always-flag); a perfect gate's interval is above zero."""
    y = np.tile([True, False, False], 40)
    clusters = np.repeat(np.arange(40), 3)
    result = gain_interval(y, y, clusters, np.random.default_rng(0), n_resamples=500)
    assert result.gain == pytest.approx(1.0 - 2 * 40 / (120 + 40))
    assert 0 < result.lower <= result.gain <= result.upper
    assert result.n_clusters == 40


def test_gain_interval_is_reproducible_with_the_same_seed() -> None:
    """Same rng seed, same interval."""
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    y = np.array([1, 0, 1, 0, 1, 1], bool)
    f = np.array([1, 0, 0, 1, 1, 1], bool)
    c = np.array([0, 0, 1, 1, 2, 2])
    assert gain_interval(f, y, c, rng_a, n_resamples=200) == gain_interval(
        f, y, c, rng_b, n_resamples=200
    )


def test_gain_interval_rejects_bad_arguments() -> None:
    """Mismatched shapes and too few resamples are errors."""
    with pytest.raises(ValueError, match="1-D"):
        gain_interval([True], [True, False], [0, 1], np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_resamples"):
        gain_interval([True], [True], [0], np.random.default_rng(0), n_resamples=10)
