"""One batch of spans, resolved and normalized: the span fields, times, costs and LLM flags.

``adapters.otel`` (and ``adapters.phoenix``, whose span files are the same shape) read spans
batch by batch; this module turns each batch into one row per span with canonical columns
(trace, example, policy, start/end ns, tokens, cost, whether it is an LLM span) and refuses
amounts and times that cannot be right, naming the file, row and column.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._columns import column_as_float, column_as_string
from ragwarrant.adapters._requests import fold_span_ids
from ragwarrant.adapters._tables import at_file_row
from ragwarrant.adapters._telemetry import first_bad_amount, one_chunk
from ragwarrant.errors import EvidenceError

LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
"""``gen_ai.operation.name`` values that make a span an LLM span (an API call)."""


@dataclass(frozen=True)
class SpanFields:
    """Candidate column names of each span field, first present wins.

    ``example`` and ``policy`` are filled from the contract's column mapping.
    """

    example: tuple[str, ...]
    policy: tuple[str, ...]
    trace: tuple[str, ...] = ("trace_id", "context.trace_id", "traceId")
    span: tuple[str, ...] = ("span_id", "context.span_id", "spanId")
    input_tokens: tuple[str, ...] = (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    )
    output_tokens: tuple[str, ...] = (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    )
    cost: tuple[str, ...] = ("cost_usd", "llm.cost.total", "gen_ai.usage.cost")
    model: tuple[str, ...] = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
    operation: tuple[str, ...] = ("gen_ai.operation.name",)
    kind: tuple[str, ...] = ("openinference.span.kind", "span_kind")
    start: tuple[str, ...] = ("start_time_unix_nano", "start_time", "startTimeUnixNano")
    end: tuple[str, ...] = ("end_time_unix_nano", "end_time", "endTimeUnixNano")
    status: tuple[str, ...] = ("status_code", "status.code")


@dataclass(frozen=True)
class Resolved:
    """Where each field is: (top-level column, struct sub-path) or None."""

    found: dict[str, tuple[str, tuple[str, ...]] | None]

    def top_columns(self, unused: frozenset[str] = frozenset()) -> list[str]:
        """The file's columns holding the fields, except those only ``unused`` fields need."""
        return list(
            dict.fromkeys(v[0] for k, v in self.found.items() if v is not None and k not in unused)
        )

    def label(self, name: str) -> str:
        v = self.found[name]
        return ".".join((v[0], *v[1])) if v else "-"


def resolve_one(schema: pa.Schema, candidates: Iterable[str]) -> tuple[str, tuple[str, ...]] | None:
    names = schema.names
    for cand in candidates:
        for name in (cand, f"attributes.{cand}"):
            if name in names:
                return name, ()
            # a struct column holding the rest of the dotted name (e.g. attributes.metadata)
            parts = name.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                top = ".".join(parts[:cut])
                t: pa.DataType | None = schema.field(top).type if top in names else None
                for p in parts[cut:]:  # each part a field of the struct before it
                    if t is None or not pa.types.is_struct(t) or t.get_field_index(p) < 0:
                        t = None
                        break
                    t = t.field(p).type
                if t is not None:
                    return top, tuple(parts[cut:])
    return None


def no_example_attribute(
    display: str, candidates: tuple[str, ...], names: list[str], hint: str
) -> EvidenceError:
    """The ``evidence-missing-column`` error of a spans file in which no ``candidates`` attribute
    (the example id's names) is found among its columns ``names``."""
    return EvidenceError(
        "evidence-missing-column",
        f"{display} has no example id attribute ({' or '.join(candidates)})",
        hint=hint,
        file=display,
        column=candidates[0],
        expected="an example id attribute",
        found=f"columns: {', '.join(names[:20])}",
    )


def resolve(schema: pa.Schema, fields: SpanFields) -> Resolved:
    return Resolved(
        {name: resolve_one(schema, getattr(fields, name)) for name in fields.__dataclass_fields__}
    )


def get_column(batch: pa.Table, where: tuple[str, tuple[str, ...]]) -> pa.Array:
    col = one_chunk(batch.column(where[0]))
    for p in where[1]:
        col = pc.struct_field(col, p)
    return col


def _is_in(arr: pa.Array, values: list[str]) -> pa.Array:
    """``arr ∈ values`` (null → false), computed on the dictionary when there is one."""
    if pa.types.is_dictionary(arr.type):
        hit = pc.is_in(pc.utf8_upper(arr.dictionary), pa.array(values))
        return pc.fill_null(pc.take(hit, arr.indices), False)
    return pc.fill_null(pc.is_in(pc.utf8_upper(arr), pa.array(values)), False)


