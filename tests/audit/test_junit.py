"""junit.xml: valid against the Jenkins JUnit schema; one case per gate, outcome by status."""

from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ragwarrant.audit.junit import render_junit
from ragwarrant.outputs import Decision, GateStatus

from .conftest import Run
from .decisions import inconclusive_variant, load_decision

ROOT = Path(__file__).resolve().parents[2]
XSD = ROOT / "build" / "junit" / "junit-10.xsd"
XSD_SHA256 = "a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6"


@pytest.fixture(scope="module")
def schema() -> object:
    """The Jenkins junit-10.xsd (tests/data/junit/SOURCE.md), or skip/fail when absent."""
    xmlschema = pytest.importorskip("xmlschema")
    path = Path(os.environ.get("RAGWARRANT_JUNIT_XSD", XSD))
    if not path.is_file():
        message = f"{path} is absent; run scripts/fetch-junit-xsd.sh"
        if os.environ.get("RAGWARRANT_REQUIRE_DEPLOY_TOOLS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == XSD_SHA256
    return xmlschema.XMLSchema(str(path))


@pytest.fixture()
def decision(pristine_run: Run) -> Decision:
    """The shipped example's decision."""
    return load_decision(pristine_run.output_dir)


def _cases(xml: bytes) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    return {f"{case.get('classname')}/{case.get('name')}": case for case in root.iter("testcase")}


def test_example_validates_against_the_jenkins_schema(decision: Decision, schema: object) -> None:
    """The example's junit.xml and an inconclusive variant are valid junit-10.xsd documents."""
    schema.validate(render_junit(decision))  # type: ignore[attr-defined]
    schema.validate(render_junit(inconclusive_variant(decision)))  # type: ignore[attr-defined]


def test_schema_rejects_a_broken_document(decision: Decision, schema: object) -> None:
    """The schema bites: a test case without its required name is invalid."""
    broken = render_junit(decision).replace(b'<testcase name="hard:provenance"', b"<testcase", 1)
    assert not schema.is_valid(broken)  # type: ignore[attr-defined]


def test_one_suite_per_candidate_one_case_per_gate(decision: Decision) -> None:
    """Each candidate is a suite and each of its gates a case named by the gate id."""
    root = ET.fromstring(render_junit(decision))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"ragwarrant.run"} | {
        f"ragwarrant.{c.policy_id}" for c in decision.candidates
    }
    promoted = decision.candidates[0]
    names = [c.get("name") for c in suites[f"ragwarrant.{promoted.policy_id}"]]
    assert names == [g.id for g in promoted.gates]
    suite = suites[f"ragwarrant.{promoted.policy_id}"]
    assert suite.get("failures") == "0" and suite.get("errors") == "0"


def test_outcomes_follow_gate_status(decision: Decision) -> None:
    """fail → failure, hard fail → error, inconclusive and not-applicable → skipped."""
    variant = inconclusive_variant(decision)
    cand = variant.candidates[0]
    gates = [
        g.model_copy(update={"status": GateStatus.FAIL})
        if g.id == "hard:duplicate-rows"
        else g.model_copy(update={"status": GateStatus.NOT_APPLICABLE})
        if g.id == "hard:split-leakage"
        else g
        for g in cand.gates
    ]
    variant = variant.model_copy(
        update={"candidates": [cand.model_copy(update={"gates": gates}), *variant.candidates[1:]]}
    )
    cases = _cases(render_junit(variant))
    prefix = f"ragwarrant.{cand.policy_id}/"
    assert cases[prefix + "hard:duplicate-rows"].find("error") is not None
    assert cases[prefix + "noninferiority:no_hallucination@QA"].find("failure") is not None
    skipped = cases[prefix + "noninferiority:no_hallucination"].find("skipped")
    assert skipped is not None and skipped.get("type") == "inconclusive"
    assert "about 412 more clusters" in (skipped.text or "")  # the gate resampled clusters
    na = cases[prefix + "hard:split-leakage"].find("skipped")
    assert na is not None and na.get("type") == "not-applicable"
    assert list(cases[prefix + "hard:provenance"]) == []  # a pass has no outcome element
    suite = next(
        s
        for s in ET.fromstring(render_junit(variant)).iter("testsuite")
        if s.get("name") == f"ragwarrant.{cand.policy_id}"
    )
    # Skipped: the inconclusive and the not-applicable gate, and the informational operational ones.
    operational = sum(g.kind == "operational" for g in gates)
    assert operational >= 1
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "1",
        "1",
        str(2 + operational),
    )


def test_not_selected_candidate_is_one_skipped_case(decision: Decision) -> None:
    """A NOT_SELECTED candidate, which has no gates, is one skipped 'selection' case."""
    cases = _cases(render_junit(decision))
    case = cases["ragwarrant.llama-2-7b-chat/selection"]
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("type") == "NOT_SELECTED"


def test_same_decision_same_bytes(decision: Decision) -> None:
    """No clock or host in the document: rendering twice gives the same bytes."""
    assert render_junit(decision) == render_junit(decision.model_copy())


def test_hostile_names_still_validate(pristine_run: Run, schema: object) -> None:
    """Names holding ESC, BEL, VT, FF, U+FFFE, markup and newlines give a valid document."""
    from .test_hostile_outputs import hostile_decision

    schema.validate(render_junit(hostile_decision(pristine_run.output_dir)))  # type: ignore[attr-defined]


FORGED = "bad\nPROMOTE (exit 0): forged\x1b[2J<b>"


def test_user_text_cannot_start_a_line(decision: Decision) -> None:
    """A contract key with a newline, a forged verdict and ESC stays on its line, escaped."""
    from ragwarrant.outputs import ErrorRecord

    error = ErrorRecord(
        type="ContractError",
        code="contract-invalid",
        message=f"contract.yaml: {FORGED}: extra inputs are not permitted",
        hint=f"remove {FORGED}",
        fault="user",
        exit_code=78,
    )
    gate = (
        decision.candidates[0]
        .gates[0]
        .model_copy(update={"status": GateStatus.FAIL, "reason": FORGED})
    )
    cand = decision.candidates[0].model_copy(update={"gates": [gate]})
    for variant in (
        decision.model_copy(update={"error": error}),
        decision.model_copy(update={"candidates": [cand]}),
    ):
        xml = render_junit(variant).decode()
        assert not any(line.lstrip().startswith("PROMOTE") for line in xml.splitlines())
        assert "\x1b" not in xml
        assert "bad\\nPROMOTE (exit 0): forged\\x1b[2J&lt;b&gt;" in xml
