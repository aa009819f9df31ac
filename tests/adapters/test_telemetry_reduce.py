"""The streamed telemetry reduction: key codes, per-trace totals, read-ahead, batch boundaries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import otel
from ragwarrant.adapters._spans import SpanFields
from ragwarrant.adapters._telemetry import KeyCodes, TraceTotals
from ragwarrant.adapters.otel import reduce_spans
from ragwarrant.errors import EvidenceError


def test_key_codes_are_stable_across_dictionaries() -> None:
    """A key keeps its code whichever batch (dictionary or plain strings) it arrives in."""
    codes = KeyCodes()
    first = codes.encode(pa.array(["b", "a", None, "b"]).dictionary_encode())
    second = codes.encode(pa.array(["c", "a", "b"]))
    assert first.to_pylist() == [0, 1, None, 0]
    assert second.to_pylist() == [2, 1, 0]
    assert codes.decode(pa.concat_arrays([first, second])).to_pylist() == [
        "b",
        "a",
        None,
        "b",
        "c",
        "a",
        "b",
    ]


def _arrow_partials(batches: list[pa.Table]) -> dict[int, dict[str, float]]:
    """Per trace: Arrow's group_by per batch, partial sums added in batch order."""
    out: dict[int, dict[str, float]] = {}
    for t in batches:
        g = t.group_by("trace", use_threads=False).aggregate(
            [("cost", "sum"), ("llm", "sum"), ("start", "min"), ("end", "max")]
        )
        for row in g.to_pylist():
            acc = out.setdefault(row["trace"], {"cost": 0.0, "llm": 0, "start": None, "end": None})
            acc["cost"] += row["cost_sum"]
            acc["llm"] += row["llm_sum"]
            for key, pick in (("start", min), ("end", max)):
                seen = [v for v in (acc[key], row[f"{key}_{pick.__name__}"]) if v is not None]
                acc[key] = pick(seen) if seen else None
    return out


def test_trace_totals_match_arrow_group_by_bit_for_bit() -> None:
    """Sums equal Arrow's per-batch group_by partials added in order, exactly; extremes skip
    nulls and stay null for a trace that has none."""
    rng = np.random.default_rng(3)
    batches = []
    for size in (500, 1, 777):
        start = rng.integers(10**18, 2 * 10**18, size)
        null_start = rng.random(size) < 0.2
        trace = rng.integers(0, 40, size)
        trace[trace == 39] = 38  # trace 39 never seen; 37 only with null times below
        null_start |= trace == 37
        batches.append(
            pa.table(
                {
                    "trace": pa.array(trace, pa.int64()),
                    "cost": pa.array(rng.random(size) * 10.0 ** rng.integers(-9, 3, size)),
                    "llm": pa.array(rng.integers(0, 2, size), pa.int64()),
                    "start": pa.array(start, mask=null_start),
                    "end": pa.array(start + 5, mask=null_start),
                }
            )
        )
    totals = TraceTotals(("cost", "llm"), ("start",), ("end",))
    for t in batches:
        totals.add(t.column("trace").to_numpy(), t)
    got = totals.table(39).to_pylist()
    expected = _arrow_partials(batches)
    for trace, row in expected.items():
        assert got[trace] == row
        assert isinstance(got[trace]["llm"], int)
    assert got[37]["start"] is None and got[37]["end"] is None


FIELDS = SpanFields(example=("example_id",), policy=("policy_id",))


def _spans(trace: list[str], example: list[str | None], cost: list[float]) -> pa.Table:
    n = len(trace)
    return pa.table(
        {
            "trace_id": trace,
            "example_id": pa.array(example, pa.string()),
            "policy_id": ["p"] * n,
            "gen_ai.operation.name": ["chat"] * n,
            "cost_usd": cost,
            "start_time_unix_nano": [1_767_261_600_000_000_000 + i for i in range(n)],
            "end_time_unix_nano": [1_767_261_600_500_000_000 + i for i in range(n)],
        }
    )


def test_a_trace_split_over_batches_is_one_trace() -> None:
    """Spans of one trace in several batches (its example named in only one) add up."""
    batches = [
        _spans(["t1", "t2"], [None, "e2"], [0.25, 1.0]),
        _spans(["t1", "t1"], ["e1", None], [0.5, 0.125]),
    ]
    red = reduce_spans(iter(batches), FIELDS, {}, "spans.parquet")
    examples, costs = red.table["example"].to_pylist(), red.table["cost_usd"].to_pylist()
    by_example = dict(zip(examples, costs, strict=True))
    assert by_example == {"e1": 0.875, "e2": 1.0}
    assert red.table["example"].to_pylist() == ["e1", "e2"]  # first span row order
    assert (red.spans, red.traces) == (4, 2)


