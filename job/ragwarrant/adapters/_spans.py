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
                if top in names and pa.types.is_struct(schema.field(top).type):
                    t: pa.DataType = schema.field(top).type
                    ok = True
                    for p in parts[cut:]:
                        if pa.types.is_struct(t) and t.get_field_index(p) >= 0:
                            t = t.field(p).type
                        else:
                            ok = False
                            break
                    if ok:
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


def _as_table(batch: pa.Table, resolved: Resolved, name: str) -> pa.Table:
    """A one-column table holding the resolved field (so the _io helpers can report on it)."""
    where = resolved.found[name]
    assert where is not None
    return pa.table({resolved.label(name): get_column(batch, where)})


def _times_ns(
    batch: pa.Table, resolved: Resolved, name: str, display: str, first_row: int
) -> pa.Array:
    t = _as_table(batch, resolved, name)
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
                            f"{display} row {first_row + i}: {label!r} is not a time",
                            file=display,
                            row=first_row + i,
                            column=label,
                            expected="unix nanoseconds or an ISO 8601 time",
                            found=repr(cell[:40]),
                        ) from None
            raise
    raise EvidenceError(
        "evidence-wrong-type",
        f"{display}: {label!r} holds {col.type}, not times",
        file=display,
        column=label,
        expected="unix nanoseconds or timestamps",
        found=str(col.type),
    )


def _keys(batch: pa.Table, resolved: Resolved, name: str, display: str, first_row: int) -> pa.Array:
    """A key field (trace, example, policy) as string or dictionary<string>, nulls for empty."""
    t = _as_table(batch, resolved, name)
    label = t.schema.names[0]
    col = t.column(0).combine_chunks()
    if pa.types.is_dictionary(col.type) and pa.types.is_string(col.type.value_type):
        return col
    try:
        return column_as_string(t, label, display, allow_null=True)
    except EvidenceError as exc:
        raise at_file_row(exc, first_row - 1) from exc


def _floats(
    batch: pa.Table, resolved: Resolved, name: str, display: str, first_row: int
) -> pa.Array:
    t = _as_table(batch, resolved, name)
    col = one_chunk(t.column(0))
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
        return pc.cast(col, pa.float64())  # what column_as_float gives, no NaN
    if _no_nan_or_null(col):
        return col  # what column_as_float gives a float64 column without NaN or null
    try:
        values, _ = column_as_float(t, t.schema.names[0], display)
    except EvidenceError as exc:
        raise at_file_row(exc, first_row - 1) from exc
    return values


def _no_nan_or_null(col: pa.Array) -> bool:
    """Whether ``col`` is a non-empty float64 array without null or NaN (one ``min`` pass: NaN
    propagates through it)."""
    return (
        pa.types.is_float64(col.type)
        and len(col) > 0
        and not col.null_count
        and not np.isnan(col.to_numpy().min())
    )


def _is_in(arr: pa.Array, values: list[str]) -> pa.Array:
    """``arr ∈ values`` (null → false), computed on the dictionary when there is one."""
    if pa.types.is_dictionary(arr.type):
        hit = pc.is_in(pc.utf8_upper(arr.dictionary), pa.array(values))
        return pc.fill_null(pc.take(hit, arr.indices), False)
    return pc.fill_null(pc.is_in(pc.utf8_upper(arr), pa.array(values)), False)


def _model_prices(
    model: pa.Array, prices: dict[str, dict[str, float]]
) -> tuple[pa.Array, pa.Array]:
    keys = sorted(prices)
    pin_v = pa.array([prices[k].get("input_usd_per_1m_tokens") for k in keys], pa.float64())
    pout_v = pa.array([prices[k].get("output_usd_per_1m_tokens") for k in keys], pa.float64())
    if pa.types.is_dictionary(model.type):
        idx = pc.take(
            pc.index_in(model.dictionary, value_set=pa.array(keys, pa.string())), model.indices
        )
    else:
        idx = pc.index_in(model, value_set=pa.array(keys, pa.string()))
    return pc.take(pin_v, idx), pc.take(pout_v, idx)


