"""The tilted score check: least favourable null variance, p-value and bound, rare drops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragwarrant.stats import noninferiority as ni
from ragwarrant.stats.tilted_score import tilted_score_test


def _drops(n: int, k: int, size: float) -> np.ndarray:
    """n unit deltas: k drops of ``size`` (negative), the rest tied at 0."""
    u = np.zeros(n)
    u[:k] = -size
    return u


def test_on_two_points_the_check_is_the_binomial_score_test():
    """On {0, -1} the tilt with mean -m puts mass m on -1, so v0 = m (1 - m): the p-value is
    that of the score test for a proportion (statistic against t with G - 1 df)."""
    u = _drops(100, 3, 1.0)
    z = (u.mean() + 0.05) / math.sqrt(0.05 * 0.95 / 100)
    expected = float(sps.t.sf(z, 99))
    assert math.isclose(tilted_score_test(u, -0.05, 0.05).p_value, expected, rel_tol=1e-9)


def test_no_tilt_outside_the_sample_range():
    """A null mean at or below every unit delta has no tilt; the check then adds nothing."""
    u = np.array([0.0, 0.01, 0.02])
    assert tilted_score_test(u, -0.05, 0.05).p_value == 0.0


def test_p_value_is_the_score_statistic_against_t():
    """p = T_{G-1} upper tail of (mean - theta) / sqrt(v0 / G) (reference computed here)."""
    u = _drops(140, 3, 4.0)
    v0 = 0.05 * 3.8**2 + 0.95 * 0.2**2  # tilt mass 0.05 on -4, 0.95 on 0, about theta = -0.2
    z = (u.mean() + 0.2) / math.sqrt(v0 / 140)
    expected = float(sps.t.sf(z, 139))
    assert math.isclose(tilted_score_test(u, -0.2, 0.05).p_value, expected, rel_tol=1e-6)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_bound_and_p_value_decide_alike(k):
    """A check that does not reject returns a bound at or below the threshold, and vice versa."""
    res = tilted_score_test(_drops(140, k, 4.0), -0.2, 0.05)
    if res.p_value <= 0.05:
        assert res.lower_bound is None
    else:
        assert res.lower_bound is not None and res.lower_bound <= -0.2


def test_rare_likert_drops_do_not_pass():
    """3 drops of 4 points among 140 tied Likert pairs: the bootstrap alone passed (issue 10)."""
    u = _drops(140, 3, 4.0)
    base = np.full(140, 5.0)
    res = ni.test_noninferiority(
        base + u,
        base,
        kind="ordinal",
        margin_abs=0.2,
        alpha=0.05,
        rng=np.random.default_rng(0),
        scale=(1, 5),
    )
    assert not res.rejects
    assert res.lower_bound <= -0.2 and res.p_value > 0.05
    assert "tilted score check (least favourable null variance)" in res.method_steps


def test_exact_false_promote_rate_of_rare_drops_at_the_margin():
    """Drops of 4 points w.p. 0.05 (truth at -margin 0.2), n = 140: exact rate <= alpha + 0.01.

    The rate is summed over the binomial distribution of the number of drops (seeded bootstrap
    per count); before the check it was 0.077.
    """
    n, p = 140, 0.05
    base = np.full(n, 5.0)
    rate = 0.0
    for k in range(0, 25):
        res = ni.test_noninferiority(
            base + _drops(n, k, 4.0),
            base,
            kind="ordinal",
            margin_abs=0.2,
            alpha=0.05,
            rng=np.random.default_rng(k),
            scale=(1, 5),
        )
        rate += float(sps.binom.pmf(k, n, p)) * res.rejects
    assert rate <= 0.06


def test_p_value_does_not_depend_on_the_number_of_blas_threads():
    """The check's sums are numpy's, not BLAS dot products (whose rounding follows the threads).

    On a machine with one core both runs are single-threaded and agree trivially.
    """
    from threadpoolctl import threadpool_limits

    u = np.random.default_rng(3).normal(0.001, 0.1, 200_000)
    with threadpool_limits(limits=1, user_api="blas"):
        one = tilted_score_test(u, -0.0005, 0.05)
    with threadpool_limits(limits=2, user_api="blas"):
        two = tilted_score_test(u, -0.0005, 0.05)
    assert 0.0 < one.p_value < 0.05
    assert one == two


def test_deltas_equal_up_to_rounding_give_a_bound_not_an_error() -> None:
    """Candidate = baseline - margin in floats: the check does not reject and bounds at min(u)."""
    for seed in (2, 3, 4):  # each raised ValueError from the bisection before
        baseline = np.round(np.random.default_rng(seed).uniform(0.5, 1.0, 400), 2)
        unit_delta = (baseline - 0.05) - baseline
        res = tilted_score_test(unit_delta, -0.05, 0.05)
        assert res.p_value > 0.05
        assert res.lower_bound is not None
        assert float(unit_delta.min()) <= res.lower_bound <= -0.05