def test_a_trace_naming_two_examples_across_batches_is_a_conflict() -> None:
    """Two examples on one trace are found even when they sit in different batches."""
    batches = [_spans(["t1"], ["e9"], [0.1]), _spans(["t2", "t1"], ["e2", "e1"], [0.1, 0.1])]
    with pytest.raises(EvidenceError) as err:
        reduce_spans(iter(batches), FIELDS, {}, "spans.parquet")
    assert err.value.code == "evidence-trace-conflict"
    assert "'e1' and 'e9'" in str(err.value) and err.value.row == 1


def test_spans_without_a_trace_column_group_by_policy_and_example() -> None:
    """Without a trace id, each (policy, example) is one trace, across batches."""
    batches = [
        _spans(["x"], ["e1"], [0.5]).drop_columns(["trace_id"]),
        _spans(["x", "x"], ["e1", "e2"], [0.25, 2.0]).drop_columns(["trace_id"]),
    ]
    red = reduce_spans(iter(batches), FIELDS, {}, "spans.parquet")
    assert red.traces == 2
    assert pc.sum(red.table["api_calls"]).as_py() == 3


def test_dictionary_values_no_row_uses_get_no_code() -> None:
    """A dictionary holding keys no row uses (as Parquet keeps them) adds no phantom key."""
    dictionary = pa.array(["x", "y", "z"])
    codes = KeyCodes()
    first = codes.encode(pa.DictionaryArray.from_arrays(pa.array([1, 1], pa.int32()), dictionary))
    assert (first.to_pylist(), len(codes)) == ([0, 0], 1)
    later = codes.encode(pa.DictionaryArray.from_arrays(pa.array([2, 1], pa.int32()), dictionary))
    assert (later.to_pylist(), len(codes)) == ([1, 0], 2)


def test_unused_trace_ids_in_the_dictionary_are_not_traces() -> None:
    """Trace ids only in the column's dictionary are not traces without an example."""
    t = _spans(["t1", "t2"], ["e1", "e2"], [0.5, 1.0])
    trace = pa.DictionaryArray.from_arrays(
        pa.array([0, 2], pa.int32()), pa.array(["t1", "u", "t2"])
    )
    red = reduce_spans(iter([t.set_column(0, "trace_id", trace)]), FIELDS, {}, "spans.parquet")
    assert red.traces == 2


# --- the adapter on a generated multi-batch file, against a whole-table group_by --------------

_METRICS = ("cost_usd", "latency_ms", "api_calls", "input_tokens", "output_tokens")
_T0 = 1_767_261_600_000_000_000


