"""Tests of the run-level gates: contract references, evidence readable, Holm, hygiene."""

from __future__ import annotations

from dataclasses import dataclass

from ragwarrant.contract import ReleaseContract
from ragwarrant.errors import EvidenceError
from ragwarrant.gates.run import gate_holm_across_candidates, gate_publication_hygiene, input_gates
from ragwarrant.inputs import Inputs
from ragwarrant.outputs import GateStatus
from tests.conftest import base_contract


@dataclass(frozen=True)
class _Finding:
    kind: str
    where: str

    def describe(self) -> str:
        return f"{self.kind} in {self.where}"


def _inputs(**read: object) -> Inputs:
    contract = ReleaseContract.model_validate(base_contract())
    return Inputs(
        contract=contract, contract_path="contract.yaml", contract_sha256="0" * 64, **read
    )


def test_contract_references_pass_and_fail() -> None:
    """The gate passes with nothing unresolved and names every unresolved reference otherwise."""
    [passed] = input_gates(_inputs())
    assert (passed.id, passed.status) == ("hard:contract-references", GateStatus.PASS)
    [failed] = input_gates(_inputs(unresolved=["evidence a.csv (a)", "policy config b.yaml (b)"]))
    assert (failed.id, failed.status) == ("hard:contract-references", GateStatus.FAIL)
    assert failed.reason == (
        "references that do not resolve: evidence a.csv (a); policy config b.yaml (b)"
    )


def test_evidence_readable_carries_code_message_and_hint() -> None:
    """An unreadable source fails its own gate with the error's code, message and hint."""
    error = EvidenceError("bad-column", "column x is missing", hint="map column x")
    [_, gate] = input_gates(_inputs(unreadable=[("src", error)]))
    assert (gate.id, gate.status) == ("hard:evidence-readable:src", GateStatus.FAIL)
    assert gate.reason == "bad-column: column x is missing (hint: map column x)"


def test_holm_steps_down_and_stops_at_the_first_failure() -> None:
    """Holm compares the smallest p-value with alpha/m, the next with alpha/(m-1), and stops."""
    gates = gate_holm_across_candidates({"a": 0.04, "b": 0.01, "c": None}, 0.05)
    assert gates["b"].status is GateStatus.PASS and gates["b"].alpha == 0.05 / 3
    assert gates["a"].status is GateStatus.FAIL and gates["a"].alpha == 0.05 / 2
    assert gates["c"].status is GateStatus.FAIL and gates["c"].p_value == 1.0


def test_publication_hygiene_counts_kinds_and_lists_withheld_files() -> None:
    """Findings fail the gate, counted per kind, with the withheld files; none passes it."""
    findings = [_Finding("email-address", "report.md:line 1")]
    gate = gate_publication_hygiene(findings, ["report.md"])
    assert (gate.id, gate.status, gate.n) == ("hard:publication-hygiene", GateStatus.FAIL, 1)
    assert gate.reason == "publication-hygiene: 1 finding(s): email-address in report.md:line 1"
    assert gate.details == {"findings:email-address": 1, "withheld": "report.md"}
    assert gate_publication_hygiene([]).status is GateStatus.PASS
