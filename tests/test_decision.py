"""The decision precedence, table-driven: each level beats the next one down."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ragwarrant.decision import (
    PRECEDENCE,
    block_for_hygiene,
    block_run_verdict,
    classify_candidate,
    not_selected_verdict,
    run_class,
)
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.gates.candidate import CandidateEvaluation
from ragwarrant.outputs import CandidateClass, CandidateDecision, Decision, GateResult, GateStatus

B, R, IN, P = (
    CandidateClass.BLOCK,
    CandidateClass.REJECT,
    CandidateClass.INCONCLUSIVE,
    CandidateClass.PROMOTE,
)


def _gate(kind: str, status: GateStatus, name: str) -> GateResult:
    return GateResult(id=f"{kind}:{name}", kind=kind, status=status, reason=f"{name} planted")  # type: ignore[arg-type]


# Each level, highest first: its name in PRECEDENCE, the gate that triggers it, the class it
# gives, and the code its reasons start with.
LEVELS: list[tuple[str, GateResult | None, CandidateClass, str]] = [
    ("blocked", _gate("hard", GateStatus.FAIL, "h"), B, "blocked:"),
    (
        "noninferiority-loss",
        _gate("noninferiority", GateStatus.FAIL, "m"),
        R,
        "noninferiority-loss:",
    ),
    ("no-benefit", _gate("claim", GateStatus.FAIL, "c"), R, "no-benefit:"),
    ("unresolved", _gate("noninferiority", GateStatus.INCONCLUSIVE, "u"), IN, "unresolved:"),
    (
        "evaluator-unreliable",
        _gate("corroboration", GateStatus.FAIL, "j"),
        IN,
        "evaluator-unreliable:",
    ),
    ("capped", _gate("ceiling", GateStatus.FAIL, "e"), IN, "claim-ceiling:"),
    ("promote", None, P, "every gate passed"),
]


def _classify(gates: list[GateResult], join: str = "all") -> Any:
    evaluation = CandidateEvaluation("cand", gates, 100, None, None, None)
    contract = SimpleNamespace(claims=SimpleNamespace(join=join))
    return classify_candidate(evaluation, contract, [])  # type: ignore[arg-type]


def test_precedence_table_order() -> None:
    """PRECEDENCE lists the levels in the documented order, PROMOTE being what none of them hits."""
    assert [r.name for r in PRECEDENCE] == [name for name, *_ in LEVELS[:-1]]
    assert [r.decision_class for r in PRECEDENCE] == [klass for _, _, klass, _ in LEVELS[:-1]]


@pytest.mark.parametrize(("name", "gate", "klass", "code"), LEVELS, ids=[x[0] for x in LEVELS])
def test_each_level_alone(name: str, gate: GateResult | None, klass: CandidateClass, code: str):
    """A level's gate alone gives that level's class and reasons."""
    verdict = _classify([gate] if gate is not None else [])
    assert (verdict.decision_class, verdict.reasons[0].startswith(code)) == (klass, True)


@pytest.mark.parametrize(
    ("higher", "lower"),
    list(zip(LEVELS[:-1], LEVELS[1:], strict=True)),
    ids=[f"{a[0]}>{b[0]}" for a, b in zip(LEVELS[:-1], LEVELS[1:], strict=True)],
)
def test_adjacent_levels(higher: tuple[Any, ...], lower: tuple[Any, ...]) -> None:
    """With the gates of two adjacent levels failing, the higher level decides."""
    gates = [g for g in (lower[1], higher[1]) if g is not None]
    verdict = _classify(gates)
    assert verdict.decision_class is higher[2]
    assert any(r.startswith(higher[3]) for r in verdict.reasons)
    if higher[0] != "unresolved":  # unresolved names an unreliable evaluator first, by design
        assert not any(r.startswith(lower[3]) for r in verdict.reasons)


@pytest.mark.parametrize("status", list(GateStatus), ids=[s.value for s in GateStatus])
def test_operational_gates_never_decide(status: GateStatus) -> None:
    """An informational operational gate of any status leaves a candidate's class as it was."""
    operational = _gate("operational", status, "cost_usd")
    assert [_classify([operational]).decision_class, _classify([operational], "any").reasons] == [
        P,
        ["every gate passed"],
    ]
    unresolved = _gate("noninferiority", GateStatus.INCONCLUSIVE, "u")
    assert _classify([unresolved, operational]).reasons == _classify([unresolved]).reasons


