"""Tests of format detection (adapter: auto) and of the adapter registry."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from ragwarrant.adapters import auto
from ragwarrant.adapters._base import ToolFormat
from ragwarrant.adapters.registry import load_auto, load_source
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError

CASES = [
    ("ragas/ragas_evaluate_baseline.csv", "ragas", {"policy": "baseline"}),
    ("ragas/ragas_evaluate_candidate.jsonl", "ragas", {"policy": "candidate"}),
    ("deepeval/baseline/test_run_20261129_205103.json", "deepeval", {"policy": "baseline"}),
    ("langsmith/langsmith_experiment_baseline.csv", "langsmith", {"policy": "baseline"}),
    (
        "langsmith/langsmith_experiment_candidate_rows_raw.jsonl",
        "langsmith",
        {"policy": "candidate"},
    ),
    (
        "phoenix/baseline/phoenix_spans_baseline.parquet",
        "phoenix",
        {"policy": "baseline", "columns": {"example_id": "question_id"}},
    ),
    (
        "phoenix/baseline/phoenix_evaluate_dataframe_baseline.parquet",
        "phoenix",
        {
            "policy": "baseline",
            "columns": {"example_id": "question_id"},
            "options": {"spans": "phoenix/baseline/phoenix_spans_baseline.parquet"},
        },
    ),
    ("trulens/trulens_records_and_feedback.csv", "trulens", {}),
    ("otel/otel_genai_telemetry.parquet", "otel", {"kind": "telemetry"}),
]


@pytest.mark.parametrize(("rel", "adapter", "fields"), CASES)
def test_detects_and_reads_every_real_export(make_request, exports, rel, adapter, fields) -> None:
    """Each real export is detected from its content, read, and the detection recorded."""
    request = make_request(exports / rel, root=exports, adapter="auto", **fields)
    assert auto.detect(request)[0] == adapter
    result = load_auto(request)
    assert result.provenance.detected.startswith(f"{adapter}: ")
    assert result.provenance.adapter == adapter
    assert result.evidence.num_rows > 0


def test_detection_ignores_the_file_name(make_request, exports, tmp_path) -> None:
    """A Ragas CSV renamed to look like something else is still Ragas."""
    p = tmp_path / "test_run_trulens_spans.csv"
    p.write_bytes((exports / "ragas/ragas_evaluate_baseline.csv").read_bytes())
    assert auto.detect(make_request(p, adapter="auto", policy="baseline"))[0] == "ragas"


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("x.csv", b"", "evidence-empty"),
        ("x.csv", b"a,b\n1,2\n", "evidence-format-unknown"),
        ("x.json", b'{"hello": 1}', "evidence-format-unknown"),
        ("x.json", b"{nope", "evidence-unparseable"),
    ],
)
def test_unknown_or_broken(make_request, tmp_path, name, content, code) -> None:
    """Unrecognised content is a located error naming what was found."""
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(EvidenceError) as err:
        load_auto(make_request(p, adapter="auto", policy="baseline"))
    assert err.value.code == code


def test_load_source_through_registry(make_request, exports) -> None:
    """load_source dispatches on the source's adapter name."""
    request = make_request(
        exports / "otel/otel_genai_telemetry.parquet", adapter="auto", kind="telemetry"
    )
    result = load_source(request.source, request.path, sha256_file(request.path), request.contract)
    assert result.provenance.detected.startswith("otel")
    assert set(result.evidence["metric"].to_pylist()) == {"cost_usd", "latency_ms", "api_calls"}
    assert pc.all(pc.equal(result.evidence["source_sha256"], sha256_file(request.path))).as_py()


@pytest.mark.parametrize(("rel", "adapter", "fields"), CASES)
def test_every_real_export_has_its_declared_format(make_request, exports, rel, adapter, fields):
    """A real export declared with its tool's adapter passes the declared-format check."""
    auto.check_declared(make_request(exports / rel, root=exports, adapter=adapter, **fields))


PLAIN_CSV = b"example_id,policy,correct,cost_usd\nex1,baseline,1,0.01\nex1,candidate,1,0.005\n"


@pytest.mark.parametrize("adapter", ["ragas", "langsmith", "otel", "phoenix", "trulens"])
def test_plain_csv_declared_as_a_tool_export_refused(make_request, tmp_path, adapter) -> None:
    """A plain results CSV declared as a tool's export (ragas PROMOTEd on it) is refused, naming
    the file, the declared adapter, the tool's expected fields and the columns found."""
    p = tmp_path / "results.csv"
    p.write_bytes(PLAIN_CSV)
    request = make_request(
        p, adapter=adapter, pairing="id-column", columns={"example_id": "example_id"}
    )
    with pytest.raises(EvidenceError) as info:
        load_source(request.source, request.path, request.sha256, request.contract)
    err = info.value
    assert err.code == "evidence-adapter-mismatch"
    assert err.message.startswith(f"results.csv is declared 'adapter: {adapter}' but is not a ")
    assert err.expected == auto.FORMATS[adapter].expected
    assert err.found == "example_id, policy, correct, cost_usd"
    assert err.file == "results.csv"