#: Unix nanoseconds of 1973-03-03 and 2100-01-01: an integer time outside them is not ns.
_NS_RANGE = (10**17, 4_102_444_800 * 10**9)
#: (upper bound of a unix time in that unit today + a century, unit name), for hints.
_UNIT_GUESS = ((10**10, "seconds"), (10**13, "milliseconds"), (10**16, "microseconds"))


def _policy_at(policy: pa.Array, i: int) -> str:
    value = policy[i].as_py()
    return f" (policy {value!r})" if value is not None else ""


@dataclass(frozen=True)
class _SpanBatch:
    """One batch of raw spans, where its fields are, and where it sits in the file (for errors).

    Attributes:
        table: the batch's columns as read.
        resolved: where each span field is (``resolve``).
        display: the file as the contract names it.
        first_row: the file row number of the batch's first row.
    """

    table: pa.Table
    resolved: Resolved
    display: str
    first_row: int

    def field(self, name: str) -> pa.Table:
        """A one-column table holding the resolved field (so the column readers report on it)."""
        where = self.resolved.found[name]
        assert where is not None
        return pa.table({self.resolved.label(name): get_column(self.table, where)})

    def keys(self, name: str) -> pa.Array:
        """A key field (trace, example, policy) as string or dictionary<string>, nulls for
        empty."""
        t = self.field(name)
        label = t.schema.names[0]
        col = t.column(0).combine_chunks()
        if pa.types.is_dictionary(col.type) and pa.types.is_string(col.type.value_type):
            return col
        try:
            return column_as_string(t, label, self.display, allow_null=True)
        except EvidenceError as exc:
            raise at_file_row(exc, self.first_row - 1) from exc

    def floats(self, name: str) -> pa.Array:
        """A token or cost field as float64, as ``column_as_float`` reads it."""
        t = self.field(name)
        col = one_chunk(t.column(0))
        if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
            return pc.cast(col, pa.float64())  # what column_as_float gives, no NaN
        if (
            pa.types.is_float64(col.type)
            and len(col) > 0
            and not col.null_count
            and not np.isnan(col.to_numpy().min())  # one pass: NaN propagates through min
        ):
            return col  # what column_as_float gives a float64 column without NaN or null
        try:
            values, _ = column_as_float(t, t.schema.names[0], self.display)
        except EvidenceError as exc:
            raise at_file_row(exc, self.first_row - 1) from exc
        return values

    def optional(self, name: str, null: pa.Array) -> pa.Array:
        """A float (tokens, cost) or time field, or ``null`` when the file has no such column."""
        if not self.resolved.found[name]:
            return null
        return self.times_ns(name) if name in ("start", "end") else self.floats(name)

    def trace(self, policy: pa.Array, example: pa.Array) -> pa.Array:
        """Each span's trace id, folded as span ids are (``_requests.fold_span_ids``: lower
        case, no white space or invisible characters, so ``'4BF9…'`` and ``' 4bf9…'`` are one
        trace); without a trace column, (policy, example) stands for the trace."""
        if not self.resolved.found["trace"]:

            def plain(a: pa.Array) -> pa.Array:
                return a.dictionary_decode() if pa.types.is_dictionary(a.type) else a

            return pc.binary_join_element_wise(
                pc.fill_null(plain(policy), ""), pc.fill_null(plain(example), ""), "\x1f"
            )
        trace = self.keys("trace")
        if trace.null_count:
            i = pc.index(pc.is_null(trace), True).as_py()
            raise EvidenceError(
                "evidence-null-key",
                f"{self.display} row {self.first_row + i}: the span has no trace id",
                file=self.display,
                row=self.first_row + i,
                column=self.resolved.label("trace"),
                expected="a trace id",
                found="empty",
            )
        if pa.types.is_dictionary(trace.type):  # fold the distinct ids only
            return pa.DictionaryArray.from_arrays(trace.indices, fold_span_ids(trace.dictionary))
        return fold_span_ids(trace)

    def flags(self) -> tuple[pa.Array, pa.Array]:
        """``(is_llm, is_error)`` per span: an LLM operation or span kind; an ERROR status."""
        found = self.resolved.found
        false = pa.array(np.zeros(self.table.num_rows, dtype=bool))
        is_llm = false
        if found["operation"]:
            is_llm = pc.or_(
                is_llm, _is_in(self.keys("operation"), [o.upper() for o in LLM_OPERATIONS])
            )
        if found["kind"]:
            is_llm = pc.or_(is_llm, _is_in(self.keys("kind"), ["LLM"]))
        is_error = false
        if found["status"]:
            is_error = _is_in(self.keys("status"), ["ERROR", "STATUS_CODE_ERROR", "2"])
        return is_llm, is_error

    def times_ns(self, name: str) -> pa.Array:
        """A time field as int64 unix nanoseconds (integers, timestamps or ISO 8601 text)."""
        t = self.field(name)
        label = t.schema.names[0]
        col = t.column(0).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        if pa.types.is_timestamp(col.type):
            return pc.cast(pc.cast(col, pa.timestamp("ns", col.type.tz)), pa.int64())
        if pa.types.is_integer(col.type):
            return pc.cast(col, pa.int64())
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            try:
                return pc.cast(col, pa.int64())
            except pa.ArrowInvalid:
                pass
            try:
                return pc.cast(pc.cast(col, pa.timestamp("ns", "UTC")), pa.int64())
            except pa.ArrowInvalid:
                for i, cell in enumerate(col.to_pylist()):
                    if cell is None:
                        continue
                    try:
                        pc.cast(pa.array([cell]), pa.timestamp("ns", "UTC"))
                    except pa.ArrowInvalid:
                        try:
                            int(cell)
                        except ValueError:
                            raise EvidenceError(
                                "evidence-wrong-type",
                                f"{self.display} row {self.first_row + i}: {label!r} is not a time",
                                file=self.display,
                                row=self.first_row + i,
                                column=label,
                                expected="unix nanoseconds or an ISO 8601 time",
                                found=repr(cell[:40]),
                            ) from None
                raise
        raise EvidenceError(
            "evidence-wrong-type",
            f"{self.display}: {label!r} holds {col.type}, not times",
            file=self.display,
            column=label,
            expected="unix nanoseconds or timestamps",
            found=str(col.type),
        )

    def cost(
        self, prices: dict[str, dict[str, float]], span: dict[str, pa.Array]
    ) -> tuple[pa.Array, pa.Array, pa.Array]:
        """``(effective cost, modeled, reported)`` per span: the span's cost, else tokens ×
        price."""
        f = self.resolved.found
        is_llm, cost = span["llm"], span["cost"]
        reported = pc.and_(is_llm, pc.is_valid(cost))
        if not (prices and (f["input_tokens"] or f["output_tokens"]) and f["model"]):
            none = pa.array(np.zeros(len(cost), dtype=bool))
            if reported.true_count == len(reported):
                return cost, none, reported
            return pc.if_else(reported, cost, 0.0), none, reported
        keys = sorted(prices)
        pin_v = pa.array([prices[k].get("input_usd_per_1m_tokens") for k in keys], pa.float64())
        pout_v = pa.array([prices[k].get("output_usd_per_1m_tokens") for k in keys], pa.float64())
        model = self.keys("model")
        if pa.types.is_dictionary(model.type):
            idx = pc.take(
                pc.index_in(model.dictionary, value_set=pa.array(keys, pa.string())), model.indices
            )
        else:
            idx = pc.index_in(model, value_set=pa.array(keys, pa.string()))
        pin, pout = pc.take(pin_v, idx), pc.take(pout_v, idx)
        in_tok, out_tok = span["in_tok"], span["out_tok"]
        modeled = pc.divide(pc.add(pc.multiply(in_tok, pin), pc.multiply(out_tok, pout)), 1e6)
        has_tokens = pc.or_(pc.is_valid(span["out_tok_raw"]), pc.greater(in_tok, 0.0))
        use_model = pc.and_(
            pc.and_(is_llm, pc.invert(reported)), pc.and_(has_tokens, pc.is_valid(modeled))
        )
        return pc.if_else(reported, cost, pc.if_else(use_model, modeled, 0.0)), use_model, reported

    def check_amounts(self, values: pa.Array, name: str, policy: pa.Array) -> None:
        """Refuse a negative or non-finite token count or cost on any span.

        Raises:
            EvidenceError: ``evidence-negative-value`` or ``evidence-non-finite`` naming the row,
                the column and the span's policy when the file names one.
        """
        if not self.resolved.found[name]:
            return
        bad = first_bad_amount(values)
        if bad is not None:
            code, i, what = bad
            label = self.resolved.label(name)
            raise EvidenceError(
                code,
                f"{self.display} row {self.first_row + i}: {label} is {values[i].as_py()}, "
                f"{what}{_policy_at(policy, i)}",
                hint="token counts and costs are finite and >= 0; an unmeasured value is "
                "absent (null), never negative",
                file=self.display,
                row=self.first_row + i,
                column=label,
                expected="a finite number >= 0",
                found=str(values[i].as_py()),
            )

    def check_times(self, start: pa.Array, end: pa.Array, policy: pa.Array) -> None:
        """Refuse times that are not unix nanoseconds (seconds or milliseconds mixed into a ns
        column, an unset 0) and spans that end before they start.

        Raises:
            EvidenceError: ``evidence-time-unit`` or ``evidence-time-order`` naming row and
                column.
        """
        lo, hi = _NS_RANGE
        display, label = self.display, self.resolved.label
        for name, times in (("start", start), ("end", end)):
            bad = pc.fill_null(pc.or_(pc.less(times, lo), pc.greater(times, hi)), False)
            if pc.any(bad).as_py():
                i = pc.index(bad, True).as_py()
                value = times[i].as_py()
                unit = next(
                    (u for bound, u in _UNIT_GUESS if abs(value) < bound), "a time past 2100"
                )
                shown = "0, an unset time" if value == 0 else f"{value}, which looks like {unit}"
                raise EvidenceError(
                    "evidence-time-unit",
                    f"{display} row {self.first_row + i}: {label(name)} is "
                    f"{shown}, not unix nanoseconds{_policy_at(policy, i)}",
                    hint="every span time is unix nanoseconds (or a timestamp); convert mixed "
                    "units before export",
                    file=display,
                    row=self.first_row + i,
                    column=label(name),
                    expected="unix nanoseconds between 1973 and 2100",
                    found=str(value),
                )
        before = pc.fill_null(pc.less(end, start), False)
        if pc.any(before).as_py():
            i = pc.index(before, True).as_py()
            ms = (end[i].as_py() - start[i].as_py()) / 1e6
            raise EvidenceError(
                "evidence-time-order",
                f"{display} row {self.first_row + i}: the span ends {-ms:g} ms before it starts "
                f"({label('end')} < {label('start')}){_policy_at(policy, i)}",
                file=display,
                row=self.first_row + i,
                column=label("end"),
                expected="end >= start",
                found=f"end - start = {ms:g} ms",
            )


