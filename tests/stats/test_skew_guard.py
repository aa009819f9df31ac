"""The small-sample skewness check of the noninferiority rule (issue 33)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import ragwarrant.stats.noninferiority as ni
from ragwarrant.gates.noninferiority import gate_noninferiority
from ragwarrant.outputs import GateStatus
from ragwarrant.stats.onesided import studentized_lower

STEP = "studentized bootstrap check at alpha/2 (skewed small samples)"
KW = {"kind": "continuous", "margin_abs": 0.1, "alpha": 0.05, "scale": (0, 1)}


def _slice(seed: int, tail: float = 0.15, n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """n pairs at the margin -0.10 whose deltas have a long lower tail (right for tail < 0)."""
    rng = np.random.default_rng(seed)
    base = rng.beta(5, 2, n)
    return base - 0.1 - tail * (rng.exponential(1, n) - 1), base


def test_studentized_bound_and_p_value_agree():
    """The test rejects (p <= alpha) exactly when the bound exceeds the threshold."""
    d = np.subtract(*_slice(2))
    for threshold in np.linspace(-0.4, 0.1, 26):
        res = studentized_lower(d, threshold, 0.05, np.random.default_rng(9), 4000)
        assert (res.p_value <= 0.05) == (res.lower_bound > threshold)


def test_studentized_bound_is_the_t_bound_at_half_alpha_for_normal_data():
    """For many normal deltas T* is about Student's t: the bound is near the t bound at alpha/2."""
    d = np.random.default_rng(4).normal(0.0, 1.0, 400)
    res = studentized_lower(d, -1.0, 0.05, np.random.default_rng(5), 20000)
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert res.lower_bound == pytest.approx(d.mean() - sps.t.ppf(0.975, 399) * se, abs=0.1 * se)


def test_a_long_lower_tail_in_a_small_slice_is_not_passed():
    """A sample the rule passed before the check, with a loss tail it sees: not noninferior."""
    c, b = _slice(20)
    res = ni.test_noninferiority(c, b, rng=np.random.default_rng(1), **KW)
    assert not res.rejects and res.method_steps[-2] == STEP
    with pytest.MonkeyPatch.context() as mp:  # the rule without the check passes it
        mp.setattr(ni._Question, "skew_guard", lambda q, bound, b: bound)
        assert ni.test_noninferiority(c, b, rng=np.random.default_rng(1), **KW).rejects
    big = ni.test_noninferiority(np.tile(c, 5), np.tile(b, 5), rng=np.random.default_rng(1), **KW)
    assert STEP not in big.method_steps


def test_a_small_slice_inside_the_margin_still_passes():
    """12 pairs 0.1 better than the margin with modest noise stay PROMOTE-able."""
    rng = np.random.default_rng(4)
    base = rng.beta(5, 2, 12)
    cand = base + rng.normal(0.0, 0.05, 12)
    res = ni.test_noninferiority(cand, base, rng=np.random.default_rng(1), **KW)
    assert res.rejects and STEP in res.method_steps


def _one_odd_pair(common: float, odd: float, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """n pairs on [0, 1]: n - 1 with the identical delta ``common``, one with ``odd``."""
    base = np.full(n, 0.5)
    return base + np.r_[odd, np.full(n - 1, common)], base


@pytest.mark.parametrize(("common", "odd"), [(0.01, -0.1), (0.1, 0.05)])
def test_one_odd_pair_among_identical_ones_has_no_studentized_bound(common, odd):
    """Over a third of the resamples lack the odd pair (no spread): no finite bound, p > alpha."""
    c, b = _one_odd_pair(common, odd)
    res = studentized_lower(c - b, -0.05, 0.05, np.random.default_rng(3), 10000)
    assert res.lower_bound is None and res.p_value > 0.05


@pytest.mark.parametrize(("common", "odd"), [(0.01, -0.1), (0.1, 0.05)])
@pytest.mark.parametrize("scale", [(0, 1), None])
def test_one_odd_pair_among_identical_ones_is_inconclusive_with_finite_bounds(common, odd, scale):
    """The rule does not pass it, reports finite bounds and the gate builds (once exit 70)."""
    c, b = _one_odd_pair(common, odd)
    kw = {**KW, "margin_abs": 0.05, "scale": scale}
    res = ni.test_noninferiority(c, b, rng=np.random.default_rng(1), **kw)
    assert not res.rejects
    assert np.isfinite([res.lower_bound, res.upper_bound, res.p_value]).all()
    assert res.method_steps[-2].startswith(STEP + ": no finite bound")
    gate = gate_noninferiority("faithfulness", None, res, 0.05, 0.05, 0.8)
    assert gate.status is GateStatus.INCONCLUSIVE
