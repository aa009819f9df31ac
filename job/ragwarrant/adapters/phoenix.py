"""Arize Phoenix: span exports (telemetry) and evaluations joined to them (results).

``kind: telemetry`` — a ``get_spans_dataframe()`` export (Parquet): ``context.span_id``,
``context.trace_id``, ``parent_id``, ``start_time``/``end_time``, ``attributes.*`` including
``attributes.llm.token_count.{prompt,completion}``, ``attributes.llm.cost.total``,
``attributes.llm.model_name``, ``attributes.openinference.span.kind`` and an
``attributes.metadata`` struct. Reduced like OpenTelemetry spans (see ``otel``): per example
``cost_usd``, ``latency_ms`` (root span duration = ``end_time − start_time``), ``api_calls``
(LLM spans). The example id is ``columns.example_id`` looked up as a column, an attribute, or a
field of ``attributes.metadata`` (``question_id`` finds ``attributes.metadata.question_id``).

``kind: results`` — evaluations, indexed by ``context.span_id`` (or ``span_id``):

- phoenix-evals ``evaluate_dataframe()`` output: ``<name>_score`` cells holding a Score
  (dict, or its JSON string: ``{"name", "score", "label", "explanation", "direction", ...}``)
  and ``<name>_execution_details`` (``{"status": "COMPLETED" | ...}``; anything else makes the
  score missing with reason ``error``);
- the legacy ``SpanEvaluations`` frame: ``label, score, explanation`` for one evaluation, whose
  metric id the contract gives with ``metrics: {score: <metric id>}``.

Evaluations of spans carry no example id: each row is joined (``pairing: span-join``) through its
span id to the spans file named by ``options.spans`` (relative to the input directory), which
gives the example id and policy of the span's trace. A frame keyed by the example id column
(``evaluate_dataframe`` of a dataset frame holding ``columns.example_id``) is read by that column
(``pairing: id-column``, chosen by ``auto`` when the frame has the column and no span id column
or no ``options.spans``). ``pairing: question-hash`` uses the ``input`` column instead. A
Score's ``direction: minimize`` is noted in the provenance (the contract must declare that
metric ``lower_is_better``). Tested against arize-phoenix 20.26.1 / arize-phoenix-evals 3.9.4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, ToolFormat
from ragwarrant.adapters._cells import float_cell, parse_python_literal
from ragwarrant.adapters._columns import (
    column_as_float,
    column_as_string,
    select_metrics,
    snake_metric_id,
)
from ragwarrant.adapters._common import (
    Record,
    cells_or_nulls,
    ids_from_column,
    ids_from_questions,
    records_evidence,
    resolve_policies,
    tool_result,
    undeclared_policy,
)
from ragwarrant.adapters._integrity import READER_FAILURES, require_columns
from ragwarrant.adapters._rows import check_unique_keys, input_dir_of, make_texts
from ragwarrant.adapters._spans import SpanFields, get_column, no_example_attribute, resolve_one
from ragwarrant.adapters._tables import open_parquet, read_table
from ragwarrant.adapters.otel import load_spans, span_fields
from ragwarrant.contract import DOCUMENT_REDUCERS, is_readable_file, resolve_inside
from ragwarrant.errors import EvidenceError

SPAN_ID_COLUMNS = ("context.span_id", "span_id")


def _columns_rule(names: Sequence[str]) -> str | None:
    span_col = next((c for c in SPAN_ID_COLUMNS if c in names), None)
    if span_col == "context.span_id" and "context.trace_id" in names:
        return "columns context.span_id and context.trace_id (Phoenix spans dataframe)"
    if not span_col:
        return None
    scores = [c for c in names if c.endswith("_score")] or [
        c for c in names if c in ("score", "result.score")
    ]
    if not scores:
        return None
    return f"column {span_col} with {', '.join(scores[:3])} (Phoenix evaluations)"


FORMAT = ToolFormat(
    "phoenix",
    "arize-phoenix",
    "Phoenix",
    "a Phoenix spans or evaluations table: a context.span_id (or span_id) column",
    lambda s: s.has_any(*SPAN_ID_COLUMNS),
    columns=_columns_rule,
)
Cell = tuple[float | None, str | None]


def span_index(
    path: Any, display: str, fields: SpanFields
) -> dict[str, tuple[str | None, str | None]]:
    """Map every span id of a Phoenix spans file to the (example id, policy) of its trace.

    Raises:
        EvidenceError: the spans file is not Parquet, lacks span/trace id columns or any example
            id attribute, or a trace names two different examples.
    """
    table = read_table(path, "parquet", display)
    schema = table.schema
    require_columns(schema.names, ["context.span_id", "context.trace_id"], display)
    ex_where = resolve_one(schema, fields.example)
    if ex_where is None:
        raise no_example_attribute(
            display,
            fields.example,
            schema.names,
            hint="set columns.example_id, e.g. question_id for attributes.metadata.question_id",
        )
    pol_where = resolve_one(schema, fields.policy) if fields.policy else None
    spans = column_as_string(table, "context.span_id", display, allow_null=False).to_pylist()
    traces = column_as_string(table, "context.trace_id", display, allow_null=False).to_pylist()
    examples = pc.cast(get_column(table, ex_where), pa.string()).to_pylist()
    policies = (
        pc.cast(get_column(table, pol_where), pa.string()).to_pylist()
        if pol_where
        else [None] * len(spans)
    )
    per_trace: dict[str, tuple[str | None, str | None]] = {}
    for i, (tr, ex, po) in enumerate(zip(traces, examples, policies, strict=True), start=1):
        old_ex, old_po = per_trace.get(tr, (None, None))
        if ex is not None and old_ex is not None and ex != old_ex:
            raise EvidenceError(
                "evidence-trace-conflict",
                f"{display} row {i}: trace {tr!r} names two examples: {old_ex!r} and {ex!r}",
                file=display,
                row=i,
                column=".".join((ex_where[0], *ex_where[1])),
                expected="one example per trace",
                found=f"{old_ex!r}, {ex!r}",
            )
        per_trace[tr] = (old_ex or ex, old_po or po)
    return {s: per_trace[t] for s, t in zip(spans, traces, strict=True)}


def _score_cell(cell: Any, display: str, row: int, column: str) -> dict[str, Any] | None:
    if cell is None:
        return None
    if isinstance(cell, dict):
        return cell
    if isinstance(cell, int | float):
        return {"score": cell}
    if isinstance(cell, str):
        if not cell.strip():
            return None
        value = parse_python_literal(cell, display, row, column)
        if isinstance(value, dict):
            return value
        if isinstance(value, int | float) or value is None:
            return {"score": value}
    raise EvidenceError(
        "evidence-wrong-type",
        f"{display} row {row}: {column!r} is not a Score",
        hint="phoenix-evals score cells hold {'score': ..., 'label': ...} (a dict or its JSON)",
        file=display,
        row=row,
        column=column,
        expected="a Score dict",
        found=repr(cell)[:40],
    )


def _score_value(cell: Any, det: Any, at: tuple[str, int, str]) -> tuple[Cell, str | None]:
    """One evaluation's ``(value, reason)`` and the direction its Score declares."""
    display, i, col = at
    status = None
    if det is not None:
        d = (
            det
            if isinstance(det, dict)
            else _score_cell(det, display, i, f"{col[:-6]}_execution_details")
        )
        status = (d or {}).get("status")
    score = _score_cell(cell, display, i, col)
    if status is not None and str(status).upper() != "COMPLETED":
        return (None, "error"), None
    if score is None:
        return (None, "null"), None
    direction = str(score["direction"]) if score.get("direction") else None
    if "score" not in score:
        return (None, "absent"), direction
    return float_cell(score["score"], display, i, f"{col}.score"), direction


