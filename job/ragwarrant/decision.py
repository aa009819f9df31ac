"""Combine gate results into a class per candidate and one class for the run.

The one place that classifies: a candidate from its gates (``classify_candidate``, by the ordered
table ``PRECEDENCE``), every candidate BLOCKed by a failed run-level gate (``block_run_verdict``),
a candidate the development split did not choose (``not_selected_verdict``), the run from its
candidates (``run_class``), and the run BLOCKed by publication-hygiene findings
(``block_for_hygiene``). Outcomes are returned values, never exceptions.

Precedence inside a candidate: BLOCK (a hard gate failed) > REJECT (a confirmed quality loss
beyond the margin, or the declared claims clearly absent: no-benefit) > INCONCLUSIVE (a test
unresolved, an unreliable evaluator (``evaluator-unreliable``: a failed corroboration gate), Holm
across candidates not met, or the claim ceiling) > PROMOTE.

Precedence for the run: PROMOTE if a candidate is promoted; else BLOCK if any candidate is
blocked (a candidate BLOCKed on the development split is recorded as BLOCK, not NOT_SELECTED, so
it counts: defective evidence BLOCKs the run unless another candidate is validly PROMOTEd); else
INCONCLUSIVE if any is; else REJECT. NOT_SELECTED candidates do not count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragwarrant.display import identifier
from ragwarrant.exit_codes import DecisionClass, exit_code_for_class
from ragwarrant.outputs import CandidateClass, CandidateDecision, Decision, GateResult, GateStatus

if TYPE_CHECKING:  # annotations only: ``summary`` imports this module without numpy or pyarrow
    from ragwarrant.contract import ReleaseContract
    from ragwarrant.gates.candidate import CandidateEvaluation


@dataclass(frozen=True)
class CandidateVerdict:
    """A candidate's class and the reasons for it (kebab-case codes with detail)."""

    decision_class: CandidateClass
    reasons: list[str]


Reasons = Callable[[list[GateResult], str], list[str]]
"""``(gates, claims_join) -> reasons``: a level's reasons, empty when it does not apply."""


def _failed(kind: str, code: str) -> Reasons:
    """The level whose reasons are the failed gates of ``kind``, each ``code: id — reason``."""
    return lambda gates, join: [
        f"{code}: {g.id} — {g.reason}"
        for g in gates
        if g.kind == kind and g.status is GateStatus.FAIL
    ]


_unreliable = _failed("corroboration", "evaluator-unreliable")


def _absent_claims(gates: list[GateResult], join: str) -> list[str]:
    claims = [g for g in gates if g.kind == "claim"]
    absent = [g for g in claims if g.status is GateStatus.FAIL]
    if not claims or not absent or (join == "any" and len(absent) < len(claims)):
        return []
    return [f"no-benefit: {g.id} — {g.reason}" for g in absent]


def _unresolved_tests(gates: list[GateResult], join: str) -> list[str]:
    unresolved = [
        g
        for g in gates
        if g.kind in ("noninferiority", "claim") and g.status is GateStatus.INCONCLUSIVE
    ]
    if join == "any" and any(g.kind == "claim" and g.status is GateStatus.PASS for g in gates):
        # One established claim suffices for the union; the others' status does not matter.
        unresolved = [g for g in unresolved if g.kind != "claim"]
    if not unresolved:
        return []
    # An unreliable judge is named first: it cannot PROMOTE on the judge's word either way.
    return _unreliable(gates, join) + [f"unresolved: {g.id} — {g.reason}" for g in unresolved]


_CAP_CODE = {"ceiling": "claim-ceiling", "multiplicity": "multiplicity"}


def _capped(gates: list[GateResult], join: str) -> list[str]:
    return [
        f"{_CAP_CODE[g.kind]}: {g.reason}"
        for g in gates
        if g.kind in _CAP_CODE and g.status is GateStatus.FAIL
    ]


@dataclass(frozen=True)
class Rule:
    """One precedence level: when ``reasons_of`` finds reasons, the candidate is ``decision_class``.

    Attributes:
        name: the level's stable name (the code its reasons start with).
        decision_class: the class it assigns.
        reasons_of: the level's reasons (``Reasons``).
    """

    name: str
    decision_class: CandidateClass
    reasons_of: Reasons


PRECEDENCE: tuple[Rule, ...] = (
    Rule("blocked", CandidateClass.BLOCK, _failed("hard", "blocked")),
    Rule(
        "noninferiority-loss",
        CandidateClass.REJECT,
        _failed("noninferiority", "noninferiority-loss"),
    ),
    Rule("no-benefit", CandidateClass.REJECT, _absent_claims),
    Rule("unresolved", CandidateClass.INCONCLUSIVE, _unresolved_tests),
    Rule("evaluator-unreliable", CandidateClass.INCONCLUSIVE, _unreliable),
    Rule("capped", CandidateClass.INCONCLUSIVE, _capped),
)
"""The candidate precedence, highest first; the first level with reasons decides.

A candidate no level applies to is PROMOTEd with reason ``every gate passed``.
"""


