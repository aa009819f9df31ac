"""All gates for one candidate against the baseline on one set of examples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragwarrant.contract import (
    ClaimKind,
    MissingValuePolicy,
    OperationalMetric,
    QualityMetric,
    ReleaseContract,
)
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.gates import hard
from ragwarrant.gates.claims import claim_family_p_value, gate_claims
from ragwarrant.gates.noninferiority import gate_noninferiority
from ragwarrant.gates.paired import PairedMetric, pair_metric
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.onesided import OrientedBootstrap, oriented_bootstrap
from ragwarrant.stats.seeding import make_rng

__all__ = ["CandidateEvaluation", "evaluate_candidate"]


@dataclass(frozen=True)
class CandidateEvaluation:
    """Every gate of one candidate, plus the figures used to compare candidates.

    Attributes:
        policy_id: the candidate.
        gates: hard, noninferiority and claim gates, in that order.
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


def _groups_for(index: EvidenceIndex, examples: np.ndarray) -> np.ndarray | None:
    g = index.group[examples]
    if not np.any(g >= 0):
        return None
    # Examples without a group are clusters of their own.
    return np.where(g >= 0, g, -1 - examples)


def _bootstrap_metrics(
    index: EvidenceIndex,
    pairs: dict[str, PairedMetric],
    specs: list[tuple[str, str, int]],
    resamples: int,
    rng_scope: tuple[int, str, str],
) -> dict[str, OrientedBootstrap]:
    """Bootstrap metrics, sharing resamples among metrics paired on the same examples."""
    by_examples: dict[bytes, list[tuple[str, str, int]]] = {}
    for spec in specs:
        by_examples.setdefault(pairs[spec[0]].examples.tobytes(), []).append(spec)
    out: dict[str, OrientedBootstrap] = {}
    seed, policy, scope = rng_scope
    for group in by_examples.values():
        first = pairs[group[0][0]]
        cand = np.column_stack([pairs[m].candidate for m, _, _ in group])
        base = np.column_stack([pairs[m].baseline for m, _, _ in group])
        rng = make_rng(seed, policy, scope, *(m for m, _, _ in group))
        tests = oriented_bootstrap(
            cand,
            base,
            [s for _, s, _ in group],  # type: ignore[misc]
            [sg for _, _, sg in group],
            _groups_for(index, first.examples),
            resamples,
            rng,
        )
        out.update({m: t for (m, _, _), t in zip(group, tests, strict=True)})
    return out


