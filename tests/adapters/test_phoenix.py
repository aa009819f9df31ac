"""Tests of the Phoenix adapter: spans as telemetry, evaluations joined to spans."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import otel, phoenix
from ragwarrant.errors import EvidenceError

SPANS = "phoenix/{p}/phoenix_spans_{p}.parquet"
EVALS = "phoenix/{p}/phoenix_evaluate_dataframe_{p}.parquet"
LEGACY = "phoenix/{p}/phoenix_span_evaluations_token_f1_{p}.csv"


def _load(make_request, exports: Path, rel: str, **fields):
    fields.setdefault("adapter", "phoenix")
    fields.setdefault("columns", {"example_id": "question_id"})
    return phoenix.load(make_request(exports / rel, root=exports, **fields))


def _load_joined(make_request, root: Path, rel: str = EVALS, *, run: str = "baseline", **fields):
    """Load ``rel`` of the ``run`` policy's export, joined (span-join) to that run's spans file."""
    return _load(
        make_request, root, rel.format(p=run), options={"spans": SPANS.format(p=run)}, **fields
    )


def _by_example(result, metric: str) -> dict[str, float | None]:
    e = result.evidence.filter(pc.equal(result.evidence["metric"], metric))
    return dict(zip(e["example_id"].to_pylist(), e["value"].to_pylist(), strict=True))


@pytest.mark.parametrize("policy", ["baseline", "candidate"])
def test_spans_reduce_like_the_telemetry(make_request, exports, policy) -> None:
    """Phoenix LLM-span cost equals the OTel telemetry's; latency is the root CHAIN span's."""
    result = _load(make_request, exports, SPANS.format(p=policy), kind="telemetry", policy=policy)
    cost, lat, calls = (_by_example(result, m) for m in ("cost_usd", "latency_ms", "api_calls"))
    assert len(cost) == 30 and set(calls.values()) == {1.0}
    tel = pq.read_table(exports / "otel/otel_genai_telemetry.parquet").to_pylist()
    for r in tel:
        if r["policy_id"] == policy:
            assert math.isclose(cost[r["example_id"]], r["cost_usd"])
    spans = pq.read_table(exports / SPANS.format(p=policy)).to_pylist()
    roots = {s["attributes.metadata"]["question_id"]: s for s in spans if s["parent_id"] is None}
    for q, s in roots.items():
        assert math.isclose(lat[q], (s["end_time"] - s["start_time"]).total_seconds() * 1000)
    notes = " ".join(result.provenance.notes)
    assert "90 spans in 30 traces" in notes
    assert ("1 spans with status ERROR" in notes) == (policy == "baseline")


def test_evaluate_dataframe_span_join(make_request, exports) -> None:
    """Score cells (JSON strings) join through context.span_id to the spans' question ids."""
    result = _load_joined(make_request, exports, policy="baseline")
    assert result.provenance.pairing_method == "span-join"
    ev = result.evidence
    assert ev.num_rows == 120 and pc.sum(pc.is_null(ev["value"])).as_py() == 0
    assert set(ev["metric"].to_pylist()) == {
        "exact_match",
        "token_f1",
        "refusal",
        "retrieval_recall",
    }
    assert _by_example(result, "refusal")["q030"] == 1.0
    assert any("refusal" in n and "minimize" in n for n in result.provenance.notes)
    # the same token_f1 as the legacy SpanEvaluations export of the same run
    legacy = _load_joined(
        make_request, exports, LEGACY, policy="baseline", metrics={"score": "token_f1"}
    )
    assert _by_example(legacy, "token_f1") == _by_example(result, "token_f1")
    assert "shape: legacy SpanEvaluations (label, score, explanation)" in legacy.provenance.notes


def test_policy_comes_from_the_joined_spans(make_request, exports) -> None:
    """Without 'policy', the spans' metadata.policy is used, and must cover the contract."""
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, exports, run="candidate")
    assert err.value.code == "evidence-policy-missing" and "baseline" in str(err.value)


def test_legacy_frame_needs_metric_name(make_request, exports) -> None:
    """label/score/explanation frames do not name their evaluation: the contract must."""
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, exports, LEGACY, policy="baseline")
    assert err.value.code == "evidence-metric-name-needed"