def _generated_spans(path: Path, rows: int, seed: int = 11) -> pa.Table:
    """Write ``rows`` spans over 120 examples × 2 policies × 2 traces each, dictionary-encoded
    keys, ~3 % ERROR status and non-LLM spans, in row groups of 700 rows; return the table."""
    rng = np.random.default_rng(seed)
    trace = rng.integers(0, 480, rows)
    policy = np.array(["baseline", "candidate"])[(trace // 2) % 2]
    example = np.array([f"ex{i:03d}" for i in range(120)])[trace // 4]
    start = _T0 + trace * 10**10 + rng.integers(0, 5 * 10**9, rows)
    table = pa.table(
        {
            "trace_id": pa.array([f"{t:032x}" for t in trace]).dictionary_encode(),
            "example_id": pa.array(example).dictionary_encode(),
            "policy_id": pa.array(policy).dictionary_encode(),
            "gen_ai.operation.name": pa.array(
                np.where(rng.random(rows) < 0.03, "embeddings", "chat")
            ).dictionary_encode(),
            "gen_ai.usage.input_tokens": pa.array(rng.integers(100, 4000, rows)),
            "gen_ai.usage.output_tokens": pa.array(rng.integers(5, 500, rows)),
            "start_time_unix_nano": pa.array(start),
            "end_time_unix_nano": pa.array(start + rng.integers(10**8, 2 * 10**9, rows)),
            "status_code": pa.array(
                np.where(rng.random(rows) < 0.03, "ERROR", "OK")
            ).dictionary_encode(),
            "cost_usd": pa.array(rng.random(rows) * 10.0 ** rng.integers(-6, -2, rows)),
        }
    )
    pq.write_table(table, path, row_group_size=700)
    return table


def _whole_table_reference(table: pa.Table) -> dict[str, dict[tuple[str, str], float]]:
    """Per (policy, example), straight from Arrow: one group_by per trace, one per example."""
    table = table.append_column(
        "llm", pc.equal(table["gen_ai.operation.name"].cast(pa.string()), "chat")
    )
    on_llm = {
        c: pc.if_else(table["llm"], table[c], 0)
        for c in ("cost_usd", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
    }
    for name, col in on_llm.items():
        table = table.set_column(table.schema.get_field_index(name), name, col)
    keys = ["policy_id", "example_id", "trace_id"]
    traces = table.group_by(keys, use_threads=False).aggregate(
        [
            ("cost_usd", "sum"),
            ("gen_ai.usage.input_tokens", "sum"),
            ("gen_ai.usage.output_tokens", "sum"),
            ("llm", "sum"),
            ("start_time_unix_nano", "min"),
            ("end_time_unix_nano", "max"),
        ]
    )
    dur = pc.subtract(traces["end_time_unix_nano_max"], traces["start_time_unix_nano_min"])
    traces = traces.append_column("dur_ms", pc.divide(pc.cast(dur, pa.float64()), 1e6))
    per_example = traces.group_by(keys[:2], use_threads=False).aggregate(
        [
            ("cost_usd_sum", "sum"),
            ("dur_ms", "sum"),
            ("llm_sum", "sum"),
            ("gen_ai.usage.input_tokens_sum", "sum"),
            ("gen_ai.usage.output_tokens_sum", "sum"),
        ]
    )
    columns = dict(
        zip(
            _METRICS,
            (
                "cost_usd_sum_sum",
                "dur_ms_sum",
                "llm_sum_sum",
                "gen_ai.usage.input_tokens_sum_sum",
                "gen_ai.usage.output_tokens_sum_sum",
            ),
            strict=True,
        )
    )
    pairs = list(
        zip(
            per_example["policy_id"].to_pylist(),
            per_example["example_id"].to_pylist(),
            strict=True,
        )
    )
    return {
        metric: dict(zip(pairs, per_example[col].to_pylist(), strict=True))
        for metric, col in columns.items()
    }


def test_otel_reduction_equals_a_whole_table_group_by(make_request, tmp_path, monkeypatch) -> None:
    """Streamed in 512-row batches (traces split over batches and row groups), the adapter's
    per-example metrics equal Arrow's whole-table group_by: counts and tokens exactly, cost and
    latency to 1e-12 (float sums associate per batch)."""
    monkeypatch.setattr(otel, "_BATCH_ROWS", 512)
    path = tmp_path / "spans.parquet"
    expected = _whole_table_reference(_generated_spans(path, 5000))
    request = make_request(path, adapter="otel", kind="telemetry", metrics={m: m for m in _METRICS})
    result = otel.load(request)
    e = result.evidence
    for metric in _METRICS:
        rows = e.filter(pc.equal(e["metric"], metric))
        got = dict(
            zip(
                zip(rows["policy_id"].to_pylist(), rows["example_id"].to_pylist(), strict=True),
                rows["value"].to_pylist(),
                strict=True,
            )
        )
        assert got.keys() == expected[metric].keys()
        for key, value in expected[metric].items():
            if metric in ("cost_usd", "latency_ms"):
                assert got[key] == pytest.approx(value, rel=1e-12), (metric, key)
            else:
                assert got[key] == value, (metric, key)
    assert result.provenance.rows_read == 5000


def test_an_error_in_a_later_batch_names_its_file_row(make_request, tmp_path, monkeypatch) -> None:
    """A negative cost in the fifth 512-row batch is reported at its row of the file (the
    batches are counted in order)."""
    monkeypatch.setattr(otel, "_BATCH_ROWS", 512)
    path = tmp_path / "spans.parquet"
    table = _generated_spans(path, 3000)
    bad_row = 4 * 512 + 37  # 0-based
    cost = table["cost_usd"].to_numpy().copy()
    cost[bad_row] = -0.5
    pq.write_table(
        table.set_column(table.schema.get_field_index("cost_usd"), "cost_usd", pa.array(cost)),
        path,
        row_group_size=700,
    )
    with pytest.raises(EvidenceError) as err:
        otel.load(make_request(path, adapter="otel", kind="telemetry"))
    assert (err.value.code, err.value.row) == ("evidence-negative-value", bad_row + 1)


def test_token_sums_only_when_a_token_metric_is_wanted(tmp_path) -> None:
    """Without a token metric wanted, the token sums are null (not 0) and the rest unchanged."""
    path = tmp_path / "spans.parquet"
    _generated_spans(path, 2000)
    fields = SpanFields(example=("example_id",), policy=("policy_id",))

    def reduce(metrics: set[str]) -> pa.Table:
        batches = pq.ParquetFile(path).iter_batches(batch_size=512)
        return reduce_spans(batches, fields, {}, "spans.parquet", metrics=metrics).table

    every = reduce(set(otel.ALL_METRICS))
    some = reduce({"cost_usd", "latency_ms"})
    assert some["input_tokens"].null_count == some.num_rows == every.num_rows
    assert some["output_tokens"].null_count == some.num_rows
    assert every["input_tokens"].null_count == 0 and pc.min(every["input_tokens"]).as_py() > 0
    kept = [c for c in every.column_names if c not in ("input_tokens", "output_tokens")]
    assert some.select(kept).equals(every.select(kept))