def test_any_join_needs_every_claim_absent_and_one_established_claim_resolves() -> None:
    """Under join "any", one absent claim of two is no rejection, and an established claim
    makes the other's inconclusive status irrelevant."""
    absent = _gate("claim", GateStatus.FAIL, "c1")
    held = _gate("claim", GateStatus.PASS, "c2")
    open_ = _gate("claim", GateStatus.INCONCLUSIVE, "c3")
    assert _classify([absent, held], join="any").decision_class is P
    assert (
        _classify([absent, _gate("claim", GateStatus.FAIL, "c4")], join="any").decision_class is R
    )
    assert _classify([held, open_], join="any").decision_class is P
    assert _classify([held, open_], join="all").decision_class is IN


RUN_CLASSES = [
    ([P, B, IN, R], DecisionClass.PROMOTE),
    ([B, IN, R], DecisionClass.BLOCK),
    ([IN, R], DecisionClass.INCONCLUSIVE),
    ([R], DecisionClass.REJECT),
    ([CandidateClass.NOT_SELECTED], DecisionClass.BLOCK),
    ([R, CandidateClass.NOT_SELECTED], DecisionClass.REJECT),
]


@pytest.mark.parametrize(("classes", "expected"), RUN_CLASSES)
def test_run_class_precedence(classes: list[CandidateClass], expected: DecisionClass) -> None:
    """PROMOTE > BLOCK > INCONCLUSIVE > REJECT over tested candidates; none tested is BLOCK."""
    assert run_class(classes) is expected


def test_run_level_gates_block_every_candidate() -> None:
    """A failed run-level gate, or no evidence, BLOCKs; passing gates with evidence do not."""
    failed = _gate("hard", GateStatus.FAIL, "contract-references")
    verdict = block_run_verdict([failed], evidence_read=True)
    assert verdict is not None and verdict.decision_class is B
    assert verdict.reasons == ["blocked: hard:contract-references — contract-references planted"]
    empty = block_run_verdict([], evidence_read=False)
    assert empty is not None and empty.reasons == ["blocked: no evidence was read"]
    assert block_run_verdict([_gate("hard", GateStatus.PASS, "x")], evidence_read=True) is None


def test_not_selected_names_the_selected_candidate() -> None:
    """A candidate the development split did not choose is NOT_SELECTED, naming the chosen one."""
    verdict = not_selected_verdict("b")
    assert verdict.decision_class is CandidateClass.NOT_SELECTED
    assert verdict.reasons == ["not-selected: b ranked first on the development split"]


def _decision(run: DecisionClass, candidates: list[CandidateDecision]) -> Decision:
    return Decision(
        run_id="r",
        started_at="t0",
        finished_at="t1",
        contract=None,
        run_class=run,
        exit_code=0,
        summary="s",
        selected_policy="a",
        candidates=candidates,
    )


def test_hygiene_findings_block_tested_candidates_and_keep_errors() -> None:
    """Hygiene findings BLOCK the run and its tested candidates; an ERROR record keeps its class."""
    tested = CandidateDecision(
        policy_id="a", decision_class=P, reasons=["ok"], tested_on="all", gates=[]
    )
    skipped = CandidateDecision(
        policy_id="b",
        decision_class=CandidateClass.NOT_SELECTED,
        reasons=["n"],
        tested_on="none",
        gates=[],
    )
    blocked = block_for_hygiene(_decision(DecisionClass.PROMOTE, [tested, skipped]), 2)
    assert (blocked.run_class, blocked.exit_code, blocked.selected_policy) == (
        DecisionClass.BLOCK,
        12,
        None,
    )
    assert [c.decision_class for c in blocked.candidates] == [B, CandidateClass.NOT_SELECTED]
    assert blocked.candidates[0].reasons == [
        "blocked: publication-hygiene (2 finding(s) in the outputs)",
        "ok",
    ]
    assert blocked.summary.startswith("BLOCK: publication-hygiene: 2 finding(s)")
    error = _decision(DecisionClass.ERROR, [])
    assert block_for_hygiene(error, 2) == error
