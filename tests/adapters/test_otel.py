"""Tests of the OpenTelemetry adapter: the telemetry Parquet, OTLP JSON lines, modeled cost."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import otel
from ragwarrant.audit.hygiene import scan_outputs
from ragwarrant.errors import EvidenceError

TELEMETRY = "otel/otel_genai_telemetry.parquet"
PRICES = {
    "llama-3.1-8b-instruct": {"input_usd_per_1m_tokens": 0.18, "output_usd_per_1m_tokens": 0.18},
    "llama-3.1-70b-instruct": {"input_usd_per_1m_tokens": 0.88, "output_usd_per_1m_tokens": 0.88},
}


def _load(make_request, path: Path, **fields):
    fields.setdefault("adapter", "otel")
    fields.setdefault("kind", "telemetry")
    return otel.load(make_request(path, **fields))


def _by_key(result, metric: str) -> dict[tuple[str, str], float | None]:
    e = result.evidence.filter(pc.equal(result.evidence["metric"], metric))
    return {
        (p, x): v
        for p, x, v in zip(
            e["policy_id"].to_pylist(),
            e["example_id"].to_pylist(),
            e["value"].to_pylist(),
            strict=True,
        )
    }


def _rows(exports: Path) -> list[dict]:
    return pq.read_table(exports / TELEMETRY).to_pylist()


def test_real_telemetry(make_request, exports) -> None:
    """60 requests → 60 (policy, example) rows of cost_usd, latency_ms and api_calls."""
    result = _load(make_request, exports / TELEMETRY)
    rows = _rows(exports)
    cost, lat, calls = (_by_key(result, m) for m in ("cost_usd", "latency_ms", "api_calls"))
    assert len(cost) == 60
    for r in rows:
        key = (r["policy_id"], r["example_id"])
        assert cost[key] == r["cost_usd"]
        assert math.isclose(lat[key], (r["end_time_unix_nano"] - r["start_time_unix_nano"]) / 1e6)
        assert calls[key] == 1.0
    assert result.provenance.pairing_method == "id-column"
    assert not any(otel.COST_MODELED_NOTE in n for n in result.provenance.notes)


def test_modeled_cost_when_absent(make_request, exports, tmp_path) -> None:
    """Without cost_usd, cost = tokens × the contract's prices, and the provenance says so."""
    p = tmp_path / "t.parquet"
    pq.write_table(pq.read_table(exports / TELEMETRY).drop_columns(["cost_usd"]), p)
    result = _load(make_request, p, prices=PRICES)
    cost = _by_key(result, "cost_usd")
    for r in _rows(exports):
        assert math.isclose(cost[(r["policy_id"], r["example_id"])], r["cost_usd"], rel_tol=1e-9)
    assert any(n.startswith(otel.COST_MODELED_NOTE) for n in result.provenance.notes)


def test_cost_missing_without_price(make_request, exports, tmp_path) -> None:
    """A model with no price and no cost leaves the example's cost missing (absent), counted."""
    p = tmp_path / "t.parquet"
    pq.write_table(pq.read_table(exports / TELEMETRY).drop_columns(["cost_usd"]), p)
    result = _load(
        make_request, p, prices={"llama-3.1-8b-instruct": PRICES["llama-3.1-8b-instruct"]}
    )
    e = result.evidence.filter(pc.equal(result.evidence["metric"], "cost_usd"))
    missing = e.filter(pc.is_null(e["value"]))
    assert set(missing["policy_id"].to_pylist()) == {"candidate"} and missing.num_rows == 30
    assert set(missing["missing_reason"].to_pylist()) == {"absent"}
    assert any("30 LLM spans have no cost" in n for n in result.provenance.notes)


