"""The pipeline end to end on temp dirs: outputs, run-level BLOCK, ERROR records."""

from __future__ import annotations

import orjson
import yaml

from ragwarrant.audit.record import record_error
from ragwarrant.audit.verify import verify_output_dir
from ragwarrant.audit.writer import LOCK_FILE
from ragwarrant.errors import InputError
from ragwarrant.outputs import OUTPUT_FILES
from ragwarrant.pipeline import run_job
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


def _contract_evidence_gate(outcome, check: str):
    """The run's failed ``hard:contract-evidence:<check>`` gate (the run must BLOCK on it)."""
    d = outcome.decision
    assert (d.run_class.value, [c.decision_class.value for c in d.candidates]) == (
        "BLOCK",
        ["BLOCK"],
    )
    [gate] = [g for g in d.run_gates if g.id == f"hard:contract-evidence:{check}"]
    assert gate.status.value == "fail"
    assert d.candidates[0].reasons[0].startswith(f"blocked: hard:contract-evidence:{check}")
    return gate


def test_policy_id_typo_lists_the_ids_present_and_blocks(make_input, tmp_path):
    """A candidate id absent from the evidence BLOCKs, naming the ids present and the closest."""

    def typo(c):
        c["candidates"][0]["policy_id"] = "cnad"

    outcome = run_job(make_input(mutate=typo), tmp_path / "out", on_stage=lambda e, **kw: None)
    gate = _contract_evidence_gate(outcome, "policy-ids")
    assert "contract.yaml: candidates[0].policy_id (line " in gate.reason
    assert "which holds base, cand" in gate.reason and "'cand'" in gate.reason


def test_split_values_without_a_splits_block_block(make_input, tmp_path):
    """Split values in the evidence and no splits: block would decide on development rows: BLOCK."""

    def split_column(c):
        c["evidence"][0]["columns"]["split"] = "task"

    root = make_input(mutate=split_column)
    gate = _contract_evidence_gate(
        run_job(root, tmp_path / "out", on_stage=lambda e, **kw: None), "splits"
    )
    assert "holds split values a, b but the contract has no splits: block" in gate.reason


def test_values_outside_the_declared_scale_block(make_input, tmp_path):
    """A metric declared on [0, 0.5] holding 1.0 BLOCKs with the scale that covers the values."""

    def narrow(c):
        c["quality_metrics"][0]["scale"] = [0, 0.5]

    outcome = run_job(make_input(mutate=narrow), tmp_path / "out", on_stage=lambda e, **kw: None)
    gate = _contract_evidence_gate(outcome, "scales")
    assert "quality_metrics[0].scale (line " in gate.reason
    assert "declare a scale that covers them (e.g. [0, 1])" in gate.reason
    assert "np.float64" not in gate.reason and "did you mean scale" not in gate.reason


def test_binary_metric_holding_a_half_blocks(make_input, tmp_path):
    """A metric declared binary holding 0.5 BLOCKs, suggesting another metric_kind."""

    def binary(c):
        c["quality_metrics"][0]["metric_kind"] = "binary"

    data = simulate(200)
    data["base"]["correct"][3] = 0.5
    root = make_input(mutate=binary, data=data)
    gate = _contract_evidence_gate(
        run_job(root, tmp_path / "out", on_stage=lambda e, **kw: None), "scales"
    )
    assert "'correct' is declared binary but holds values other than 0 and 1" in gate.reason


def _phoenix_input(tmp_path, refusal: dict) -> object:
    """An input dir reading the real Phoenix evaluate_dataframe exports (refusal: minimize)."""
    import shutil

    from tests.conftest import REPO

    root = tmp_path / "in"
    shutil.copytree(REPO / "tests/data/exports/phoenix", root / "evidence/phoenix")
    c = base_contract()
    c["baseline"]["policy_id"], c["candidates"][0]["policy_id"] = "baseline", "candidate"
    c["evidence"] = [
        {
            "id": f"phoenix-{p}",
            "path": f"evidence/phoenix/{p}/phoenix_evaluate_dataframe_{p}.parquet",
            "format": "parquet",
            "adapter": "phoenix",
            "policy": p,
            "columns": {"example_id": "question_id"},
            "options": {"spans": f"evidence/phoenix/{p}/phoenix_spans_{p}.parquet"},
            "metrics": {"token_f1": "token_f1", "refusal": "refusal"},
            "evaluator": "phoenix-evals",
            "evaluator_version": "3.9.4",
        }
        for p in ("baseline", "candidate")
    ]
    c["quality_metrics"] = [
        {"id": "token_f1", "scale": [0, 1], "margin_abs": 0.1},
        {"id": "refusal", "scale": [0, 1], "margin_abs": 0.1, **refusal},
    ]
    c["operational_metrics"] = []
    c["claims"] = {"join": "any", "items": [{"kind": "quality-improvement", "metric": "token_f1"}]}
    c["statistics"]["min_paired_n"] = 10
    c["evidence_class"] = c["promotion_min_class"] = "frozen-observation"
    (root / "policies").mkdir(parents=True)
    for p in ("base", "cand"):
        (root / f"policies/{p}.json").write_bytes(orjson.dumps({"model": p}))
    (root / "contract.yaml").write_text(yaml.safe_dump(c, sort_keys=False))
    return root


