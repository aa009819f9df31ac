"""Whole columns: metric columns as floats, text columns as strings, metric names as ids."""

from __future__ import annotations

import math
import re
import unicodedata
import uuid

import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._cells import NAN_STRINGS, NULL_STRINGS, not_a_number, parse_number
from ragwarrant.adapters._integrity import (
    check_header,
    missing_name,
)
from ragwarrant.errors import EvidenceError


def column_as_string(table: pa.Table, name: str, display: str, *, allow_null: bool) -> pa.Array:
    """Return a column as a string array; numbers are rendered, never rounded.

    Raises:
        EvidenceError: ``evidence-null-key`` for a null or empty value when ``allow_null`` is false
            (naming the first such row), ``evidence-wrong-type`` for nested values.
    """
    col = table.column(name).combine_chunks()
    if pa.types.is_nested(col.type) or pa.types.is_binary(col.type):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds {col.type}, not a scalar id or label",
            file=display,
            column=name,
            expected="string or integer",
            found=str(col.type),
        )
    if pa.types.is_floating(col.type):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds floating-point numbers; "
            "ids must be strings or integers",
            file=display,
            column=name,
            expected="string or integer",
            found=str(col.type),
        )
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if isinstance(col.type, pa.BaseExtensionType):
        col = col.storage
        if pa.types.is_fixed_size_binary(col.type) and col.type.byte_width == 16:
            # UUIDs (e.g. ``arrow.uuid``) as their canonical hex strings, as LangSmith's
            # ``to_pandas()`` writes them to Parquet
            uuids = [str(uuid.UUID(bytes=b)) if b is not None else None for b in col.to_pylist()]
            col = pa.array(uuids, pa.string())
    strings = pc.cast(col, pa.string()) if not pa.types.is_string(col.type) else col
    if not allow_null:
        bad = pc.or_(pc.is_null(strings), pc.equal(pc.utf8_trim_whitespace(strings), ""))
        bad = pc.fill_null(bad, True)
        if pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            raise EvidenceError(
                "evidence-null-key",
                f"{display} row {row + 1}: column {name!r} is empty",
                hint="every row needs a value in its key columns",
                file=display,
                row=row + 1,
                column=name,
                expected="a non-empty value",
                found="empty",
            )
    else:
        strings = pc.if_else(pc.equal(strings, ""), pa.scalar(None, pa.string()), strings)
    return strings


def column_as_float(
    table: pa.Table, name: str, display: str, *, booleans: bool = False
) -> tuple[pa.Array, pa.Array]:
    """Return a metric column as float64 values and a missing-reason array.

    Numbers are plain ASCII decimals, with ASCII white space around them allowed. Booleans
    (a boolean column, or the strings true/false in any case) map to 1.0 and 0.0 only when
    ``booleans`` says the adapter's tool writes them; otherwise they are refused. Empty cells,
    ``null`` and absent values are null with reason ``null``; NaN (the float, or the strings
    nan/NaN) is null with reason ``nan``. Infinite values are kept as they are so the
    non-finite gate counts them.

    Returns:
        ``(values, missing_reason)``: float64 with nulls where missing; string, null where present.

    Raises:
        EvidenceError: ``evidence-wrong-type`` naming the first row whose cell is not a number,
            and what was found.
    """
    col = table.column(name).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    n = len(col)
    if pa.types.is_boolean(col.type) and not booleans:
        valid = pc.indices_nonzero(pc.is_valid(col))  # the first non-null cell (row 1 if none)
        raise not_a_number(display, (valid[0].as_py() if len(valid) else 0) + 1, name, True)
    if (
        pa.types.is_boolean(col.type)
        or pa.types.is_integer(col.type)
        or pa.types.is_floating(col.type)
        or pa.types.is_decimal(col.type)
    ):
        values = pc.cast(col, pa.float64())
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        values = _parse_float_strings(col, name, display, booleans)
    elif pa.types.is_null(col.type):
        values = pa.nulls(n, pa.float64())
    else:
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds {col.type}, not numbers",
            file=display,
            column=name,
            expected="a number per row",
            found=str(col.type),
        )
    is_nan = pc.fill_null(pc.is_nan(values), False)
    if values.null_count == 0 and not pc.any(is_nan).as_py():  # the common case: no pass per row
        return values, pa.nulls(n, pa.string())
    reason = pc.if_else(
        pc.is_null(values),
        pa.scalar("null"),
        pc.if_else(is_nan, pa.scalar("nan"), pa.scalar(None, pa.string())),
    )
    values = pc.if_else(is_nan, pa.scalar(None, pa.float64()), values)
    return values, reason


