"""Tests of the evidence-class ladder and its claim wording (contracts/evidence-classes.md)."""

from __future__ import annotations

import re

import pytest

from ragwarrant.audit.report import render_report
from ragwarrant.evidence_class import (
    CLAIMS,
    EvidenceClass,
    claim_scope,
    claims_not_supported,
)
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import CandidateClass, CandidateDecision, ContractRef, Decision, Selection
from tests.conftest import REPO


def overclaim_phrases(evidence_class: EvidenceClass) -> list[str]:
    """The lowercase phrases a report of this class must not assert (``ClassClaim``)."""
    return [
        p
        for c in CLAIMS
        if c.lowest is not None and evidence_class < c.lowest
        for p in c.overclaim_phrases
    ]


LADDER = [
    "fixture",
    "development",
    "frozen-observation",
    "confirmatory",
    "generative",
    "human-annotated",
    "deployment",
]


def test_ladder_order() -> None:
    """The ladder is the one the issue and contracts/evidence-classes.md define, weakest first."""
    assert [c.value for c in EvidenceClass] == LADDER
    assert all(a < b for a, b in zip(EvidenceClass, list(EvidenceClass)[1:], strict=False))


def test_higher_classes_claim_no_less() -> None:
    """Each rung's unsupported claims are a subset of the rung below's."""
    ladder = list(EvidenceClass)
    for lower, higher in zip(ladder, ladder[1:], strict=False):
        assert set(claims_not_supported(higher)) <= set(claims_not_supported(lower))
        assert (
            len(claims_not_supported(higher)) < len(claims_not_supported(lower))
            or higher is EvidenceClass.GENERATIVE
        )


def test_fixture_supports_nothing_about_policies() -> None:
    """A fixture run claims nothing about a policy and no release decision."""
    missing = claims_not_supported(EvidenceClass.FIXTURE)
    assert "any statement about a policy's quality, cost or latency" in missing
    assert "a release decision" in missing


def test_unclaimable_claims_are_always_listed() -> None:
    """Claims no class supports are listed for every class, deployment included."""
    never = [c.text for c in CLAIMS if c.lowest is None]
    assert never
    for ec in EvidenceClass:
        assert set(never) <= set(claims_not_supported(ec))


def _decision(ec: EvidenceClass) -> Decision:
    return Decision(
        run_id="r",
        started_at="t0",
        finished_at="t1",
        contract=ContractRef(id="c", version="1", path="contract.yaml", sha256="a" * 64),
        run_class=DecisionClass.PROMOTE,
        exit_code=0,
        summary="PROMOTE: cand=PROMOTE",
        evidence_class=ec,
        promotion_min_class=EvidenceClass.FIXTURE,
        claim_scope=claim_scope(ec),
        claims_not_supported=claims_not_supported(ec),
        selection=Selection(method="single-candidate", selected_policy="cand"),
        selected_policy="cand",
        candidates=[
            CandidateDecision(
                policy_id="cand",
                decision_class=CandidateClass.PROMOTE,
                reasons=["promote"],
                tested_on="all",
                paired_n=100,
                gates=[],
            )
        ],
    )


@pytest.mark.parametrize("ec", list(EvidenceClass), ids=lambda c: c.value)
def test_report_never_states_more_than_its_class(ec: EvidenceClass) -> None:
    """report.md states the class's scope and limits, and no phrase of a claim above its class."""
    report = render_report(_decision(ec))
    assert claim_scope(ec) in report
    for claim in claims_not_supported(ec):
        assert claim in report
    affirmative = "\n".join(
        line for line in report.splitlines() if not line.startswith("- what it does not support:")
    ).lower()
    assert claim_scope(ec).lower() in affirmative
    found = [p for p in overclaim_phrases(ec) if re.search(rf"\b{re.escape(p)}\b", affirmative)]
    assert found == []


def test_overclaim_check_can_fail() -> None:
    """The phrase check catches a scope sentence borrowed from a higher class."""
    borrowed = claim_scope(EvidenceClass.DEPLOYMENT).lower()
    assert any(p in borrowed for p in overclaim_phrases(EvidenceClass.CONFIRMATORY))
    borrowed = claim_scope(EvidenceClass.HUMAN_ANNOTATED).lower()
    assert any(p in borrowed for p in overclaim_phrases(EvidenceClass.GENERATIVE))


def test_contract_doc_lists_every_class_and_claim() -> None:
    """contracts/evidence-classes.md names every class, its scope sentence, and every claim."""
    doc = (REPO / "contracts" / "evidence-classes.md").read_text()
    flat = " ".join(doc.split())
    for ec in EvidenceClass:
        assert f"`{ec.value}`" in doc
        assert claim_scope(ec) in flat
    for claim in CLAIMS:
        assert claim.text in flat


def test_report_names_the_class_that_would_lift_a_claim_ceiling() -> None:
    """An INCONCLUSIVE held by the claim ceiling names, once, the evidence class that lifts it."""
    decision = _decision(EvidenceClass.FROZEN_OBSERVATION)
    held = decision.candidates[0].model_copy(
        update={
            "decision_class": CandidateClass.INCONCLUSIVE,
            "reasons": ["claim-ceiling: one", "claim-ceiling: two"],
        }
    )
    decision = decision.model_copy(
        update={"candidates": [held], "promotion_min_class": EvidenceClass.CONFIRMATORY}
    )
    expected = (
        "\n\nWhat would change this INCONCLUSIVE: the same result on evidence of class "
        "confirmatory or higher (e.g. a confirmatory run on a split held out before "
        "evaluation).\n"
    )
    report = render_report(decision)
    assert expected in report and report.count("the same result on evidence of class") == 1