def _otlp_lines(rows: list[dict]) -> bytes:
    """Each request as a trace: a root span with the ids, an LLM child span; ints as strings."""

    def s(k: str, v: str) -> dict:
        return {"key": k, "value": {"stringValue": v}}

    def i(k: str, v: int) -> dict:
        return {"key": k, "value": {"intValue": str(v)}}

    out = []
    for n, r in enumerate(rows):
        root_id = f"{n + 1:016x}"  # all zeros is no valid span id
        root = {
            "traceId": r["trace_id"],
            "spanId": root_id,
            "name": "rag_query",
            "kind": 1,
            "startTimeUnixNano": str(r["start_time_unix_nano"] - 50_000_000),
            "endTimeUnixNano": str(r["end_time_unix_nano"] + 10_000_000),
            "attributes": [s("example_id", r["example_id"])],
            "status": {"code": 1},
        }
        llm = {
            "traceId": r["trace_id"],
            "spanId": r["span_id"],
            "parentSpanId": root_id,
            "name": r["span_name"],
            "kind": 3,
            "startTimeUnixNano": str(r["start_time_unix_nano"]),
            "endTimeUnixNano": str(r["end_time_unix_nano"]),
            "attributes": [
                s("gen_ai.operation.name", "chat"),
                s("gen_ai.request.model", r["gen_ai.request.model"]),
                i("gen_ai.usage.input_tokens", r["gen_ai.usage.input_tokens"]),
                i("gen_ai.usage.output_tokens", r["gen_ai.usage.output_tokens"]),
                {
                    "key": "gen_ai.response.finish_reasons",
                    "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}},
                },
            ],
            "status": {"code": 0},
        }
        req = {
            "resourceSpans": [
                {
                    "resource": {"attributes": [s("policy_id", r["policy_id"])]},
                    "scopeSpans": [{"scope": {"name": "app"}, "spans": [root, llm]}],
                }
            ]
        }
        out.append(orjson.dumps(req))
    return b"\n".join(out) + b"\n"


def test_otlp_json_lines(make_request, exports, tmp_path) -> None:
    """OTLP JSON: ids on the root span only, string int64s; latency is the root's duration."""
    rows = _rows(exports)
    p = tmp_path / "spans.jsonl"
    p.write_bytes(_otlp_lines(rows))
    result = _load(make_request, p, prices=PRICES)
    cost, lat, calls = (_by_key(result, m) for m in ("cost_usd", "latency_ms", "api_calls"))
    for r in rows:
        key = (r["policy_id"], r["example_id"])
        assert math.isclose(cost[key], r["cost_usd"], rel_tol=1e-9)
        assert math.isclose(
            lat[key], (r["end_time_unix_nano"] - r["start_time_unix_nano"]) / 1e6 + 60.0
        )
        assert calls[key] == 1.0  # the root span is not an LLM call
    assert "OTLP JSON lines" in result.provenance.notes[0]
    assert "120 spans in 60 traces" in result.provenance.notes[0]


def _otlp_document(rows: list[dict], indent: bool) -> bytes:
    """Every request of ``_otlp_lines`` in one ``ExportTraceServiceRequest`` document (as an
    OTLP/HTTP JSON body or a tracing UI's "download trace as OTLP JSON" holds them)."""
    requests = [orjson.loads(line) for line in _otlp_lines(rows).splitlines()]
    doc = {"resourceSpans": [rs for r in requests for rs in r["resourceSpans"]]}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)


@pytest.mark.parametrize(
    ("name", "fmt", "indent", "adapter"),
    [
        ("spans.json", "json", False, "otel"),
        ("spans.json", "json", True, "auto"),
        ("spans.jsonl", "jsonl", True, "otel"),  # an indented document under the JSONL suffix
        ("spans.jsonl", "jsonl", True, "auto"),
    ],
)
def test_one_otlp_json_document(make_request, exports, tmp_path, name, fmt, indent, adapter):
    """A single OTLP JSON document (not JSON lines) reads as the same spans as JSON lines; it
    was refused with "expected ... OTLP JSON lines with resourceSpans; found resourceSpans"."""
    from ragwarrant.adapters.registry import load_source
    from ragwarrant.digests import sha256_file

    rows = _rows(exports)
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(_otlp_lines(rows))
    expected = _load(make_request, lines, prices=PRICES)
    path = tmp_path / name
    path.write_bytes(_otlp_document(rows, indent))
    request = make_request(path, prices=PRICES, format=fmt, adapter=adapter, kind="telemetry")
    result = load_source(request.source, path, sha256_file(path), request.contract)
    for metric in ("cost_usd", "latency_ms", "api_calls"):
        assert _by_key(result, metric) == _by_key(expected, metric)
    assert result.provenance.notes[0].startswith("OTLP JSON document: 120 spans in 60 traces")


