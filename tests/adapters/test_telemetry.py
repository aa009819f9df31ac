"""Telemetry semantics at the boundary: what a cost, latency or token count can physically be."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import load_source
from ragwarrant.errors import EvidenceError

TELEMETRY = "otel/otel_genai_telemetry.parquet"
GENERIC_REDUCE = {
    "cost_usd": {"how": "sum", "column": "cost_usd"},
    "latency_ms": {"how": "max", "column": "latency_ms"},
}


def _read(request):
    return load_source(request.source, request.path, request.sha256, request.contract)


def _error(request) -> EvidenceError:
    with pytest.raises(EvidenceError) as err:
        _read(request)
    return err.value


def _spans(exports: Path, tmp_path: Path, edit) -> Path:
    """The real telemetry Parquet with ``edit(rows)`` applied to its rows (dicts)."""
    table = pq.read_table(exports / TELEMETRY)
    rows = table.to_pylist()
    edit(rows)
    path = tmp_path / "spans.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return path


def _otel(make_request, path: Path, **fields):
    return make_request(path, adapter="otel", kind="telemetry", **fields)


def _first_of(rows: list[dict], policy: str) -> dict:
    return next(r for r in rows if r["policy_id"] == policy)


# --- negative and non-finite amounts ------------------------------------------------------------


def test_negative_span_cost_names_row_column_and_arm(make_request, exports, tmp_path) -> None:
    """One negative span cost BLOCKs naming its row, the column and the policy (arm)."""

    def edit(rows):
        _first_of(rows, "candidate")["cost_usd"] = -0.00005

    path = _spans(exports, tmp_path, edit)
    row = 1 + next(i for i, r in enumerate(pq.read_table(path).to_pylist()) if r["cost_usd"] < 0)
    err = _error(_otel(make_request, path))
    assert (err.code, err.row, err.column) == ("evidence-negative-value", row, "cost_usd")
    assert "(policy 'candidate')" in err.message


def test_infinite_token_count_blocks(make_request, exports, tmp_path) -> None:
    """An infinite token count is refused where it is, not summed into an example."""
    table = pq.read_table(exports / TELEMETRY)
    col = table.column("gen_ai.usage.output_tokens").cast(pa.float64()).to_pylist()
    col[7] = float("inf")
    path = tmp_path / "spans.parquet"
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("gen_ai.usage.output_tokens"),
            "gen_ai.usage.output_tokens",
            pa.array(col, pa.float64()),
        ),
        path,
    )
    err = _error(_otel(make_request, path))
    assert (err.code, err.row, err.column) == (
        "evidence-non-finite",
        8,
        "gen_ai.usage.output_tokens",
    )


def test_generic_telemetry_negative_latency(make_request, tmp_path) -> None:
    """A negative per-request latency is refused before it is summed away."""
    path = tmp_path / "tel.csv"
    path.write_text(
        "example_id,policy_id,cost_usd,latency_ms\n"
        "q1,baseline,0.001,120\nq1,candidate,0.002,-5\nq2,baseline,0.001,130\n",
        encoding="utf-8",
    )
    err = _error(
        make_request(
            path,
            kind="telemetry",
            columns={"example_id": "example_id", "policy_id": "policy_id"},
            reduce=GENERIC_REDUCE,
        )
    )
    assert (err.code, err.row, err.column) == ("evidence-negative-value", 2, "latency_ms")
    assert "'candidate'" in err.message


def test_generic_telemetry_negative_request_hidden_by_max(make_request, tmp_path) -> None:
    """A negative request is refused even when its example's reduction (max) would hide it."""
    path = tmp_path / "tel.csv"
    path.write_text(
        "example_id,policy_id,cost_usd,latency_ms\n"
        "q1,baseline,0.001,120\nq1,candidate,0.002,40\nq1,candidate,0.001,-5\n",
        encoding="utf-8",
    )
    err = _error(
        make_request(
            path,
            kind="telemetry",
            columns={"example_id": "example_id", "policy_id": "policy_id"},
            reduce=GENERIC_REDUCE,
        )
    )
    assert (err.code, err.row, err.column) == ("evidence-negative-value", 3, "latency_ms")


