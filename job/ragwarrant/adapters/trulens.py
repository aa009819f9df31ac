"""TruLens: the records-and-feedback table (``TruSession.get_records_and_feedback()``).

One row per record: ``app_name``, ``app_version``, ``app_id``, ``record_id``, ``input``,
``output``, ``record_json`` / ``cost_json`` / ``perf_json`` (nested JSON, or Python reprs once
pandas wrote them to CSV), ``ts``, one column per feedback named after it (with spaces:
``Token F1``), ``<name>_calls``, ``<name> feedback cost in USD``, ``latency`` (seconds),
``total_tokens``, ``total_cost``, ``cost_currency``. A feedback that did not run is null.

Policy: ``app_version`` (or the column ``columns.policy_id`` when the file has it), checked
against the contract; a file with every policy needs no ``policy``. Example id: the column
named by ``columns.example_id`` if present, else that key in ``record_json.meta`` (``question_id``
finds ``meta.question_id``) → ``pairing: id-column``; by default the hash of the normalized
``input`` (``pairing: question-hash``), since the table has no id column.

Feedback names become snake_case ids (``Token F1`` → ``token_f1``). Judge cost (the feedback
functions' own cost) is the sum of the ``<name> feedback cost in USD`` columns, as
``judge_cost_usd``. The application's ``total_cost`` and ``latency`` (seconds; 0 means not
measured, read as missing with reason ``absent``) are read as ``cost_usd`` / ``latency_ms`` only
with ``options.include_operational: true``. Tested against trulens 2.16.0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, ToolFormat
from ragwarrant.adapters._cells import parse_python_literal
from ragwarrant.adapters._columns import (
    column_as_float,
    looks_numeric_column,
    select_metrics,
    snake_metric_id,
)
from ragwarrant.adapters._table_tool import IdsFound, TableSpec, ToolTable
from ragwarrant.adapters._telemetry import JUDGE_COST_METRIC
from ragwarrant.errors import EvidenceError

COST_SUFFIX = " feedback cost in USD"
CALLS_SUFFIX = "_calls"
FIXED_COLUMNS = frozenset(
    {
        "app_name",
        "app_version",
        "app_id",
        "app_json",
        "type",
        "record_id",
        "conversation_id",
        "input",
        "output",
        "tags",
        "record_json",
        "cost_json",
        "perf_json",
        "ts",
        "latency",
        "total_tokens",
        "total_cost",
        "cost_currency",
        # TruLens 2.x OTel mode (the default): record-level bookkeeping, never feedback
        "input_id",
        "eval_cost",
        "eval_cost_snowflake",
        "num_events",
        "sampled",
        "sample_rate",
        "eval_decision_reason",
        "is_match",
    }
)
DIRECTION_SUFFIX = " direction"


def _columns_rule(names: Sequence[str]) -> str | None:
    if "app_version" not in names:
        return None
    if "record_json" in names:
        why = "record_json"
    elif any(c.endswith(COST_SUFFIX) for c in names):
        why = "'<name> feedback cost in USD'"
    else:
        return None
    return f"columns app_version and {why} (TruLens records-and-feedback table)"


FORMAT = ToolFormat(
    "trulens",
    "trulens",
    "TruLens",
    "a TruLens records-and-feedback table: app_version with record_json or "
    "'<name> feedback cost in USD' columns",
    lambda s: _columns_rule(s.names) is not None,
    columns=_columns_rule,
)


def _meta_ids(request: AdapterRequest, table: pa.Table) -> IdsFound | None:
    """``record_json.meta[key]`` of every row (``key``: ``columns.example_id``), or None when
    some row lacks it.

    Raises:
        EvidenceError: ``evidence-missing-column`` when some row lacks it and the id is required
            (``pairing: id-column`` or an explicit ``columns.example_id``).
    """
    source, display = request.source, request.display_path
    key = source.columns.example_id
    names = table.schema.names
    cells = table.column("record_json").to_pylist() if "record_json" in names else None
    out = []
    for i, cell in enumerate(cells or [], start=1):
        if not isinstance(cell, str) or not cell.strip():
            break
        rec: Any = parse_python_literal(cell, display, i, "record_json")
        meta = rec.get("meta") if isinstance(rec, dict) else None
        value = meta.get(key) if isinstance(meta, dict) else None
        if value is None or isinstance(value, dict | list) or not str(value).strip():
            break
        out.append(str(value))
    else:
        if cells is not None:
            return out, "id-column", f"record_json.meta.{key}"
    if source.pairing == "id-column" or "example_id" in source.columns.model_fields_set:
        raise EvidenceError(
            "evidence-missing-column",
            f"{display}: neither a column {key!r} nor record_json.meta.{key} in every row",
            hint="name the id key with columns.example_id, or use pairing: question-hash",
            file=display,
            column=key,
            expected=f"record_json.meta.{key}",
            found="missing",
        )
    return None


TABLE = TableSpec(
    FORMAT,
    ("input",),
    ("feedback column", "one column per feedback", ""),
    responses=("output",),
    no_span_join="TruLens tables cannot be span-joined",
    policy_column="app_version",
    meta_ids=_meta_ids,
    hash_note="example ids are qh:<sha256 prefix> of the normalized {!r} text",
    skipped_note="non-numeric columns not read as feedback",
)


def _available(request: AdapterRequest, table: pa.Table) -> tuple[dict[str, str], list[str]]:
    """Column → default metric id of every readable feedback (and judge cost, operational
    columns on request); and the non-numeric columns skipped."""
    source = request.source
    names = table.schema.names
    feedback = [
        c
        for c in names
        if c not in FIXED_COLUMNS
        and not c.endswith((COST_SUFFIX, CALLS_SUFFIX, DIRECTION_SUFFIX))
        and c not in (source.columns.policy_id, source.columns.example_id)
    ]
    skipped = [c for c in feedback if not looks_numeric_column(table, c)]
    available = {c: snake_metric_id(c) for c in feedback if c not in skipped}
    if any(c.endswith(COST_SUFFIX) for c in names):
        available["feedback cost in USD"] = JUDGE_COST_METRIC
    if source.options.get("include_operational", False):
        for c, m in (("total_cost", "cost_usd"), ("latency", "latency_ms")):
            if c in names:
                available[c] = m
    return available, skipped


def load(request: AdapterRequest) -> AdapterResult:
    """Read a TruLens records-and-feedback table into canonical evidence and texts.

    Raises:
        EvidenceError: empty file; no ``input`` (question-hash) or id; a feedback cell that is not
            a number; a duplicated example within a policy; an ``app_version`` that is not a
            contract policy, or a contract policy with no rows; a wanted feedback the file lacks.
    Directions come from the OTel-mode ``<name> direction`` columns (True: higher is better).
    """
    source, display = request.source, request.display_path
    read = ToolTable.read(request, TABLE)
    table = read.table
    available, skipped = _available(request, table)
    chosen = select_metrics(available, source.metrics, display)
    notes: list[str] = []

    def values(col: str) -> tuple[pa.Array, pa.Array]:
        """One chosen column's values and missing reasons: latency in ms; judge cost summed
        over the feedback cost columns per row, missing only when every one is missing."""
        if col == "feedback cost in USD":
            cost_cols = [c for c in table.schema.names if c.endswith(COST_SUFFIX)]
            costs = [column_as_float(table, c, display)[0] for c in cost_cols]
            total, all_missing = costs[0], pc.is_null(costs[0])
            for v in costs[1:]:
                total = pc.add(pc.fill_null(total, 0.0), pc.fill_null(v, 0.0))
                all_missing = pc.and_(all_missing, pc.is_null(v))
            summed = ", ".join(repr(c) for c in cost_cols)
            notes.append(f"judge cost: sum of {summed} → {chosen[col]}")
            return (
                pc.if_else(all_missing, pa.scalar(None, pa.float64()), total),
                pc.if_else(all_missing, pa.scalar("null"), pa.scalar(None, pa.string())),
            )
        values, reason = column_as_float(table, col, display)
        if col == "latency":
            zero = pc.fill_null(pc.equal(values, 0.0), False)
            k = int(pc.sum(zero).as_py() or 0)
            values = pc.if_else(zero, pa.scalar(None, pa.float64()), pc.multiply(values, 1000.0))
            reason = pc.if_else(zero, pa.scalar("absent"), reason)
            if k:
                notes.append(f"{k} record(s) with latency 0 (not measured) count as missing")
        return values, reason

    result = read.result(chosen, values, skipped, notes)
    directions = {}  # from the OTel-mode '<name> direction' columns, when every row agrees
    for col, metric in chosen.items():
        dcol = f"{col}{DIRECTION_SUFFIX}"
        cells = table.column(dcol).to_pylist() if dcol in table.schema.names else []
        said = {str(v).strip().lower() for v in cells if v is not None} - {"", "none", "nan"}
        if said in ({"true"}, {"false"}):
            directions[metric] = "higher_is_better" if said == {"true"} else "lower_is_better"
    return dataclasses.replace(result, directions=directions)
