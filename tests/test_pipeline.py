"""The pipeline end to end on temp dirs: outputs, run-level BLOCK, ERROR records."""

from __future__ import annotations

import orjson

from ragwarrant.errors import InputError
from ragwarrant.outputs import OUTPUT_FILES
from ragwarrant.pipeline import record_error, run_job
from tests.conftest import base_contract, simulate


def test_run_writes_every_output_and_returns_the_published_decision(make_input, tmp_path):
    """A good candidate is PROMOTEd; the four outputs exist and decision.json is the outcome's."""
    out = tmp_path / "out"
    outcome = run_job(make_input(), out, on_stage=lambda event, **fields: None)
    assert (outcome.decision_class.value, outcome.exit_code) == ("PROMOTE", 0)
    assert all((out / name).is_file() for name in OUTPUT_FILES)
    written = orjson.loads((out / "decision.json").read_bytes())
    assert (written["run_id"], written["summary"]) == (outcome.run_id, outcome.summary)
    assert written["selection"]["method"] == "single-candidate"


def test_run_level_gate_blocks_every_candidate_untested(make_input, tmp_path):
    """A missing policy config fails hard:contract-references and BLOCKs without testing."""
    root = make_input()
    (root / "policies" / "cand.json").unlink()
    outcome = run_job(root, tmp_path / "out", on_stage=lambda event, **fields: None)
    d = outcome.decision
    assert (d.run_class.value, d.selection.method if d.selection else None) == ("BLOCK", "none")
    assert [(g.id, g.status.value) for g in d.run_gates] == [("hard:contract-references", "fail")]
    [cand] = d.candidates
    assert (cand.tested_on, cand.gates, cand.reasons[0].split(" — ")[0]) == (
        "none",
        [],
        "blocked: hard:contract-references",
    )


def test_several_candidates_with_development_split_test_one(make_input, tmp_path):
    """With a development split, one candidate is tested and the others are NOT_SELECTED."""

    def with_split(c):
        c["splits"] = {"development": "a", "confirmatory": "b"}
        c["evidence"][0]["columns"]["split"] = "task"

    sim = simulate(400)
    data = {"base": sim["base"], "cand0": sim["cand"], "cand1": sim["cand"]}
    root = make_input(contract=base_contract(2), data=data, mutate=with_split)
    d = run_job(root, tmp_path / "out", on_stage=lambda event, **fields: None).decision
    assert d.selection is not None and d.selection.method == "development-split"
    classes = sorted(c.decision_class.value for c in d.candidates)
    assert "NOT_SELECTED" in classes and len(classes) == 2


def test_record_error_writes_an_error_record(tmp_path):
    """An error that stopped the run is recorded as ERROR with its code and exit code."""
    out = tmp_path / "out"
    assert record_error(out, InputError("input-missing", "no input", hint="mount it")) is True
    d = orjson.loads((out / "decision.json").read_bytes())
    assert (d["run_class"], d["exit_code"], d["error"]["code"]) == ("ERROR", 66, "input-missing")
    assert all((out / name).is_file() for name in OUTPUT_FILES)


def test_record_error_refuses_an_output_inside_the_input(tmp_path):
    """The input is never written to: an output inside it gets no record."""
    assert (
        record_error(tmp_path / "in" / "out", InputError("x", "y"), input_dir=tmp_path / "in")
        is False
    )
    assert not (tmp_path / "in").exists()
