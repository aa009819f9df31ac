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
Repetitions (``num_repetitions``: one example id on several rows, each with its own run id and
the same inputs) become examples ``<id>#r<k>`` in cluster ``<id>`` (``_common.repetitions``).
Tested against langsmith 0.15.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, FileShape, ToolFormat
from ragwarrant.adapters._cells import float_cell, given_twice, parse_list_literal
from ragwarrant.adapters._columns import (
    column_as_float,
    is_value_type,
    select_metrics,
    snake_metric_id,
)
from ragwarrant.adapters._common import (
    Record,
    RowKeys,
    dotted,
    metadata_policies,
    record_ids,
    records_evidence,
    repetition_notes,
    repetitions,
    resolve_policies,
    tool_result,
    with_groups,
)
from ragwarrant.adapters._integrity import wrong_json_type
from ragwarrant.adapters._rows import check_unique_keys, make_texts
from ragwarrant.adapters._table_tool import TableSpec, ToolTable
from ragwarrant.adapters._tables import iter_json_objects
from ragwarrant.errors import EvidenceError

WRITES_BOOLEANS = True
"""LangSmith feedback scores may be booleans (an evaluator returning ``score=True``): 1 and 0."""
Cell = tuple[float | None, str | None]
QUESTION_KEYS = ("question", "input", "query", "user_input")
RESPONSE_KEYS = ("answer", "output", "response")
CONTEXT_KEYS = ("contexts", "retrieved_contexts", "documents")


def is_raw_jsonl(first_line: bytes) -> bool:
    """Whether a JSON line is a raw LangSmith experiment row or run (not a to_pandas record)."""
    try:
        obj = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(obj, dict):
        return False
    return ("run" in obj and "example" in obj) or ("run_type" in obj and "inputs" in obj)


def _signature(shape: FileShape) -> str | None:
    if shape.format == "jsonl" and is_raw_jsonl(shape.first_line):
        return "first line is a LangSmith run / experiment row {run, example, ...}"
    return None


def _columns_rule(names: Sequence[str]) -> str | None:
    feedback = [c for c in names if c.startswith("feedback.")]
    if not feedback:
        return None
    return f"feedback.* columns ({', '.join(feedback[:3])}) (LangSmith to_pandas)"


FORMAT = ToolFormat(
    "langsmith",
    "langsmith",
    "LangSmith",
    "a LangSmith experiment: feedback.* / inputs.* / outputs.* columns (to_pandas), or "
    "JSON lines {run, example, ...}",
    lambda s: (
        is_raw_jsonl(s.first_line)
        or any(n.startswith(("feedback.", "inputs.", "outputs.")) for n in s.names)
    ),
    signature=_signature,
    columns=_columns_rule,
)


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


TABLE = TableSpec(
    FORMAT,
    tuple(f"inputs.{k}" for k in QUESTION_KEYS),
    ("numeric feedback column", "feedback.<key> columns", ""),
    responses=tuple(f"outputs.{k}" for k in RESPONSE_KEYS),
    contexts=tuple(f"outputs.{k}" for k in CONTEXT_KEYS),
    no_span_join="LangSmith tables cannot be span-joined",
    no_policy="LangSmith experiment tables carry no policy",
    id_column_only=True,
    skipped_note="non-numeric feedback not read as metrics",
    run_column="id",
    error_column="error",
)


