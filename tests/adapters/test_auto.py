"""Tests of format detection (adapter: auto) and of the adapter registry."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from ragwarrant.adapters import auto
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
