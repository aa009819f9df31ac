"""All gates for one candidate against the baseline on one set of examples."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from ragwarrant.contract import (
    ClaimKind,
    MissingValuePolicy,
    OperationalMetric,
    QualityMetric,
    ReleaseContract,
)
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.gates import hard
from ragwarrant.gates.claims import ClaimSample, claim_family_p_value, gate_claims
from ragwarrant.gates.noninferiority import gate_noninferiority, gate_too_few_pairs
from ragwarrant.gates.operational import difference_in_reader_terms, gate_operational
from ragwarrant.gates.paired import (
    PairedMetric,
    least_favourable_ends,
    missingness_notes,
    pair_metric,
)
from ragwarrant.gates.ppi import gate_corrected
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.review import HumanLabelSet
from ragwarrant.stats.bootstrap import BootstrapResult, Column, joint_bootstrap
from ragwarrant.stats.missing_sensitivity import tipping_point, worst_first
from ragwarrant.stats.noninferiority import MetricKind, detect_metric_kind, test_noninferiority
from ragwarrant.stats.onesided import OneSidedTest, OrientedBootstrap
from ragwarrant.stats.seeding import make_rng


@dataclass(frozen=True)
class CandidateEvaluation:
    """Every gate of one candidate, plus the figures used to compare candidates.

    Attributes:
        policy_id: the candidate.
        gates: hard, noninferiority, claim and (informational) operational gates, in that order.
        paired_n: paired n of the first required quality metric (None when not paired).
        quality_estimate: oriented mean delta of the first required quality metric.
        cost_estimate: oriented delta of the first cost-reduction claim's metric (positive =
            cheaper), or of the first operational metric in usd.
        candidate_p_value: a p-value for "noninferior on every test and the claims hold"
            (the maximum over the intersection-union components), for Holm across candidates.
    """

    policy_id: str
    gates: list[GateResult]
    paired_n: int | None
    quality_estimate: float | None
    cost_estimate: float | None
    candidate_p_value: float | None

    @property
    def blocked(self) -> bool:
        """Whether a hard gate failed."""
        return any(g.kind == "hard" and g.status is GateStatus.FAIL for g in self.gates)


ColumnKey = tuple[str, str | None]
"""(metric, protected slice value or None for all examples in scope)."""


@dataclass(frozen=True)
class _Joint:
    """One joint resample of every statistic a candidate is tested on (``joint_bootstrap``)."""

    result: BootstrapResult
    keys: list[ColumnKey]
    signs: list[int]
    clustered: bool

    def column(self, key: ColumnKey) -> BootstrapResult | None:
        """The oriented single-column result of ``key`` (positive = candidate better), or None."""
        if key not in self.keys:
            return None
        j, res = self.keys.index(key), self.result
        s = self.signs[j]
        assert res.column_n is not None and res.column_units is not None
        return BootstrapResult(
            estimate=s * res.estimate[j : j + 1],
            replicates=s * res.replicates[:, j : j + 1],
            n=int(res.column_n[j]),
            n_units=int(res.column_units[j]),
            method=res.method,
        )

    def oriented(self, key: ColumnKey) -> OrientedBootstrap:
        """The column of ``key`` as an ``OrientedBootstrap`` (claims, operational gates)."""
        col = self.column(key)
        assert col is not None
        return OrientedBootstrap(
            float(col.estimate[0]),
            col.replicates[:, 0],
            col.n,
            col.n_units,
            self.clustered,
            col.method,
        )


@dataclass(frozen=True)
class _Context:
    """One candidate's evaluation: what every step reads, and the steps (pairing, hard gates,
    joint resample, noninferiority tests, claim inputs) that read it."""

    index: EvidenceIndex
    contract: ReleaseContract
    candidate: str
    scope: np.ndarray
    scope_name: str
    paired: dict[tuple[int, int, int], list[np.ndarray]] = field(default_factory=dict)
    labels: Mapping[str, HumanLabelSet] = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        """The contract's baseline policy id."""
        return self.contract.baseline.policy_id

    @property
    def required(self) -> list[QualityMetric]:
        """The required quality metrics, in contract order."""
        return [m for m in self.contract.quality_metrics if m.required]

    @property
    def needed(self) -> list[str]:
        """Required quality metrics, then claim metrics, each once."""
        claimed = [c.metric for c in self.contract.claims.items]
        return list(dict.fromkeys([m.id for m in self.required] + claimed))

    def declared(self, metric: str) -> QualityMetric | OperationalMetric | None:
        """The contract's quality or operational metric ``metric`` (quality first), or None."""
        quality = {m.id: m for m in self.contract.quality_metrics}
        operational = {m.id: m for m in self.contract.operational_metrics}
        return quality.get(metric) or operational.get(metric)

    def pair(self, metric: str, examples: np.ndarray) -> PairedMetric:
        """Pair ``metric`` on ``examples`` (shape (E,) bool) by its missing-value policy."""
        decl = self.declared(metric)
        on_missing = decl.on_missing if decl is not None else MissingValuePolicy.FAIL
        if isinstance(decl, OperationalMetric) and on_missing is MissingValuePolicy.EXCLUDE:
            on_missing = MissingValuePolicy.WORST  # no tipping point for a claim: imputed
        pm = pair_metric(
            self.index, metric, self.baseline, self.candidate, examples, decl, on_missing
        )
        return self._shared(pm)

    def _shared(self, pm: PairedMetric) -> PairedMetric:
        """``pm`` holding the examples array of an earlier pairing with the same examples (the
        metrics of one scope usually pair the same examples: one 8 MB array at 10^6, not 5)."""
        key = (pm.n, int(pm.examples[0]) if pm.n else -1, int(pm.examples[-1]) if pm.n else -1)
        for earlier in self.paired.setdefault(key, []):
            if np.array_equal(earlier, pm.examples):
                return dataclasses.replace(pm, examples=earlier)
        self.paired[key].append(pm.examples)
        return pm

    def labelled(self, metric: str) -> bool:
        """Whether ``metric``'s human labels decide here: drawn for this candidate against the
        baseline, on the confirmatory scope (the development split's screening is the judge's:
        the labels are a draw from the confirmatory examples, ``review.sample``)."""
        labels = self.labels.get(metric)
        pair = (self.baseline, self.candidate)
        return (
            labels is not None
            and (labels.baseline, labels.candidate) == pair
            and (self.scope_name != "development")
        )

    def min_paired_n(self, slice_value: str | None) -> int:
        """The ``min_paired_n`` of a test: its protected slice's, else the statistics'."""
        for ps in self.contract.protected_slices:
            if ps.value == slice_value:
                return ps.min_paired_n
        return self.contract.statistics.min_paired_n

    def spec(self, metric: str) -> tuple[str, str, int]:
        """(metric, statistic, direction sign) for the bootstrap: quality metrics use the mean."""
        decl = self.declared(metric)
        if isinstance(decl, QualityMetric):
            return (metric, "mean", decl.direction.sign)
        om = {m.id: m for m in self.contract.operational_metrics}[metric]
        return (metric, om.statistic, om.direction.sign)

    def groups(self, examples: np.ndarray) -> np.ndarray | None:
        """Shape (n,) int64 cluster labels of ``examples`` that do not depend on the row order.

        A group is labelled by the smallest example id among its paired examples; an example without
        a group is a cluster of its own, labelled by its id. Labels are id ranks
        (``EvidenceIndex.example_rank``): an ungrouped example's rank r, a group's E + the rank of
        its smallest id, so sorting labels sorts ungrouped examples by id, then groups by leader id.
        None when no example has a group.
        """
        index = self.index
        g = index.group[examples]
        if not np.any(g >= 0):
            return None
        ranks = index.example_rank[examples]
        labels = ranks.copy()
        grouped = np.flatnonzero(g >= 0)
        order = grouped[np.lexsort((ranks[grouped], g[grouped]))]
        first = np.r_[True, g[order][1:] != g[order][:-1]]
        leader = ranks[order][first][np.cumsum(first) - 1]
        labels[order] = index.n_examples + leader
        return labels

    def slice_pairs(self) -> tuple[dict[tuple[str, str], PairedMetric], list[GateResult]]:
        """Pair each protected slice's metrics; one paired-n hard gate per (slice, metric)."""
        slice_pairs: dict[tuple[str, str], PairedMetric] = {}
        gates: list[GateResult] = []
        present = self.index.slices_in(self.scope)  # a few labels among 10^6 examples
        slices_present = sorted({str(v) for v in present if v is not None})
        for ps in self.contract.protected_slices:
            in_slice = self.scope & self.index.in_slice(ps.value)
            for metric in ps.metrics or [m.id for m in self.required]:
                pm = self.pair(metric, in_slice)
                slice_pairs[(ps.value, metric)] = pm
                gates.append(
                    hard.gate_slice_paired_n(
                        ps.value, metric, pm.n, ps.min_paired_n, present=slices_present
                    )
                )
        return slice_pairs, gates

    def hard_gates(
        self, pairs: dict[str, PairedMetric], config_missing: list[str]
    ) -> list[GateResult]:
        """Every hard gate on the confirmatory evidence of the baseline and the candidate."""
        index, contract, scope = self.index, self.contract, self.scope
        baseline, candidate = self.baseline, self.candidate
        st = contract.statistics
        dq_metrics = [d.metric for d in contract.hard_disqualifiers]
        gates: list[GateResult] = [
            hard.gate_required_evidence(
                index, list(dict.fromkeys(list(pairs) + dq_metrics)), baseline, candidate, scope
            ),
            hard.gate_provenance(index, [p for p in config_missing if p in (baseline, candidate)]),
            hard.gate_duplicates(index, contract.policy_ids),
            hard.gate_example_attributes(index),
            hard.gate_leakage(index, contract),
            hard.gate_non_finite(contract, pairs, baseline, candidate, index, scope),
            hard.gate_value_range(index, contract, (baseline, candidate), scope),
            hard.gate_pairing_coverage(pairs, st.min_pairing_coverage),
            hard.gate_paired_n(pairs, st.min_paired_n),
        ]
        gates += [hard.gate_constant_signal(m.id, pairs[m.id]) for m in self.required]
        gates += [
            hard.gate_constant_labels(m.id, self.labels[m.id], m.human_labels.file)
            for m in contract.quality_metrics
            if m.human_labels is not None and self.labelled(m.id)
        ]
        sides = {"candidate": candidate, "baseline": baseline}
        gates += [
            hard.gate_missing_balance(
                m, pairs[m], st.alpha, missingness_notes(index, m, pairs[m], sides, scope)
            )
            for m in self.needed  # claim metrics too: a candidate may not drop its cost rows
        ]
        gates += [
            hard.gate_disqualifier(dq, index.columns.get((candidate, dq.metric)), scope)
            for dq in contract.hard_disqualifiers
        ]
        return gates

    def joint_resample(
        self,
        pairs: dict[str, PairedMetric],
        slice_pairs: dict[tuple[str, str], PairedMetric],
        rng: np.random.Generator,
    ) -> _Joint:
        """One resample of every statistic of the candidate over the union of their examples, in
        canonical (example id) order: the metrics overall (their own statistic), then the required
        metrics' means in each protected slice large enough to test.

        Each column (with its statistic and direction sign) uses the resample weights of its own
        examples or clusters, so the intersection-union test over a candidate's gates uses joint
        replicates (``stats.bootstrap.joint_bootstrap``). Columns with fewer than 2 paired examples
        are left out.
        """
        index, resamples = self.index, self.contract.statistics.resamples
        usable: dict[ColumnKey, tuple[PairedMetric, str, int]] = {
            (m, None): (pm, *self.spec(m)[1:])  # type: ignore[misc]
            for m, pm in pairs.items()
            if pm.n >= 2
        }
        quality = {m.id: m for m in self.contract.quality_metrics}
        for (value, metric), pm in slice_pairs.items():
            if pm.n >= max(2, self.min_paired_n(value)):  # a smaller slice is not tested
                usable[(metric, value)] = (pm, "mean", quality[metric].direction.sign)
        if not usable:
            empty = BootstrapResult(np.zeros(0), np.zeros((resamples, 0)), 0, 0)
            return _Joint(empty, [], [], False)
        used = np.zeros(index.n_examples, dtype=bool)
        for pm, _, _ in usable.values():
            used[pm.examples] = True
        union = np.flatnonzero(used)  # np.unique of the concatenation, in O(E)
        union = union[np.argsort(index.example_rank[union])]  # ranks are distinct: sorted by id
        position = np.empty(index.n_examples, dtype=np.int32)  # half the memory of int64 rows
        position[union] = np.arange(union.size)
        cols = [
            Column(position[pm.examples], pm.candidate, pm.baseline, stat)  # type: ignore[arg-type]
            for pm, stat, _ in usable.values()
        ]
        groups = self.groups(union)
        res = joint_bootstrap(cols, union.size, rng=rng, resamples=resamples, groups=groups)
        signs = [sign for _, _, sign in usable.values()]
        return _Joint(res, list(usable), signs, groups is not None)

    def noninferiority_gates(
        self,
        pairs: dict[str, PairedMetric],
        slice_pairs: dict[tuple[str, str], PairedMetric],
        joint: _Joint,
    ) -> list[GateResult]:
        """Noninferiority of every required metric overall, then in every protected slice.

        The tests are independent (each has its own seed) and spend their time in numpy kernels
        that release the GIL, so two threads run them; BLAS is held at one thread meanwhile
        (``threadpoolctl``), so a test's own resample, if any, does not oversubscribe the cores.
        """
        tests = [_Noninferiority(self, pairs[m.id], m, None, m.margin_abs) for m in self.required]
        quality = {m.id: m for m in self.contract.quality_metrics}
        for ps in self.contract.protected_slices:
            for metric in ps.metrics or [m.id for m in self.required]:
                decl = quality[metric]
                margin = ps.margin_abs if ps.margin_abs is not None else decl.margin_abs
                tests.append(
                    _Noninferiority(self, slice_pairs[(ps.value, metric)], decl, ps.value, margin)
                )
        with (
            threadpool_limits(limits=1, user_api="blas"),
            ThreadPoolExecutor(max_workers=2) as pool,
        ):
            return list(pool.map(lambda t: t.gate(joint), tests))

    def claim_inputs(
        self, tests: dict[str, OrientedBootstrap], paired: dict[str, PairedMetric]
    ) -> tuple[list[OrientedBootstrap], list[str], list[ClaimSample | None], list[str | None]]:
        """Per claim, in contract order: its joint-bootstrap test; its statistic; its raw sample for
        the t-test, (oriented deltas, cluster labels) on a mean, None on a quantile
        (``gates.claims.gate_claims``; labels are the order-free cluster labels, or the example
        codes without clusters); its difference in the reader's terms when its metric is an
        operational one (cost, latency: ``difference_in_reader_terms``), else None."""
        operational = {m.id: m for m in self.contract.operational_metrics}
        claim_tests, statistics = [], []
        samples: list[ClaimSample | None] = []
        readings: list[str | None] = []
        for claim in self.contract.claims.items:
            _, statistic, sign = self.spec(claim.metric)
            pm, test = paired[claim.metric], tests[claim.metric]
            claim_tests.append(test)
            statistics.append(statistic)
            on_mean = statistic == "mean" and pm.n >= 2
            groups = self.groups(pm.examples) if on_mean else None
            labels = groups if groups is not None else pm.examples
            samples.append((sign * (pm.candidate - pm.baseline), labels) if on_mean else None)
            om = operational.get(claim.metric)
            readings.append(
                difference_in_reader_terms(om, test.estimate, pm.baseline, gain=True)
                if om is not None and pm.n
                else None
            )
        return claim_tests, statistics, samples, readings

    def cost_estimate(self, tests: dict[str, OrientedBootstrap]) -> float | None:
        """Oriented delta of the first cost-reduction claim's metric, else of the first usd
        metric; None when neither was tested."""
        contract = self.contract
        cost_metric = next(
            (c.metric for c in contract.claims.items if c.kind is ClaimKind.COST_REDUCTION),
            next((m.id for m in contract.operational_metrics if m.unit.lower() == "usd"), ""),
        )
        return tests[cost_metric].estimate if cost_metric in tests else None