def _first_truthy(section: Any, keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` with a truthy value in a run's ``inputs``/``outputs`` dict, or None."""
    if not isinstance(section, dict):
        return None
    return next((section.get(k) for k in keys if section.get(k)), None)


#: ``options.include_operational``: run field → canonical metric id.
_RAW_OPERATIONAL = {
    "total_cost": "cost_usd",
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "latency": "latency_ms",
}


@dataclass(frozen=True)
class _RawRows:
    """Raw LangSmith JSON lines: each line, its run (the line itself for a bare run), and whether
    the lines are experiment rows ``{run, example, evaluation_results}`` (``wrapped``)."""

    request: AdapterRequest
    lines: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    wrapped: bool

    @classmethod
    def read(cls, request: AdapterRequest) -> _RawRows:
        """Read the lines of ``request``'s file.

        Raises:
            EvidenceError: ``evidence-empty`` for no lines; a line that is not a JSON object,
                or a ``run`` that is neither null nor one.
        """
        display = request.display_path
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
        wrapped = "run" in lines[0]
        runs = lines
        if wrapped:  # the run object of every experiment row (an empty one where it is null)
            runs = [o.get("run") or {} for o in lines]
            bad = next((i for i, r in enumerate(runs, start=1) if not isinstance(r, dict)), 0)
            if bad:
                raise wrong_json_type(display, bad, "/run", "an object (the run)", runs[bad - 1])
        return cls(request, lines, runs, wrapped)

    def examples(self) -> tuple[list[str], str, str]:
        """The example ids, the pairing method and the key path."""
        source, display = self.request.source, self.request.display_path
        if source.pairing == "question-hash":
            questions = [_first_truthy(r.get("inputs"), QUESTION_KEYS) for r in self.runs]
            ids = record_ids(questions, display, "line", "run.inputs", questions=True)
            return ids, "question-hash", "run.inputs"
        if "example_id" in source.columns.model_fields_set:
            id_path = source.columns.example_id
        else:
            id_path = "example.id" if self.wrapped else "reference_example_id"
        hint = "set columns.example_id to the dotted path of the example id"
        ids = record_ids([dotted(o, id_path) for o in self.lines], display, "line", id_path, hint)
        return ids, "id-column", id_path

    def policies(self) -> list[str]:
        """Each line's policy: the source's, or ``run.extra.metadata.<columns.policy_id>``."""
        pkey = self.request.source.columns.policy_id or "policy"
        named = metadata_policies((dotted(r, "extra.metadata") for r in self.runs), pkey)
        rows = list(range(1, len(self.runs) + 1))
        return resolve_policies(self.request, named, rows, f"run.extra.metadata.{pkey}")

    def feedback(self) -> tuple[list[dict[str, Any]], dict[str, str], list[str]]:
        """Per line, feedback key → score; every numeric key's default id; the categorical keys
        (an item with no score and a non-numeric value: a label, not a metric).

        Raises:
            EvidenceError: ``evidence-duplicate-metric`` for a line with two scored results of
                one key (which one holds cannot be told); a results field that is not a list.
        """
        per_line: list[dict[str, Any]] = []
        available: dict[str, str] = {}
        categorical: set[str] = set()
        pointer = "/evaluation_results/results" if self.wrapped else "/feedback"
        for i, (o, r) in enumerate(zip(self.lines, self.runs, strict=True), start=1):
            items = dotted(o, "evaluation_results.results") if self.wrapped else r.get("feedback")
            if not isinstance(items or [], list):
                raise wrong_json_type(
                    self.request.display_path, i, pointer, "a list of feedback objects", items
                )
            fb: dict[str, Any] = {}
            at: dict[str, int] = {}
            for j, item in enumerate(items or []):
                if not isinstance(item, dict) or "key" not in item:
                    continue
                key, value = str(item["key"]), item.get("value")
                labelled = value is not None and not isinstance(value, int | float)
                if item.get("score") is None and labelled:
                    categorical.add(key)
                    continue
                if key in fb:
                    where = f"{pointer}/{j}", f"{pointer}/{at[key]}"
                    display = self.request.display_path
                    raise given_twice(display, i, *where, f"feedback key {key!r}")
                fb[key], at[key] = item.get("score"), j
                available.setdefault(key, snake_metric_id(key))
            per_line.append(fb)
        return per_line, available, sorted(categorical - set(available))

    def value(self, i: int, key: str, fb: dict[str, Any], ops: bool) -> Cell:
        """Line ``i``'s cell: feedback ``key``'s score (``fb``: the line's feedback), or (``ops``)
        the run's field ``key``; latency is ``end_time − start_time`` in ms."""
        display, run = self.request.display_path, self.runs[i - 1]
        if key in fb:
            pointer = f"evaluation_results[{key!r}].score"
            return float_cell(fb[key], display, i, pointer, booleans=WRITES_BOOLEANS)
        if not ops or key not in _RAW_OPERATIONAL:
            return None, "absent"
        if key == "latency":
            try:
                start, end = (
                    datetime.fromisoformat(str(run.get(f)).replace("Z", "+00:00"))
                    for f in ("start_time", "end_time")
                )
            except ValueError:
                return None, "absent"
            return (end - start).total_seconds() * 1000.0, None
        if key not in run:
            return None, "absent"
        return float_cell(run[key], display, i, f"run.{key}", booleans=WRITES_BOOLEANS)

    def texts(self, policies: list[str], examples: list[str]) -> pa.Table:
        """The private texts: first question, response and context list of each run."""
        display = self.request.display_path
        contexts = []
        for i, r in enumerate(self.runs, start=1):
            outputs = r.get("outputs")
            outputs = outputs if isinstance(outputs, dict) else {}
            cell = next((outputs.get(k) for k in CONTEXT_KEYS if k in outputs), None)
            contexts.append(parse_list_literal(cell, display, i, "run.outputs.contexts"))
        return make_texts(
            policies,
            examples,
            [_first_truthy(r.get("inputs"), QUESTION_KEYS) for r in self.runs],
            [_first_truthy(r.get("outputs"), RESPONSE_KEYS) for r in self.runs],
            contexts,
            display=display,
        )

    def result(self) -> AdapterResult:
        """The adapter's result: evidence of the chosen feedback keys (and, with
        ``options.include_operational``, the run's cost, tokens and latency), texts and notes.

        Raises:
            EvidenceError: as ``examples``, ``policies``, ``repetitions``, ``check_unique_keys``,
                ``feedback``, ``select_metrics`` and ``float_cell`` (a score that is not a number).
        """
        request, source, display = self.request, self.request.source, self.request.display_path
        examples, pairing, key_col = self.examples()
        policies = self.policies()
        run_ids = [str(r["id"]) if r.get("id") is not None else None for r in self.runs]
        inputs = [r.get("inputs") for r in self.runs]
        line_nos = list(range(1, len(self.lines) + 1))
        examples, groups = repetitions(
            RowKeys.of(policies, examples, line_nos),
            run_ids,
            inputs,
            display=display,
            run_column="run.id" if self.wrapped else "id",
        )
        check_unique_keys(policies, examples, line_nos, display, key_col)

        per_line, available, categorical = self.feedback()
        ops = bool(source.options.get("include_operational"))
        if ops:
            available.update(_RAW_OPERATIONAL)
        chosen = select_metrics(available, source.metrics, display)
        records: list[Record] = []
        for i, fb in enumerate(per_line, start=1):
            p, e = policies[i - 1], examples[i - 1]
            for key, metric in chosen.items():
                records.append((p, e, metric, *self.value(i, key, fb, ops), i))
        shape = "experiment rows {run, example, evaluation_results}" if self.wrapped else "runs"
        notes = [f"shape: {shape}"]
        if categorical:
            notes.append(f"non-numeric feedback not read as metrics: {', '.join(categorical)}")
        failed = sum(1 for r in self.runs if r.get("error") not in (None, ""))
        if failed:
            notes.append(
                f"{failed} run(s) have an error; their feedback is read as the file gives it"
            )
        return tool_result(
            request,
            FORMAT,
            evidence=with_groups(records_evidence(request, FORMAT, records), groups),
            metric_names=chosen,
            pairing_method=pairing,
            rows_read=len(self.lines),
            notes=notes + repetition_notes(groups),
            texts=self.texts(policies, examples),
        )


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
            return _RawRows.read(request).result()
    source, display = request.source, request.display_path
    read = ToolTable.read(request, TABLE)
    table = read.table
    names = table.schema.names
    feedback = [c for c in names if c.startswith("feedback.")]
    numeric = [c for c in feedback if _is_numeric_feedback(table.column(c))]
    available = {c: snake_metric_id(c[len("feedback.") :]) for c in numeric}
    scale: dict[str, float] = {}
    if source.options.get("include_operational") and "execution_time" in names:
        scale["execution_time"] = 1000.0  # seconds → latency_ms
        available["execution_time"] = "latency_ms"
    chosen = select_metrics(available, source.metrics, display)

    def values(col: str) -> tuple[pa.Array, pa.Array]:
        values, reason = column_as_float(table, col, display, booleans=WRITES_BOOLEANS)
        return (pc.multiply(values, scale[col]) if col in scale else values), reason

    skipped = [c for c in feedback if c not in numeric]
    return read.result(chosen, values, skipped)
