"""Repeated looks at growing evidence: how much of alpha each look may spend.

A team that reruns the same contract on more evidence after an INCONCLUSIVE run and stops at the
first PROMOTE tests H0 several times; at level alpha each time, the chance of at least one false
PROMOTE grows with the number of looks (Armitage, McPherson & Rowe 1969, J. R. Statist. Soc. A
132:235–244). This module splits alpha over the looks so that the sum stays <= alpha.

Plans (``SequentialPlan.method``):

- ``alpha_spending``: the Lan–DeMets alpha-spending function (Lan & DeMets 1983, "Discrete
  sequential boundaries for clinical trials", Biometrika 70:659–663), one-sided level alpha,
  information fraction t = units / max_units (capped at 1):

  * ``obrien_fleming``: alpha(t) = 2 (1 - Phi(z_{1-alpha/2} / sqrt(t))) (their eq. for the
    O'Brien–Fleming-type boundary; spends almost nothing early);
  * ``pocock``: alpha(t) = alpha ln(1 + (e - 1) t) (the Pocock-type boundary).

  Look k spends alpha(t_k) - alpha(t_{k-1}); the last planned look (k = ``looks``) or a look at
  t >= 1 spends what is left, alpha - alpha(t_{k-1}); a look after the last planned one spends 0.
- ``open``: the number of looks is open; look k spends alpha 6 / (pi^2 k^2), whose sum over all
  k >= 1 is alpha (a union bound over infinitely many looks, the simplest anytime-valid scheme;
  cf. Howard et al. 2021, Ann. Statist. 49:1055–1080, for sharper confidence sequences).

Each look's test is the ordinary fixed-sample test at the look's level (``alpha_this_look``).
Bonferroni's inequality bounds the chance of a false PROMOTE at any look by the sum of the looks'
levels, so the scheme is valid for every metric kind and every method (Tango's score test, the
bootstrap) without a joint distribution of the looks' statistics. It is conservative: the exact
group-sequential boundaries of Lan & DeMets, which use the correlation between looks, would
reject more often at the same overall level (Jennison & Turnbull 2000, *Group Sequential Methods
with Applications to Clinical Trials*, ch. 7). ``bench/validity_sequential.py`` measures both the
level and the power lost against a single fixed-n test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

SpendingName = Literal["obrien_fleming", "pocock"]
_N = NormalDist()


@dataclass(frozen=True)
class SequentialPlan:
    """A declared plan of repeated looks (the contract's ``sequential`` block).

    Attributes:
        method: ``alpha_spending`` (planned looks) or ``open`` (any number of looks).
        alpha: the overall one-sided level across all looks.
        spending: the spending function of ``alpha_spending``.
        looks: the planned number of looks K (``alpha_spending``); None for ``open``.
        max_units: the units (paired examples) at the last planned look; information fraction
            t = units / max_units (``alpha_spending``); None for ``open``.
    """

    method: Literal["alpha_spending", "open"]
    alpha: float
    spending: SpendingName = "obrien_fleming"
    looks: int | None = None
    max_units: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be in (0, 0.5), got {self.alpha}")
        if self.method == "alpha_spending" and (
            self.looks is None or self.looks < 1 or self.max_units is None or self.max_units < 2
        ):
            raise ValueError("alpha_spending needs looks >= 1 and max_units >= 2")


def spent_by(plan: SequentialPlan, fraction: float) -> float:
    """The Lan–DeMets spending function alpha(t): level spent up to information fraction t.

    Args:
        plan: an ``alpha_spending`` plan (its ``spending`` and ``alpha``).
        fraction: t >= 0; values above 1 count as 1.

    Returns:
        alpha(t) in [0, alpha], increasing in t, alpha(0) = 0 and alpha(1) = alpha.
    """
    t = min(max(fraction, 0.0), 1.0)
    if t == 0.0:
        return 0.0
    if plan.spending == "pocock":
        return plan.alpha * math.log1p((math.e - 1.0) * t)
    z = _N.inv_cdf(1.0 - plan.alpha / 2.0)
    return min(plan.alpha, 2.0 * (1.0 - _N.cdf(z / math.sqrt(t))))


@dataclass(frozen=True)
class LookLevel:
    """The level of one look.

    Attributes:
        alpha_this_look: the one-sided level this look's tests use (0: the plan is exhausted).
        alpha_spent: the cumulative level spent by looks 1..k (<= plan.alpha).
    """

    alpha_this_look: float
    alpha_spent: float


def look_level(plan: SequentialPlan, number: int, units: int, spent_before: float) -> LookLevel:
    """The level look ``number`` may spend, given what earlier looks spent.

    Args:
        plan: the declared plan.
        number: k >= 1.
        units: the units (paired examples) at this look (``alpha_spending``'s t_k numerator).
        spent_before: cumulative level spent by looks 1..k-1, as they recorded it.

    Returns:
        LookLevel with alpha_this_look >= 0 and alpha_spent = spent_before + alpha_this_look
        <= plan.alpha.

    Raises:
        ValueError: number < 1 or units < 0.
    """
    if number < 1 or units < 0:
        raise ValueError(f"look number must be >= 1 and units >= 0; got {number}, {units}")
    if plan.method == "open":
        share = plan.alpha * 6.0 / (math.pi**2 * number * number)  # sums to alpha over k >= 1
        level = min(share, max(0.0, plan.alpha - spent_before))
        return LookLevel(level, spent_before + level)
    looks, max_units = plan.looks or 1, plan.max_units or 1  # both set: see __post_init__
    t = min(1.0, units / max_units)
    if number > looks:
        target = spent_before  # after the last planned look nothing is left to spend
    elif number == looks or t >= 1.0:
        target = plan.alpha
    else:
        target = spent_by(plan, t)
    level = max(0.0, min(plan.alpha, target) - spent_before)
    return LookLevel(level, spent_before + level)


def units_for_next_look(
    estimate: float,
    threshold: float,
    sd_per_unit: float,
    n_units: int,
    power: float,
    level_at: Callable[[int], float],
    limit: int,
) -> int | None:
    """Additional units for the next look's test to reach ``power`` at the observed effect.

    The next look's level depends on its size (through the information fraction), so the count
    is the smallest m >= 1 with Phi(gap sqrt(n + m) / sd - z_{1 - level_at(n + m)}) >= power
    (the normal approximation of a one-sided test; e.g. Chow, Shao & Wang 2008, §3.1), found
    by bisection (the power is increasing in m because level_at is non-decreasing).

    Args:
        estimate, threshold: the oriented estimate and the value it must exceed (metric units).
        sd_per_unit: standard deviation of one unit's delta (standard error x sqrt(n_units)).
        n_units: the units at this look.
        power: the target power in (0.5, 1).
        level_at: total units at the next look -> that look's one-sided level.
        limit: the largest m worth reporting.

    Returns:
        m, or None when the estimate is at or beyond the threshold, sd_per_unit is not positive
        and finite, or even ``limit`` more units would not reach ``power``.
    """
    gap = estimate - threshold
    if gap <= 0 or not (sd_per_unit > 0 and math.isfinite(sd_per_unit)):
        return None

    def enough(m: int) -> bool:
        level = level_at(n_units + m)
        if level <= 0:
            return False
        z = gap * math.sqrt(n_units + m) / sd_per_unit - _N.inv_cdf(1.0 - level)
        return _N.cdf(z) >= power

    if not enough(limit):
        return None
    lo, hi = 0, limit  # enough(hi) holds; find the smallest such m >= 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi
