"""The machine summary, the one-line summary and the next step read from a decision."""

from __future__ import annotations

import orjson

from ragwarrant.audit.summary import (
    deciding_gates,
    more_data_text,
    more_needed,
    next_step,
    summary_document,
    summary_line,
)
from ragwarrant.outputs import CandidateDecision, Decision, GateResult, GateStatus

from .conftest import Run
from .decisions import inconclusive_variant, load_decision


def test_summary_document_of_the_example(pristine_run: Run) -> None:
    """The example's summary names the run class, exit code and every candidate's class."""
    doc = summary_document(load_decision(pristine_run.output_dir))
    assert (doc["run_class"], doc["exit_code"]) == ("PROMOTE", 0)
    assert [(c["policy_id"], c["class"]) for c in doc["candidates"]][:3] == [
        ("gpt-3.5-turbo-0613", "PROMOTE"),
        ("mistral-7B-instruct", "BLOCK"),  # BLOCKed on the development split: shown, not hidden
        ("llama-2-7b-chat", "NOT_SELECTED"),
    ]
    assert "mistral-7B-instruct: fix the evidence" in doc["next_step"]
    assert "hard:missing-balance:no_hallucination" in doc["next_step"]
    assert doc["candidates"][0] == {
        "policy_id": "gpt-3.5-turbo-0613",
        "class": "PROMOTE",
        "reason": "every gate passed",
        "more_needed": None,
    }
    assert orjson.loads(orjson.dumps(doc)) == doc  # plain JSON types only


def test_inconclusive_summary_carries_more_needed(pristine_run: Run) -> None:
    """An inconclusive gate's more_paired_n is the candidate's more_needed and the next step."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir), more=412)
    doc = summary_document(decision)
    assert doc["candidates"][0]["more_needed"] == 412
    assert doc["candidates"][0]["reason"].startswith("unresolved: noninferiority:no_hallucination")
    assert "412 more clusters" in doc["next_step"]  # the example's gates resample clusters
    assert more_needed(decision.candidates[0]) == 412
    assert more_needed(decision.candidates[1]) is None  # NOT_SELECTED


def test_summary_line_never_truncates_without_saying_so(pristine_run: Run) -> None:
    """A width-limited line says how much it cut, keeps the next step whole when it fits after
    the class, and is never longer than the width."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir))
    full = summary_line(decision)
    assert full.startswith("INCONCLUSIVE (exit 11): gpt-3.5-turbo-0613=INCONCLUSIVE [unresolved:")
    tail = f" — next: {next_step(decision)}"
    assert full.endswith(tail)
    roomy = summary_line(decision, width=len(tail) + 80)
    assert roomy.endswith(tail) and len(roomy) == len(tail) + 80
    kept = roomy.split("… (")[0]
    assert full.startswith(kept)
    assert f"… ({len(full) - len(tail) - len(kept)} more characters; see report.md){tail}" in roomy
    narrow = summary_line(decision, width=120)
    kept = narrow.split("… (")[0]
    assert len(narrow) <= 120 and kept.startswith("INCONCLUSIVE (exit 11): ")
    assert narrow.endswith(f"… ({len(full) - len(kept)} more characters; see report.md)")


def test_run_stdout_line_is_at_most_200_characters(pristine_run: Run) -> None:
    """`ragwarrant run`'s line (classes and next step, no reasons) fits in STDOUT_WIDTH."""
    from ragwarrant.commands.run import STDOUT_WIDTH

    decision = inconclusive_variant(load_decision(pristine_run.output_dir))
    line = summary_line(decision, STDOUT_WIDTH, reasons=False)
    assert len(summary_line(decision)) > STDOUT_WIDTH >= len(line)
    assert line.startswith("INCONCLUSIVE (exit 11): gpt-3.5-turbo-0613=INCONCLUSIVE; ")
    assert "[unresolved:" not in line


def test_deciding_gates_follow_the_reasons(pristine_run: Run) -> None:
    """An INCONCLUSIVE candidate's deciding gate is the one its reason cites."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir))
    assert [g.id for g in deciding_gates(decision.candidates[0])] == [
        "noninferiority:no_hallucination"
    ]


def test_promote_rests_on_its_statistical_gates(pristine_run: Run) -> None:
    """A PROMOTE's deciding gates are its noninferiority, claim and ceiling gates."""
    decision = load_decision(pristine_run.output_dir)
    kinds = {g.kind for g in deciding_gates(decision.candidates[0])}
    assert kinds == {"noninferiority", "claim", "ceiling"}


def test_error_next_step_gives_the_hint(pristine_run: Run) -> None:
    """An ERROR record's next step carries the error's hint."""
    decision = load_decision(pristine_run.output_dir)
    err = Decision.model_validate(
        {
            **decision.model_dump(by_alias=True, mode="json"),
            "run_class": "ERROR",
            "exit_code": 78,
            "candidates": [],
            "error": {
                "type": "ContractError",
                "code": "contract-invalid",
                "message": "margin_abs missing",
                "hint": "declare margin_abs for every quality metric",
                "fault": "user",
                "exit_code": 78,
            },
        }
    )
    assert (
        next_step(err) == "fix the error and run again: declare margin_abs for every quality metric"
    )
    assert "error contract-invalid: margin_abs missing" in summary_line(err)


def _overall(decision: Decision) -> GateResult:
    return next(g for g in decision.candidates[0].gates if g.status is GateStatus.INCONCLUSIVE)


def test_more_data_text_counts_the_gate_unit(pristine_run: Run) -> None:
    """Clusters are called clusters and pairs paired examples, in every report's hint."""
    gate = _overall(inconclusive_variant(load_decision(pristine_run.output_dir), more=40))
    clustered = gate.model_copy(update={"details": {**gate.details, "units": "clusters"}})
    paired = gate.model_copy(update={"details": {**gate.details, "units": "pairs"}})
    assert more_data_text(clustered).startswith("about 40 more clusters")
    assert more_data_text(paired).startswith("about 40 more paired examples")


def test_more_data_text_without_a_count_says_why(pristine_run: Run) -> None:
    """No count past the threshold (more data confirms the loss) or when none is feasible."""
    gate = _overall(inconclusive_variant(load_decision(pristine_run.output_dir), more=40))
    past = gate.model_copy(update={"more_paired_n": None, "estimate": -0.0501, "threshold": -0.05})
    close = gate.model_copy(update={"more_paired_n": None, "estimate": -0.0499, "threshold": -0.05})
    assert "more likely confirm the loss" in more_data_text(past)
    assert "too close to the threshold" in more_data_text(close)


def test_more_data_text_under_exclude_asks_for_the_missing_values(pristine_run: Run) -> None:
    """A gate the tipping-point check made INCONCLUSIVE asks for the values excluded as
    missing (or on_missing: worst), not for a sample that cannot help."""
    gate = _overall(inconclusive_variant(load_decision(pristine_run.output_dir), more=40))
    details = {**gate.details, "missing_tipping_point": 3, "missing_sensitivity_imputed": 12}
    tipped = gate.model_copy(
        update={"more_paired_n": None, "estimate": -0.0499, "threshold": -0.05, "details": details}
    )
    text = more_data_text(tipped)
    assert text.startswith("supply the 12 values excluded as missing (with 3 of them")
    assert text.endswith("or declare on_missing: worst") and "too close" not in text