# --- uninstrumented arms ------------------------------------------------------------------------


def test_arm_with_all_zero_cost_blocks(make_request, exports, tmp_path) -> None:
    """An arm whose every cost is 0 (an uninstrumented provider) BLOCKs, naming arm and column."""

    def edit(rows):
        for r in rows:
            if r["policy_id"] == "candidate":
                r["cost_usd"] = 0.0

    err = _error(_otel(make_request, _spans(exports, tmp_path, edit)))
    assert (err.code, err.column) == ("evidence-uninstrumented", "cost_usd")
    assert "arm 'candidate'" in err.message and "all 0" in err.message


def test_arm_with_sub_millisecond_latency_blocks(make_request, tmp_path) -> None:
    """Latencies all under 1 ms while outputs exist are not measurements of an LLM call."""
    path = tmp_path / "tel.csv"
    lines = ["example_id,policy_id,cost_usd,latency_ms"]
    for i in range(5):
        lines += [f"q{i},baseline,0.001,{400 + i}", f"q{i},candidate,0.001,0.0{i + 1}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = _error(
        make_request(
            path,
            kind="telemetry",
            columns={"example_id": "example_id", "policy_id": "policy_id"},
            reduce=GENERIC_REDUCE,
        )
    )
    assert (err.code, err.column) == ("evidence-uninstrumented", "latency_ms")
    assert "arm 'candidate'" in err.message and "under 1 ms" in err.message


def test_absent_token_usage_is_unmeasured_not_zero(make_request, exports, tmp_path) -> None:
    """An LLM span without token usage leaves its example's tokens missing, never 0."""

    def edit(rows):
        _first_of(rows, "baseline")["gen_ai.usage.input_tokens"] = None

    path = _spans(exports, tmp_path, edit)
    result = _read(
        _otel(make_request, path, metrics={"input_tokens": "input_tokens", "cost_usd": "cost_usd"})
    )
    e = result.evidence.filter(pc.equal(result.evidence["metric"], "input_tokens"))
    missing = e.filter(pc.is_null(e["value"]))
    assert missing.num_rows == 1
    assert missing["missing_reason"].to_pylist() == ["absent"]
    assert 0.0 not in e["value"].to_pylist()


def test_rolled_up_tokens_on_chain_spans_are_not_counted_twice(make_request, tmp_path) -> None:
    """A CHAIN span repeating its LLM child's token counts adds nothing to the example."""
    t0 = 1_767_261_600_000_000_000
    spans = []
    for i, policy in enumerate(("baseline", "candidate")):
        for q in range(3):
            trace = f"t{i}{q}"
            base = {"context.trace_id": trace, "question_id": f"q{q}", "policy_id": policy}
            spans.append(
                {
                    **base,
                    "openinference.span.kind": "CHAIN",
                    "llm.token_count.prompt": 300 + q,
                    "llm.token_count.completion": 20,
                    "llm.cost.total": None,
                    "start_time_unix_nano": t0,
                    "end_time_unix_nano": t0 + 500_000_000,
                }
            )
            spans.append(
                {
                    **base,
                    "openinference.span.kind": "LLM",
                    "llm.token_count.prompt": 300 + q,
                    "llm.token_count.completion": 20,
                    "llm.cost.total": 0.0001,
                    "start_time_unix_nano": t0 + 10_000_000,
                    "end_time_unix_nano": t0 + 490_000_000,
                }
            )
    path = tmp_path / "spans.parquet"
    pq.write_table(pa.Table.from_pylist(spans), path)
    result = _read(
        _otel(
            make_request,
            path,
            columns={"example_id": "question_id", "policy_id": "policy_id"},
            metrics={"input_tokens": "input_tokens", "api_calls": "api_calls"},
        )
    )
    e = result.evidence
    tokens = e.filter(pc.equal(e["metric"], "input_tokens"))
    assert sorted(tokens["value"].to_pylist()) == [300.0, 300.0, 301.0, 301.0, 302.0, 302.0]


