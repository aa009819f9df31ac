"""Combine gate results into a class per candidate and one class for the run.

Outcomes are returned values, never exceptions.

Precedence inside a candidate: BLOCK (a hard gate failed) > REJECT (a confirmed quality loss
beyond the margin, or the declared claims clearly absent: no-benefit) > INCONCLUSIVE (a test
unresolved, an unreliable evaluator (``evaluator-unreliable``: a failed corroboration gate), Holm
across candidates not met, or the claim ceiling) > PROMOTE.

Precedence for the run: PROMOTE if a candidate is promoted; else BLOCK if any candidate is
blocked; else INCONCLUSIVE if any is; else REJECT. NOT_SELECTED candidates do not count.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwarrant.contract import ReleaseContract
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.gates.candidate import CandidateEvaluation
from ragwarrant.outputs import CandidateClass, GateResult, GateStatus

__all__ = ["CandidateVerdict", "classify_candidate", "rank_key", "run_class"]


@dataclass(frozen=True)
class CandidateVerdict:
    """A candidate's class and the reasons for it (kebab-case codes with detail)."""

    decision_class: CandidateClass
    reasons: list[str]


def _failed(gates: list[GateResult], kind: str) -> list[GateResult]:
    return [g for g in gates if g.kind == kind and g.status is GateStatus.FAIL]


def classify_candidate(
    evaluation: CandidateEvaluation, contract: ReleaseContract, extra_gates: list[GateResult]
) -> CandidateVerdict:
    """Classify one candidate from its gates.

    Args:
        evaluation: the candidate's hard, noninferiority and claim gates.
        contract: gives the claims' join.
        extra_gates: multiplicity, claim-ceiling and corroboration gates decided after all
            candidates ran.
    """
    gates = evaluation.gates + extra_gates
    blocked = _failed(gates, "hard")
    if blocked:
        return CandidateVerdict(
            CandidateClass.BLOCK, [f"blocked: {g.id} — {g.reason}" for g in blocked]
        )
    losses = _failed(gates, "noninferiority")
    if losses:
        return CandidateVerdict(
            CandidateClass.REJECT, [f"noninferiority-loss: {g.id} — {g.reason}" for g in losses]
        )
    claims = [g for g in gates if g.kind == "claim"]
    absent = [g for g in claims if g.status is GateStatus.FAIL]
    if claims and (
        (contract.claims.join == "all" and absent)
        or (contract.claims.join == "any" and len(absent) == len(claims))
    ):
        return CandidateVerdict(
            CandidateClass.REJECT, [f"no-benefit: {g.id} — {g.reason}" for g in absent]
        )
    unresolved = [
        g
        for g in gates
        if g.kind in ("noninferiority", "claim") and g.status is GateStatus.INCONCLUSIVE
    ]
    if contract.claims.join == "any" and any(g.status is GateStatus.PASS for g in claims):
        # One established claim suffices for the union; the others' status does not matter.
        unresolved = [g for g in unresolved if g.kind != "claim"]
    # An unreliable judge caps the candidate at INCONCLUSIVE: it cannot PROMOTE on the judge's word.
    unreliable = [
        f"evaluator-unreliable: {g.id} — {g.reason}" for g in _failed(gates, "corroboration")
    ]
    if unresolved:
        return CandidateVerdict(
            CandidateClass.INCONCLUSIVE,
            unreliable + [f"unresolved: {g.id} — {g.reason}" for g in unresolved],
        )
    if unreliable:
        return CandidateVerdict(CandidateClass.INCONCLUSIVE, unreliable)
    capped = [
        g for g in gates if g.kind in ("multiplicity", "ceiling") and g.status is GateStatus.FAIL
    ]
    if capped:
        code = {"ceiling": "claim-ceiling", "multiplicity": "multiplicity"}
        return CandidateVerdict(
            CandidateClass.INCONCLUSIVE, [f"{code[g.kind]}: {g.reason}" for g in capped]
        )
    return CandidateVerdict(CandidateClass.PROMOTE, ["every gate passed"])


_RANK = {
    CandidateClass.PROMOTE: 0,
    CandidateClass.INCONCLUSIVE: 1,
    CandidateClass.REJECT: 2,
    CandidateClass.BLOCK: 3,
    CandidateClass.NOT_SELECTED: 4,
}


def rank_key(verdict: CandidateVerdict, evaluation: CandidateEvaluation) -> tuple[float, ...]:
    """Sort key to choose among candidates: best class, then best quality delta, then cheapest.

    Quality comes before cost because noninferiority is the gate a candidate must clear first.
    """
    cost = evaluation.cost_estimate if evaluation.cost_estimate is not None else float("-inf")
    quality = (
        evaluation.quality_estimate if evaluation.quality_estimate is not None else float("-inf")
    )
    return (_RANK[verdict.decision_class], -quality, -cost)


def run_class(classes: list[CandidateClass]) -> DecisionClass:
    """The run's class from its candidates' classes (see the module docstring for precedence)."""
    tested = [c for c in classes if c is not CandidateClass.NOT_SELECTED]
    if not tested:
        return DecisionClass.BLOCK
    if CandidateClass.PROMOTE in tested:
        return DecisionClass.PROMOTE
    if CandidateClass.BLOCK in tested:
        return DecisionClass.BLOCK
    if CandidateClass.INCONCLUSIVE in tested:
        return DecisionClass.INCONCLUSIVE
    return DecisionClass.REJECT
