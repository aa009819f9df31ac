"""Ragas: ``EvaluationResult.to_pandas()`` saved as CSV, JSONL or Parquet.

One row per sample, echoed inputs plus one float column per metric. Current names
(``user_input``, ``retrieved_contexts``, ``reference_contexts``, ``response``, ``reference``) and
the legacy ones (``question``, ``contexts``, ``answer``, ``ground_truth(s)``) are both read. Metric
column names may carry parameters (``rouge_score(mode=fmeasure)``); they become snake_case ids
(``rouge_score_mode_fmeasure``) and the original is recorded. A metric that raised is NaN in the
DataFrame: an empty cell in CSV, ``null`` in JSONL; both are counted as missing (reason ``null``,
since the file no longer says which). Lists in CSV are Python reprs, parsed with
``ast.literal_eval``.

Ragas keeps no row id and no policy: the source declares ``policy``, and the example id is the
question hash (``pairing: question-hash``, the default) unless the file has the column named by
``columns.example_id`` (``pairing: id-column``). Tested against ragas 0.4.3.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, ToolFormat
from ragwarrant.adapters._columns import (
    column_as_float,
    looks_numeric_column,
    select_metrics,
    snake_metric_id,
)
from ragwarrant.adapters._table_tool import TableSpec, ToolTable

QUESTION_COLUMNS = ("user_input", "question")
RESPONSE_COLUMNS = ("response", "answer")
CONTEXT_COLUMNS = ("retrieved_contexts", "contexts")


def _columns_rule(names: Sequence[str]) -> str | None:
    question = next((c for c in QUESTION_COLUMNS if c in names), None)
    other = next((c for c in (*RESPONSE_COLUMNS, *CONTEXT_COLUMNS) if c in names), None)
    if not (question and other):
        return None
    return f"columns {question} and {other} (Ragas EvaluationResult.to_pandas)"


FORMAT = ToolFormat(
    "ragas",
    "ragas",
    "Ragas",
    "a Ragas result table (EvaluationResult.to_pandas): a user_input (or legacy question) "
    "column beside the metric columns",
    lambda s: s.has_any(*QUESTION_COLUMNS),
    columns=_columns_rule,
)

#: Columns Ragas echoes from the dataset (current and legacy names); everything else is a metric.
ECHO_COLUMNS = frozenset(
    {
        "user_input",
        "retrieved_contexts",
        "reference_contexts",
        "retrieved_context_ids",
        "reference_context_ids",
        "response",
        "multi_responses",
        "reference",
        "rubrics",
        "reference_tool_calls",
        "question",
        "contexts",
        "answer",
        "ground_truth",
        "ground_truths",
    }
)


TABLE = TableSpec(
    FORMAT,
    QUESTION_COLUMNS,
    (
        "metric column",
        "at least one metric column",
        "a Ragas export has one numeric column per metric",
    ),
    responses=RESPONSE_COLUMNS,
    contexts=CONTEXT_COLUMNS,
    no_span_join="Ragas results cannot be span-joined (they carry no span id)",
    span_join_expected="pairing: question-hash or id-column",
    no_policy="Ragas exports carry no policy",
    hash_note="example ids are qh:<sha256 prefix> of the normalized {!r} text "
    "(NFKC, casefold, whitespace collapsed)",
    skipped_note="non-numeric columns not read as metrics",
)


def load(request: AdapterRequest) -> AdapterResult:
    """Read a Ragas result table into canonical evidence and private texts.

    Returns:
        Evidence with one row per (sample, metric); texts with question, response and retrieved
        contexts; provenance with the pairing method (question-hash unless an id column is used).

    Raises:
        EvidenceError: empty file; no question column (``user_input`` or ``question``) when pairing
            by question hash; a metric cell that is not a number; a context cell that is not a list
            literal; a duplicated question (or id) within the file; rows of another policy.
    """
    source, display = request.source, request.display_path
    read = ToolTable.read(request, TABLE)
    table = read.table
    names = table.schema.names
    skip = ECHO_COLUMNS | {source.columns.example_id, source.columns.policy_id or ""}
    available = {
        c: snake_metric_id(c) for c in names if c not in skip and looks_numeric_column(table, c)
    }
    chosen = select_metrics(available, source.metrics, display)
    skipped = [c for c in names if c not in skip and c not in available]
    return read.result(chosen, lambda c: column_as_float(table, c, display), skipped)