def test_next_step_past_the_margin_says_more_data_confirms_the_loss(pristine_run: Run) -> None:
    """The next step agrees with report.md when no count is given (it said "sits on the
    threshold" for an estimate past the margin; fresh-user trial)."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir))
    cand = decision.candidates[0]
    gates = [
        g.model_copy(update={"more_paired_n": None, "estimate": -0.061, "threshold": -0.05})
        if g.status is GateStatus.INCONCLUSIVE
        else g
        for g in cand.gates
    ]
    cand = cand.model_copy(update={"gates": gates})
    step = next_step(decision, cand)
    assert "more likely confirm the loss" in step


def _with_gates(decision: Decision, *gates: GateResult) -> CandidateDecision:
    cand = decision.candidates[0]
    return cand.model_copy(update={"gates": [*cand.gates, *gates]})


def test_next_step_asks_for_missing_values_before_a_count_and_never_about_0(
    pristine_run: Run,
) -> None:
    """A gate INCONCLUSIVE by the exclude tipping point is not resolved by more pairs: the next
    step asks for the values, even beside a gate counting 0 (the trial's "gather about 0 more")
    or 40 more; a count of 0 is never shown."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir), more=0)
    gate = _overall(decision)
    details = {**gate.details, "missing_tipping_point": 3, "missing_sensitivity_imputed": 12}
    tipped = gate.model_copy(update={"id": "tipped", "more_paired_n": None, "details": details})
    counted = gate.model_copy(update={"id": "counted", "more_paired_n": 40})
    for extra in ((), (tipped,), (tipped, counted)):
        step = next_step(decision, _with_gates(decision, *extra))
        assert "about 0 more" not in step
        assert ("supply the 12 values" in step) == bool(extra)
    assert "about 0 more" not in more_data_text(gate)


def test_next_step_names_an_alpha_below_the_bootstrap_floor(pristine_run: Run) -> None:
    """alpha 1e-12 with the bound clearing -margin: the next step asks for a larger alpha, not
    for more data (the trial's "gather about 0 more")."""
    decision = inconclusive_variant(load_decision(pristine_run.output_dir), more=0)
    gate = _overall(decision)
    update = {"alpha": 1e-12, "p_value": 3.2e-4, "lower_bound": -0.002, "threshold": -0.02}
    floored = gate.model_copy(
        update=update | {"more_paired_n": None, "details": {**gate.details, "p_floor": 2.8e-4}}
    )
    cand = decision.candidates[0]
    gates = [floored if g.id == gate.id else g for g in cand.gates]
    step = next_step(decision, cand.model_copy(update={"gates": gates}))
    assert "below the smallest p-value the bootstrap can show (0.00028)" in step
    assert "more data would not resolve it" in step and "about 0" not in step
    cleared = floored.model_copy(update={"details": gate.details})
    assert "not every check of the test rejects yet" in more_data_text(cleared)


SECRET = "sk-proj-AbCdEf1234567890AbCdEf1234567890AbCd"


def test_secret_in_a_policy_config_gets_a_config_next_step(make_input, tmp_path, capsys) -> None:
    """A credential in a policy config BLOCKs with a next step about that config (its key), not
    about evidence, and the credential is echoed nowhere."""
    from ragwarrant.cli import main

    configs = {"cand": {"model": "cand", "top_k": 5, "api_key": SECRET}}
    root = make_input(configs=configs)
    out = tmp_path / "out"
    assert main(["run", "--input", str(root), "--output", str(out)]) == 12
    captured = capsys.readouterr()
    step = captured.out.strip().split(" — next: ", 1)[1]
    assert step.startswith("cand: remove the credential from the policy config (key api_key of ")
    assert "evidence" not in step
    assert next_step(load_decision(out)).startswith(step.split("… (")[0])  # run cuts at 200
    assert SECRET not in captured.out + captured.err
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_withheld_prefix_is_the_scanner_marker() -> None:
    """summary's withheld-value prefix is how audit.hygiene writes a withheld value."""
    from ragwarrant.audit.hygiene import REDACTED
    from ragwarrant.audit.summary import WITHHELD_PREFIX

    assert REDACTED.format(kind="api-token").startswith(WITHHELD_PREFIX)
