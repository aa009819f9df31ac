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

import pyarrow as pa

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, SourceProvenance
from ragwarrant.adapters._io import (
    check_policies,
    check_unique_keys,
    column_as_float,
    column_as_string,
    contract_policy_ids,
    looks_numeric_column,
    make_texts,
    parse_list_literal,
    question_hash,
    read_table,
    require_columns,
    select_metrics,
    snake_metric_id,
    source_tag,
    version_note,
)
from ragwarrant.adapters.generic import canonical_rows
from ragwarrant.errors import EvidenceError

__all__ = ["ECHO_COLUMNS", "load"]

TOOL = "ragas"

QUESTION_COLUMNS = ("user_input", "question")
RESPONSE_COLUMNS = ("response", "answer")
CONTEXT_COLUMNS = ("retrieved_contexts", "contexts")

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


def _first_present(names: list[str], candidates: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in names), None)


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
    source = request.source
    display = request.display_path
    table = read_table(request.path, source.format, display)
    names = table.schema.names
    n = table.num_rows
    rows = list(range(1, n + 1))

    q_col = _first_present(names, QUESTION_COLUMNS)
    id_col = source.columns.example_id
    use_id = source.pairing == "id-column" or (source.pairing == "auto" and id_col in names)
    if source.pairing == "span-join":
        raise EvidenceError(
            "evidence-pairing-unsupported",
            f"{display}: Ragas results cannot be span-joined (they carry no span id)",
            file=display,
            expected="pairing: question-hash or id-column",
            found="span-join",
        )
    if use_id:
        require_columns(names, [id_col], display)
        examples = column_as_string(table, id_col, display, allow_null=False).to_pylist()
        pairing, key_column = "id-column", id_col
    else:
        if q_col is None:
            require_columns(names, ["user_input"], display)
        assert q_col is not None
        questions_arr = column_as_string(table, q_col, display, allow_null=False)
        examples = [question_hash(q) for q in questions_arr.to_pylist()]
        pairing, key_column = "question-hash", q_col

    policy_col = source.columns.policy_id if source.columns.policy_id in names else None
    file_policies: list[str | None] = (
        column_as_string(table, policy_col, display, allow_null=True).to_pylist()
        if policy_col
        else [None] * n
    )
    if policy_col is None and source.policy is None:
        raise EvidenceError(
            "evidence-policy-unknown",
            f"{display}: Ragas exports carry no policy and the source declares none",
            hint="add 'policy: <id>' to this evidence source (one Ragas file per policy)",
            file=display,
            expected="policy: <id>",
            found="nothing",
        )
    policies = check_policies(
        file_policies,
        rows,
        declared=source.policy,
        contract_policies=contract_policy_ids(request.contract),
        display=display,
        column=policy_col or "policy",
    )
    check_unique_keys(policies, examples, rows, display, key_column)

    skip = ECHO_COLUMNS | {id_col, source.columns.policy_id or ""}
    available = {
        c: snake_metric_id(c) for c in names if c not in skip and looks_numeric_column(table, c)
    }
    chosen = select_metrics(available, source.metrics, display)
    skipped = [c for c in names if c not in skip and c not in available]

    tag = source_tag(source.id, TOOL, source.evaluator_version)
    policy_arr = pa.array(policies, pa.string())
    example_arr = pa.array(examples, pa.string())
    row_arr = pa.array(rows, pa.int64())
    parts = []
    for column, metric in chosen.items():
        values, reason = column_as_float(table, column, display)
        parts.append(
            canonical_rows(
                policy=policy_arr,
                example=example_arr,
                group=None,
                slice_=None,
                split=None,
                metric=metric,
                values=values,
                missing_reason=reason,
                source=tag,
                sha256=request.sha256,
                rows=row_arr,
            )
        )
    if not parts:
        raise EvidenceError(
            "evidence-no-metrics",
            f"{display} holds no metric column",
            hint="a Ragas export has one numeric column per metric",
            file=display,
            expected="at least one metric column",
            found=", ".join(names[:20]),
        )

    texts = None
    if q_col is not None:
        r_col = _first_present(names, RESPONSE_COLUMNS)
        c_col = _first_present(names, CONTEXT_COLUMNS)
        questions = table.column(q_col).to_pylist()
        responses = table.column(r_col).to_pylist() if r_col else [None] * n
        contexts: list[list[str] | None] = (
            [
                parse_list_literal(cell, display, i + 1, c_col)
                for i, cell in enumerate(table.column(c_col).to_pylist())
            ]
            if c_col
            else [None] * n
        )
        texts = make_texts(policies, examples, questions, responses, contexts)

    notes = []
    if pairing == "question-hash":
        notes.append(
            f"example ids are qh:<sha256 prefix> of the normalized {q_col!r} text "
            "(NFKC, casefold, whitespace collapsed)"
        )
    if skipped:
        notes.append(f"non-numeric columns not read as metrics: {', '.join(skipped)}")
    provenance = SourceProvenance(
        source_id=source.id,
        path=display,
        sha256=request.sha256,
        adapter="ragas",
        tool=TOOL,
        tool_version=source.evaluator_version,
        metric_names=chosen,
        pairing_method=pairing,
        rows_read=n,
        notes=[*notes, *version_note(source.evaluator_version)],
    )
    return AdapterResult(evidence=pa.concat_tables(parts), provenance=provenance, texts=texts)