def test_spans_option_required(make_request, exports) -> None:
    """Evaluations without options.spans cannot be paired."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports, EVALS.format(p="baseline"), policy="baseline")
    assert err.value.code == "evidence-spans-needed"


def test_question_hash_pairing(make_request, exports) -> None:
    """pairing: question-hash uses the input column and needs no spans."""
    result = _load(
        make_request,
        exports,
        EVALS.format(p="baseline"),
        policy="baseline",
        pairing="question-hash",
    )
    assert result.provenance.pairing_method == "question-hash"
    assert result.evidence["example_id"][0].as_py().startswith("qh:")


# --- broken variants ---------------------------------------------------------------------------


def _with_column(t: pa.Table, name: str, values: list, typ: pa.DataType | None = None) -> pa.Table:
    """``t`` with column ``name`` replaced by ``values``."""
    return t.set_column(t.schema.get_field_index(name), name, pa.array(values, typ))


def _copy_with(exports: Path, tmp_path: Path, policy: str, table: pa.Table) -> Path:
    (tmp_path / "phoenix" / policy).mkdir(parents=True)
    shutil.copyfile(exports / SPANS.format(p=policy), tmp_path / SPANS.format(p=policy))
    out = tmp_path / EVALS.format(p=policy)
    pq.write_table(table, out)
    return out


def test_join_miss(make_request, exports, tmp_path) -> None:
    """An evaluation of a span not in the spans file is located."""
    t = pq.read_table(exports / EVALS.format(p="baseline"))
    ids = t["context.span_id"].to_pylist()
    ids[3] = ids[7] = "feedc0de00000001"
    t = _with_column(t, "context.span_id", ids)
    _copy_with(exports, tmp_path, "baseline", t)
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, tmp_path, policy="baseline")
    e = err.value
    assert (e.code, e.row, e.column) == ("evidence-join-miss", 4, "context.span_id")
    assert f"2 of {len(ids)}" in e.message  # how many, never the id (trial B echoed it)
    assert all("feedc0de" not in str(v) for v in (e.message, e.found, e.hint))


def test_failed_execution_and_bad_score_cell(make_request, exports, tmp_path) -> None:
    """A FAILED execution is an 'error' score; a score cell that is not a Score is located."""
    t = pq.read_table(exports / EVALS.format(p="baseline"))
    det = t["token_f1_execution_details"].to_pylist()
    det[2] = orjson.dumps({"status": "FAILED", "exceptions": ["boom"]}).decode()
    t = _with_column(t, "token_f1_execution_details", det)
    _copy_with(exports, tmp_path, "baseline", t)
    result = _load_joined(make_request, tmp_path, policy="baseline")
    ev = result.evidence.filter(pc.equal(result.evidence["missing_reason"], "error"))
    assert ev["metric"].to_pylist() == ["token_f1"] and ev["source_row"].to_pylist() == [3]

    cells = t["exact_match_score"].to_pylist()
    cells[4] = "[1, 2]"
    pq.write_table(
        _with_column(t, "exact_match_score", cells), tmp_path / EVALS.format(p="baseline")
    )
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, tmp_path, policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        5,
        "exact_match_score",
    )


def test_duplicated_span(make_request, exports, tmp_path) -> None:
    """Two evaluations of the same span (same example) are a duplicated id."""
    t = pq.read_table(exports / EVALS.format(p="baseline"))
    t = pa.concat_tables([t, t.slice(0, 1)])
    _copy_with(exports, tmp_path, "baseline", t)
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, tmp_path, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", 31)


def test_repeated_spans_are_refused(make_request, exports, tmp_path) -> None:
    """A spans file written twice (same context.trace_id/span_id) would double the arm's cost."""
    rel = SPANS.format(p="baseline")
    t = pq.read_table(exports / rel)
    (tmp_path / rel).parent.mkdir(parents=True)
    pq.write_table(pa.concat_tables([t, t]), tmp_path / rel)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, tmp_path, rel, kind="telemetry", policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-duplicate-request",
        t.num_rows + 1,
        "context.span_id",
    )


