"""Improvement claims: each must be supported by its own one-sided confidence bound.

Claims joined by ``any`` form a union, tested with Holm's step-down procedure at family-wise
level alpha; claims joined by ``all`` form an intersection, each at alpha.

A claim is tested by the guarded expanded-percentile bootstrap (``stats.onesided``); a claim on
a mean must also be established by the cluster-robust t-test and by the tilted score check
(``stats.tilted_score``: the variance of the least favourable null distribution), all at its
level (an intersection, valid when any one leg is). The bootstrap alone established a cost
reduction that did not exist in 7.2 % of runs on 30 skewed pairs (docs/validity.md, "Claims"),
and in 8.3 % when the candidate is cheaper on most examples and much dearer on a few (n = 60;
4.5 % with the score check; third trial). Claims on p50 or p95 are decided by the bootstrap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ragwarrant.contract import Claim, ClaimSet
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.onesided import (
    OneSidedTest,
    OrientedBootstrap,
    both_reject,
    clustered_t_test,
)
from ragwarrant.stats.tilted_score import TiltedScore, tilted_score_test

_T = TypeVar("_T")

MIN_CLAIM_UNITS = 20
"""Fewest resampled units (pairs, or clusters) on which a claim can be established; below it
the claim is INCONCLUSIVE (fails closed). Without this floor, with both arms alike under
symmetric noise (normal, Laplace, t3), a p95 claim (bootstrap only: few distinct order
statistics at small n) passed falsely in 5.3-8.5 % of runs at 5-15 pairs and 3.5-4.1 % at 20
(1,000 replicates a cell; ``bench/claims_min_n.py --statistic p95 --no-floor``); mean claims
were at 3.2-5.6 % from 5 to 20 pairs (2,000 replicates). Docs: docs/validity.md, "Claims"."""

ClaimSample = tuple[np.ndarray, np.ndarray]
"""(oriented paired deltas, cluster labels), shapes (n,): a mean claim's raw sample."""


