"""OpenTelemetry GenAI / OpenInference spans, reduced to per-example operational metrics.

Input: one row per span, as Parquet, CSV or JSONL with flattened attribute names (with or
without an ``attributes.`` prefix), or OTLP JSON lines (one ``ExportTraceServiceRequest`` per
line, ``resourceSpans[].scopeSpans[].spans[]``, as the OpenTelemetry Collector's file exporter
writes; 64-bit integers such as ``intValue`` and ``startTimeUnixNano`` arrive as strings), or one
such request as a JSON document (``format: json``, or indented under ``format: jsonl``: an OTLP/HTTP
JSON body, a trace downloaded from a tracing UI).

Attributes read (first present wins; each also with an ``attributes.`` prefix):

- trace: ``trace_id``, ``context.trace_id``, ``traceId``;
- input tokens: ``gen_ai.usage.input_tokens``, ``gen_ai.usage.prompt_tokens``,
  ``llm.token_count.prompt``;
- output tokens: ``gen_ai.usage.output_tokens``, ``gen_ai.usage.completion_tokens``,
  ``llm.token_count.completion``;
- cost (USD): ``cost_usd``, ``llm.cost.total``, ``gen_ai.usage.cost``;
- model: ``gen_ai.request.model``, ``gen_ai.response.model``, ``llm.model_name``;
- start / end: ``start_time_unix_nano`` / ``end_time_unix_nano`` (ns), or ``start_time`` /
  ``end_time`` (timestamps or ISO 8601);
- example, policy: ``columns.example_id`` / ``columns.policy_id`` (on any span of the trace).

A span is an LLM span (an API call) when ``gen_ai.operation.name`` is ``chat``,
``text_completion`` or ``generate_content``, or its OpenInference span kind is ``LLM``.

Reduction (streaming; memory grows with the distinct traces, plus 8 bytes per span for the
repeated-span check of ``_requests.SpanIdentity``, plus each column's distinct values when the
file has no span id column and spans are compared by whole rows):
per trace, the example and policy (from whichever span carries them; two different ones are an
error), the LLM-span count, token and cost sums over LLM spans, and ``min(start)``/``max(end)``;
then per (policy, example): ``api_calls`` = LLM spans, ``cost_usd`` = summed cost,
``latency_ms`` = sum over the example's traces of ``max(end) − min(start)`` (the root span's
duration when there is one), ``input_tokens``/``output_tokens`` on request via ``metrics``.
Without a trace column, each (policy, example) is one trace.

Cost: the span's own cost when it has one; otherwise modeled as
``input_tokens × input_usd_per_1m_tokens / 1e6 + output_tokens × output_usd_per_1m_tokens / 1e6``
with the contract's ``prices[model]``, and the provenance says so. An LLM span with neither makes
its example's cost missing (reason ``absent``), counted. Pairing method: ``id-column``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, FileShape, ToolFormat
from ragwarrant.adapters._columns import select_metrics
from ragwarrant.adapters._common import (
    RowKeys,
    resolve_policies,
    tool_result,
    tool_tag,
)
from ragwarrant.adapters._integrity import guarded, no_rows
from ragwarrant.adapters._otlp import is_otlp_json, iter_otlp_json_batches, otlp_document
from ragwarrant.adapters._requests import SpanIdentity
from ragwarrant.adapters._spans import (
    Resolved,
    SpanFields,
    get_column,
    no_example_attribute,
    normalize,
    resolve,
)
from ragwarrant.adapters._tables import open_parquet, read_table
from ragwarrant.adapters._telemetry import KeyCodes, TraceTotals, one_chunk
from ragwarrant.adapters.generic import canonical_rows
from ragwarrant.errors import EvidenceError

COST_MODELED_NOTE = "cost modeled from tokens and the contract's price table"
DEFAULT_METRICS = ("cost_usd", "latency_ms", "api_calls")
ALL_METRICS = (*DEFAULT_METRICS, "input_tokens", "output_tokens")


def _signature(shape: FileShape) -> str | None:
    if shape.format == "json" and shape.document == "dict" and "resourceSpans" in shape.names:
        return "JSON document with 'resourceSpans' (one OTLP trace export)"
    if shape.format == "jsonl" and is_otlp_json(shape.first_line):
        return "first line has 'resourceSpans' (OTLP JSON lines)"
    if shape.otlp_document:
        return "one indented JSON document with 'resourceSpans' (OTLP)"
    return None


def _columns_rule(names: Sequence[str]) -> str | None:
    gen_ai = [
        c
        for c in names
        if c.removeprefix("attributes.").startswith(("gen_ai.", "llm.token_count."))
    ]
    if not gen_ai or not any(c in names for c in ("trace_id", "traceId")):
        return None
    return f"gen_ai.* / llm.token_count.* attributes ({', '.join(gen_ai[:2])}) with trace_id"


FORMAT = ToolFormat(
    "otel",
    "opentelemetry",
    "OpenTelemetry",
    "OpenTelemetry GenAI / OpenInference spans: gen_ai.* or llm.* attribute columns, or "
    "OTLP JSON with resourceSpans (JSON lines, or one document)",
    lambda s: (
        is_otlp_json(s.first_line) or "resourceSpans" in s.names or s.has_prefix("gen_ai.", "llm.")
    ),
    signature=_signature,
    columns=_columns_rule,
)

#: rows per Parquet read batch; float sums are added per batch (``TraceTotals``), so a change
#: moves cost sums in their last bits
_BATCH_ROWS = 1 << 18
#: bytes: column chunks are read in buffered pieces rather than whole (peak RSS)
_READ_BUFFER = 1 << 20


_SUMS = (
    "llm",
    "in_tok",
    "out_tok",
    "cost",
    "modeled",
    "reported",
    "cost_missing",
    "in_missing",
    "out_missing",
    "no_time",
    "err",
)
_KEYS = ["trace", "example", "policy"]


_EXTREMES = (("start", "example_lo", "policy_lo"), ("end", "example_hi", "policy_hi"))


@dataclass
class SpanReduction:
    """Per-(policy, example) operational metrics and the counts behind them."""

    #: policy, example, api_calls, cost_usd, latency_ms, input_tokens, output_tokens, ...
    table: pa.Table
    spans: int
    traces: int
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class _PerTrace:
    """A spans file folded per trace as it streams: the totals, the key codes behind them and
    the span count, with the fields and file name it is read with.

    Reading, normalizing and folding run in one thread: a reader thread saved 20-30 % wall
    time but cost more CPU, and one thread meets every target (bench/bench_telemetry.py).
    """

    fields: SpanFields
    display: str
    totals: TraceTotals
    codes: dict[str, KeyCodes] = field(default_factory=lambda: {k: KeyCodes() for k in _KEYS})
    spans: int = 0
    ids: SpanIdentity = field(init=False)

    def __post_init__(self) -> None:
        self.ids = SpanIdentity(self.display)

    def resolved_for(self, t: pa.Table, resolved: Resolved | None) -> Resolved:
        """The field locations of a batch (re-resolved when its columns differ from the last)."""
        if resolved is not None and not any(
            v is not None and v[0] not in t.schema.names for v in resolved.found.values()
        ):
            return resolved
        resolved = resolve(t.schema, self.fields)
        if resolved.found["example"] is None:
            raise no_example_attribute(
                self.display,
                self.fields.example,
                t.schema.names,
                hint="set columns.example_id to the attribute that holds the example id",
            )
        return resolved

    def coded(self, spans: pa.Table) -> tuple[np.ndarray, pa.Table]:
        """A batch of normalized spans with its keys as codes: the trace code of each row, and
        the columns with each row's example and policy code as lowest and highest (null
        skipped)."""
        coded = {
            key: coder.encode(one_chunk(spans.column(key))) for key, coder in self.codes.items()
        }
        for key in ("example", "policy"):
            spans = spans.append_column(f"{key}_lo", coded[key]).append_column(
                f"{key}_hi", coded[key]
            )
        return coded["trace"].to_numpy(), spans

    def fold(
        self, batches: Iterable[pa.Table | pa.RecordBatch], prices: dict[str, dict[str, float]]
    ) -> None:
        """Normalize, code and add every non-empty batch (memory grows with traces, not spans).

        Raises:
            EvidenceError: ``evidence-empty`` when the file has no spans; as ``normalize``.
        """
        resolved: Resolved | None = None
        first_row = 1
        for batch in batches:
            t = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
            resolved = self.resolved_for(t, resolved)
            if t.num_rows == 0:
                continue
            trace, spans = self.coded(normalize(t, resolved, prices, self.display, first_row))
            if resolved.found["span"] is not None:
                span = get_column(t, resolved.found["span"])
                self.ids.add(trace, span, first_row, resolved.label("span"))
            else:  # no span id column: a span repeated is a row repeated in every column
                self.ids.add_rows(t)
            self.totals.add(trace, spans, first_row)
            self.spans += spans.num_rows
            first_row += t.num_rows
        if self.spans == 0:
            raise EvidenceError(
                "evidence-empty",
                f"{self.display} has no spans",
                file=self.display,
                expected="at least one span",
                found="0 spans",
            )

    def traces(self) -> pa.Table:
        """One row per trace (in order of first appearance) with its example and policy.

        Raises:
            EvidenceError: a trace naming two examples or policies, or none naming an example.
        """
        count = len(self.codes["trace"])
        traces = self.totals.table(count)
        traces = traces.append_column(
            "trace", self.codes["trace"].decode(pa.array(np.arange(count)))
        )
        for key in ("example", "policy"):
            self.trace_conflict(traces, key)
            traces = traces.append_column(key, self.codes[key].decode(traces.column(f"{key}_lo")))
        no_example = pc.is_null(traces.column("example"))
        if pc.any(no_example).as_py():
            i = pc.index(no_example, True).as_py()
            raise EvidenceError(
                "evidence-null-key",
                f"{self.display} row {traces.column('row')[i].as_py()}: no span of trace "
                f"{traces.column('trace')[i].as_py()!r} carries an example id",
                hint="put the example id attribute on the root span (or every span) of each trace",
                file=self.display,
                row=traces.column("row")[i].as_py(),
                column=self.fields.example[0],
                expected="an example id on some span of the trace",
                found="none",
            )
        return traces

    def trace_conflict(self, traces: pa.Table, key: str) -> None:
        """Raise when a trace's spans name two different ``key`` ids (examples or policies)."""
        lo, hi = traces.column(f"{key}_lo"), traces.column(f"{key}_hi")
        clash = pc.fill_null(pc.not_equal(lo, hi), False)
        if not pc.any(clash).as_py():
            return
        i = pc.index(clash, True).as_py()
        what = "examples" if key == "example" else "policies"
        first, second = sorted(
            self.codes[key].decode(pa.array([lo[i].as_py(), hi[i].as_py()], pa.int64())).to_pylist()
        )
        row, trace = traces.column("row")[i].as_py(), traces.column("trace")[i].as_py()
        raise EvidenceError(
            "evidence-trace-conflict",
            f"{self.display} row {row}: trace {trace!r} names two {what}: {first!r} and {second!r}",
            file=self.display,
            row=row,
            column=key,
            expected=f"one of the {what} per trace",
            found=f"{first!r}, {second!r}",
        )


