"""Which candidates are tested on the confirmatory split, and which one the run selects.

With several candidates and a development split, each candidate is evaluated and classified on
the development split, and only the best-ranked one (``decision.rank_key``: best class, then
quality, then cost) is tested on the confirmatory split; the others are NOT_SELECTED, except a
candidate BLOCKed on the development split (a hard gate failed: its evidence is defective), which
keeps that BLOCK and its gates so the run's class cannot hide it. Without a
development split every candidate is tested, and Holm's procedure across candidates
(``gates.run.gate_holm_across_candidates``) keeps the family-wise error rate at ``alpha``.
The selected policy is the best-ranked PROMOTEd candidate. The quality-only and cost-only picks
say which candidate a choice on one criterion alone would have made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ragwarrant.contract import ReleaseContract
from ragwarrant.decision import (
    CandidateVerdict,
    classify_candidate,
    not_selected_verdict,
    rank_key,
)
from ragwarrant.display import identifier
from ragwarrant.gates.candidate import CandidateEvaluation
from ragwarrant.gates.run import gate_holm_across_candidates
from ragwarrant.inputs import Inputs, config_differences
from ragwarrant.outputs import CandidateClass, CandidateDecision, GateResult, Selection

SelectionMethod = Literal["single-candidate", "development-split", "holm-across-candidates"]

Evaluate = Callable[[str, np.ndarray, str], CandidateEvaluation]
"""``(policy, scope, scope_name) -> CandidateEvaluation``."""


@dataclass(frozen=True)
class ConfirmatoryPlan:
    """Which candidates the confirmatory split tests, and how they were chosen.

    Attributes:
        method: how the tested candidates were chosen.
        to_test: the candidates to test on the confirmatory split, in contract order.
        development: candidate → its development-split evaluation (empty without that step).
        notes: one line per candidate on the development split.
        blocked: candidate → its BLOCK verdict on the development split, for the candidates
            not tested on the confirmatory split whose development-split hard gates failed.
    """

    method: SelectionMethod
    to_test: list[str]
    development: dict[str, CandidateEvaluation] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    blocked: dict[str, CandidateVerdict] = field(default_factory=dict)


def _development_note(policy: str, verdict: CandidateVerdict, e: CandidateEvaluation) -> str:
    note = f"{identifier(policy)} on the development split: {verdict.decision_class.value}"
    if e.quality_estimate is not None:
        note += f", quality delta {e.quality_estimate:+.4g}"
    if e.cost_estimate is not None:
        note += f", cost delta {e.cost_estimate:+.4g} (positive = cheaper)"
    if verdict.decision_class is CandidateClass.BLOCK:
        note += f" ({'; '.join(verdict.reasons)})"
    return note


def plan_tests(
    candidates: list[str],
    development: np.ndarray | None,
    evaluate: Evaluate,
    contract: ReleaseContract,
) -> ConfirmatoryPlan:
    """Choose the candidates to test on the confirmatory split.

    Args:
        candidates: the contract's candidate policy ids, in contract order.
        development: shape (E,) bool, the development split, or None.
        evaluate: evaluates one candidate on a scope.
        contract: the release contract (for the development-split classification).
    """
    if len(candidates) > 1 and development is not None and np.any(development):
        evals = {p: evaluate(p, development, "development") for p in candidates}
        verdicts = {p: classify_candidate(evals[p], contract, []) for p in candidates}
        chosen = min(candidates, key=lambda p: (rank_key(verdicts[p], evals[p]), p))
        notes = [_development_note(p, verdicts[p], evals[p]) for p in candidates]
        blocked = {
            p: v
            for p, v in verdicts.items()
            if p != chosen and v.decision_class is CandidateClass.BLOCK
        }
        return ConfirmatoryPlan("development-split", [chosen], evals, notes, blocked)
    method: SelectionMethod = (
        "single-candidate" if len(candidates) == 1 else "holm-across-candidates"
    )
    return ConfirmatoryPlan(method, list(candidates))


def multiplicity_gates(
    plan: ConfirmatoryPlan, evaluations: dict[str, CandidateEvaluation], alpha: float
) -> dict[str, list[GateResult]]:
    """Holm across candidates for each tested candidate (none unless that is the method)."""
    if plan.method != "holm-across-candidates":
        return {p: [] for p in plan.to_test}
    holm = gate_holm_across_candidates(
        {p: evaluations[p].candidate_p_value for p in plan.to_test}, alpha
    )
    return {p: [holm[p]] for p in plan.to_test}


def _best(picks: dict[str, CandidateEvaluation], of: str) -> str | None:
    values = {p: getattr(e, of) for p, e in picks.items() if getattr(e, of) is not None}
    return max(values, key=lambda p: (values[p], p), default=None)


def select(
    plan: ConfirmatoryPlan,
    evaluations: dict[str, CandidateEvaluation],
    verdicts: dict[str, CandidateVerdict],
) -> Selection:
    """The run's selection: the best-ranked PROMOTEd candidate, and the one-criterion picks.

    On the development-split method the tested candidate stays selected even when it is not
    PROMOTEd (the run's class then says it may not replace the baseline).
    """
    promoted = sorted(
        (p for p in plan.to_test if verdicts[p].decision_class is CandidateClass.PROMOTE),
        key=lambda p: (rank_key(verdicts[p], evaluations[p]), p),
    )
    fallback = plan.to_test[0] if plan.method == "development-split" else None
    picks = plan.development or evaluations
    return Selection(
        method=plan.method,
        selected_policy=promoted[0] if promoted else fallback,
        quality_only_pick=_best(picks, "quality_estimate"),
        cost_only_pick=_best(picks, "cost_estimate"),
        notes=plan.notes,
    )


def candidate_decision(
    inputs: Inputs,
    policy: str,
    verdict: CandidateVerdict,
    evaluation: CandidateEvaluation | None = None,
    tested_on: str = "none",
    gates: list[GateResult] | None = None,
) -> CandidateDecision:
    """One candidate's record: its verdict, its gates, and its config's differences."""
    base_cfg = inputs.configs.get(inputs.contract.baseline.policy_id)
    cfg = inputs.configs.get(policy)
    diffs = config_differences(base_cfg, cfg) if base_cfg is not None and cfg is not None else []
    return CandidateDecision(
        policy_id=policy,
        decision_class=verdict.decision_class,
        reasons=verdict.reasons,
        tested_on=tested_on,
        paired_n=evaluation.paired_n if evaluation is not None else None,
        gates=gates or [],
        config_sha256=inputs.config_sha.get(policy),
        config_differences=diffs,
    )


def untested_decision(
    inputs: Inputs, plan: ConfirmatoryPlan, policy: str, selected: str | None
) -> CandidateDecision:
    """A candidate not tested on the confirmatory split: BLOCK with its development-split gates
    when a hard gate failed there (defective evidence is shown, never hidden), else NOT_SELECTED."""
    verdict = plan.blocked.get(policy)
    if verdict is None:
        return candidate_decision(inputs, policy, not_selected_verdict(selected))
    evaluation = plan.development[policy]
    splits = inputs.contract.splits
    label = splits.development if splits is not None and splits.development else "development"
    return candidate_decision(inputs, policy, verdict, evaluation, label, evaluation.gates)


def blocked_decisions(inputs: Inputs, verdict: CandidateVerdict) -> list[CandidateDecision]:
    """Every candidate BLOCKed untested when a run-level hard gate failed."""
    return [
        CandidateDecision(
            policy_id=c.policy_id,
            decision_class=verdict.decision_class,
            reasons=verdict.reasons,
            tested_on="none",
            gates=[],
            config_sha256=inputs.config_sha.get(c.policy_id),
        )
        for c in inputs.contract.candidates
    ]