@dataclass(frozen=True)
class _ClaimEvidence:
    """One claim's bootstrap and, for a mean claim, its raw sample for the t-test.

    Each leg (bootstrap, t-test, tilted score check) is computed once per level (and power)
    and kept: the Holm p-values, the claim's test at its level and the upper bound at alpha
    reuse the same results (the legs are pure functions of the sample and the level).
    """

    boot: OrientedBootstrap
    sample: ClaimSample | None
    _legs: dict[tuple[object, ...], object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _leg(self, key: tuple[object, ...], compute: Callable[[], _T]) -> _T:
        if key not in self._legs:
            self._legs[key] = compute()
        return self._legs[key]  # type: ignore[return-value]

    def _units(self, sample: ClaimSample) -> np.ndarray:
        """Shape (G,) mean oriented delta of each cluster (each pair when every label differs)."""
        delta, labels = sample

        def means() -> np.ndarray:
            codes = np.unique(labels, return_inverse=True)[1].reshape(-1)
            return np.asarray(np.bincount(codes, weights=delta) / np.bincount(codes))

        return self._leg(("units",), means)

    def _t(self, sample: ClaimSample, level: float, power: float) -> OneSidedTest:
        return self._leg(
            ("t", level, power),
            lambda: clustered_t_test(sample[0], sample[1], 0.0, level, power=power),
        )

    def _score(self, sample: ClaimSample, level: float) -> TiltedScore:
        return self._leg(
            ("score", level), lambda: tilted_score_test(self._units(sample), 0.0, level)
        )

    @property
    def too_few_units(self) -> bool:
        """Fewer than ``MIN_CLAIM_UNITS`` resampled units: the claim cannot be established."""
        return self.boot.n_units < MIN_CLAIM_UNITS

    def test(self, level: float, power: float) -> OneSidedTest:
        """The claim's test at ``level``: the guarded bootstrap, and for a mean claim also the
        cluster-robust t-test and the tilted score check (an intersection: all must reject);
        a mean claim's ``method_steps`` are those legs in order, its ``method`` them joined by
        "; and ". Below ``MIN_CLAIM_UNITS`` units it never rejects (p-value 1)."""
        test = self._legs_test(level, power)
        if self.too_few_units:
            return dataclasses.replace(test, rejects=False, p_value=1.0)
        return test

    def _legs_test(self, level: float, power: float) -> OneSidedTest:
        boot = self._leg(
            ("boot", level, power), lambda: self.boot.test_greater(0.0, level, power=power)
        )
        if self.sample is None:
            return boot
        t = self._t(self.sample, level, power)
        score_step = "the tilted score check (least favourable null variance)"
        steps = (boot.method, f"{t.method} (both must reject)", score_step)
        both = both_reject(boot, t)
        both = dataclasses.replace(both, method="; and ".join(steps), method_steps=steps)
        if self._units(self.sample).size < 2:  # the score check cannot reject
            return dataclasses.replace(both, rejects=False, p_value=1.0)
        score = self._score(self.sample, level)
        p_value = max(both.p_value, score.p_value)
        if score.p_value <= level:
            return dataclasses.replace(both, p_value=p_value)
        # the check does not reject: its lower bound (at or below 0) joins the bound, so bound
        # and verdict agree
        lower = both.lower_bound if score.lower_bound is None else score.lower_bound
        return dataclasses.replace(
            both, rejects=False, lower_bound=min(both.lower_bound, lower), p_value=p_value
        )

    def p_value(self, alpha: float, power: float = 0.8) -> float:
        """The largest of the legs' p-values of H0: oriented delta <= 0 at ``alpha`` (the
        t-test's p-value does not depend on ``power``, which only sizes its "more units" hint);
        1 below ``MIN_CLAIM_UNITS`` units."""
        if self.too_few_units:
            return 1.0
        p = self._leg(("guarded_p", alpha), lambda: self.boot.guarded_p(0.0, alpha))
        if self.sample is None:
            return p
        t = self._t(self.sample, alpha, power)
        return max(p, t.p_value, self._score(self.sample, alpha).p_value)


def _unresolved_text(test: OneSidedTest, level: float, alpha: float, ucb_alpha: float) -> str:
    """Why an unresolved claim is not established, in words its bounds do not contradict."""
    lcb = test.lower_bound
    if lcb > 0:
        said = (
            f"lower bound {lcb:+.4g} > 0 at level {level:.4g}, but p {test.p_value:.3g} "
            f"> {level:.4g} (every test must reject)"
        )
    else:
        said = (
            f"lower bound {lcb:+.4g} at level {level:.4g} does not exclude 0 "
            f"(upper bound at alpha {alpha:g}: {ucb_alpha:+.4g})"
        )
    if test.degenerate_reason is not None:
        return f"{said}; {test.degenerate_reason}"
    return said + (
        "; the estimate shows a gain, so more data would more likely establish the claim"
        if test.estimate > 0
        else "; the estimate shows no gain, so more data would more likely show no benefit"
    )


def _claim_gate(
    claim: Claim,
    statistic: str,
    evidence: _ClaimEvidence,
    level: float,
    alpha: float,
    power: float,
    established: bool,
    family_note: str,
    reading: str | None = None,
) -> GateResult:
    test = evidence.test(level, power)
    head = f"{claim.kind.value} on {claim.metric}: " + (f"{reading}; " if reading else "")
    lcb = test.lower_bound
    ucb_alpha = evidence.test(alpha, power).upper_bound
    more = None
    if evidence.too_few_units:
        status = GateStatus.INCONCLUSIVE
        more = MIN_CLAIM_UNITS - evidence.boot.n_units
        unit = "clusters" if test.unit_name == "clusters" else "paired examples"
        reason = (
            f"{head}{evidence.boot.n_units} {unit}, fewer than "
            f"the {MIN_CLAIM_UNITS} a claim needs (its tests are liberal below that; "
            'docs/validity.md, "Claims"): not established'
        )
    elif established:
        status = GateStatus.PASS
        reason = f"{head}lower bound {lcb:+.4g} > 0 at level {level:.4g}"
    elif ucb_alpha <= 0:
        status = GateStatus.FAIL
        reason = f"{head}no gain (no-benefit): upper bound at alpha {alpha:g} {ucb_alpha:+.4g} <= 0"
    else:
        status = GateStatus.INCONCLUSIVE
        more = test.more_units_needed or None  # never "about 0 more"
        reason = head + _unresolved_text(test, level, alpha, ucb_alpha)
    return GateResult(
        id=f"claim:{claim.kind.value}:{claim.metric}",
        kind="claim",
        status=status,
        metric=claim.metric,
        statistic=f"{statistic} delta, oriented (positive = candidate better)",
        estimate=test.estimate,
        lower_bound=lcb,
        upper_bound=test.upper_bound,
        threshold=0.0,
        alpha=level,
        p_value=test.p_value,
        n=test.n,
        reason=reason + family_note,
        more_paired_n=more,
        method=test.method,
        details={"resampled_units": test.n_units, "units": test.unit_name},
    )


def _evidence(
    tests: list[OrientedBootstrap], samples: list[ClaimSample | None] | None
) -> list[_ClaimEvidence]:
    chosen = samples if samples is not None else [None] * len(tests)
    return [_ClaimEvidence(t, s) for t, s in zip(tests, chosen, strict=True)]


def gate_claims(
    claims: ClaimSet,
    tests: list[OrientedBootstrap],
    statistics: list[str],
    alpha: float,
    power: float,
    samples: list[ClaimSample | None] | None = None,
    readings: list[str | None] | None = None,
) -> list[GateResult]:
    """One gate per declared claim, aligned with ``claims.items``.

    ``readings`` (aligned with the claims) puts each claim's difference in the reader's terms
    (``gates.operational.difference_in_reader_terms``: "the candidate costs +$0.00022 per
    request (+12 %, baseline $0.0018)") first in its reason; None leaves the numbers alone.

    ``any``: Holm step-down over the claims' p-values (H0: oriented delta <= 0); a claim holds
    when its lower bound at its Holm level is above 0; the step-down stops at the first claim that
    does not hold. ``all``: each claim at ``alpha``. A claim whose upper bound at ``alpha`` is
    <= 0 fails (no-benefit). ``samples`` (aligned with the claims; None for a quantile claim)
    holds a mean claim's raw sample: such a claim also needs the cluster-robust t-test to reject.
    """
    evidence = _evidence(tests, samples)
    k = len(claims.items)
    if claims.join == "all" or k == 1:
        levels = np.full(k, alpha)
        established = [e.test(alpha, power).rejects for e in evidence]
        note = "" if k == 1 else " (all claims must hold)"
    else:
        p = np.array([e.p_value(alpha, power) for e in evidence])  # H0: oriented delta <= 0
        levels = holm_levels(p, alpha)
        established = [False] * k
        for i in np.argsort(p, kind="stable"):
            if not evidence[i].test(float(levels[i]), power).rejects:
                break
            established[i] = True
        note = f" (Holm over {k} claims joined by any)"
    chosen = readings if readings is not None else [None] * k
    return [
        _claim_gate(c, s, ev, float(lv), alpha, power, e, note, r)
        for c, s, ev, lv, e, r in zip(
            claims.items, statistics, evidence, levels, established, chosen, strict=True
        )
    ]


def claim_family_p_value(
    claims: ClaimSet,
    tests: list[OrientedBootstrap],
    alpha: float,
    samples: list[ClaimSample | None] | None = None,
) -> float:
    """A p-value for "the declared claims hold", from the claims' p-values at ``alpha``
    (``gate_claims``'s, with the same ``samples``).

    The max over claims for ``join: all``; the Holm-adjusted min for ``join: any``.
    """
    p = np.array([e.p_value(alpha) for e in _evidence(tests, samples)])
    if claims.join == "all":
        return float(p.max())
    m = p.size
    ordered = np.sort(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * ordered)
    return float(min(1.0, adjusted[0]))