@dataclass(frozen=True)
class _Noninferiority:
    """One noninferiority test of a candidate: a required metric overall, or in one protected
    slice (``slice_value``), at its margin."""

    ctx: _Context
    pm: PairedMetric
    metric: QualityMetric
    slice_value: str | None
    margin_abs: float

    def test(
        self, pm: PairedMetric, scope: str, resampled: BootstrapResult | None
    ) -> tuple[OneSidedTest, MetricKind]:
        """The issue-10 noninferiority test of the pairs ``pm``, seeded by ``scope``."""
        ctx, metric = self.ctx, self.metric
        st = ctx.contract.statistics
        kind = metric.metric_kind or detect_metric_kind(
            np.concatenate([pm.candidate, pm.baseline]), metric.scale
        )
        test = test_noninferiority(
            pm.candidate,
            pm.baseline,
            kind=kind,
            margin_abs=self.margin_abs,
            alpha=st.alpha,
            rng=make_rng(st.seed, ctx.candidate, scope, metric.id, "noninferiority"),
            resamples=st.resamples,
            power=st.power,
            higher_is_better=metric.direction.sign > 0,
            scale=metric.scale,
            groups=ctx.groups(pm.examples),
            example_ids=ctx.index.example_rank[pm.examples],  # id ranks order as the ids
            resampled=resampled,
        )
        return test, kind

    def gate(self, joint: _Joint) -> GateResult:
        """The gate, recording the metric kind (declared or detected) it used."""
        ctx, pm, metric, slice_value = self.ctx, self.pm, self.metric, self.slice_value
        st = ctx.contract.statistics
        scope = ctx.scope_name if slice_value is None else f"{ctx.scope_name}@{slice_value}"
        minimum = ctx.min_paired_n(slice_value)
        if pm.n < minimum:  # a small protected slice: the overall test BLOCKs first (paired-n)
            return gate_too_few_pairs(
                metric.id, slice_value, pm.n, minimum, self.margin_abs, st.alpha
            )
        groups = ctx.groups(pm.examples)
        # one cluster has no spread to test: a cluster bootstrap needs G >= 2
        if groups is not None and np.unique(groups).size == 1:
            return GateResult(
                id=f"noninferiority:{metric.id}" + (f"@{slice_value}" if slice_value else ""),
                kind="noninferiority",
                status=GateStatus.INCONCLUSIVE,
                metric=metric.id,
                slice=slice_value,
                n=pm.n,
                reason=f"{metric.id}: too few clusters (1); a test needs at least 2",
            )
        test, kind = self.test(pm, scope, joint.column((metric.id, slice_value)))
        g = gate_noninferiority(metric.id, slice_value, test, self.margin_abs, st.alpha, st.power)
        how = "declared" if metric.metric_kind is not None else "detected"
        details = g.details | {"metric_kind": kind, "metric_kind_source": how}
        g = g.model_copy(update={"details": details})
        return self.with_labels(self.missing_sensitivity(scope, g))

    def with_labels(self, g: GateResult) -> GateResult:
        """``g`` decided on the judge-corrected bound when the metric has human labels for this
        pair of policies (``gates.ppi``); else ``g``. The development split's screening is left
        to the judge: the labels are a draw from the confirmatory examples (``review.sample``)."""
        ctx, metric = self.ctx, self.metric
        labels = ctx.labels.get(metric.id)
        if labels is None or not ctx.labelled(metric.id):
            return g
        corr = ctx.contract.corroboration
        low, high = metric.scale
        good_from = (
            corr.supported_threshold
            if corr is not None and corr.groundedness_metric == metric.id
            else (low + high) / 2
        )
        return gate_corrected(
            g,
            ctx.index.example_ids[self.pm.examples],
            (self.pm.candidate, self.pm.baseline),
            labels,
            sign=metric.direction.sign,
            power=ctx.contract.statistics.power,
            agree_at=good_from,
            min_labelled=ctx.min_paired_n(g.slice),
            least_favourable=least_favourable_ends(metric),
        )

    def missing_sensitivity(self, scope: str, g: GateResult) -> GateResult:
        """Under ``on_missing: exclude``, a passing gate stands only when it still passes with
        every excluded value imputed at its adversarial end (``stats.missing_sensitivity``);
        else it is INCONCLUSIVE, naming how many imputed values flip it (the tipping point)."""
        pm = self.pm
        if g.status is not GateStatus.PASS or pm.excluded is None or pm.excluded[0].size == 0:
            return g
        ex, cand, base = pm.excluded
        ranked = worst_first(self.metric.direction.sign * (cand - base))

        def run(k: int) -> OneSidedTest:  # pm plus the k most damaging excluded pairs
            at = ranked[:k]
            more = dataclasses.replace(
                pm,
                examples=np.concatenate([pm.examples, ex[at]]),
                candidate=np.concatenate([pm.candidate, cand[at]]),
                baseline=np.concatenate([pm.baseline, base[at]]),
                excluded=None,
            )
            return self.test(more, f"{scope}:missing-sensitivity", None)[0]

        sens = tipping_point(run, int(pm.excluded[0].size))
        details = g.details | {
            "missing_sensitivity_imputed": sens.imputed,
            "missing_tipping_point": sens.tipping_point,
            "missing_sensitivity_lower_bound": sens.test.lower_bound,
        }
        where = "the candidate's at the scale's worst end, the baseline's at its best"
        if sens.holds:
            reason = (
                f"{g.reason}; still noninferior with all {sens.imputed} values excluded as "
                f"missing imputed adversarially ({where}): lower bound "
                f"{sens.test.lower_bound:+.4g}"
            )
            return g.model_copy(update={"details": details, "reason": reason})
        reason = (
            f"{g.reason} on complete pairs only; with {sens.tipping_point} of the "
            f"{sens.imputed} values excluded as missing imputed adversarially ({where}) it is "
            f"not (lower bound {sens.test.lower_bound:+.4g} with all {sens.imputed}): missing "
            "values may hide losses (on_missing: exclude); supply them or declare on_missing: "
            "worst"
        )
        update = {"details": details, "reason": reason, "status": GateStatus.INCONCLUSIVE}
        return g.model_copy(update=update)