#: token metric → the span column summed for it (only when the metric is wanted)
_TOKEN_SUMS = {"input_tokens": "in_tok", "output_tokens": "out_tok"}


_PER_EXAMPLE_SUMS = (
    "llm",
    "cost",
    "in_tok",
    "out_tok",
    "dur_ms",
    "cost_missing",
    "in_missing",
    "out_missing",
    "no_time",
    "modeled",
    "reported",
    "err",
)


def reduce_spans(
    batches: Iterable[pa.Table | pa.RecordBatch],
    fields: SpanFields,
    prices: dict[str, dict[str, float]],
    display: str,
    metrics: Collection[str] = ALL_METRICS,
) -> SpanReduction:
    """Stream raw span batches into per-(policy, example) metrics.

    Args:
        batches: raw span rows in file order.
        fields: candidate column names of each field.
        prices: the contract's price table (model → USD per 1M input/output tokens).
        display: the file name for messages.
        metrics: the metrics wanted; token sums are computed only for ``input_tokens`` /
            ``output_tokens`` named here (null otherwise; their missing counts always).

    Returns:
        ``SpanReduction`` whose table has ``policy`` (null when the file names none), ``example``,
        ``api_calls`` (LLM spans), ``cost_usd``, ``latency_ms``, ``input_tokens``,
        ``output_tokens``, ``cost_missing`` (LLM spans with no cost), ``no_time`` (spans
        without start or end) and ``row`` (first span row of the example).

    Raises:
        EvidenceError: no example column; a trace whose spans name two examples or policies; a
            trace with no example id; wrong types (via the column readers);
            ``evidence-duplicate-request`` when a span id repeats within a trace (or, without a
            span id column, a span row repeats every column); ``evidence-null-key`` for a span
            whose id is missing, empty or all zeros.
    """
    unwanted = {s for m, s in _TOKEN_SUMS.items() if m not in metrics}
    sums = tuple(c for c in _SUMS if c not in unwanted)
    acc = _PerTrace(fields, display, TraceTotals(sums, *_EXTREMES, first="row"))
    acc.fold(batches, prices)
    traces = acc.traces()
    acc.ids.check()
    # per (policy, example): the sums of its traces' columns (latency: of their durations)
    dur = pc.cast(
        pc.subtract(traces.column("end"), traces.column("start")), pa.float64(), safe=False
    )
    traces = traces.append_column("dur_ms", pc.divide(dur, 1e6))
    names = traces.schema.names
    aggs = [(c, "sum") for c in _PER_EXAMPLE_SUMS if c in names] + [("row", "min")]
    g = traces.group_by(["policy", "example"], use_threads=False).aggregate(aggs)
    g = g.sort_by([("row_min", "ascending")])
    unmeasured, summed = pa.nulls(g.num_rows, pa.float64()), g.schema.names
    table = pa.table(
        {
            "policy": g.column("policy"),
            "example": g.column("example"),
            "api_calls": pc.cast(g.column("llm_sum"), pa.float64()),
            "cost_usd": g.column("cost_sum"),
            "latency_ms": g.column("dur_ms_sum"),
            "input_tokens": g.column("in_tok_sum") if "in_tok_sum" in summed else unmeasured,
            "output_tokens": g.column("out_tok_sum") if "out_tok_sum" in summed else unmeasured,
            "cost_missing": g.column("cost_missing_sum"),
            "in_missing": g.column("in_missing_sum"),
            "out_missing": g.column("out_missing_sum"),
            "no_time": g.column("no_time_sum"),
            "errors": g.column("err_sum"),
            "row": g.column("row_min"),
        }
    )
    counts = {
        name: int(pc.sum(g.column(f"{col}_sum")).as_py() or 0)
        for name, col in (
            ("llm_spans", "llm"),
            ("cost_reported", "reported"),
            ("cost_modeled", "modeled"),
            ("cost_missing", "cost_missing"),
            ("error_spans", "err"),
        )
    }
    return SpanReduction(table=table, spans=acc.spans, traces=traces.num_rows, counts=counts)