def _parse_float_strings(col: pa.Array, name: str, display: str, booleans: bool) -> pa.Array:
    trimmed = pc.ascii_trim_whitespace(col)  # a no-break space is not white space around a number
    is_null = pc.or_(
        pc.is_null(trimmed), pc.is_in(trimmed, value_set=pa.array(sorted(NULL_STRINGS)))
    )
    is_nan = pc.is_in(trimmed, value_set=pa.array(sorted(NAN_STRINGS)))
    lowered = pc.utf8_lower(trimmed)
    is_bool = pc.is_in(lowered, value_set=pa.array(["true", "false"]))
    if not booleans:
        is_bool = pc.and_(is_bool, pa.scalar(False))  # parsed as numbers below: refused
    cleaned = pc.if_else(pc.or_(is_null, pc.or_(is_nan, is_bool)), pa.scalar("0"), trimmed)
    try:
        parsed = pc.cast(cleaned, pa.float64())
    except pa.ArrowInvalid:
        cells = cleaned.to_pylist()
        row = next((i for i, cell in enumerate(cells) if parse_number(cell) is None), 0)
        raise not_a_number(display, row + 1, name, cells[row]) from None
    parsed = pc.if_else(is_bool, pc.if_else(pc.equal(lowered, "true"), 1.0, 0.0), parsed)
    parsed = pc.if_else(is_nan, pa.scalar(math.nan), parsed)
    return pc.if_else(is_null, pa.scalar(None, pa.float64()), parsed)


_SNAKE_RE = re.compile(r"[^0-9a-z]+")


def snake_metric_id(name: str) -> str:
    """Return the canonical snake_case metric id of a tool's metric name.

    ``"Answer Relevancy"`` → ``answer_relevancy``; ``"rouge_score(mode=fmeasure)"`` →
    ``rouge_score_mode_fmeasure``; ``"context_recall@3"`` → ``context_recall_at_3``;
    ``"feedback.token_f1"`` is not special here (adapters strip their own prefixes first).
    """
    lowered = unicodedata.normalize("NFKC", name).casefold().replace("@", "_at_")
    return _SNAKE_RE.sub("_", lowered).strip("_")


def select_metrics(
    available: dict[str, str], wanted: dict[str, str], display: str
) -> dict[str, str]:
    """Choose which of a file's metrics to read and their canonical ids.

    Args:
        available: original name → default canonical id, for every metric the file holds.
        wanted: the contract's ``metrics`` (original name or default id → metric id); empty
            means every available metric under its default id.

    Returns:
        original name → canonical metric id.

    Raises:
        EvidenceError: ``evidence-missing-column`` for a wanted metric the file does not hold;
            ``evidence-metric-ambiguous`` for two names with the same id;
            ``evidence-header-invisible`` for a name with white space or invisible characters
            at its edges (``'Token F1 '`` never matches ``Token F1``).
    """
    check_header(list(available), display)  # metric names from JSON keys are headers too
    seen: dict[str, str] = {}
    for name, metric in available.items():  # two names that become one id
        other = seen.setdefault(metric, name)
        if other != name:
            raise EvidenceError(
                "evidence-metric-ambiguous",
                f"{display}: metrics {other!r} and {name!r} differ only in case or punctuation "
                f"and both become {metric!r}",
                hint="rename one of them in the export; which one is meant cannot be told",
                file=display,
                column=name,
                expected="metric names that stay distinct as snake_case ids",
                found=f"{other!r} and {name!r}",
            )
    if not wanted:
        return dict(available)
    by_id = {v: k for k, v in available.items()}
    out: dict[str, str] = {}
    for key, metric in wanted.items():
        original = key if key in available else by_id.get(key)
        if original is None:
            raise missing_name(
                display,
                "metric",
                key,
                available,
                hint="the contract's 'metrics' keys are the tool's metric names or their "
                "snake_case ids",
            )
        out[original] = metric
    return out


def is_value_type(t: pa.DataType) -> bool:
    """Whether an Arrow type holds metric values as they are: float, integer, boolean or null."""
    return (
        pa.types.is_floating(t)
        or pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
    )


def looks_numeric_column(table: pa.Table, name: str) -> bool:
    """Whether a column holds metric values: a numeric, boolean or all-null column, a text
    column with at least one cell that parses as a number (its other cells are then checked,
    and reported by row, by ``column_as_float``), or a text column whose every cell is empty (a
    CSV's all-null column: a metric that raised on every row, as JSON lines write ``null``)."""
    col = table.column(name)
    t = col.type
    if is_value_type(t):
        return True
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return False
    blank = True
    for cell in col.to_pylist():
        if cell is None or not cell.strip():
            continue
        blank = False
        try:
            float(cell)
        except ValueError:
            continue
        return True
    return blank