def test_tokens_on_request(make_request, exports) -> None:
    """input_tokens / output_tokens are offered when the contract's metrics name them."""
    result = _load(make_request, exports / TELEMETRY, metrics={"input_tokens": "input_tokens"})
    assert set(result.evidence["metric"].to_pylist()) == {"input_tokens"}
    assert _by_key(result, "input_tokens")[("baseline", "q001")] == 307.0


def test_several_requests_per_example(make_request, exports, tmp_path) -> None:
    """Two LLM calls in one trace: api_calls 2, costs summed, latency = first start to last end."""
    t = pq.read_table(exports / TELEMETRY)
    first = t.slice(0, 1).to_pylist()[0]
    extra = dict(
        first,
        span_id="ffffffffffffffff",
        start_time_unix_nano=first["end_time_unix_nano"],
        end_time_unix_nano=first["end_time_unix_nano"] + 100_000_000,
        cost_usd=1e-4,
    )
    p = tmp_path / "t.parquet"
    pq.write_table(pa.concat_tables([t, pa.Table.from_pylist([extra], schema=t.schema)]), p)
    result = _load(make_request, p)
    key = ("baseline", first["example_id"])
    assert _by_key(result, "api_calls")[key] == 2.0
    assert math.isclose(_by_key(result, "cost_usd")[key], first["cost_usd"] + 1e-4)
    assert math.isclose(_by_key(result, "latency_ms")[key], first["duration_ms"] + 100.0)


# --- broken variants ---------------------------------------------------------------------------