def classify_candidate(
    evaluation: CandidateEvaluation, contract: ReleaseContract, extra_gates: list[GateResult]
) -> CandidateVerdict:
    """Classify one candidate from its gates by the first level of ``PRECEDENCE`` that applies.

    Args:
        evaluation: the candidate's hard, noninferiority and claim gates.
        contract: gives the claims' join.
        extra_gates: multiplicity, claim-ceiling and corroboration gates decided after all
            candidates ran.
    """
    gates = evaluation.gates + extra_gates
    for rule in PRECEDENCE:
        reasons = rule.reasons_of(gates, contract.claims.join)
        if reasons:
            return CandidateVerdict(rule.decision_class, reasons)
    return CandidateVerdict(CandidateClass.PROMOTE, ["every gate passed"])


def block_run_verdict(run_gates: list[GateResult], evidence_read: bool) -> CandidateVerdict | None:
    """The verdict every candidate gets when a run-level hard gate failed or nothing was read.

    Returns:
        A BLOCK verdict naming the failed run-level gates (or ``no evidence was read``), or None
        when the run may go on to evaluate candidates.
    """
    failed = [g for g in run_gates if g.status is GateStatus.FAIL]
    if not failed and evidence_read:
        return None
    reasons = [f"blocked: {g.id} — {g.reason}" for g in failed] or ["blocked: no evidence was read"]
    return CandidateVerdict(CandidateClass.BLOCK, reasons)


def not_selected_verdict(selected: str | None) -> CandidateVerdict:
    """The verdict of a candidate the development split did not choose for the confirmatory test."""
    return CandidateVerdict(
        CandidateClass.NOT_SELECTED,
        [f"not-selected: {identifier(str(selected))} ranked first on the development split"],
    )


_RANK = {c: i for i, c in enumerate(("PROMOTE", "INCONCLUSIVE", "REJECT", "BLOCK", "NOT_SELECTED"))}


def rank_key(verdict: CandidateVerdict, evaluation: CandidateEvaluation) -> tuple[float, ...]:
    """Sort key to choose among candidates: best class, then best quality delta, then cheapest.

    Quality comes before cost because noninferiority is the gate a candidate must clear first.
    """
    cost = evaluation.cost_estimate if evaluation.cost_estimate is not None else float("-inf")
    quality = (
        evaluation.quality_estimate if evaluation.quality_estimate is not None else float("-inf")
    )
    return (_RANK[verdict.decision_class], -quality, -cost)


_RUN_ORDER = ("PROMOTE", "BLOCK", "INCONCLUSIVE")
"""The run's class is the first of these any tested candidate has (else REJECT)."""


def run_class(classes: list[CandidateClass]) -> DecisionClass:
    """The run's class from its candidates' classes (see the module docstring for precedence)."""
    tested = set(classes) - {CandidateClass.NOT_SELECTED}
    if not tested:
        return DecisionClass.BLOCK
    return DecisionClass(next((c for c in _RUN_ORDER if c in tested), "REJECT"))


def run_summary(run: DecisionClass, candidates: list[CandidateDecision], contract: str) -> str:
    """One line: the run's class, each candidate's class, and ``contract`` (``id vVERSION``)."""
    return (
        f"{run.value}: "
        + ", ".join(f"{identifier(c.policy_id)}={c.decision_class.value}" for c in candidates)
        + f" (contract {contract})"
    )


def block_for_hygiene(decision: Decision, findings: int) -> Decision:
    """Return ``decision`` BLOCKed because publication hygiene found ``findings`` in its outputs.

    Every tested candidate becomes BLOCK with reason ``blocked: publication-hygiene (...)`` first; a
    NOT_SELECTED candidate stays. An ERROR record keeps its class (it exists to explain the error).
    The caller adds the failed run gate (``gates.run.gate_publication_hygiene``).
    """
    from ragwarrant.gates.run import HYGIENE_BLOCKER as blocker  # here: gates load numpy

    if decision.run_class is DecisionClass.ERROR:
        return decision
    reason = f"blocked: {blocker} ({findings} finding(s) in the outputs)"
    candidates = [
        c
        if c.decision_class is CandidateClass.NOT_SELECTED
        else c.model_copy(
            update={"decision_class": CandidateClass.BLOCK, "reasons": [reason, *c.reasons]}
        )
        for c in decision.candidates
    ]
    return decision.model_copy(
        update={
            "run_class": DecisionClass.BLOCK,
            "exit_code": int(exit_code_for_class(DecisionClass.BLOCK)),
            "selected_policy": None,
            "candidates": candidates,
            "summary": f"BLOCK: {blocker}: {findings} finding(s) in the outputs; "
            "offending artifacts withheld",
        }
    )