def test_direction_contradicting_the_phoenix_export_blocks(tmp_path):
    """refusal declared higher_is_better against Phoenix's direction 'minimize' BLOCKs, located."""
    root = _phoenix_input(tmp_path, {"direction": "higher_is_better"})
    outcome = run_job(root, tmp_path / "out", on_stage=lambda e, **kw: None)
    gate = _contract_evidence_gate(outcome, "directions")
    assert "contract.yaml: quality_metrics[1].direction (line " in gate.reason
    assert "'phoenix-baseline' (lower_is_better)" in gate.reason
    assert "did you mean direction: lower_is_better?" in gate.reason


def test_direction_agreeing_or_confirmed_is_not_blocked(tmp_path):
    """The export's own direction, or direction_confirmed: true, raises no directions gate."""
    for i, refusal in enumerate(
        (
            {"direction": "lower_is_better"},
            {"direction": "higher_is_better", "direction_confirmed": True},
        )
    ):
        root = _phoenix_input(tmp_path / str(i), refusal)
        outcome = run_job(root, tmp_path / f"out{i}", on_stage=lambda e, **kw: None)
        gates = [g.id for g in outcome.decision.run_gates]
        assert "hard:contract-evidence:directions" not in gates
        assert outcome.decision.run_class.value != "BLOCK"


def test_retry_with_same_inputs_reuses_the_committed_run(make_input, tmp_path):
    """A retry over a verified run of the same inputs and contract writes nothing and reuses it."""
    inp, out = make_input(), tmp_path / "out"
    first = run_job(inp, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    events: list[str] = []
    second = run_job(inp, out, on_stage=lambda e, **kw: events.append(e))
    assert "run_reused" in events and "gates_evaluated" not in events
    assert (second.run_id, second.exit_code) == (first.run_id, first.exit_code)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_retry_with_other_inputs_keeps_the_earlier_run_in_history(make_input, tmp_path):
    """A run over another committed run keeps it, verifiable, under history/<run_id>/."""
    out = tmp_path / "out"
    first = run_job(make_input(), out)
    second = run_job(make_input(data=simulate(200, seed=3)), out)
    assert second.run_id != first.run_id
    assert verify_output_dir(out).ok
    assert verify_output_dir(out / "history" / first.run_id).ok
    assert orjson.loads((out / "decision.json").read_bytes())["run_id"] == second.run_id


def test_retry_after_a_kill_cleans_litter_and_verifies(make_input, tmp_path):
    """Staging, orphan temp files and files without a manifest from a killed attempt are gone."""
    inp, out = make_input(), tmp_path / "out"
    (out / ".ragwarrant-staging-x").mkdir(parents=True)
    (out / ".ragwarrant-staging-x" / "decision.json").write_text("{}")
    (out / ".decision.json.k1ll3d.tmp").write_text("{")
    (out / "decision.json").write_text("{}")  # a half-committed attempt: no manifest
    run_job(inp, out)
    assert verify_output_dir(out, input_dir=inp).ok
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [LOCK_FILE]


def test_ip_address_in_a_slice_name_blocks_unless_the_contract_allows_it(make_input, tmp_path):
    """An IP address in a slice name BLOCKs by default and is published when allowed."""
    data = simulate(200, slices=("10.20.30.40", "b"))

    def protect(c):
        c["protected_slices"] = [{"value": "10.20.30.40"}]

    def allow(c):
        protect(c)
        c["publication"] = {"allow_finding_kinds": ["ip-address"]}

    blocked = run_job(make_input(data=data, mutate=protect), tmp_path / "o1")
    gates = [g.id for g in blocked.decision.run_gates]
    assert blocked.decision_class.value == "BLOCK" and "hard:publication-hygiene" in gates
    allowed = run_job(make_input(data=data, mutate=allow), tmp_path / "o2")
    assert "hard:publication-hygiene" not in [g.id for g in allowed.decision.run_gates]
    assert allowed.decision_class.value != "BLOCK"
    assert verify_output_dir(tmp_path / "o2").ok


def test_a_second_run_into_the_same_output_waits_for_the_first(make_input, tmp_path, monkeypatch):
    """Two runs into one output directory at once: the second must not clean the first's
    staging directory or interleave its commit (trial-int: the first failed with exit 73)."""
    import threading

    from ragwarrant.audit import publish

    inp, out = make_input(), tmp_path / "out"
    real = publish.write_attestation
    second: dict[str, object] = {}

    def run_second() -> None:
        second["outcome"] = run_job(inp, out)

    def racing(*args, **kwargs):
        if not second:
            second["started"] = True
            thread = threading.Thread(target=run_second)
            thread.start()
            thread.join(timeout=5)  # before the fix it ran to the end meanwhile
            second["thread"] = thread
        return real(*args, **kwargs)

    monkeypatch.setattr(publish, "write_attestation", racing)
    first = run_job(inp, out)
    second["thread"].join(timeout=60)  # type: ignore[attr-defined]
    assert first.exit_code == 0
    assert second["outcome"].exit_code == 0  # type: ignore[attr-defined]
    assert verify_output_dir(out).ok


def test_a_run_refuses_an_output_directory_holding_foreign_files(make_input, tmp_path):
    """A file that no run wrote makes the committed run unverifiable for ever: the run refuses
    the directory (exit 73) and writes nothing beside it (trial-int: it exited 0)."""
    from ragwarrant.errors import OutputError

    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "notes.txt").write_text("mine\n")
    try:
        run_job(make_input(), out)
    except OutputError as exc:
        assert exc.code == "output-foreign-files"
        assert "sub/notes.txt" in exc.message
        assert str(tmp_path) not in exc.message  # no host path
        assert int(exc.exit_code) == 73
        assert not record_error(out, exc)
    else:
        raise AssertionError("the run decided into a directory that can never verify")
    assert sorted(p.name for p in out.iterdir()) == ["sub"]  # not even the lock file (trial B)