_DIRECTIONS = {"maximize": "higher_is_better", "minimize": "lower_is_better"}


#: ``options.document_reducer``: the per-document scores of one example → its value.
_REDUCERS: dict[str, Callable[[list[float]], float]] = {
    "mean": lambda vs: sum(vs) / len(vs),
    "max": max,
    "any": lambda vs: 1.0 if any(v > 0 for v in vs) else 0.0,
}


_METADATA_FAILURES: tuple[type[BaseException], ...] = (
    *READER_FAILURES,
    KeyError,
    TypeError,
    orjson.JSONDecodeError,
)


def eval_name(path: Path) -> str | None:
    """The ``eval_name`` Phoenix's ``Evaluations.save`` writes into the Parquet metadata."""
    try:
        meta = pq.read_schema(path).metadata or {}
        return str(orjson.loads(meta[b"arize"])["eval_name"])
    except _METADATA_FAILURES:
        return None


@dataclass
class _Evaluations:
    """A Phoenix evaluations frame being read: the request, its table, the provenance notes so
    far, the direction (maximize / minimize) its Scores or annotations declare per metric and,
    once ``index`` ran, each row's policy and example id. ``records`` reads any shape."""

    request: AdapterRequest
    table: pa.Table
    notes: list[str] = field(default_factory=list)
    directions: dict[str, str] = field(default_factory=dict)
    policies: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)

    def joins_spans(self) -> bool:
        """``pairing: auto``: join through the spans unless the frame is keyed by the example id
        column instead (``columns.example_id`` present, and no span id column or no
        ``options.spans``): ``evaluate_dataframe`` returns its input's columns, so a frame built
        from the dataset rather than from spans holds the example id itself."""
        names = self.table.schema.names
        if self.request.source.columns.example_id not in names:
            return True
        has_span = any(c in names for c in SPAN_ID_COLUMNS)
        return has_span and bool(self.request.source.options.get("spans"))

    def index(self) -> tuple[str, str]:
        """Set each row's policy and example (rows of one example may repeat: one per annotation
        or per retrieved document); return the pairing method and the key column."""
        source, display = self.request.source, self.request.display_path
        n = self.table.num_rows
        if source.pairing == "span-join" or (source.pairing == "auto" and self.joins_spans()):
            examples, file_policies, key_col = self.join_spans()
            pairing = "span-join"
        elif source.pairing == "question-hash":
            examples = ids_from_questions(self.table, "input", display)
            file_policies, pairing, key_col = [None] * n, "question-hash", "input"
        else:
            key_col = source.columns.example_id
            examples = ids_from_column(self.table, key_col, display)
            file_policies, pairing = [None] * n, "id-column"
        if source.policy is None and all(p is None for p in file_policies):
            raise undeclared_policy(
                display,
                "neither the evaluations nor their spans name a policy,",
                hint="add 'policy: <id>' to this evidence source",
            )
        rows = list(range(1, n + 1))
        where = "metadata.policy of the joined span"
        self.policies = resolve_policies(self.request, file_policies, rows, where)
        self.examples = examples
        return pairing, key_col

    def records(self) -> tuple[list[Record], dict[str, str], str]:
        """Records, chosen metrics and pairing method of any shape."""
        names = self.table.schema.names
        pairing, key_col = self.index()
        if "annotation_name" in names:
            return (*self.annotation_records(), pairing)
        if "document_position" in names:
            return (*self.document_records(), pairing)
        rows = list(range(1, self.table.num_rows + 1))  # one row per example in the other shapes
        check_unique_keys(self.policies, self.examples, rows, self.request.display_path, key_col)
        if any(c.endswith("_score") and c != "score" for c in names):
            return (*self.score_records(), pairing)
        return (*self.legacy_records(), pairing)

    def join_spans(self) -> tuple[list[str], list[str | None], str]:
        """Example id and policy of each row, through its span id and ``options.spans``."""
        source, display = self.request.source, self.request.display_path
        names = self.table.schema.names
        span_col = next((c for c in SPAN_ID_COLUMNS if c in names), None)
        if span_col is None:
            require_columns(names, [SPAN_ID_COLUMNS[0]], display)
        assert span_col is not None
        spans_rel = source.options.get("spans")
        if not isinstance(spans_rel, str) or not spans_rel:
            raise EvidenceError(
                "evidence-spans-needed",
                f"{display}: Phoenix evaluations carry no example id; they are joined to spans",
                hint="set options.spans to the spans file of the same run (relative to the input "
                "directory), or pairing: question-hash",
                file=display,
                expected="options.spans",
                found="nothing",
            )
        spans_path = resolve_inside(
            input_dir_of(self.request.path, source.path, display), spans_rel
        )
        if not is_readable_file(spans_path):
            raise EvidenceError(
                "evidence-spans-missing",
                f"{display}: options.spans names {spans_rel}, which is not a readable file in the "
                "input directory",
                hint="copy the spans export of the same run there, or fix options.spans",
                file=display,
                expected=f"a spans file at {spans_rel}",
                found="no such file",
            )
        index = span_index(spans_path, spans_rel, span_fields(self.request, metadata=True))
        span_ids = column_as_string(self.table, span_col, display, allow_null=False).to_pylist()
        examples: list[str] = []
        file_policies: list[str | None] = []
        for i, s in enumerate(span_ids, start=1):
            hit = index.get(s)
            if hit is None or hit[0] is None:
                missing = sum(1 for x in span_ids if index.get(x) is None)
                raise EvidenceError(
                    "evidence-join-miss",
                    f"{display} row {i}: the span id in column {span_col} is not in {spans_rel}"
                    f" ({missing} of {len(span_ids)} rows' span ids are not)"
                    if hit is None
                    else f"{display} row {i}: the trace of the span in column {span_col} "
                    "carries no example id",
                    hint="options.spans must name the spans file of the run these evaluations "
                    "scored",
                    file=display,
                    row=i,
                    column=span_col,
                    expected=f"a span id of {spans_rel}",
                    found=f"{missing} of {len(span_ids)} span ids not in {spans_rel}"
                    if hit is None
                    else "a trace without an example id",
                )  # never the id itself: an id is the user's data
            examples.append(hit[0])
            file_policies.append(hit[1])
        self.notes.append(
            f"joined {span_col} to {spans_rel} (example id and policy of the span's trace)"
        )
        return examples, file_policies, span_col

    def legacy_records(self) -> tuple[list[Record], dict[str, str]]:
        """The records of a legacy SpanEvaluations frame (label, score, explanation)."""
        source, display = self.request.source, self.request.display_path
        require_columns(self.table.schema.names, ["score"], display)
        if not source.metrics:
            raise EvidenceError(
                "evidence-metric-name-needed",
                f"{display} is a SpanEvaluations frame (label, score, explanation) and does not "
                "name its evaluation",
                hint="give the metric id with metrics: {score: <metric id>}",
                file=display,
                column="score",
                expected="metrics: {score: <id>}",
                found="no mapping",
            )
        chosen = select_metrics({"score": "score"}, source.metrics, display)
        values, reason = column_as_float(self.table, "score", display)
        metric = chosen["score"]
        policies, examples = self.policies, self.examples
        records: list[Record] = [
            (policies[i], examples[i], metric, v, r, i + 1)
            for i, (v, r) in enumerate(zip(values.to_pylist(), reason.to_pylist(), strict=True))
        ]
        self.notes.append("shape: legacy SpanEvaluations (label, score, explanation)")
        return records, chosen

    def score_records(self) -> tuple[list[Record], dict[str, str]]:
        """The records of a phoenix-evals ``evaluate_dataframe`` frame (``<name>_score`` cells)."""
        source, display = self.request.source, self.request.display_path
        names = self.table.schema.names
        score_cols = [c for c in names if c.endswith("_score") and c != "score"]
        available = {c[: -len("_score")]: snake_metric_id(c[: -len("_score")]) for c in score_cols}
        chosen = select_metrics(available, source.metrics, display)
        policies, examples = self.policies, self.examples
        records: list[Record] = []
        errors = 0
        for name, metric in chosen.items():
            col = f"{name}_score"
            details_col = f"{name}_execution_details"
            details = cells_or_nulls(self.table, details_col if details_col in names else None)
            for i, (cell, det) in enumerate(
                zip(self.table.column(col).to_pylist(), details, strict=True)
            ):
                (v, r), direction = _score_value(cell, det, (display, i + 1, col))
                errors += r == "error"
                if direction:
                    self.directions[metric] = direction
                records.append((policies[i], examples[i], metric, v, r, i + 1))
        self.notes.append("shape: phoenix-evals evaluate_dataframe (<name>_score cells)")
        if errors:
            self.notes.append(
                f"{errors} evaluation(s) did not complete and count as missing (reason 'error')"
            )
        for metric, direction in sorted(self.directions.items()):
            if direction.lower() == "minimize":
                self.notes.append(
                    f"{metric}: the Score says direction 'minimize' (lower is better)"
                )
        return records, chosen

    def annotation_records(self) -> tuple[list[Record], dict[str, str]]:
        """Records of a long annotation frame: one row per (span, annotation_name).

        ``to_annotation_dataframe`` writes ``score``; the client's
        ``get_span_annotations_dataframe`` writes ``result.score``. Each annotation name is a
        metric (snake_case id).

        Raises:
            EvidenceError: ``evidence-duplicate-id`` for an example annotated twice under one name;
                as ``float_cell`` for a score that is not a number.
        """
        display = self.request.display_path
        names = self.table.schema.names
        score_col = next((c for c in ("score", "result.score") if c in names), "score")
        require_columns(names, [score_col], display)
        labels = column_as_string(
            self.table, "annotation_name", display, allow_null=False
        ).to_pylist()
        available = {a: snake_metric_id(a) for a in dict.fromkeys(labels)}
        chosen = select_metrics(available, self.request.source.metrics, display)
        meta = cells_or_nulls(self.table, "metadata" if "metadata" in names else None)
        policies, examples = self.policies, self.examples
        records: list[Record] = []
        first: dict[tuple[str, str, str], int] = {}
        for i, (name, cell, m) in enumerate(
            zip(labels, self.table.column(score_col).to_pylist(), meta, strict=True), start=1
        ):
            if name not in chosen:
                continue
            key = (policies[i - 1], examples[i - 1], chosen[name])
            if key in first:
                raise EvidenceError(
                    "evidence-duplicate-id",
                    f"{display} row {i}: example {key[1]!r} of policy {key[0]!r} is annotated "
                    f"{name!r} again (first in row {first[key]})",
                    hint="keep one annotation per span and name (e.g. filter by annotator)",
                    file=display,
                    row=i,
                    column="annotation_name",
                    expected="one annotation per example and name",
                    found=f"again (first in row {first[key]})",
                )
            first[key] = i
            if isinstance(m, dict) and m.get("direction"):
                self.directions[chosen[name]] = str(m["direction"])
            records.append((*key, *float_cell(cell, display, i, score_col), i))
        self.notes.append(f"shape: Phoenix annotations, long layout (annotation_name, {score_col})")
        return records, chosen

    def document_records(self) -> tuple[list[Record], dict[str, str]]:
        """Records of DocumentEvaluations: per-document scores reduced per example.

        Raises:
            EvidenceError: ``evidence-reducer-needed`` without ``options.document_reducer``; as
                ``column_as_float`` for a score that is not a number.
        """
        display, how = (
            self.request.display_path,
            self.request.source.options.get("document_reducer"),
        )
        if how not in DOCUMENT_REDUCERS:
            raise EvidenceError(
                "evidence-reducer-needed",
                f"{display} holds Phoenix DocumentEvaluations (one row per retrieved "
                "document); say how they become one value per example",
                hint="set options.document_reducer to mean, max or any (any: 1 when some "
                "document scores above 0)",
                file=display,
                column="document_position",
                expected="options.document_reducer: mean | max | any",
                found=str(how) if how is not None else "nothing",
            )
        require_columns(self.table.schema.names, ["score"], display)
        name = eval_name(self.request.path) if self.request.source.format == "parquet" else None
        available = {"score": snake_metric_id(name) if name else "score"}
        if name:
            available = {name: snake_metric_id(name)}
        chosen = select_metrics(available, self.request.source.metrics, display)
        metric = next(iter(chosen.values()))
        values, _ = column_as_float(self.table, "score", display)
        groups: dict[tuple[str, str], tuple[int, list[float | None]]] = {}
        for i, v in enumerate(values.to_pylist(), start=1):
            key = (self.policies[i - 1], self.examples[i - 1])
            groups.setdefault(key, (i, []))[1].append(v)
        records: list[Record] = [
            (p, e, metric, None, "null", row)
            if None in vs
            else (p, e, metric, _REDUCERS[str(how)]([v for v in vs if v is not None]), None, row)
            for (p, e), (row, vs) in groups.items()
        ]
        self.notes.append(
            f"shape: Phoenix DocumentEvaluations ({self.table.num_rows} documents reduced to "
            f"{len(groups)} examples by {how})"
        )
        return records, chosen


