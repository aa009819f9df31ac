"""LangSmith: experiment results, as a table or as raw rows.

``ExperimentResults.to_pandas()`` saved as CSV, JSONL or Parquet: dotted ``inputs.*``,
``outputs.*``, ``reference.*``, ``feedback.<key>`` (numbers or booleans; string feedback such as
a category is skipped and named in the notes), ``execution_time`` (seconds), ``error``,
``example_id`` (the dataset example, identical across experiments on the same dataset) and
``id`` (the run). UUID columns may be Arrow ``uuid`` extension types in Parquet (read as UUID
strings). Feedback keys become snake_case ids (``context_recall@3`` → ``context_recall_at_3``).

Raw JSONL, one object per line, either an experiment row ``{run, example, evaluation_results:
{results: [{key, score, value, comment, ...}]}}`` (each schema's ``model_dump_json()``) or a run
``{id, inputs, outputs, reference_example_id, prompt_tokens, completion_tokens, total_cost,
start_time, end_time, feedback: [{key, score, value}]}``.

Example id (``pairing: id-column``): ``columns.example_id`` (default ``example_id``; for raw rows
a dotted path such as ``example.metadata.question_id`` or ``run.inputs.question_id``, default
``example.id`` / ``reference_example_id``). Policy: the source's ``policy``, or the column
``columns.policy_id``, or raw ``run.extra.metadata.policy``. The application's
``execution_time`` / ``total_cost`` / token counts are read as ``latency_ms`` / ``cost_usd`` /
``input_tokens`` / ``output_tokens`` only with ``options.include_operational: true``.
Tested against langsmith 0.15.1.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult
from ragwarrant.adapters._common import (
    Record,
    RowKeys,
    cells_or_nulls,
    ids_from_column,
    ids_from_questions,
    list_cells,
    metric_evidence,
    metric_rows,
    policies_from_column,
    records_evidence,
    resolve_policies,
    span_join_unsupported,
    tool_result,
    tool_tag,
)
from ragwarrant.adapters._io import (
    check_unique_keys,
    column_as_float,
    column_as_string,
    float_cell,
    is_value_type,
    iter_json_objects,
    make_texts,
    parse_list_literal,
    question_hash,
    read_table,
    select_metrics,
    snake_metric_id,
)
from ragwarrant.errors import EvidenceError

__all__ = ["load"]

TOOL = "langsmith"
QUESTION_KEYS = ("question", "input", "query", "user_input")
RESPONSE_KEYS = ("answer", "output", "response")
CONTEXT_KEYS = ("contexts", "retrieved_contexts", "documents")


def _is_numeric_feedback(col: pa.ChunkedArray) -> bool:
    t = col.type
    if is_value_type(t):
        return True
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        for cell in col.to_pylist():
            if cell is None or not cell.strip():
                continue
            if cell.strip().lower() in ("true", "false", "nan"):
                return True
            try:
                float(cell)
            except ValueError:
                return False
            return True
        return True
    return False


def _first(names: list[str], prefix: str, keys: tuple[str, ...]) -> str | None:
    return next((f"{prefix}.{k}" for k in keys if f"{prefix}.{k}" in names), None)


def _load_table(request: AdapterRequest) -> AdapterResult:
    source, display = request.source, request.display_path
    table = read_table(request.path, source.format, display)
    names = table.schema.names
    n = table.num_rows
    rows = list(range(1, n + 1))
    q_col = _first(names, "inputs", QUESTION_KEYS)
    if source.pairing == "question-hash":
        key_col = q_col or "inputs.question"  # the missing column named when there is none
        examples = ids_from_questions(table, key_col, display)
        pairing = "question-hash"
    elif source.pairing == "span-join":
        raise span_join_unsupported(display, "LangSmith tables cannot be span-joined")
    else:
        key_col = source.columns.example_id
        examples = ids_from_column(table, key_col, display)
        pairing = "id-column"
    policies = policies_from_column(
        table,
        request,
        rows,
        undeclared="LangSmith experiment tables carry no policy",
        hint="add 'policy: <id>' to this evidence source (one experiment per policy)",
    )
    check_unique_keys(policies, examples, rows, display, key_col)

    feedback = [c for c in names if c.startswith("feedback.")]
    numeric = [c for c in feedback if _is_numeric_feedback(table.column(c))]
    skipped = [c for c in feedback if c not in numeric]
    available = {c: snake_metric_id(c[len("feedback.") :]) for c in numeric}
    ops: dict[str, tuple[str, float]] = {}
    if source.options.get("include_operational") and "execution_time" in names:
        ops["execution_time"] = ("latency_ms", 1000.0)
        available["execution_time"] = "latency_ms"
    chosen = select_metrics(available, source.metrics, display)
    tag = tool_tag(request, TOOL)
    keys = RowKeys.of(policies, examples, rows)
    parts = []
    for col, metric in chosen.items():
        values, reason = column_as_float(table, col, display)
        if col in ops:
            values = pc.multiply(values, ops[col][1])
        parts.append(metric_rows(keys, metric, values, reason, source=tag, sha256=request.sha256))
    evidence = metric_evidence(
        parts,
        display=display,
        names=names,
        what="numeric feedback column",
        expected="feedback.<key> columns",
    )
    notes = []
    if skipped:
        notes.append(f"non-numeric feedback not read as metrics: {', '.join(skipped)}")
    if "error" in names:
        errs = column_as_string(table, "error", display, allow_null=True)
        k = int(pc.sum(pc.is_valid(errs)).as_py() or 0)
        if k:
            notes.append(f"{k} run(s) have an error; their feedback is read as the file gives it")
    texts = None
    if q_col:
        texts = make_texts(
            policies,
            examples,
            table.column(q_col).to_pylist(),
            cells_or_nulls(table, _first(names, "outputs", RESPONSE_KEYS)),
            list_cells(table, _first(names, "outputs", CONTEXT_KEYS), display),
        )
    return tool_result(
        request,
        adapter="langsmith",
        tool=TOOL,
        evidence=evidence,
        metric_names=chosen,
        pairing_method=pairing,
        rows_read=n,
        notes=notes,
        texts=texts,
    )


def _path(obj: dict[str, Any], path: str) -> Any:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _first_truthy(section: Any, keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` with a truthy value in a run's ``inputs``/``outputs`` dict, or None."""
    found = section or {}
    return next((found.get(k) for k in keys if found.get(k)), None)