def test_declared_policy_differs_from_joined_spans(make_request, exports) -> None:
    """Declared baseline while the joined spans say candidate is a policy mismatch."""
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, exports, run="candidate", policy="baseline")
    assert err.value.code == "evidence-policy-missing"


def test_spans_without_example_attribute(make_request, exports) -> None:
    """A spans file without the example attribute is a missing column."""
    with pytest.raises(EvidenceError) as err:
        _load(
            make_request,
            exports,
            SPANS.format(p="baseline"),
            kind="telemetry",
            policy="baseline",
            columns={"example_id": "ticket_id"},
        )
    assert err.value.code == "evidence-missing-column"


def test_spans_reducer_is_the_otel_one() -> None:
    """Phoenix spans go through the same reduction as OpenTelemetry (one implementation)."""
    assert phoenix.load_spans is otel.load_spans


def test_empty_evaluations(make_request, exports, tmp_path) -> None:
    """An evaluations frame with no rows is evidence-empty."""
    t = pq.read_table(exports / EVALS.format(p="baseline")).slice(0, 0)
    _copy_with(exports, tmp_path, "baseline", t)
    with pytest.raises(EvidenceError) as err:
        _load_joined(make_request, tmp_path, policy="baseline")
    assert err.value.code == "evidence-empty"


def test_mixed_policies_in_spans(make_request, exports, tmp_path) -> None:
    """One root span naming another policy in a one-policy spans file is located."""
    t = pq.read_table(exports / SPANS.format(p="baseline"))
    meta = t["attributes.metadata"].to_pylist()
    i = next(k for k, m in enumerate(meta) if m is not None and m["question_id"] == "q005")
    meta[i] = {"question_id": "q005", "policy": "candidate"}
    t = _with_column(t, "attributes.metadata", meta, t.schema.field("attributes.metadata").type)
    (tmp_path / "phoenix" / "baseline").mkdir(parents=True)
    pq.write_table(t, tmp_path / SPANS.format(p="baseline"))
    with pytest.raises(EvidenceError) as err:
        _load(
            make_request, tmp_path, SPANS.format(p="baseline"), kind="telemetry", policy="baseline"
        )
    assert err.value.code == "evidence-mixed-policies" and "candidate" in str(err.value)


def _keyed_by_question(exports: Path, tmp_path: Path, policy: str) -> Path:
    """The real evaluate_dataframe export as run on a dataset frame holding question_id: the
    span id column replaced by the question id of the span's trace (from the real spans)."""
    spans = pq.read_table(exports / SPANS.format(p=policy)).to_pylist()
    question = {
        s["context.trace_id"]: s["attributes.metadata"]["question_id"]
        for s in spans
        if s["parent_id"] is None
    }
    trace = {s["context.span_id"]: s["context.trace_id"] for s in spans}
    evals = pq.read_table(exports / EVALS.format(p=policy))
    ids = [question[trace[s]] for s in evals["context.span_id"].to_pylist()]
    keyed = evals.drop_columns(["context.span_id"]).append_column("question_id", pa.array(ids))
    path = tmp_path / f"evals_by_question_{policy}.parquet"
    pq.write_table(keyed, path)
    return path


@pytest.mark.parametrize("options", [{}, {"spans": SPANS.format(p="baseline")}])
def test_evaluations_keyed_by_the_example_column(make_request, exports, tmp_path, options):
    """A frame keyed by question_id (no span id) is read by that column under pairing: auto,
    with the same scores as the span-joined export; it asked for context.span_id."""
    path = _keyed_by_question(exports, tmp_path, "baseline")
    request = make_request(
        path,
        root=tmp_path,
        adapter="phoenix",
        policy="baseline",
        options=options,
        columns={"example_id": "question_id"},
    )
    if options:  # options.spans must resolve inside the input directory
        spans = tmp_path / SPANS.format(p="baseline")
        spans.parent.mkdir(parents=True)
        spans.write_bytes((exports / SPANS.format(p="baseline")).read_bytes())
    result = phoenix.load(request)
    joined = _load_joined(make_request, exports, policy="baseline")
    assert result.provenance.pairing_method == "id-column"
    for metric in ("exact_match", "token_f1", "refusal", "retrieval_recall"):
        assert _by_example(result, metric) == _by_example(joined, metric)