def evaluate_candidate(
    index: EvidenceIndex,
    contract: ReleaseContract,
    candidate: str,
    scope: np.ndarray,
    *,
    config_missing: list[str],
    scope_name: str,
) -> CandidateEvaluation:
    """Run every gate for ``candidate`` against the contract's baseline on ``scope``'s examples.

    Args:
        index: the evidence index.
        scope: shape (E,) bool, the examples to decide on (e.g. the confirmatory split).
        config_missing: policy ids whose config file could not be hashed.
        scope_name: names the example set in the rng seed (``development`` / ``confirmatory``).

    Returns:
        CandidateEvaluation. Hard-gate failures stop the statistical gates (they would be
        computed on evidence that cannot be trusted).
    """
    baseline = contract.baseline.policy_id
    st = contract.statistics
    quality = {m.id: m for m in contract.quality_metrics}
    operational = {m.id: m for m in contract.operational_metrics}
    required = [m for m in contract.quality_metrics if m.required]
    claim_metrics = [c.metric for c in contract.claims.items]
    dq_metrics = [d.metric for d in contract.hard_disqualifiers]
    needed = list(dict.fromkeys([m.id for m in required] + claim_metrics))

    def pair(metric: str, sl: np.ndarray) -> PairedMetric:
        decl: QualityMetric | OperationalMetric | None = quality.get(metric) or operational.get(
            metric
        )
        on_missing = decl.on_missing if decl is not None else MissingValuePolicy.FAIL
        return pair_metric(index, metric, baseline, candidate, sl, quality.get(metric), on_missing)

    pairs = {m: pair(m, scope) for m in needed}
    gates: list[GateResult] = [
        hard.gate_required_evidence(
            index, list(dict.fromkeys(needed + dq_metrics)), baseline, candidate, scope
        ),
        hard.gate_provenance(index, [p for p in config_missing if p in (baseline, candidate)]),
        hard.gate_duplicates(index, (baseline, candidate)),
        hard.gate_example_attributes(index),
        hard.gate_leakage(index, contract),
        hard.gate_non_finite(contract, pairs, baseline, candidate, index, scope),
        hard.gate_value_range(index, contract, (baseline, candidate), scope),
        hard.gate_pairing_coverage(pairs, st.min_pairing_coverage),
        hard.gate_paired_n(pairs, st.min_paired_n),
    ]
    gates += [hard.gate_constant_signal(m.id, pairs[m.id]) for m in required]
    gates += hard.gate_disqualifiers(index, contract, candidate, scope)

    slice_pairs: dict[tuple[str, str], PairedMetric] = {}
    slices_present = sorted({str(v) for v in index.slice[scope] if v is not None})
    for ps in contract.protected_slices:
        in_slice = scope & (index.slice == ps.value)
        for metric in ps.metrics or [m.id for m in required]:
            pm = pair(metric, in_slice)
            slice_pairs[(ps.value, metric)] = pm
            gates.append(
                hard.gate_slice_paired_n(
                    ps.value, metric, pm.n, ps.min_paired_n, present=slices_present
                )
            )

    paired_n = pairs[required[0].id].n if required else None
    if any(g.status is GateStatus.FAIL for g in gates):
        return CandidateEvaluation(candidate, gates, paired_n, None, None, None)

    def spec(metric: str) -> tuple[str, str, int]:
        if metric in quality:
            return (metric, "mean", quality[metric].direction.sign)
        om = operational[metric]
        return (metric, om.statistic, om.direction.sign)

    overall_specs = [spec(m) for m in needed]
    tests = _bootstrap_metrics(
        index, pairs, overall_specs, st.resamples, (st.seed, candidate, scope_name)
    )
    ni_p: list[float] = []
    for m in required:
        g = gate_noninferiority(m.id, None, tests[m.id], m.margin_abs, st.alpha, st.power)
        gates.append(g)
        ni_p.append(g.p_value if g.p_value is not None else 1.0)
    for ps in contract.protected_slices:
        metrics = ps.metrics or [m.id for m in required]
        sp = {m: slice_pairs[(ps.value, m)] for m in metrics}
        stests = _bootstrap_metrics(
            index,
            sp,
            [spec(m) for m in metrics],
            st.resamples,
            (st.seed, candidate, f"{scope_name}@{ps.value}"),
        )
        for metric in metrics:
            margin = ps.margin_abs if ps.margin_abs is not None else quality[metric].margin_abs
            g = gate_noninferiority(metric, ps.value, stests[metric], margin, st.alpha, st.power)
            gates.append(g)
            ni_p.append(g.p_value if g.p_value is not None else 1.0)

    claim_tests = [tests[c.metric] for c in contract.claims.items]
    claim_stats = [spec(c.metric)[1] for c in contract.claims.items]
    gates += gate_claims(contract.claims, claim_tests, claim_stats, st.alpha, st.power)
    candidate_p = max([*ni_p, claim_family_p_value(contract.claims, claim_tests)])

    cost_metric = next(
        (c.metric for c in contract.claims.items if c.kind is ClaimKind.COST_REDUCTION),
        next((m.id for m in contract.operational_metrics if m.unit.lower() == "usd"), None),
    )
    cost_estimate = None
    if cost_metric is not None and cost_metric in tests:
        cost_estimate = tests[cost_metric].estimate
    return CandidateEvaluation(
        policy_id=candidate,
        gates=gates,
        paired_n=paired_n,
        quality_estimate=tests[required[0].id].estimate if required else None,
        cost_estimate=cost_estimate,
        candidate_p_value=candidate_p,
    )
