"""Evidence, policy and provenance assembly shared by the tool adapters.

The tool adapters (ragas, deepeval, langsmith, phoenix, trulens, otel) differ in how they find a
file's examples, policies and metric values; what they build from them is the same. Tool files
carry no group, slice or split, so every evidence row built here has them null. Nothing here knows
a tool's format: the tool-specific words (what a file lacks, what was expected) come from the
caller, or for a result table from its declared ``_table_tool.TableSpec``, so every
message stays the adapter's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, SourceProvenance, ToolFormat
from ragwarrant.adapters._columns import column_as_string
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.adapters._rows import (
    check_policies,
    question_hash,
)
from ragwarrant.adapters.generic import Keys
from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import make_evidence_table

#: One evidence row of a record-shaped file: (policy, example, metric, value, reason, source row).
Record = tuple[str, str, str, float | None, str | None, int]


class RowKeys(NamedTuple):
    """The key columns shared by every metric of a file, aligned row by row.

    Attributes:
        policy: string policy ids, length n.
        example: string example ids, length n.
        row: int64 1-based source rows, length n.
    """

    policy: pa.Array
    example: pa.Array
    row: pa.Array

    @classmethod
    def of(cls, policies: list[str], examples: list[str], rows: list[int]) -> RowKeys:
        """Build the key arrays from aligned Python lists."""
        return cls(
            pa.array(policies, pa.string()),
            pa.array(examples, pa.string()),
            pa.array(rows, pa.int64()),
        )

    @property
    def canonical(self) -> Keys:
        """The ``canonical_rows`` keys: tool files carry no group, slice or split (all null)."""
        return (self.policy, self.example, None, None, None, self.row)


def tool_tag(request: AdapterRequest, tool: ToolFormat) -> str:
    """Return the ``source`` field of the request's evidence rows:
    ``<source id>:<tool>@<version or unknown>``."""
    source = request.source
    return f"{source.id}:{tool.tool}@{source.evaluator_version or 'unknown'}"


def records_evidence(request: AdapterRequest, tool: ToolFormat, records: list[Record]) -> pa.Table:
    """Canonical evidence of a record-shaped file from its ``Record`` tuples; group_id, slice and
    split are null (the tool formats carry none of them)."""
    n = len(records)
    cols = list(zip(*records, strict=True)) if records else [()] * 6
    return make_evidence_table(
        {
            "policy_id": cols[0],
            "example_id": cols[1],
            "group_id": [None] * n,
            "slice": [None] * n,
            "split": [None] * n,
            "metric": cols[2],
            "value": cols[3],
            "missing_reason": cols[4],
            "source": [tool_tag(request, tool)] * n,
            "source_sha256": [request.sha256] * n,
            "source_row": cols[5],
        }
    )


def tool_result(
    request: AdapterRequest,
    tool: ToolFormat,
    *,
    evidence: pa.Table,
    metric_names: dict[str, str],
    pairing_method: str,
    rows_read: int,
    notes: list[str],
    texts: pa.Table | None = None,
) -> AdapterResult:
    """An adapter's result, with provenance whose notes end with the tool version's origin.

    A metric without one value (an empty CSV column: the metric raised on every row) gets a
    note naming its column: its gates then BLOCK on coverage, and the note says why.
    """
    source, version = request.source, request.source.evaluator_version
    notes = list(notes)
    metrics = pa.table(  # per metric id: how many rows, how many with a value
        {"metric": pc.cast(evidence.column("metric"), pa.string()), "value": evidence["value"]}
    )
    counts = metrics.group_by("metric").aggregate([("value", "count"), ([], "count_all")])
    per_metric = {c["metric"]: (c["value_count"], c["count_all"]) for c in counts.to_pylist()}
    for column, metric in metric_names.items():
        present, n = per_metric.get(metric, (0, 0))
        if n and not present:
            notes.append(
                f"column {column!r} is empty in every row: metric {metric!r} has no value "
                f"({n} rows, all missing)"
            )
    provenance = SourceProvenance(
        source_id=source.id,
        path=request.display_path,
        sha256=request.sha256,
        adapter=tool.adapter,
        tool=tool.tool,
        tool_version=version,
        metric_names=metric_names,
        pairing_method=pairing_method,
        rows_read=rows_read,
        notes=[
            *notes,  # where the tool version comes from: no tool file records it
            f"tool version {version} as declared by the contract (the file does not record it)"
            if version
            else "tool version unknown: the file does not record it and the contract declares none",
        ],
    )
    return AdapterResult(evidence=evidence, provenance=provenance, texts=texts)


def resolve_policies(
    request: AdapterRequest, file_policies: list[str | None], rows: list[int], column: str
) -> list[str]:
    """Each row's policy, from what the file names and what the source and contract declare.

    Raises:
        EvidenceError: as ``check_policies``.
    """
    return check_policies(
        file_policies,
        rows,
        declared=request.source.policy,
        contract_policies=request.contract.policy_ids,
        display=request.display_path,
        column=column,
    )


def undeclared_policy(display: str, what: str, hint: str) -> EvidenceError:
    """The ``evidence-policy-unknown`` error of a file that names no policy when the source
    declares none either ("<display>: <what> and the source declares none")."""
    return EvidenceError(
        "evidence-policy-unknown",
        f"{display}: {what} and the source declares none",
        hint=hint,
        file=display,
        expected="policy: <id>",
        found="nothing",
    )


ONE_OR_MAPPED_POLICY = (
    "add 'policy: <id>' to this evidence source when the file holds one policy; when it holds "
    "several, map the column naming each row's policy ('columns: {policy_id: <column>}')"
)
"""The hint of a table that names no policy (``TableSpec.policies``)."""


def repetitions(
    keys: RowKeys, runs: list[str | None], inputs: list[Any], *, display: str, run_column: str
) -> tuple[list[str], dict[str, str]]:
    """Give each run of a repeated example its own id, the example's id its group (cluster).

    LangSmith's ``num_repetitions`` runs every example k times: one row per run, the example id
    repeated, each run with its own id. They are repeated measures, not duplicates: run ``k`` of
    example ``e`` becomes example ``e#r<k>`` (k from 1, in file order) in group ``e``, for every
    example of a file that repeats any, so a policy's run k pairs with the other's run k and the
    gates resample whole examples (cluster bootstrap, cluster-robust t-test; docs/decision.md,
    "Repeated measurements"). Rows of one example with no run id or different inputs are not
    repetitions: the ids are returned unchanged and ``check_unique_keys`` refuses the repeat.

    Args:
        keys: each row's policy, example id and 1-based row (``RowKeys.of``).
        runs: each row's run id (``id`` of ``to_pandas()``, ``run.id`` of raw rows) or None.
        inputs: each row's inputs (the question), equal across the runs of one example.
        display, run_column: the file and the run id's column, for the error.

    Returns:
        ``(example ids, {new example id: group id})``; the mapping is empty without repetitions.

    Raises:
        EvidenceError: ``evidence-duplicate-id`` at the first row that repeats a run of its
            policy (the same run written twice is a duplicated row).
    """
    policies, examples = keys.policy.to_pylist(), keys.example.to_pylist()
    first: dict[tuple[str, str], int] = {}
    for policy, run, row in zip(policies, runs, keys.row.to_pylist(), strict=True):
        earlier = first.setdefault((policy, run), row) if run is not None else row
        if earlier != row:
            raise EvidenceError(
                "evidence-duplicate-id",
                f"{display} row {row}: run {run!r} of policy {policy!r} already appears in row "
                f"{earlier}: the same run written twice",
                hint="remove the repeated row (repetitions of an example are runs with their "
                "own run ids)",
                file=display,
                row=row,
                column=run_column,
                expected="a unique run id per policy",
                found=f"{run!r} again (first in row {earlier})",
            )
    seen: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(policies, examples, strict=True)):
        seen.setdefault(key, []).append(i)
    repeated = [rows for rows in seen.values() if len(rows) > 1]
    if not repeated or any(
        runs[i] is None or inputs[i] != inputs[rows[0]] for rows in repeated for i in rows
    ):
        return examples, {}
    out = list(examples)
    groups: dict[str, str] = {}
    for (_, example), rows in seen.items():
        for k, i in enumerate(rows, start=1):
            out[i] = f"{example}#r{k}"
            groups[out[i]] = example
    return out, groups


def repetition_notes(groups: dict[str, str]) -> list[str]:
    """Say how repetitions (``repetitions``' groups) became examples and clusters."""
    if not groups:
        return []
    runs, examples = len(groups), len(set(groups.values()))
    return [
        f"repetitions: {runs} runs of {examples} examples; run k of example <id> is example "
        "<id>#r<k> in cluster <id> (the gates resample whole examples)"
    ]


def with_groups(evidence: pa.Table, groups: dict[str, str]) -> pa.Table:
    """``evidence`` with ``group_id`` set from ``groups`` (example id → group) where it names
    the row's example (see ``repetitions``)."""
    if not groups:
        return evidence
    examples = pc.cast(evidence.column("example_id"), pa.string()).to_pylist()
    group = pa.array([groups.get(e) for e in examples], pa.string())
    i = evidence.schema.get_field_index("group_id")
    return evidence.set_column(i, "group_id", group)


def span_join_unsupported(
    display: str, what: str, expected: str = "pairing: id-column or question-hash"
) -> EvidenceError:
    """The ``evidence-pairing-unsupported`` error of ``pairing: span-join`` on a file that has no
    span ids ("<display>: <what>")."""
    return EvidenceError(
        "evidence-pairing-unsupported",
        f"{display}: {what}",
        file=display,
        expected=expected,
        found="span-join",
    )


def ids_from_column(table: pa.Table, column: str, display: str) -> list[str]:
    """The example ids of an id column (``pairing: id-column``).

    Raises:
        EvidenceError: ``evidence-missing-column`` when the table lacks it; ``evidence-null-key``
            for an empty id.
    """
    require_columns(table.schema.names, [column], display)
    return column_as_string(table, column, display, allow_null=False).to_pylist()


def ids_from_questions(table: pa.Table, column: str, display: str) -> list[str]:
    """The example ids of a question column (``pairing: question-hash``, see ``question_hash``).

    Raises:
        EvidenceError: ``evidence-missing-column`` when the table lacks it; ``evidence-null-key``
            for an empty question.
    """
    require_columns(table.schema.names, [column], display)
    return [
        question_hash(q)
        for q in column_as_string(table, column, display, allow_null=False).to_pylist()
    ]


def record_ids(
    values: list[Any],
    display: str,
    unit: str,
    column: str,
    hint: str = "",
    *,
    questions: bool = False,
) -> list[str]:
    """The example ids of a record-shaped file, one value per record (test case, line); with
    ``questions`` each value is question text and its id the ``question_hash``.

    Raises:
        EvidenceError: ``evidence-null-key`` at the first record whose value is missing, empty
            or not a scalar (not text, with ``questions``): "<display> <unit> <i>: '<column>'
            is missing or empty".
    """
    for i, v in enumerate(values, start=1):
        bad = not isinstance(v, str) if questions else v is None or isinstance(v, dict | list)
        if bad or not str(v).strip():
            raise EvidenceError(
                "evidence-null-key",
                f"{display} {unit} {i}: {column!r} is missing or empty",
                hint=hint,
                file=display,
                row=i,
                column=column,
                expected="the question text" if questions else "a non-empty id",
                found=repr(v)[:40],
            )
    return [question_hash(v) if questions else str(v) for v in values]


def cells_or_nulls(table: pa.Table, column: str | None) -> list[Any]:
    """A column's cells as Python values, or all None when there is no such column."""
    return table.column(column).to_pylist() if column else [None] * table.num_rows


def dotted(obj: dict[str, Any], path: str, aliases: Mapping[str, str] | None = None) -> Any:
    """The value at a dotted ``path`` (``example.metadata.question_id``) in nested JSON objects,
    or None where a step is missing or not an object. ``aliases``: a top-level key → the key read
    instead when ``obj`` lacks it (DeepEval's ``metadata`` / ``additional_metadata``)."""
    head, *rest = path.split(".")
    node = obj[head] if head in obj else obj.get((aliases or {}).get(head, head))
    for part in rest:
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def metadata_policies(metas: Iterable[Any], key: str, default: Any = None) -> list[str | None]:
    """The policy each record's metadata names: ``meta[key]``, else ``meta["policy"]``, else
    ``default`` (a run-level policy); None where there is none (a ``meta`` that is no object
    names none)."""
    out: list[str | None] = []
    for meta in metas:
        p = meta.get(key, meta.get("policy")) if isinstance(meta, dict) else None
        p = p if p is not None else default
        out.append(str(p) if p is not None else None)
    return out