# --- time units and order -----------------------------------------------------------------------


def test_millisecond_times_mixed_into_nanoseconds(make_request, exports, tmp_path) -> None:
    """A span time in milliseconds inside a nanosecond column is named, with its unit."""

    def edit(rows):
        r = rows[4]
        r["start_time_unix_nano"] //= 1_000_000
        r["end_time_unix_nano"] //= 1_000_000

    err = _error(_otel(make_request, _spans(exports, tmp_path, edit)))
    assert (err.code, err.row, err.column) == ("evidence-time-unit", 5, "start_time_unix_nano")
    assert "looks like milliseconds" in err.message


def test_end_time_zero_is_an_unset_time(make_request, exports, tmp_path) -> None:
    """end_time_unix_nano = 0 is refused as an unset time (never a negative latency)."""

    def edit(rows):
        rows[2]["end_time_unix_nano"] = 0

    err = _error(_otel(make_request, _spans(exports, tmp_path, edit)))
    assert (err.code, err.row, err.column) == ("evidence-time-unit", 3, "end_time_unix_nano")
    assert "0, an unset time" in err.message


def test_span_ending_before_it_starts(make_request, exports, tmp_path) -> None:
    """A span whose end precedes its start BLOCKs with the size of the gap."""

    def edit(rows):
        r = rows[9]
        r["start_time_unix_nano"], r["end_time_unix_nano"] = (
            r["end_time_unix_nano"],
            r["start_time_unix_nano"],
        )

    err = _error(_otel(make_request, _spans(exports, tmp_path, edit)))
    assert (err.code, err.row, err.column) == ("evidence-time-order", 10, "end_time_unix_nano")


# --- OTLP JSON ----------------------------------------------------------------------------------


def _otlp(tmp_path: Path, int_value: object) -> Path:
    def span(n: int, policy: str) -> dict:
        return {
            "traceId": f"{n:032x}",
            "spanId": f"{n + 1:016x}",
            "name": "chat",
            "startTimeUnixNano": str(1_767_261_600_000_000_000 + n),
            "endTimeUnixNano": str(1_767_261_600_400_000_000 + n),
            "attributes": [
                {"key": "example_id", "value": {"stringValue": f"q{n % 3}"}},
                {"key": "policy_id", "value": {"stringValue": policy}},
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "cost_usd", "value": {"doubleValue": 0.0001}},
                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": int_value}},
            ],
        }

    spans = [span(n, "baseline") for n in range(3)] + [span(n, "candidate") for n in range(3, 6)]
    req = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(req) + b"\n")
    return path


def test_otlp_int_value_with_a_decimal_point(make_request, tmp_path) -> None:
    """intValue "291.0" is located by line and JSON pointer, not a crash."""
    err = _error(_otel(make_request, _otlp(tmp_path, "291.0"), columns={"policy_id": "policy_id"}))
    assert (err.code, err.row) == ("evidence-wrong-type", 1)
    assert err.column == "traces.jsonl#/resourceSpans/0/scopeSpans/0/spans/0/attributes/4/value"
    assert "'gen_ai.usage.input_tokens'" in err.message


def test_otlp_int_value_as_digits_is_read(make_request, tmp_path) -> None:
    """intValue "291" (OTLP's int64-as-string) is read."""
    result = _read(
        _otel(
            make_request,
            _otlp(tmp_path, "291"),
            columns={"policy_id": "policy_id"},
            metrics={"input_tokens": "input_tokens"},
        )
    )
    assert set(result.evidence["value"].to_pylist()) == {291.0}