def _trace_column(
    batch: pa.Table, resolved: Resolved, at: tuple[str, int], policy: pa.Array, example: pa.Array
) -> pa.Array:
    """Each span's trace id; without a trace column, (policy, example) stands for the trace."""
    display, first_row = at
    if not resolved.found["trace"]:

        def plain(a: pa.Array) -> pa.Array:
            return a.dictionary_decode() if pa.types.is_dictionary(a.type) else a

        return pc.binary_join_element_wise(
            pc.fill_null(plain(policy), ""), pc.fill_null(plain(example), ""), "\x1f"
        )
    trace = _keys(batch, resolved, "trace", display, first_row)
    if trace.null_count:
        i = pc.index(pc.is_null(trace), True).as_py()
        raise EvidenceError(
            "evidence-null-key",
            f"{display} row {first_row + i}: the span has no trace id",
            file=display,
            row=first_row + i,
            column=resolved.label("trace"),
            expected="a trace id",
            found="empty",
        )
    return trace


def _flags(batch: pa.Table, resolved: Resolved, at: tuple[str, int]) -> tuple[pa.Array, pa.Array]:
    """``(is_llm, is_error)`` per span: an LLM operation or span kind; an ERROR status."""
    display, first_row = at
    false = pa.array(np.zeros(batch.num_rows, dtype=bool))
    is_llm = false
    if resolved.found["operation"]:
        op = _keys(batch, resolved, "operation", display, first_row)
        is_llm = pc.or_(is_llm, _is_in(op, [o.upper() for o in LLM_OPERATIONS]))
    if resolved.found["kind"]:
        kind = _keys(batch, resolved, "kind", display, first_row)
        is_llm = pc.or_(is_llm, _is_in(kind, ["LLM"]))
    is_error = false
    if resolved.found["status"]:
        status = _keys(batch, resolved, "status", display, first_row)
        is_error = _is_in(status, ["ERROR", "STATUS_CODE_ERROR", "2"])
    return is_llm, is_error


def _optional(
    batch: pa.Table, resolved: Resolved, name: str, at: tuple[str, int], null: pa.Array
) -> pa.Array:
    """A float (tokens, cost) or time field, or ``null`` when the file has no such column."""
    if not resolved.found[name]:
        return null
    reader = _times_ns if name in ("start", "end") else _floats
    return reader(batch, resolved, name, at[0], at[1])