def normalize(
    batch: pa.Table,
    resolved: Resolved,
    prices: dict[str, dict[str, float]],
    display: str,
    first_row: int,
) -> pa.Table:
    """Map one batch of raw spans to the normalized per-span columns."""
    n = batch.num_rows
    spans = _SpanBatch(batch, resolved, display, first_row)
    null_s = pa.nulls(n, pa.string())
    null_f = pa.nulls(n, pa.float64())
    null_t = pa.nulls(n, pa.int64())
    f = resolved.found
    example = spans.keys("example") if f["example"] else null_s
    policy = spans.keys("policy") if f["policy"] else null_s
    trace = spans.trace(policy, example)
    in_tok = spans.optional("input_tokens", null_f)
    out_tok = spans.optional("output_tokens", null_f)
    cost = spans.optional("cost", null_f)
    for name, values in (("input_tokens", in_tok), ("output_tokens", out_tok), ("cost", cost)):
        spans.check_amounts(values, name, policy)
    is_llm, is_error = spans.flags()
    span = {
        "llm": is_llm,
        "cost": cost,
        "in_tok": _on_llm(in_tok, is_llm),
        "out_tok": _on_llm(out_tok, is_llm),
        "out_tok_raw": out_tok,
    }
    cost_eff, use_model, reported = spans.cost(prices, span)
    cost_missing = pc.and_(is_llm, pc.invert(pc.or_(reported, use_model)))
    start = spans.optional("start", null_t)
    end = spans.optional("end", null_t)
    spans.check_times(start, end, policy)
    return pa.table(
        {
            "trace": trace,
            "example": example,
            "policy": policy,
            "llm": is_llm,
            "in_tok": span["in_tok"],
            "out_tok": span["out_tok"],
            "cost": cost_eff,
            "modeled": use_model,
            "reported": reported,
            "cost_missing": cost_missing,
            # an LLM span without a token count is unmeasured, not 0
            "in_missing": pc.and_(is_llm, pc.is_null(in_tok)),
            "out_missing": pc.and_(is_llm, pc.is_null(out_tok)),
            "no_time": pc.or_(pc.is_null(start), pc.is_null(end)),
            "start": start,
            "end": end,
            "err": is_error,
        }
    )


def _on_llm(values: pa.Array, is_llm: pa.Array) -> pa.Array:
    """``values`` on LLM spans, 0 elsewhere and where null (float64)."""
    if not values.null_count and is_llm.true_count == len(is_llm):
        return values
    return pc.if_else(is_llm, pc.fill_null(values, 0.0), 0.0)
