"""Evidence, policy and provenance assembly shared by the tool adapters.

The tool adapters (ragas, deepeval, langsmith, phoenix, trulens, otel) differ in how they find a
file's examples, policies and metric values; what they build from them is the same. Tool files
carry no group, slice or split, so every evidence row built here has them null. Nothing here knows
a tool's format: the tool-specific words (what a file lacks, what was expected) come from the
caller, or for a result table from its declared ``TableSpec`` (read by ``ToolTable``), so every
message stays the adapter's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, SourceProvenance, ToolFormat
from ragwarrant.adapters._cells import parse_list_literal
from ragwarrant.adapters._columns import column_as_string
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.adapters._rows import (
    check_policies,
    check_unique_keys,
    contract_policy_ids,
    make_texts,
    question_hash,
)
from ragwarrant.adapters._tables import read_table
from ragwarrant.adapters.generic import Keys, canonical_rows
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


def column_evidence(
    request: AdapterRequest,
    spec: TableSpec,
    keys: RowKeys,
    chosen: dict[str, str],
    values: Callable[[str], tuple[pa.Array, pa.Array]],
    names: list[str],
) -> pa.Table:
    """The evidence of a table's chosen score columns: ``values(column)`` gives each column's
    float64 values and missing reasons (aligned with ``keys``), ``chosen`` its metric id.

    Raises:
        EvidenceError: ``evidence-no-metrics`` ("<display> holds no <spec.scores[0]>") when
            nothing is chosen, listing the first 20 of ``names`` (the file's columns).
    """
    tag = tool_tag(request, spec.tool)
    parts = [
        canonical_rows(keys.canonical, metric, *values(column), tag, request.sha256)
        for column, metric in chosen.items()
    ]
    if not parts:
        what, expected, hint = spec.scores
        display = request.display_path
        raise EvidenceError(
            "evidence-no-metrics",
            f"{display} holds no {what}",
            hint=hint,
            file=display,
            expected=expected,
            found=", ".join(names[:20]),
        )
    return pa.concat_tables(parts)


def table_texts(table: pa.Table, spec: TableSpec, keys: RowKeys, display: str) -> pa.Table | None:
    """The private texts of a table from the first present question, response and context
    columns (``TableSpec.questions`` ...), or None without a question column.

    Raises:
        EvidenceError: ``evidence-wrong-type`` naming the first context cell that is not a list
            literal (``parse_list_literal``); as ``make_texts``.
    """
    names = table.schema.names
    question = next((c for c in spec.questions if c in names), None)
    if question is None:
        return None
    response = next((c for c in spec.responses if c in names), None)
    contexts = next((c for c in spec.contexts if c in names), None)
    return make_texts(
        keys.policy.to_pylist(),
        keys.example.to_pylist(),
        table.column(question).to_pylist(),
        cells_or_nulls(table, response),
        [
            parse_list_literal(cell, display, i, contexts)
            for i, cell in enumerate(table.column(contexts).to_pylist(), start=1)
        ]
        if contexts
        else [None] * table.num_rows,
        display=display,
    )


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
        contract_policies=contract_policy_ids(request.contract),
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


IdsFound = tuple[list[str], str, str]
"""Example ids, pairing method (``id-column`` / ``question-hash``) and the key column or path."""


@dataclass(frozen=True)
class TableSpec:
    """How one tool's result table (one row per sample, one column per score: Ragas, TruLens,
    LangSmith ``to_pandas``) is read, declared once in its adapter (``TABLE``) for the shared
    reader ``ToolTable``; the steps (read the table, find example ids and policies, check unique
    keys, build evidence, texts and notes) are the same for every tool.

    Attributes:
        tool: the tool's format (``FORMAT``: its name and detection).
        questions, responses, contexts: the text columns, first present wins; the first
            question column is the one named when a question-hash file has none.
        scores: what one score column is called, what a file must hold, and a hint, for
            ``evidence-no-metrics``.
        no_span_join: why ``pairing: span-join`` is refused (``span_join_unsupported``), and
            ``span_join_expected`` the pairings that error suggests.
        skipped_note: the note naming the non-numeric columns not read, before ": <columns>".
        no_policy: what the table lacks when the source names no policy and maps no column.
        policy_column: the tool's own policy column (required when the source maps none).
        id_column_only: ``pairing: auto`` reads the id column and never hashes questions.
        meta_ids: where else ids are when the table has no id column (None: hash questions).
        hash_note: the note of question-hash pairing, formatted with the question column.
        run_column: the run id column of repeated examples (``repetitions``), if any.
        error_column: the column that holds a run's error, if any (the runs with one are noted).
    """

    tool: ToolFormat
    questions: tuple[str, ...]
    scores: tuple[str, str, str]
    no_span_join: str
    skipped_note: str
    responses: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    span_join_expected: str = "pairing: id-column or question-hash"
    no_policy: str = ""
    policy_column: str | None = None
    id_column_only: bool = False
    meta_ids: Callable[[AdapterRequest, pa.Table], IdsFound | None] | None = None
    hash_note: str = ""
    run_column: str | None = None
    error_column: str | None = None

    def example_ids(self, request: AdapterRequest, table: pa.Table) -> IdsFound:
        """The example ids: the column ``columns.example_id`` (``pairing: id-column``, or
        ``auto`` when the table has it), else ``meta_ids``, else the question hash of the
        first question column (``question-hash``).

        Raises:
            EvidenceError: ``evidence-pairing-unsupported`` for span-join; as
                ``ids_from_column`` / ``ids_from_questions``.
        """
        source, display = request.source, request.display_path
        names, key = table.schema.names, source.columns.example_id
        if source.pairing == "span-join":
            raise span_join_unsupported(display, self.no_span_join, self.span_join_expected)
        if source.pairing != "question-hash":
            id_column = source.pairing == "id-column" and self.meta_ids is None
            if key in names or id_column or self.id_column_only:
                return ids_from_column(table, key, display), "id-column", key
            found = self.meta_ids(request, table) if self.meta_ids else None
            if found is not None:
                return found
        question = next((c for c in self.questions if c in names), self.questions[0])
        return ids_from_questions(table, question, display), "question-hash", question

    def policies(self, request: AdapterRequest, table: pa.Table) -> list[str]:
        """Each row's policy from the column ``columns.policy_id`` when the table has it, else
        the tool's own ``policy_column`` when it has one, else the source's ``policy``.

        Raises:
            EvidenceError: ``evidence-missing-column`` when the table lacks ``policy_column``;
                ``undeclared_policy(no_policy, ONE_OR_MAPPED_POLICY)`` when there is no column
                and no ``policy`` (the hint then names the first text column whose every
                non-empty cell is a contract policy, when there is one: ``policy``,
                ``pipeline``, ``variant`` ...); then as ``resolve_policies``.
        """
        source, display = request.source, request.display_path
        names = table.schema.names
        column = source.columns.policy_id if source.columns.policy_id in names else None
        column = column or self.policy_column
        if column is None and source.policy is None:
            hint, wanted = ONE_OR_MAPPED_POLICY, set(contract_policy_ids(request.contract))
            for name in names:  # the first text column naming only the contract's policies
                col = table.column(name)
                if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                    continue
                values = set(pc.unique(col.drop_null()).to_pylist()) - {""}
                if values and values <= wanted:
                    hint = (
                        f"column {name!r} names the contract's policies: map it with "
                        f"'columns: {{policy_id: {name}}}' in this evidence source"
                    )
                    break
            raise undeclared_policy(display, self.no_policy, hint)
        file_policies: list[str | None] = [None] * table.num_rows
        if column:
            require_columns(names, [column], display)
            file_policies = column_as_string(table, column, display, allow_null=True).to_pylist()
        rows = list(range(1, table.num_rows + 1))
        return resolve_policies(request, file_policies, rows, column or "policy")


@dataclass(frozen=True)
class ToolTable:
    """A tool's result table read up to its keys (``read``), then turned into the adapter's
    result (``result``) from the score columns the adapter chose."""

    request: AdapterRequest
    spec: TableSpec
    table: pa.Table
    keys: RowKeys
    pairing: str
    key: str
    groups: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, request: AdapterRequest, spec: TableSpec) -> ToolTable:
        """Read the source's table, each row's example id and policy, and check the keys.

        Raises:
            EvidenceError: as ``read_table``, ``TableSpec.example_ids``, ``TableSpec.policies``,
                ``repetitions`` and ``check_unique_keys``.
        """
        display = request.display_path
        table = read_table(request.path, request.source.format, display)
        rows = list(range(1, table.num_rows + 1))
        examples, pairing, key = spec.example_ids(request, table)
        policies = spec.policies(request, table)
        groups: dict[str, str] = {}
        if spec.run_column:
            names, run = table.schema.names, spec.run_column
            runs = (
                column_as_string(table, run, display, allow_null=True).to_pylist()
                if run in names
                else [None] * len(rows)
            )
            question = next((c for c in spec.questions if c in names), None)
            examples, groups = repetitions(
                RowKeys.of(policies, examples, rows),
                runs,
                cells_or_nulls(table, question),
                display=display,
                run_column=run,
            )
        check_unique_keys(policies, examples, rows, display, key)
        keys = RowKeys.of(policies, examples, rows)
        return cls(request, spec, table, keys, pairing, key, groups)

    def result(
        self,
        chosen: dict[str, str],
        values: Callable[[str], tuple[pa.Array, pa.Array]],
        skipped: list[str],
        notes: Sequence[str] = (),
    ) -> AdapterResult:
        """The adapter's result: evidence of the ``chosen`` columns (``column_evidence``), texts
        (``table_texts``) and the notes: ``notes`` (read once the evidence is built, so
        ``values`` may add to it), question hashing, the ``skipped`` columns, runs with an
        error, repetitions.

        Raises:
            EvidenceError: as ``column_evidence``, ``table_texts`` and ``column_as_string``
                (the error column).
        """
        request, spec, table, keys = self.request, self.spec, self.table, self.keys
        display = request.display_path
        evidence = column_evidence(request, spec, keys, chosen, values, table.schema.names)
        notes = list(notes)
        if self.pairing == "question-hash" and spec.hash_note:
            notes.append(spec.hash_note.format(self.key))
        if skipped:
            notes.append(f"{spec.skipped_note}: {', '.join(skipped)}")
        error = spec.error_column
        if error and error in table.schema.names:
            errs = column_as_string(table, error, display, allow_null=True)
            k = int(pc.sum(pc.is_valid(errs)).as_py() or 0)
            if k:
                notes.append(
                    f"{k} run(s) have an error; their feedback is read as the file gives it"
                )
        return tool_result(
            self.request,
            self.spec.tool,
            evidence=with_groups(evidence, self.groups),
            metric_names=chosen,
            pairing_method=self.pairing,
            rows_read=table.num_rows,
            notes=notes + repetition_notes(self.groups),
            texts=table_texts(table, spec, keys, display),
        )
