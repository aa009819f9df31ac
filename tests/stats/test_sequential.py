"""Tests of the repeated-look levels (Lan–DeMets spending and the open scheme)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from ragwarrant.stats.sequential import (
    SequentialPlan,
    look_level,
    spent_by,
    units_for_next_look,
)

_N = NormalDist()


def _levels(plan: SequentialPlan, units: list[int]) -> list[float]:
    out, spent = [], 0.0
    for k, n in enumerate(units, start=1):
        lv = look_level(plan, k, n, spent)
        out.append(lv.alpha_this_look)
        spent = lv.alpha_spent
    return out


def test_obrien_fleming_spending_matches_the_closed_form():
    """alpha(t) = 2 (1 - Phi(z_{1-alpha/2} / sqrt(t))), and alpha(1) = alpha."""
    plan = SequentialPlan("alpha_spending", 0.05, "obrien_fleming", 3, 300)
    z = _N.inv_cdf(0.975)
    assert spent_by(plan, 0.5) == pytest.approx(2 * (1 - _N.cdf(z / math.sqrt(0.5))))
    assert spent_by(plan, 1.0) == pytest.approx(0.05)
    assert spent_by(plan, 0.0) == 0.0


def test_pocock_spending_matches_the_closed_form():
    """alpha(t) = alpha ln(1 + (e - 1) t)."""
    plan = SequentialPlan("alpha_spending", 0.05, "pocock", 3, 300)
    assert spent_by(plan, 0.25) == pytest.approx(0.05 * math.log(1 + (math.e - 1) * 0.25))


@pytest.mark.parametrize("spending", ["obrien_fleming", "pocock"])
@pytest.mark.parametrize("looks", [2, 3, 5])
def test_planned_levels_sum_to_alpha(spending, looks):
    """The levels of K equally spaced looks sum to alpha (the last look spends the rest)."""
    plan = SequentialPlan("alpha_spending", 0.05, spending, looks, 500)
    levels = _levels(plan, [k * 500 // looks for k in range(1, looks + 1)])
    assert all(a > 0 for a in levels)
    assert sum(levels) == pytest.approx(0.05)


def test_looks_beyond_the_plan_spend_nothing():
    """A look after the last planned one has level 0; unequal spacing still sums to <= alpha."""
    plan = SequentialPlan("alpha_spending", 0.05, "pocock", 2, 400)
    levels = _levels(plan, [50, 120, 500])
    assert levels[2] == 0.0
    assert sum(levels) <= 0.05 + 1e-12


def test_a_look_past_max_units_spends_the_rest():
    """A look with t >= 1 before the planned last one spends what is left."""
    plan = SequentialPlan("alpha_spending", 0.05, "obrien_fleming", 5, 100)
    levels = _levels(plan, [40, 150, 200])
    assert sum(levels[:2]) == pytest.approx(0.05)
    assert levels[2] == 0.0


def test_open_levels_follow_six_over_pi_squared():
    """Look k of the open scheme spends alpha 6 / (pi^2 k^2); the sum stays below alpha."""
    plan = SequentialPlan("open", 0.05)
    levels = _levels(plan, [10] * 50)
    assert levels[1] == pytest.approx(0.05 * 6 / (math.pi**2 * 4))
    assert sum(levels) < 0.05


def test_bad_plans_and_looks_are_refused():
    """alpha_spending needs looks and max_units; look numbers start at 1."""
    with pytest.raises(ValueError, match="alpha_spending needs"):
        SequentialPlan("alpha_spending", 0.05)
    with pytest.raises(ValueError, match="look number"):
        look_level(SequentialPlan("open", 0.05), 0, 10, 0.0)


def test_units_for_next_look_meets_power_at_that_level():
    """The returned m reaches the power at the next look's level, and m - 1 does not."""
    gap, sd, n, power, level = 0.03, 0.25, 100, 0.8, 0.02

    def power_at(m: int) -> float:
        return _N.cdf(gap * math.sqrt(n + m) / sd - _N.inv_cdf(1 - level))

    m = units_for_next_look(0.03 - 0.05, -0.05, sd, n, power, lambda _: level, 100_000)
    assert m is not None
    assert power_at(m) >= power > power_at(m - 1)


def test_units_for_next_look_none_beyond_the_margin():
    """No count when the estimate is at or beyond the threshold, or the level is 0."""
    assert units_for_next_look(-0.06, -0.05, 0.2, 100, 0.8, lambda _: 0.05, 10_000) is None
    assert units_for_next_look(0.0, -0.05, 0.2, 100, 0.8, lambda _: 0.0, 10_000) is None
