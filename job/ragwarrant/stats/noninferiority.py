"""The noninferiority decision rule: one oriented one-sided test per metric kind.

``test_noninferiority`` is the single function gates call. It tests H0: delta <= -margin_abs
against H1: delta > -margin_abs, delta = mean(candidate) - mean(baseline) oriented so that
positive = candidate better, and returns a ``OneSidedTest``.

Rule (one rule, never contradicted): the test rejects H0 only when its p-value is <= alpha AND
its one-sided (1 - alpha) lower bound is strictly above -margin_abs. Each method below defines
its bound and p-value so that the two agree; requiring both guards against ties at the margin
(the first landing passed on LCB == -margin with p > alpha).

Methods, chosen from the metric kind and the data (``RULES``, one row per kind; the guarded
bootstrap records its steps in ``method_steps``, in the order applied):

- ``binary`` (0/1) with independent pairs: Tango's score test and interval for the paired
  difference of proportions (Tango 1998, Stat. Med. 17:891–908; ``stats.paired_binary``). It stays
  honest when all pairs are tied.
- ``ordinal``, ``continuous``, and any kind with clusters: the paired (or cluster) bootstrap of
  the mean delta with the expanded percentile bound (Hesterberg 2015, "What teachers should know
  about the bootstrap", The American Statistician 69:371–386, §4.3): the percentile bound at
  level alpha' = Phi(sqrt(G / (G - 1)) t_{alpha, G-1}), G resampled units, which corrects the
  percentile bootstrap's narrowness in small samples. With clusters the G - 1 degrees of freedom
  are the small-cluster correction of Cameron & Miller (2015, J. Human Resources 50:317–372,
  §VI.C); fewer than ``SMALL_CLUSTERS`` clusters are flagged in the method name.
- Monte Carlo guard (bootstrap only): the resampling p-value k / B is itself an estimate from B
  draws (Davison & Hinkley 1997, "Bootstrap Methods and their Application", §2.5.2; Gandy 2009,
  JASA 104:1504–1511). The test rejects only when the Clopper–Pearson upper (1 - alpha) bound of
  k / B is at or below alpha', so no PROMOTE rests on resampling noise; the lower bound is the
  order statistic that decides alike. Slightly conservative: an effective level near 0.043 for
  alpha = 0.05 at B = 2000 (docs/validity.md). With fewer than ``BOOSTED_UNITS`` units B is
  raised to ``SMALL_UNITS_RESAMPLES`` (``resamples_for_units``): the guard then costs less
  (about 0.047) where power is scarcest, and a resample of so few units is cheap.
- Tilted score check (bootstrap only): the test must also reject by the score statistic with
  the variance of the least favourable null distribution, the exponential tilt of the unit
  deltas with mean -margin_abs (Efron 1981; DiCiccio & Romano 1990; ``stats.tilted_score``).
  The percentile bootstrap alone PROMOTEs a candidate at the margin in 6.5-8 % of runs when
  the loss comes from a few large drops (ties except a 4-point drop on 5 % of a Likert 1-5
  metric, n = 140); the check brings this to Tango's level and costs under 1 point of power
  in the validity scenarios. The bound is the smaller of the two when the check does not
  reject.
- Skewness check (bootstrap, fewer than ``SKEW_CHECK_UNITS`` independent pairs): the test must
  also reject by the studentized bootstrap at level alpha / 2 (``stats.onesided.
  studentized_lower``; Efron & Tibshirani 1993, §12.5). A small slice seldom shows the long
  lower tail of its losses; simulated at 12 pairs with deltas - 0.15 (Exp(1) - 1) at the margin
  (issue 33, docs/validity.md): the bootstrap alone PASSes about 10 % of runs, with Johnson's
  (1978) t 7.7 %, with this check 4.4 % (4,000 replicates). It costs power on every small
  sample: at delta = 0 that slice passes 36 % of runs (49 % before), a bounded 15-pair slice
  90 % (95 %).
- Guard: when fewer than ``MIN_WORSE_UNITS`` units are worse for the candidate (all ties, no
  variance, few discordant pairs), the bootstrap distribution cannot see a loss. The lower bound
  is then the smaller of the bootstrap bound and an exact bound from the count k of worse units
  among G: mean delta >= -W * P(unit worse) >= -W * pi_U, with W the scale width and pi_U the
  Clopper–Pearson upper (1 - alpha) bound of k / G (Clopper & Pearson 1934, Biometrika
  26:404–413). Without a scale width no exact bound exists and the test does not reject.

Resampling is in a canonical order (units sorted by example or group id, then by value), so row
order never changes a result. Given repeated example ids and no groups (a library caller's
k runs per example), this module resamples by example, never as independent pairs. The job
never passes repeated ids: a repeated (policy, example, metric) BLOCKs the run
(``hard:duplicate-rows``), so repetitions reach these tests only as distinct example ids that
share a declared group (``groups``), resampled as whole groups.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from ragwarrant.stats.bootstrap import BootstrapResult, as_pairs, paired_bootstrap, unit_codes
from ragwarrant.stats.distributions import beta_ppf, binom_cdf
from ragwarrant.stats.onesided import (
    OneSidedTest,
    OrientedBootstrap,
    expanded_level,
    mc_decision,
    studentized_lower,
)
from ragwarrant.stats.paired_binary import tango_test
from ragwarrant.stats.power import feasible_hint, resolvable_gap
from ragwarrant.stats.tilted_score import tilted_score_test

MetricKind = Literal["binary", "ordinal", "continuous"]
SMALL_CLUSTERS = 30
SMALL_UNITS_RESAMPLES = 10_000
#: Below this many units a test draws ``SMALL_UNITS_RESAMPLES``: the guard's cost in power
#: shrinks as 1/sqrt(B), and so few units resample cheaply (docs/validity.md, clusters-30x5).
BOOSTED_UNITS = 50
MAX_RESAMPLES = 100_000
MIN_WORSE_UNITS = 2
#: Below this many independent pairs the bootstrap must also pass the studentized bootstrap
#: at alpha / 2 (``_Question.skew_guard``).
SKEW_CHECK_UNITS = 50
ORDINAL_MAX_LEVELS = 11
_N = NormalDist()


def detect_metric_kind(values: np.ndarray, scale: tuple[float, float]) -> MetricKind:
    """The kind of a metric whose contract leaves ``metric_kind`` null, from its values.

    ``binary`` when every value is 0 or 1; ``ordinal`` when every value is an integer and the
    scale [low, high] holds at most ``ORDINAL_MAX_LEVELS`` integers (a Likert 1-5 or 0-10
    score); otherwise ``continuous``.

    Args:
        values: shape (n,) finite values in metric units (both arms together).
        scale: the declared (low, high) scale.
    """
    if np.all(np.isin(values, (0.0, 1.0))):
        return "binary"
    levels = math.floor(scale[1]) - math.ceil(scale[0]) + 1
    if levels <= ORDINAL_MAX_LEVELS and np.all(values == np.round(values)):
        return "ordinal"
    return "continuous"


def min_units_for_margin(
    kind: MetricKind, margin_abs: float, alpha: float, scale_width: float | None = None
) -> int:
    """The fewest units (pairs or clusters) with which a sample of all ties can pass.

    Binary (Tango): with b = c = 0, Z(-m) = sqrt(n m / (1 - m)) > z_{1-alpha} needs
    n > z^2 (1 - m) / m. Ordinal/continuous (exact discordance bound): with no worse unit
    the bound is -W (1 - alpha^{1/n}) > -m, which needs n > ln(alpha) / ln(1 - m / W)
    (the "rule of three" generalised; Hanley & Lippman-Hand 1983, JAMA 249:1743–1745).

    Args:
        kind: the metric kind; margin_abs: the margin in metric units (> 0).
        alpha: one-sided level; scale_width: W = max - min of the metric's scale (ordinal and
            continuous; 1 when None).
    """
    if kind == "binary":
        z = _N.inv_cdf(1.0 - alpha)
        return math.floor(z * z * (1.0 - margin_abs) / margin_abs) + 1
    width = 1.0 if scale_width is None else scale_width
    if margin_abs >= width:
        return 1
    return math.floor(math.log(alpha) / math.log1p(-margin_abs / width)) + 1


@dataclass(frozen=True)
class _Units:
    """Paired rows in canonical order and their resampling units."""

    candidate: np.ndarray
    baseline: np.ndarray
    codes: np.ndarray | None  # shape (n,) unit code per row, or None: one unit per row
    unit_delta: np.ndarray  # shape (G,) mean delta per unit

    @property
    def n_units(self) -> int:
        return int(self.unit_delta.size)

    @property
    def clustered(self) -> bool:
        return self.codes is not None

    @classmethod
    def canonical(
        cls,
        candidate: np.ndarray,
        baseline: np.ndarray,
        groups: np.ndarray | None,
        example_ids: np.ndarray | None,
        ordered: bool = True,
    ) -> _Units:
        """Sort rows by (group, example id, candidate, baseline); choose the resampling unit.

        ``ordered=False`` (the caller only needs each unit's mean delta, not the row order: a
        score test, or a test on replicates already drawn) leaves unclustered rows in input order;
        clustered rows are always sorted, so each unit's mean is summed in canonical order.
        """
        repeats = example_ids is not None and np.unique(example_ids).size < len(example_ids)
        if not ordered and groups is None and not repeats:
            return cls(candidate, baseline, None, candidate - baseline)
        ids = None if example_ids is None else unit_codes(example_ids)[0]
        cluster = None if groups is None else unit_codes(groups)[0]
        if cluster is None and ids is not None and int(ids.max()) + 1 < ids.size:
            cluster = ids  # repetitions: resample by example (ids are dense codes 0..k-1)
        keys = [baseline, candidate]
        keys += [k for k in (ids, cluster) if k is not None]
        order = np.lexsort(keys)
        cand, base = candidate[order], baseline[order]
        delta = cand - base
        if cluster is None:
            return cls(cand, base, None, delta)
        codes = cluster[order]
        sums = np.bincount(codes, weights=delta)
        sizes = np.bincount(codes)
        return cls(cand, base, codes, sums / sizes)


def resamples_for_units(n_units: int, resamples: int, alpha: float = 0.05) -> int:
    """Bootstrap resamples B for a test on ``n_units`` units at one-sided level ``alpha``.

    At least ``SMALL_UNITS_RESAMPLES`` when there are fewer than ``BOOSTED_UNITS`` units: the
    Monte Carlo guard's cost in level shrinks as 1/sqrt(B) (effective one-sided level about
    0.043 at B = 2,000 and 0.047 at B = 10,000 for alpha = 0.05), and with few units power is
    scarce while a resample is cheap (docs/validity.md, ``clusters-10x5``). At least
    ceil(20 / alpha), up to ``MAX_RESAMPLES``, so a small level (an early look of a sequential
    plan) is reachable at all: with no replicate beyond the margin the guard's p-value is
    about -ln(alpha) / B, which must fall below the level.
    """
    b = max(resamples, SMALL_UNITS_RESAMPLES) if n_units < BOOSTED_UNITS else resamples
    return max(b, min(math.ceil(20.0 / alpha), MAX_RESAMPLES))


@dataclass(frozen=True)
class _Bound:
    """The guarded bootstrap's bound so far: lower and upper bounds, p-value, the steps that
    made them (``OneSidedTest.method_steps``) and the level left after the Monte Carlo guard."""

    lower: float
    upper: float
    p_value: float
    steps: tuple[str, ...]
    alpha_eff: float

    def tightened(self, step: str, lower: float, p_value: float) -> _Bound:
        """This bound after a guard: the smaller lower bound, the larger p-value, one step more."""
        return dataclasses.replace(
            self,
            lower=min(self.lower, lower),
            p_value=max(self.p_value, p_value),
            steps=(*self.steps, step),
        )


@dataclass(frozen=True)
class _Question:
    """One noninferiority question: the units, H0's threshold (-margin_abs) and what the
    procedures need (``width``: the exact guard's scale width, None when unknown)."""

    units: _Units
    threshold: float
    alpha: float
    power: float
    width: float | None
    kind: MetricKind
    rng: np.random.Generator
    resamples: int
    resampled: BootstrapResult | None

    def more_needed(
        self, estimate: float, sd_h1: float, sd_h0: float, alpha: float, minimum: int
    ) -> int | None:
        """Additional units for a one-sided level-alpha test to reach ``power`` at ``estimate``
        (oriented), and at least ``minimum`` units in all (the units the margin requires,
        ``min_units_for_margin``).

        None when the gap estimate - threshold (``stats.power.resolvable_gap``) is <= 0 (the
        estimate is at or beyond the margin: more data would more likely confirm the loss, and
        no count is a useful hint) or the count is not feasible (``stats.power.feasible_hint``)
        and ``minimum`` is met.

        n* = ((z_{1-alpha} sd_H0 + z_power sd_H1) / gap)^2 (the score-test sample size of
        Nam 1997, Biometrics 53:1422–1430, eq. 3; with sd_H0 = sd_H1 the usual normal formula).
        """
        gap, n_units = resolvable_gap(estimate, self.threshold), self.units.n_units
        if gap <= 0:
            return None
        more = None
        if sd_h1 > 0 and math.isfinite(sd_h1):
            total = ((_N.inv_cdf(1 - alpha) * sd_h0 + _N.inv_cdf(self.power) * sd_h1) / gap) ** 2
            more = feasible_hint(max(0, math.ceil(total - n_units)), gap, n_units)
        return more if n_units >= minimum else max(more or 0, minimum - n_units)

    def tango(self) -> OneSidedTest:
        """Tango's score test for paired proportions (binary metrics, independent pairs)."""
        units, threshold, alpha = self.units, self.threshold, self.alpha
        delta = units.candidate - units.baseline
        b, c, n = int(np.sum(delta > 0)), int(np.sum(delta < 0)), int(delta.size)
        res = tango_test(b, c, n, threshold, alpha)
        rejects = res.p_value <= alpha and res.lower_bound > threshold
        more = None
        if not rejects:
            sd1 = math.sqrt(res.observed_variance) or math.sqrt(res.null_variance)
            minimum = min_units_for_margin("binary", -threshold, alpha)
            more = self.more_needed(res.estimate, sd1, math.sqrt(res.null_variance), alpha, minimum)
        method = "Tango score test for paired proportions"
        return OneSidedTest(
            estimate=res.estimate,
            lower_bound=res.lower_bound,
            upper_bound=res.upper_bound,
            p_value=res.p_value,
            threshold=threshold,
            alpha=alpha,
            rejects=rejects,
            method=method,
            n=n,
            n_units=n,
            unit_name="pairs",
            standard_error=math.sqrt(res.observed_variance / n),
            more_units_needed=more,
            degenerate_reason="all pairs tied (no discordant pair)" if b == c == 0 else None,
            method_steps=(method,),
        )

    def replicates(self) -> BootstrapResult:
        """Step 0: the bootstrap replicates of the mean delta, the joint resample's column when
        it has the B this test needs (``resamples_for_units``), else drawn here."""
        b = resamples_for_units(self.units.n_units, self.resamples, self.alpha)
        if self.resampled is not None and b == self.resamples:
            return self.resampled
        units = self.units
        return paired_bootstrap(
            units.candidate[:, None],
            units.baseline[:, None],
            ["mean"],
            rng=self.rng,
            resamples=b,
            groups=units.codes,
        )

    def expanded_percentile(self, boot: OrientedBootstrap, b: int) -> _Bound:
        """Step 1: the expanded percentile bound with the Monte Carlo guard (``mc_decision``)."""
        g = self.units.n_units
        if self.units.clustered:
            steps = [f"cluster bootstrap, expanded percentile with G-1 df (B={b}, G={g})"]
            if g < SMALL_CLUSTERS:
                steps.append(f"small-cluster correction: {g} < {SMALL_CLUSTERS} clusters")
        else:
            steps = [f"paired bootstrap, expanded percentile (B={b})"]
        steps.append("Monte Carlo guard: Clopper-Pearson upper bound of the p-value over B")
        mc = mc_decision(boot.replicates, self.threshold, g, self.alpha)
        return _Bound(mc.lower, mc.upper, mc.p_value, tuple(steps), mc.alpha_eff)

    def exact_guard(self, bound: _Bound) -> tuple[_Bound, str | None]:
        """Step 2: with too few worse units (the degenerate reason returned, None when there are
        enough), the exact lower bound -W * pi_U from the count k of worse units among G, pi_U the
        Clopper–Pearson upper bound of k / G, and its p-value P(Binomial(G, margin / W) <= k)."""
        deltas, g = self.units.unit_delta, self.units.n_units
        worse = int(np.sum(deltas < 0))
        if worse >= MIN_WORSE_UNITS and np.ptp(deltas) > 0:
            return bound, None
        unit = "clusters" if self.units.clustered else "pairs"
        reason = f"only {worse} of {g} {unit} worse (< {MIN_WORSE_UNITS})"
        reason = f"all {g} {unit} tied" if np.ptp(deltas) == 0 else reason
        if self.width is None:
            return bound, reason + "; no scale width, so no exact bound"
        pi_u = 1.0 if worse >= g else float(beta_ppf(1 - self.alpha, worse + 1, g - worse))
        pi0 = min(1.0, max(0.0, -self.threshold / self.width))
        p = binom_cdf(worse, g, pi0) if pi0 > 0 else 1.0
        return bound.tightened("exact bound from worse units", -self.width * pi_u, p), reason

    def score_guard(self, bound: _Bound) -> _Bound:
        """Step 3: the tilted score check (``stats.tilted_score``) must reject too.

        The bootstrap alone PROMOTEs a candidate at the margin too often when the loss sits in a
        few units with large losses (rare drops on a Likert scale); the score check takes the
        variance of the least favourable null distribution, as Tango's test does for 0/1 data.
        """
        score = tilted_score_test(self.units.unit_delta, self.threshold, self.alpha)
        lower = bound.lower if score.lower_bound is None else score.lower_bound
        return bound.tightened(
            "tilted score check (least favourable null variance)", lower, score.p_value
        )

    def skew_guard(self, bound: _Bound, b: int) -> _Bound:
        """Step 4, below ``SKEW_CHECK_UNITS`` independent pairs: the studentized bootstrap at level
        alpha / 2 over ``b`` resamples (``stats.onesided.studentized_lower``) must reject too.

        Not applied to clusters (their few means are already covered by the small-cluster
        correction) nor from ``SKEW_CHECK_UNITS`` pairs on, where the bootstrap held alpha in the
        long-tailed scenario (5.1 % at 50 pairs; docs/validity.md). When the check gives no finite
        bound (one odd pair among identical ones), the bound so far stays and its p-value (above
        alpha) keeps the test from rejecting.
        """
        if self.units.clustered or self.units.n_units >= SKEW_CHECK_UNITS:
            return bound
        sk = studentized_lower(self.units.unit_delta, self.threshold, self.alpha, self.rng, b)
        step = "studentized bootstrap check at alpha/2 (skewed small samples)"
        if sk.lower_bound is None:  # too many resamples without spread: not passed, no bound
            step += ": no finite bound (too many resamples without spread), not passed"
            return bound.tightened(step, bound.lower, sk.p_value)
        return bound.tightened(step, sk.lower_bound, sk.p_value)

    def guarded_bootstrap(self) -> OneSidedTest:
        """The bootstrap procedure as named steps: replicates, expanded percentile bound with the
        Monte Carlo guard, the exact guard, the tilted score check, the small-sample skewness
        check; rejects when the final p-value is <= alpha and the final lower bound exceeds the
        threshold (module docstring)."""
        units, g = self.units, self.units.n_units
        res = self.replicates()
        b = res.replicates.shape[0]
        boot = OrientedBootstrap(
            float(res.estimate[0]), res.replicates[:, 0], res.n, g, units.clustered
        )
        bound = self.expanded_percentile(boot, b)
        bound, reason = self.exact_guard(bound)
        bound = self.score_guard(bound)
        bound = self.skew_guard(bound, b)
        steps = (*bound.steps, f"{res.method} resampling")
        rejects = bound.p_value <= self.alpha and bound.lower > self.threshold
        rejects = rejects and (reason is None or self.width is not None)
        _, s = expanded_level(g, self.alpha)
        more = None
        if not rejects:  # units likely needed to resolve the test at self.power
            sd = boot.standard_error() * s * math.sqrt(g)
            minimum = 0
            if reason is not None:
                minimum = max(
                    min_units_for_margin(self.kind, -self.threshold, self.alpha, self.width), g + 1
                )
            more = self.more_needed(boot.estimate, sd, sd, bound.alpha_eff, minimum)
        return OneSidedTest(
            estimate=boot.estimate,
            lower_bound=bound.lower,
            upper_bound=bound.upper,
            p_value=bound.p_value,
            threshold=self.threshold,
            alpha=self.alpha,
            rejects=rejects,
            method=f"guarded {'cluster' if units.clustered else 'paired'} bootstrap",
            n=res.n,
            n_units=g,
            unit_name="clusters" if units.clustered else "pairs",
            standard_error=boot.standard_error() * s,
            more_units_needed=more,
            degenerate_reason=reason,
            method_steps=steps,
        )


Procedure = Callable[[_Question], OneSidedTest]


@dataclass(frozen=True)
class Rule:
    """How one metric kind is tested.

    Attributes:
        pairs: the procedure for independent pairs; clusters: for clustered units.
        unit_width: the exact guard's scale width is 1 (binary), else the declared scale's.
    """

    pairs: Procedure
    clusters: Procedure
    unit_width: bool


RULES: dict[MetricKind, Rule] = {
    "binary": Rule(pairs=_Question.tango, clusters=_Question.guarded_bootstrap, unit_width=True),
    "ordinal": Rule(
        pairs=_Question.guarded_bootstrap, clusters=_Question.guarded_bootstrap, unit_width=False
    ),
    "continuous": Rule(
        pairs=_Question.guarded_bootstrap, clusters=_Question.guarded_bootstrap, unit_width=False
    ),
}
"""The noninferiority rule per metric kind (module docstring: the methods and their sources)."""


def test_noninferiority(
    candidate: np.ndarray,
    baseline: np.ndarray,
    *,
    kind: MetricKind,
    margin_abs: float,
    alpha: float,
    rng: np.random.Generator,
    resamples: int = 2000,
    power: float = 0.8,
    higher_is_better: bool = True,
    scale: tuple[float, float] | None = None,
    groups: np.ndarray | None = None,
    example_ids: np.ndarray | None = None,
    resampled: BootstrapResult | None = None,
) -> OneSidedTest:
    """Test H0: delta <= -margin_abs vs H1: delta > -margin_abs, delta oriented (+ = better).

    Args:
        candidate, baseline: shape (n,) finite paired values in metric units; row i of both is
            the same example (and run).
        kind: ``binary`` (values 0/1), ``ordinal`` (e.g. Likert) or ``continuous``.
        margin_abs: the noninferiority margin in metric units (> 0).
        alpha: one-sided level in (0, 0.5).
        rng: the only source of randomness (the binary score test uses none).
        resamples: bootstrap resamples B.
        power: the power the "more units needed" hint aims for.
        higher_is_better: orientation; when False the roles of the arms are swapped.
        scale: (min, max) of the metric's scale; its width bounds the exact guard. Binary: (0, 1).
        groups: shape (n,) cluster labels (declared), resampled as whole clusters.
        example_ids: shape (n,) example ids; they fix the canonical order, and repeated ids
            become clusters when no groups are declared (the job's ids are unique: repeated
            rows BLOCK as ``hard:duplicate-rows``).
        resampled: bootstrap replicates of the oriented mean delta already drawn on these
            pairs (one column of a candidate's joint resample, ``stats.bootstrap``); when None
            the bootstrap draws its own from ``rng``. Unused by the binary score test.

    Returns:
        OneSidedTest with ``rejects`` = (p_value <= alpha and lower_bound > -margin_abs), the
        method's name, the unit (pairs or clusters), any degenerate reason and the units
        likely needed to resolve an unresolved test at ``power``.

    Raises:
        ValueError: shapes disagree, fewer than 2 pairs, non-finite values, unknown kind, a
            binary metric holding values other than 0 and 1, or a bad margin or alpha.
    """
    cand, base = as_pairs(candidate, baseline, alpha=alpha)
    if kind not in RULES:
        raise ValueError(f"unknown metric kind {kind!r}; expected binary, ordinal or continuous")
    if kind == "binary" and not np.all(np.isin(np.concatenate([cand, base]), (0, 1))):
        raise ValueError("a binary metric must hold only 0 and 1")
    if not (margin_abs > 0 and math.isfinite(margin_abs)):
        raise ValueError(f"margin_abs must be positive and finite, got {margin_abs}")
    for name, arr in (("groups", groups), ("example_ids", example_ids)):
        if arr is not None and np.shape(arr) != cand.shape:
            raise ValueError(f"{name} must have shape {cand.shape}, got {np.shape(arr)}")
    if not higher_is_better:
        cand, base = base, cand
    # the row order matters only to a bootstrap this call draws itself
    drawn = resampled is not None and resamples_for_units(cand.size, resamples, alpha) == resamples
    ordered = kind != "binary" and not drawn
    units = _Units.canonical(cand, base, groups, example_ids, ordered)
    rule = RULES[kind]
    width = 1.0 if rule.unit_width else (None if scale is None else scale[1] - scale[0])
    question = _Question(units, -margin_abs, alpha, power, width, kind, rng, resamples, resampled)
    return (rule.clusters if units.clustered else rule.pairs)(question)


test_noninferiority.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