def test_deepeval_declared_on_other_json_refused(make_request, tmp_path) -> None:
    """A JSON document without a DeepEval test run's keys is not read as one."""
    p = tmp_path / "run.json"
    p.write_bytes(b'[{"example_id": "ex1", "score": 1.0}]')
    with pytest.raises(EvidenceError) as info:
        auto.check_declared(make_request(p, adapter="deepeval", policy="baseline"))
    assert info.value.code == "evidence-adapter-mismatch"
    assert "found example_id, score" in info.value.message


def test_mismatch_names_the_tool_the_file_looks_like(make_request, exports, tmp_path) -> None:
    """A Ragas export declared as TruLens is refused, saying it looks like a Ragas export."""
    request = make_request(
        exports / "ragas/ragas_evaluate_baseline.csv",
        root=exports,
        adapter="trulens",
        policy="baseline",
    )
    with pytest.raises(EvidenceError) as info:
        auto.check_declared(request)
    assert "it looks like a ragas export" in info.value.message


def test_generic_and_auto_are_not_checked(make_request, tmp_path) -> None:
    """The declared-format check leaves generic (any plain table) and auto (detected) alone."""
    p = tmp_path / "results.csv"
    p.write_bytes(PLAIN_CSV)
    for adapter in ("generic", "auto"):
        auto.check_declared(make_request(p, adapter=adapter, metrics={"correct": "correct"}))


def test_run_on_plain_csv_declared_ragas_blocks(make_input, tmp_path, capsys) -> None:
    """``run`` on a plain CSV declared ``adapter: ragas`` BLOCKs (it PROMOTEd) naming the file,
    and writes its decision record."""
    import json

    from ragwarrant.cli import main

    def as_ragas(c: dict) -> None:
        c["evidence"][0].update(adapter="ragas", pairing="id-column")

    out = tmp_path / "out"
    assert main(["run", "--input", str(make_input(mutate=as_ragas)), "--output", str(out)]) == 12
    decision = json.loads((out / "decision.json").read_text())
    gate = next(g for g in decision["run_gates"] if g["id"] == "hard:evidence-readable:results")
    assert gate["status"] == "fail"
    assert gate["reason"].startswith(
        "evidence-adapter-mismatch: evidence/results.csv is declared 'adapter: ragas' but is not "
        "a Ragas export: expected a Ragas result table"
    )
    assert "found example_id, policy, task, doc, correct, cost_usd" in gate["reason"]


def test_rows_past_the_limit_are_refused(make_request, exports) -> None:
    """A source giving more canonical rows than the contract's limit is ``evidence-limit``,
    naming both."""
    request = make_request(
        exports / "otel/otel_genai_telemetry.parquet", adapter="auto", kind="telemetry"
    )
    load_source(request.source, request.path, request.sha256, request.contract)
    limits = request.contract.limits.model_copy(update={"evidence_rows": 10})
    contract = request.contract.model_copy(update={"limits": limits})
    with pytest.raises(EvidenceError) as info:
        load_source(request.source, request.path, request.sha256, contract)
    assert info.value.code == "evidence-limit"
    assert "evidence rows (one per policy, example and metric); the limit is 10" in str(info.value)


def test_detection_follows_the_tool_specs(make_request, tmp_path, monkeypatch) -> None:
    """A tool added to ``auto.FORMATS`` is detected by its own rule, takes its place in the
    column-rule order, and is named in the unknown-format hint: auto keeps no list of its own."""
    toy = ToolFormat(
        "toy",
        "toy-eval",
        "Toy",
        "a toy_score column",
        lambda s: s.has_any("toy_score"),
        columns=lambda names: "column toy_score" if "toy_score" in names else None,
    )
    monkeypatch.setattr(auto, "FORMATS", {"toy": toy, **auto.FORMATS})
    p = tmp_path / "toy.csv"
    p.write_bytes(b"user_input,response,toy_score\nq,a,1\n")  # ragas's columns too: toy is first
    assert auto.detect(make_request(p, adapter="auto")) == ("toy", "column toy_score")
    p.write_bytes(b"a,b\n1,2\n")
    with pytest.raises(EvidenceError) as info:
        auto.detect(make_request(p, adapter="auto"))
    assert "toy" in info.value.hint
    assert info.value.expected is not None and "Toy" in info.value.expected


def test_unknown_format_hint_names_every_tool_adapter(make_request, tmp_path) -> None:
    """The unknown-format error names every tool adapter and generic, from the specs."""
    p = tmp_path / "x.csv"
    p.write_bytes(b"a,b\n1,2\n")
    with pytest.raises(EvidenceError) as info:
        auto.detect(make_request(p, adapter="auto"))
    assert info.value.hint == (
        "name the adapter in the contract "
        "(deepeval, langsmith, otel, phoenix, ragas, trulens, generic)"
    )
    assert info.value.expected == (
        "an export of DeepEval, LangSmith, OpenTelemetry, Phoenix, Ragas or TruLens"
    )