def _cost(
    batch: pa.Table,
    resolved: Resolved,
    prices: dict[str, dict[str, float]],
    at: tuple[str, int],
    span: dict[str, pa.Array],
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """``(effective cost, modeled, reported)`` per span: the span's cost, else tokens × price."""
    f = resolved.found
    is_llm, cost = span["llm"], span["cost"]
    reported = pc.and_(is_llm, pc.is_valid(cost))
    if not (prices and (f["input_tokens"] or f["output_tokens"]) and f["model"]):
        none = pa.array(np.zeros(len(cost), dtype=bool))
        if reported.true_count == len(reported):
            return cost, none, reported
        return pc.if_else(reported, cost, 0.0), none, reported
    in_tok, out_tok = span["in_tok"], span["out_tok"]
    model = _keys(batch, resolved, "model", at[0], at[1])
    pin, pout = _model_prices(model, prices)
    modeled = pc.divide(pc.add(pc.multiply(in_tok, pin), pc.multiply(out_tok, pout)), 1e6)
    has_tokens = pc.or_(pc.is_valid(span["out_tok_raw"]), pc.greater(in_tok, 0.0))
    use_model = pc.and_(
        pc.and_(is_llm, pc.invert(reported)), pc.and_(has_tokens, pc.is_valid(modeled))
    )
    return pc.if_else(reported, cost, pc.if_else(use_model, modeled, 0.0)), use_model, reported


#: Unix nanoseconds of 1973-03-03 and 2100-01-01: an integer time outside them is not ns.
_NS_RANGE = (10**17, 4_102_444_800 * 10**9)
#: (upper bound of a unix time in that unit today + a century, unit name), for hints.
_UNIT_GUESS = ((10**10, "seconds"), (10**13, "milliseconds"), (10**16, "microseconds"))


def _policy_at(policy: pa.Array, i: int) -> str:
    value = policy[i].as_py()
    return f" (policy {value!r})" if value is not None else ""


def _check_amounts(
    values: pa.Array, resolved: Resolved, name: str, at: tuple[str, int], policy: pa.Array
) -> None:
    """Refuse a negative or non-finite token count or cost on any span.

    Raises:
        EvidenceError: ``evidence-negative-value`` or ``evidence-non-finite`` naming the row,
            the column and the span's policy when the file names one.
    """
    if not resolved.found[name]:
        return
    display, first_row = at
    bad = first_bad_amount(values)
    if bad is not None:
        code, i, what = bad
        label = resolved.label(name)
        raise EvidenceError(
            code,
            f"{display} row {first_row + i}: {label} is {values[i].as_py()}, "
            f"{what}{_policy_at(policy, i)}",
            hint="token counts and costs are finite and >= 0; an unmeasured value is "
            "absent (null), never negative",
            file=display,
            row=first_row + i,
            column=label,
            expected="a finite number >= 0",
            found=str(values[i].as_py()),
        )


def _unit_of(value: int) -> str:
    if value == 0:
        return "0, an unset time"
    unit = next((u for bound, u in _UNIT_GUESS if abs(value) < bound), "a time past 2100")
    return f"{value}, which looks like {unit}"


def _check_times(
    start: pa.Array, end: pa.Array, resolved: Resolved, at: tuple[str, int], policy: pa.Array
) -> None:
    """Refuse times that are not unix nanoseconds (seconds or milliseconds mixed into a ns
    column, an unset 0) and spans that end before they start.

    Raises:
        EvidenceError: ``evidence-time-unit`` or ``evidence-time-order`` naming row and column.
    """
    lo, hi = _NS_RANGE
    display, first_row = at
    for name, times in (("start", start), ("end", end)):
        bad = pc.fill_null(pc.or_(pc.less(times, lo), pc.greater(times, hi)), False)
        if pc.any(bad).as_py():
            i = pc.index(bad, True).as_py()
            raise EvidenceError(
                "evidence-time-unit",
                f"{display} row {first_row + i}: {resolved.label(name)} is "
                f"{_unit_of(times[i].as_py())}, not unix nanoseconds{_policy_at(policy, i)}",
                hint="every span time is unix nanoseconds (or a timestamp); convert mixed units "
                "before export",
                file=display,
                row=first_row + i,
                column=resolved.label(name),
                expected="unix nanoseconds between 1973 and 2100",
                found=str(times[i].as_py()),
            )
    before = pc.fill_null(pc.less(end, start), False)
    if pc.any(before).as_py():
        i = pc.index(before, True).as_py()
        ms = (end[i].as_py() - start[i].as_py()) / 1e6
        raise EvidenceError(
            "evidence-time-order",
            f"{display} row {first_row + i}: the span ends {-ms:g} ms before it starts "
            f"({resolved.label('end')} < {resolved.label('start')}){_policy_at(policy, i)}",
            file=display,
            row=first_row + i,
            column=resolved.label("end"),
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
    at = (display, first_row)
    null_s = pa.nulls(n, pa.string())
    null_f = pa.nulls(n, pa.float64())
    null_t = pa.nulls(n, pa.int64())
    f = resolved.found
    example = _keys(batch, resolved, "example", display, first_row) if f["example"] else null_s
    policy = _keys(batch, resolved, "policy", display, first_row) if f["policy"] else null_s
    trace = _trace_column(batch, resolved, at, policy, example)
    in_tok = _optional(batch, resolved, "input_tokens", at, null_f)
    out_tok = _optional(batch, resolved, "output_tokens", at, null_f)
    cost = _optional(batch, resolved, "cost", at, null_f)
    for name, values in (("input_tokens", in_tok), ("output_tokens", out_tok), ("cost", cost)):
        _check_amounts(values, resolved, name, at, policy)
    is_llm, is_error = _flags(batch, resolved, at)
    span = {
        "llm": is_llm,
        "cost": cost,
        "in_tok": _on_llm(in_tok, is_llm),
        "out_tok": _on_llm(out_tok, is_llm),
        "out_tok_raw": out_tok,
    }
    cost_eff, use_model, reported = _cost(batch, resolved, prices, at, span)
    cost_missing = pc.and_(is_llm, pc.invert(pc.or_(reported, use_model)))
    start = _optional(batch, resolved, "start", at, null_t)
    end = _optional(batch, resolved, "end", at, null_t)
    _check_times(start, end, resolved, at, policy)
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