def evaluate_candidate(
    index: EvidenceIndex,
    contract: ReleaseContract,
    candidate: str,
    scope: np.ndarray,
    *,
    config_missing: list[str],
    scope_name: str,
    labels: Mapping[str, HumanLabelSet] | None = None,
) -> CandidateEvaluation:
    """Run every gate for ``candidate`` against the contract's baseline on ``scope``'s examples.

    Args:
        index: the evidence index.
        scope: shape (E,) bool, the examples to decide on (e.g. the confirmatory split).
        config_missing: policy ids whose config file could not be hashed.
        scope_name: names the example set in the rng seed (``development`` / ``confirmatory``).
        labels: quality metric id → human labels; its noninferiority gates then decide on the
            judge-corrected bound (``gates.ppi``).

    Returns:
        CandidateEvaluation. Hard-gate failures stop the statistical gates (they would be
        computed on evidence that cannot be trusted).
    """
    ctx = _Context(index, contract, candidate, scope, scope_name, labels=labels or {})
    st = contract.statistics
    required = ctx.required
    pairs = {m: ctx.pair(m, scope) for m in ctx.needed}
    slice_pairs, slice_gates = ctx.slice_pairs()
    gates = ctx.hard_gates(pairs, config_missing) + slice_gates
    paired_n = pairs[required[0].id].n  # the contract requires at least one
    if any(g.status is GateStatus.FAIL for g in gates):
        return CandidateEvaluation(candidate, gates, paired_n, None, None, None)

    every = pairs | {
        m.id: ctx.pair(m.id, scope) for m in contract.operational_metrics if m.id not in pairs
    }
    rng = make_rng(st.seed, candidate, scope_name, "joint-bootstrap")
    joint = ctx.joint_resample(every, slice_pairs, rng)
    tests = {m: joint.oriented((m, None)) for m in every if (m, None) in joint.keys}
    ni_gates = ctx.noninferiority_gates(pairs, slice_pairs, joint)
    claim_tests, claim_stats, samples, readings = ctx.claim_inputs(tests, every)
    gates += ni_gates
    gates += gate_claims(
        contract.claims, claim_tests, claim_stats, st.alpha, st.power, samples, readings
    )
    gates += [  # one informational gate per operational metric
        gate_operational(m, tests.get(m.id), st.alpha, every[m.id].n, every[m.id].baseline)
        for m in contract.operational_metrics
    ]
    ni_p = [g.p_value if g.p_value is not None else 1.0 for g in ni_gates]
    return CandidateEvaluation(
        policy_id=candidate,
        gates=gates,
        paired_n=paired_n,
        quality_estimate=tests[required[0].id].estimate,
        cost_estimate=ctx.cost_estimate(tests),
        candidate_p_value=max(
            [*ni_p, claim_family_p_value(contract.claims, claim_tests, st.alpha, samples)]
        ),
    )