def _seconds(a: Any, b: Any) -> float | None:
    try:
        return (
            datetime.fromisoformat(str(b).replace("Z", "+00:00"))
            - datetime.fromisoformat(str(a).replace("Z", "+00:00"))
        ).total_seconds()
    except ValueError:
        return None


def _load_raw(request: AdapterRequest) -> AdapterResult:
    source, display = request.source, request.display_path
    objects = iter_json_objects(request.path, display, not_object="is not a JSON object")
    lines: list[dict[str, Any]] = [obj for _, obj in objects]
    if not lines:
        raise EvidenceError(
            "evidence-empty",
            f"{display} is empty",
            file=display,
            expected="one run per line",
            found="no lines",
        )
    rows = list(range(1, len(lines) + 1))
    wrapped = "run" in lines[0]
    runs = [o.get("run") or {} for o in lines] if wrapped else lines
    explicit = "example_id" in source.columns.model_fields_set
    id_path = (
        source.columns.example_id
        if explicit
        else ("example.id" if wrapped else "reference_example_id")
    )
    examples: list[str] = []
    if source.pairing == "question-hash":
        for i, r in enumerate(runs, start=1):
            q = _first_truthy(r.get("inputs"), QUESTION_KEYS)
            if not isinstance(q, str):
                raise EvidenceError(
                    "evidence-null-key",
                    f"{display} line {i}: the run has no question input",
                    file=display,
                    row=i,
                    column="run.inputs",
                    expected="a question",
                    found="none",
                )
            examples.append(question_hash(q))
        pairing, key_col = "question-hash", "run.inputs"
    else:
        for i, o in enumerate(lines, start=1):
            v = _path(o, id_path)
            if v is None or isinstance(v, dict | list) or not str(v).strip():
                raise EvidenceError(
                    "evidence-null-key",
                    f"{display} line {i}: {id_path!r} is missing or empty",
                    hint="set columns.example_id to the dotted path of the example id",
                    file=display,
                    row=i,
                    column=id_path,
                    expected="a non-empty id",
                    found=repr(v)[:40],
                )
            examples.append(str(v))
        pairing, key_col = "id-column", id_path
    pkey = source.columns.policy_id or "policy"
    file_policies = []
    for r in runs:
        meta = _path(r, "extra.metadata") or {}
        p = meta.get(pkey, meta.get("policy")) if isinstance(meta, dict) else None
        file_policies.append(str(p) if p is not None else None)
    policies = resolve_policies(request, file_policies, rows, f"run.extra.metadata.{pkey}")
    check_unique_keys(policies, examples, rows, display, key_col)

    per_line: list[dict[str, Any]] = []
    available: dict[str, str] = {}
    categorical: set[str] = set()
    for o, r in zip(lines, runs, strict=True):
        results = (_path(o, "evaluation_results.results") if wrapped else r.get("feedback")) or []
        fb: dict[str, Any] = {}
        for item in results:
            if not isinstance(item, dict) or "key" not in item:
                continue
            key = str(item["key"])
            score = item.get("score")
            if (
                score is None
                and item.get("value") is not None
                and not isinstance(item.get("value"), int | float)
            ):
                categorical.add(key)
                continue
            fb[key] = score
            available.setdefault(key, snake_metric_id(key))
        per_line.append(fb)
    categorical -= set(available)
    ops = {}
    if source.options.get("include_operational"):
        ops = {
            "total_cost": "cost_usd",
            "prompt_tokens": "input_tokens",
            "completion_tokens": "output_tokens",
            "latency": "latency_ms",
        }
        available.update(ops)
    chosen = select_metrics(available, source.metrics, display)
    records: list[Record] = []
    for i, (fb, r) in enumerate(zip(per_line, runs, strict=True), start=1):
        p, e = policies[i - 1], examples[i - 1]
        for key, metric in chosen.items():
            if key in ops and key not in fb:
                if key == "latency":
                    s = _seconds(r.get("start_time"), r.get("end_time"))
                    records.append(
                        (
                            p,
                            e,
                            metric,
                            s * 1000.0 if s is not None else None,
                            None if s is not None else "absent",
                            i,
                        )
                    )
                elif key not in r:
                    records.append((p, e, metric, None, "absent", i))
                else:
                    v, why = float_cell(r[key], display, i, f"run.{key}")
                    records.append((p, e, metric, v, why, i))
            elif key not in fb:
                records.append((p, e, metric, None, "absent", i))
            else:
                v, why = float_cell(fb[key], display, i, f"evaluation_results[{key!r}].score")
                records.append((p, e, metric, v, why, i))
    notes = [
        f"shape: {'experiment rows {run, example, evaluation_results}' if wrapped else 'runs'}"
    ]
    if categorical:
        notes.append(f"non-numeric feedback not read as metrics: {', '.join(sorted(categorical))}")
    texts = make_texts(
        policies,
        examples,
        [_first_truthy(r.get("inputs"), QUESTION_KEYS) for r in runs],
        [_first_truthy(r.get("outputs"), RESPONSE_KEYS) for r in runs],
        [
            parse_list_literal(
                next(
                    (
                        (r.get("outputs") or {}).get(k)
                        for k in CONTEXT_KEYS
                        if k in (r.get("outputs") or {})
                    ),
                    None,
                ),
                display,
                i,
                "run.outputs.contexts",
            )
            for i, r in enumerate(runs, start=1)
        ],
    )
    return tool_result(
        request,
        adapter="langsmith",
        tool=TOOL,
        evidence=records_evidence(request, TOOL, records),
        metric_names=chosen,
        pairing_method=pairing,
        rows_read=len(lines),
        notes=notes,
        texts=texts,
    )


def is_raw_jsonl(first_line: bytes) -> bool:
    """Whether a JSON line is a raw LangSmith experiment row or run (not a to_pandas record)."""
    try:
        obj = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(obj, dict):
        return False
    return ("run" in obj and "example" in obj) or ("run_type" in obj and "inputs" in obj)


def load(request: AdapterRequest) -> AdapterResult:
    """Read a LangSmith experiment table or raw JSONL into canonical evidence and texts.

    Raises:
        EvidenceError: empty file; missing id column; a feedback cell that is not a number; a
            duplicated example; rows of another policy; a wanted feedback key the file lacks.
    """
    if request.source.format == "jsonl":
        with request.path.open("rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
        if first and is_raw_jsonl(first):
            return _load_raw(request)
    return _load_table(request)