def test_ledger_inside_the_input_or_output_is_a_usage_error(make_input, tmp_path):
    """``--ledger`` inside the input (never written to) or the output (its files must all be in
    the manifest) is refused before anything is written; it wrote the ledger, its lock and looks
    into the input, or left a ledger in the output that failed ``verify``."""
    import pytest

    from ragwarrant.errors import UsageError

    root = make_input()
    before = sorted(p.name for p in root.iterdir())
    for ledger in (root / "ledger.jsonl", tmp_path / "out" / "ledger.jsonl"):
        with pytest.raises(UsageError) as err:
            run_job(root, tmp_path / "out", ledger=ledger)
        assert err.value.code == "ledger-inside-run-directory"
        assert sorted(p.name for p in root.iterdir()) == before
    assert not (tmp_path / "out").exists()


def _unpair(root, policy: str) -> None:
    """Suffix every example id of ``policy`` with ``x``: it shares no example with the baseline."""
    csv = root / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    fixed = [line.replace(",", "x,", 1) if line.split(",")[1] == policy else line for line in lines]
    csv.write_text("\n".join(fixed) + "\n")


def test_candidate_blocked_on_the_development_split_blocks_the_run(make_input, tmp_path):
    """A candidate with no pairs is BLOCK (not NOT_SELECTED) with its hard gate; the run BLOCKs."""

    def with_split(c):
        c["splits"] = {"development": "a", "confirmatory": "b"}
        c["evidence"][0]["columns"]["split"] = "task"

    sim = simulate(400, quality_delta=-0.3)  # the paired candidate is a confirmed loss: REJECT
    data = {"base": sim["base"], "cand0": sim["cand"], "cand1": sim["cand"]}
    root = make_input(contract=base_contract(2), data=data, mutate=with_split)
    _unpair(root, "cand1")
    d = run_job(root, tmp_path / "out", on_stage=lambda event, **fields: None).decision
    by_id = {c.policy_id: c for c in d.candidates}
    assert (by_id["cand0"].decision_class.value, by_id["cand1"].decision_class.value) == (
        "REJECT",
        "BLOCK",
    )
    blocked = by_id["cand1"]
    failed = [g.id for g in blocked.gates if g.kind == "hard" and g.status.value == "fail"]
    assert blocked.tested_on == "a" and failed  # the development split's label
    assert blocked.reasons[0].startswith(f"blocked: {failed[0]} — ")
    assert (d.run_class.value, d.exit_code) == ("BLOCK", 12)
    assert "cand1=BLOCK" in d.summary
    note = next(n for n in d.selection.notes if n.startswith("cand1"))  # type: ignore[union-attr]
    assert failed[0] in note