def test_empty_parquet(make_request, exports, tmp_path) -> None:
    """A Parquet file with the schema and no rows is evidence-empty."""
    p = tmp_path / "t.parquet"
    pq.write_table(pq.read_table(exports / TELEMETRY).slice(0, 0), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-empty"


def test_empty_jsonl(make_request, tmp_path) -> None:
    """An empty JSONL file is evidence-empty."""
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-empty"


def test_missing_example_column(make_request, exports, tmp_path) -> None:
    """Without the example id attribute the reduction cannot key anything."""
    p = tmp_path / "t.parquet"
    pq.write_table(pq.read_table(exports / TELEMETRY).drop_columns(["example_id"]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-missing-column" and err.value.column == "example_id"


def test_wrong_type_tokens(make_request, exports, tmp_path) -> None:
    """A token count that is not a number is located (OTLP attributes arrive as strings)."""
    rows = _rows(exports)
    p = tmp_path / "spans.jsonl"
    p.write_bytes(_otlp_lines(rows).replace(b'"intValue":"307"', b'"stringValue":"lots"', 1))
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, prices=PRICES)
    assert (
        err.value.code == "evidence-wrong-type" and err.value.column == "gen_ai.usage.input_tokens"
    )
    assert err.value.row == 2  # the LLM span of the first trace


def test_bad_time_in_otlp(make_request, exports, tmp_path) -> None:
    """A start time that is not an integer string names the line and the JSON pointer, which the
    publication-hygiene scan does not take for a host path."""
    p = tmp_path / "spans.jsonl"
    p.write_bytes(
        _otlp_lines(_rows(exports)).replace(b'"startTimeUnixNano":"', b'"startTimeUnixNano":"x', 1)
    )
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-wrong-type", 1)
    assert err.value.column.endswith(
        "spans.jsonl#/resourceSpans/0/scopeSpans/0/spans/0/startTimeUnixNano"
    )
    assert scan_outputs({"report.md": f"{err.value.message}\n".encode()}) == []


def test_trace_names_two_examples(make_request, exports, tmp_path) -> None:
    """Spans of one trace naming two examples are a conflict, not a guess."""
    t = pq.read_table(exports / TELEMETRY)
    trace = t["trace_id"].to_pylist()
    trace[1] = trace[0]
    p = tmp_path / "t.parquet"
    pq.write_table(t.set_column(0, "trace_id", pa.array(trace)), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-trace-conflict"


def test_policy_missing_from_file(make_request, exports, tmp_path) -> None:
    """A multi-policy file lacking a contract policy is evidence-policy-missing."""
    t = pq.read_table(exports / TELEMETRY)
    p = tmp_path / "t.parquet"
    pq.write_table(t.filter(pc.equal(t["policy_id"], "baseline")), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-policy-missing" and "candidate" in str(err.value)


def test_mixed_policies_when_one_declared(make_request, exports) -> None:
    """Declaring one policy for the two-policy file is caught."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / TELEMETRY, policy="baseline")
    assert err.value.code == "evidence-mixed-policies" and err.value.row == 31


def test_unknown_policy(make_request, exports, tmp_path) -> None:
    """A policy the contract does not declare is named."""
    t = pq.read_table(exports / TELEMETRY)
    pol = t["policy_id"].to_pylist()
    pol[5] = "shadow"
    p = tmp_path / "t.parquet"
    pq.write_table(
        t.set_column(t.schema.get_field_index("policy_id"), "policy_id", pa.array(pol)), p
    )
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-policy-unknown" and "shadow" in str(err.value)


def test_csv_spans(make_request, exports, tmp_path) -> None:
    """The same spans as CSV (every cell text, times as digit strings) reduce identically."""
    import pyarrow.csv as pacsv

    t = pq.read_table(exports / TELEMETRY).drop_columns(["gen_ai.response.finish_reasons"])
    p = tmp_path / "t.csv"
    pacsv.write_csv(t, p)
    a = _load(make_request, p)
    b = _load(make_request, exports / TELEMETRY)
    for m in ("cost_usd", "latency_ms", "api_calls"):
        assert _by_key(a, m) == pytest.approx(_by_key(b, m))


def test_error_rows_count_from_the_start_of_the_file(
    make_request, exports, tmp_path, monkeypatch
) -> None:
    """A bad cell in a later read batch is reported by its row in the file, not in the batch."""
    monkeypatch.setattr(otel, "_BATCH_ROWS", 16)
    t = pq.read_table(exports / TELEMETRY)
    tokens = [str(x) for x in t["gen_ai.usage.output_tokens"].to_pylist()]
    tokens[39] = "many"
    idx = t.schema.get_field_index("gen_ai.usage.output_tokens")
    p = tmp_path / "t.parquet"
    pq.write_table(t.set_column(idx, "gen_ai.usage.output_tokens", pa.array(tokens)), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-wrong-type", 40)
    assert "row 40:" in str(err.value)


def test_otlp_lines_without_spans(make_request, tmp_path) -> None:
    """OTLP JSON lines that hold no span are refused as empty."""
    p = tmp_path / "spans.jsonl"
    p.write_text('{"resourceSpans": []}\n', encoding="utf-8")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, str(err.value)) == ("evidence-empty", "spans.jsonl has no spans")


# --- a span delivered twice (third s29 fresh-user trial) ----------------------------------------


def test_repeated_span_rows_are_refused(make_request, exports, tmp_path) -> None:
    """The baseline's span rows appended again (same trace and span ids) would double its summed
    cost (REJECT turned PROMOTE): refused, naming the first and the repeating span row."""
    t = pq.read_table(exports / TELEMETRY)
    base = t.filter(pc.equal(t["policy_id"], "baseline"))
    p = tmp_path / "t.parquet"
    pq.write_table(pa.concat_tables([t, base]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    first = t["policy_id"].to_pylist().index("baseline") + 1
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-duplicate-request",
        t.num_rows + 1,
        "span_id",
    )
    assert f"span rows {first} and {t.num_rows + 1}" in str(err.value)
    assert base["span_id"][0].as_py() not in str(err.value)


def test_same_span_id_in_other_traces_is_not_a_repeat(make_request, exports, tmp_path) -> None:
    """Span ids repeat only within a trace: the same span id (hex or not) in two traces is two
    spans."""
    t = pq.read_table(exports / TELEMETRY)
    n = t.num_rows
    for ids in (["00000000000000aa"] * n, ["span-1"] * n):
        p = tmp_path / "t.parquet"
        pq.write_table(t.set_column(t.schema.get_field_index("span_id"), "span_id", [ids]), p)
        assert len(_by_key(_load(make_request, p), "cost_usd")) == 60


def test_repeated_non_hex_span_id_is_refused(make_request, exports, tmp_path) -> None:
    """A span id that is not 16 hex digits is compared as text."""
    t = pq.read_table(exports / TELEMETRY)
    ids = [f"span-{i}" for i in range(t.num_rows)]
    t = t.set_column(t.schema.get_field_index("span_id"), "span_id", [ids])
    p = tmp_path / "t.parquet"
    pq.write_table(pa.concat_tables([t, t.slice(5, 1)]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", t.num_rows + 1)
    assert "span rows 6 and" in str(err.value)


def test_otlp_line_delivered_twice_is_refused(make_request, exports, tmp_path) -> None:
    """An OTLP JSON line written twice (a Collector's at-least-once delivery) is refused."""
    lines = _otlp_lines(_rows(exports)).splitlines()
    p = tmp_path / "spans.jsonl"
    p.write_bytes(b"\n".join([*lines, lines[0]]) + b"\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, prices=PRICES)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", 2 * len(lines) + 1)
    assert "span rows 1 and" in str(err.value)


def _with_span_ids(t: pa.Table, ids: list) -> pa.Table:
    return t.set_column(
        t.schema.get_field_index("span_id"), "span_id", [pa.array(ids, pa.string())]
    )


@pytest.mark.parametrize("bad", [None, "", "  ", "0000000000000000", "0000", "\u200b"])
def test_span_without_a_valid_id_is_refused(make_request, exports, tmp_path, bad) -> None:
    """Every OpenTelemetry span has a span id, never all zeros (W3C Trace Context): a missing,
    empty or all-zero one is refused at its row (s29 trial: the baseline's LLM spans re-sent
    with a null span id were never compared, summed, and REJECT turned PROMOTE)."""
    t = pq.read_table(exports / TELEMETRY)
    ids = t["span_id"].to_pylist()
    ids[4] = bad
    p = tmp_path / "t.parquet"
    pq.write_table(_with_span_ids(t, ids), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row, err.value.column) == ("evidence-null-key", 5, "span_id")
    assert ids[3] not in str(err.value) and ids[5] not in str(err.value)


def test_otlp_spans_re_sent_without_span_id_are_refused(make_request, exports, tmp_path) -> None:
    """OTLP spans without a spanId (the baseline's LLM spans re-sent so) are refused."""
    first = orjson.loads(_otlp_lines(_rows(exports)[:1]))
    again = orjson.loads(_otlp_lines(_rows(exports)[:1]))
    llm = again["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    del llm["spanId"]
    again["resourceSpans"][0]["scopeSpans"][0]["spans"] = [llm] * 3
    p = tmp_path / "spans.jsonl"
    p.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(again) + b"\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, prices=PRICES)
    assert (err.value.code, err.value.row) == ("evidence-null-key", 3)


def test_file_without_span_id_column_compares_whole_rows(make_request, exports, tmp_path) -> None:
    """Without a span id column, a span row identical in every column to an earlier one is the
    same span delivered twice (s29 trial: such copies were summed); distinct rows still load."""
    t = pq.read_table(exports / TELEMETRY).drop_columns(["span_id"])
    p = tmp_path / "t.parquet"
    pq.write_table(t, p)
    assert len(_by_key(_load(make_request, p), "cost_usd")) == 60
    base = t.filter(pc.equal(t["policy_id"], "baseline"))
    pq.write_table(pa.concat_tables([t, base]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    first = t["policy_id"].to_pylist().index("baseline") + 1
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", t.num_rows + 1)
    assert f"span rows {first} and {t.num_rows + 1}" in str(err.value)
    assert "every column" in str(err.value)


SPELLINGS = [
    str.upper,
    lambda s: f" {s}",
    lambda s: f"{s}\t",
    lambda s: f"\u00a0{s}",
    lambda s: f"\u2002{s}",
    lambda s: f"\u200b{s}\ufeff",
    lambda s: s[:8].upper() + s[8:] + " ",
]


@pytest.mark.parametrize("spell", SPELLINGS)
def test_span_id_spelled_differently_is_a_repeat(make_request, exports, tmp_path, spell) -> None:
    """Span ids are lower-case hex (W3C Trace Context): the baseline's spans appended with their
    ids in capitals, padded with white space or invisible characters are the same spans (s29
    trial: such copies were summed and REJECT turned PROMOTE)."""
    t = pq.read_table(exports / TELEMETRY)
    t = _with_span_ids(t, t["span_id"].to_pylist())
    base = t.filter(pc.equal(t["policy_id"], "baseline"))
    base = _with_span_ids(base, [spell(s) for s in base["span_id"].to_pylist()])
    p = tmp_path / "t.parquet"
    pq.write_table(pa.concat_tables([t, base]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", t.num_rows + 1)


def test_otlp_span_id_in_capitals_is_a_repeat(make_request, exports, tmp_path) -> None:
    """An OTLP LLM span re-delivered with its span id in capitals is refused."""
    lines = _otlp_lines(_rows(exports)).splitlines()
    again = orjson.loads(lines[0])
    scope = again["resourceSpans"][0]["scopeSpans"][0]
    scope["spans"] = [dict(scope["spans"][1], spanId=scope["spans"][1]["spanId"].upper())]
    assert scope["spans"][0]["spanId"] != scope["spans"][0]["spanId"].lower()
    p = tmp_path / "spans.jsonl"
    p.write_bytes(b"\n".join([*lines, orjson.dumps(again)]) + b"\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, prices=PRICES)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", 2 * len(lines) + 1)


def _uuid(s: str) -> str:
    return f"{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:]}"


#: A 128-bit trace id in the other forms it is written in (s29 trial C: re-sent spans whose trace
#: id was a UUID or 0x form counted as new traces and their cost was summed).
TRACE_FORMS = [_uuid, lambda s: "{" + _uuid(s).upper() + "}", lambda s: "urn:uuid:" + _uuid(s)]
TRACE_FORMS += [lambda s: "0x" + s]


@pytest.mark.parametrize("spell", SPELLINGS[:4] + TRACE_FORMS)
def test_trace_id_spelled_differently_is_one_trace(make_request, exports, tmp_path, spell) -> None:
    """Trace ids are folded as span ids are: the baseline's spans appended with their trace ids
    in capitals or padded are the same spans of the same traces, refused (s29 trial: Phoenix
    spans re-sent with respelled trace ids were other traces)."""
    t = pq.read_table(exports / TELEMETRY)
    t = t.cast(pa.schema([f.with_nullable(True) for f in t.schema]))
    base = t.filter(pc.equal(t["policy_id"], "baseline"))
    i = t.schema.get_field_index("trace_id")
    base = base.set_column(
        i, "trace_id", pa.array([spell(s) for s in base["trace_id"].to_pylist()])
    )
    p = tmp_path / "t.parquet"
    pq.write_table(pa.concat_tables([t, base]), p)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-request", t.num_rows + 1)