# --- the adapter -----------------------------------------------------------------------------


def span_fields(request: AdapterRequest, *, metadata: bool = False) -> SpanFields:
    """The example and policy fields of the source's ``columns`` (the policy only when mapped);
    with ``metadata`` each is also looked up in the ``metadata`` attribute, the policy also as
    ``metadata.policy`` (Phoenix's ``attributes.metadata``)."""
    cols = request.source.columns
    also = ("metadata.",) if metadata else ()
    example = (cols.example_id, *(f"{m}{cols.example_id}" for m in also))
    pid = cols.policy_id
    policy = (pid, *(f"{m}{c}" for m in also for c in (pid, "policy"))) if pid else ()
    return SpanFields(example=example, policy=policy)


def _dictionary_columns(schema: pa.Schema, wanted: list[str], resolved: Resolved) -> list[str]:
    """The string columns of ``wanted`` to read as dictionaries (few distinct values: ids,
    names), but the span id (one distinct value per span)."""
    span = resolved.found["span"]
    return [
        c
        for c in wanted
        if (span is None or c != span[0])
        and (
            pa.types.is_string(schema.field(c).type)
            or pa.types.is_large_string(schema.field(c).type)
        )
    ]


def span_batches(
    request: AdapterRequest, fields: SpanFields
) -> tuple[Iterator[pa.Table | pa.RecordBatch], str]:
    """Open the source as a stream of raw span batches; return them and the detected shape.

    Parquet is read column-projected in batches; OTLP JSON lines are parsed line by line; CSV
    and flat JSONL are read whole (they are small by nature) and sliced.
    """
    source, display, path = request.source, request.display_path, request.path
    if source.format == "parquet":
        pf = open_parquet(path, display)
        if pf.metadata.num_rows == 0:
            raise no_rows(display, "at least one span")
        resolved = resolve(pf.schema_arrow, fields)
        # the model only prices tokens: without a price table its column is not read
        unused = frozenset() if request.contract.prices else frozenset({"model"})
        wanted = resolved.top_columns(unused) or pf.schema_arrow.names[:1]
        strings = _dictionary_columns(pf.schema_arrow, wanted, resolved)
        # pre_buffer=False: with it, iter_batches keeps every column chunk read so far (RSS grows
        # with the file); without it, memory is bounded by one row group.
        pf = open_parquet(
            path, display, read_dictionary=strings, pre_buffer=False, buffer_size=_READ_BUFFER
        )
        # use_threads=False: Arrow's pool would oversubscribe two cores
        batches = pf.iter_batches(batch_size=_BATCH_ROWS, columns=wanted, use_threads=False)
        return guarded(batches, path, "parquet", display), "flattened spans (parquet)"
    document = otlp_document(path, source.format)
    if document is not None:
        return iter_otlp_json_batches(path, display, document=document), "OTLP JSON document"
    if source.format == "jsonl":
        with path.open("rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
        if not first:
            raise EvidenceError(
                "evidence-empty",
                f"{display} is empty",
                file=display,
                expected="spans",
                found="no bytes",
            )
        if is_otlp_json(first):
            return iter_otlp_json_batches(path, display), "OTLP JSON lines"
    table = read_table(path, source.format, display)
    return iter(table.to_batches(max_chunksize=1 << 20)), f"flattened spans ({source.format})"


#: metric → the per-example count of spans that leave it unmeasured (missing, reason ``absent``)
_UNMEASURED_WHEN = {
    "cost_usd": "cost_missing",
    "latency_ms": "no_time",
    "input_tokens": "in_missing",
    "output_tokens": "out_missing",
}


def load_spans(
    request: AdapterRequest,
    tool: ToolFormat,
    *,
    fields: SpanFields,
) -> AdapterResult:
    """Reduce a spans source to canonical per-example operational evidence (shared with phoenix).

    Raises:
        EvidenceError: as ``reduce_spans``; rows of other policies; a wanted metric not offered.
    """
    source, display = request.source, request.display_path
    batches, shape = span_batches(request, fields)
    wanted = dict(source.metrics) or {m: m for m in DEFAULT_METRICS}
    red = reduce_spans(batches, fields, request.contract.prices, display, metrics=set(wanted))
    t = red.table
    rows = t.column("row").to_pylist()
    file_policies = t.column("policy").to_pylist()
    policies = resolve_policies(
        request, file_policies, rows, fields.policy[0] if fields.policy else "policy"
    )
    available = {m: m for m in ALL_METRICS}
    chosen = select_metrics(available, wanted, display)
    keys = RowKeys(
        pa.array(policies, pa.string()),
        t.column("example").combine_chunks(),
        t.column("row").combine_chunks(),
    )
    tag = tool_tag(request, tool)
    n = t.num_rows
    parts = []
    for name, metric in chosen.items():
        values = t.column(name).combine_chunks()
        reason = pa.nulls(n, pa.string())
        if name in _UNMEASURED_WHEN:
            gone = pc.greater(t.column(_UNMEASURED_WHEN[name]).combine_chunks(), 0)
            values = pc.if_else(gone, pa.scalar(None, pa.float64()), values)
            reason = pc.if_else(gone, pa.scalar("absent"), reason)
        values = pc.cast(values, pa.float64())
        parts.append(canonical_rows(keys.canonical, metric, values, reason, tag, request.sha256))
    c = red.counts
    notes = [
        f"{shape}: {red.spans} spans in {red.traces} traces reduced to {n} (policy, example) rows",
        f"{c['llm_spans']} LLM spans (api_calls); {c['error_spans']} spans with status ERROR",
    ]
    if c["cost_modeled"]:
        notes.append(
            f"{COST_MODELED_NOTE}: {c['cost_modeled']} of {c['llm_spans']} LLM spans had no cost "
            "attribute"
        )
    if c["cost_missing"]:
        notes.append(
            f"{c['cost_missing']} LLM spans have no cost and no priced model: their examples' "
            "cost_usd is missing (reason 'absent')"
        )
    if source.reduce:
        notes.append(
            "'reduce' is ignored by this adapter: its reductions are fixed (see the adapter docs)"
        )
    return tool_result(
        request,
        tool,
        evidence=pa.concat_tables(parts),
        metric_names=dict(chosen),
        pairing_method="id-column",
        rows_read=red.spans,
        notes=notes,
    )


def load(request: AdapterRequest) -> AdapterResult:
    """Reduce OpenTelemetry GenAI / OpenInference spans to per-example cost, latency and API calls.

    Returns:
        Evidence with ``cost_usd``, ``latency_ms``, ``api_calls`` per (policy, example) (plus
        ``input_tokens``/``output_tokens`` when ``metrics`` names them); no texts.

    Raises:
        EvidenceError: empty file; no example id attribute; a trace naming two examples or
            policies; wrong types; rows of policies the contract does not declare.
    """
    return load_spans(request, FORMAT, fields=span_fields(request))