def is_spans_parquet(path: Path) -> bool:
    """A Parquet file with span and trace ids and no score columns is a spans export."""
    try:
        names = pq.read_schema(path).names
    except READER_FAILURES:
        return False
    return "context.trace_id" in names and not any(
        c.endswith("_score") or c == "score" for c in names
    )


def load(request: AdapterRequest) -> AdapterResult:
    """Read a Phoenix spans export (telemetry) or evaluations frame (results).

    Raises:
        EvidenceError: as ``otel.load`` for spans; for evaluations: no span id column, no
            ``options.spans``, a span id not in the spans file, a Score cell that is not a dict or
            its JSON, a legacy frame without a metric id, rows of another policy.
    """
    parquet = request.source.format == "parquet"
    if request.source.kind == "telemetry" or (parquet and is_spans_parquet(request.path)):
        if parquet:
            open_parquet(request.path, request.display_path)
        return load_spans(request, FORMAT, fields=span_fields(request, metadata=True))
    display = request.display_path
    frame = _Evaluations(request, read_table(request.path, request.source.format, display))
    records, chosen, pairing = frame.records()
    table, n = frame.table, frame.table.num_rows
    texts = None
    if "input" in table.schema.names and "output" in table.schema.names:
        texts = make_texts(
            frame.policies,
            frame.examples,
            table.column("input").to_pylist(),
            table.column("output").to_pylist(),
            [None] * n,
            display=display,
        )
    result = tool_result(
        request,
        FORMAT,
        evidence=records_evidence(request, FORMAT, records),
        metric_names=chosen,
        pairing_method=pairing,
        rows_read=n,
        notes=frame.notes,
        texts=texts,
    )
    directions = {  # Phoenix's maximize / minimize as the contract's terms
        m: _DIRECTIONS[d.lower()] for m, d in frame.directions.items() if d.lower() in _DIRECTIONS
    }
    return dataclasses.replace(result, directions=directions)
