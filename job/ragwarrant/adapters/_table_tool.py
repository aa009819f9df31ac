"""The shared reader of a tool's result table (one row per sample, one column per score: Ragas,
TruLens, LangSmith ``to_pandas``): each tool declares a ``TableSpec`` (``TABLE`` in its adapter)
and ``ToolTable`` does the common steps (read the table, find example ids and policies, check
unique keys, build evidence, texts and notes), with the pieces from ``_common``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, ToolFormat
from ragwarrant.adapters._cells import parse_list_literal
from ragwarrant.adapters._columns import column_as_string
from ragwarrant.adapters._common import (
    ONE_OR_MAPPED_POLICY,
    RowKeys,
    cells_or_nulls,
    ids_from_column,
    ids_from_questions,
    repetition_notes,
    repetitions,
    resolve_policies,
    span_join_unsupported,
    tool_result,
    tool_tag,
    undeclared_policy,
    with_groups,
)
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.adapters._rows import check_unique_keys, make_texts
from ragwarrant.adapters._tables import read_table
from ragwarrant.adapters.generic import canonical_rows
from ragwarrant.errors import EvidenceError

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
            hint, wanted = ONE_OR_MAPPED_POLICY, set(request.contract.policy_ids)
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

    def evidence(
        self, chosen: dict[str, str], values: Callable[[str], tuple[pa.Array, pa.Array]]
    ) -> pa.Table:
        """The evidence of the chosen score columns: ``values(column)`` gives each column's
        float64 values and missing reasons (aligned with ``keys``), ``chosen`` its metric id.

        Raises:
            EvidenceError: ``evidence-no-metrics`` ("<display> holds no <spec.scores[0]>") when
                nothing is chosen, listing the first 20 of the table's columns.
        """
        request, spec = self.request, self.spec
        tag = tool_tag(request, spec.tool)
        parts = [
            canonical_rows(self.keys.canonical, metric, *values(column), tag, request.sha256)
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
                found=", ".join(self.table.schema.names[:20]),
            )
        return pa.concat_tables(parts)

    def texts(self) -> pa.Table | None:
        """The private texts from the first present question, response and context columns
        (``TableSpec.questions`` ...), or None without a question column.

        Raises:
            EvidenceError: ``evidence-wrong-type`` naming the first context cell that is not a
                list literal (``parse_list_literal``); as ``make_texts``.
        """
        table, spec, display = self.table, self.spec, self.request.display_path
        names = table.schema.names
        question = next((c for c in spec.questions if c in names), None)
        if question is None:
            return None
        response = next((c for c in spec.responses if c in names), None)
        contexts = next((c for c in spec.contexts if c in names), None)
        return make_texts(
            self.keys.policy.to_pylist(),
            self.keys.example.to_pylist(),
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

    def result(
        self,
        chosen: dict[str, str],
        values: Callable[[str], tuple[pa.Array, pa.Array]],
        skipped: list[str],
        notes: Sequence[str] = (),
    ) -> AdapterResult:
        """The adapter's result: evidence of the ``chosen`` columns (``evidence``), texts
        (``texts``) and the notes: ``notes`` (read once the evidence is built, so
        ``values`` may add to it), question hashing, the ``skipped`` columns, runs with an
        error, repetitions.

        Raises:
            EvidenceError: as ``evidence``, ``texts`` and ``column_as_string``
                (the error column).
        """
        spec, table, display = self.spec, self.table, self.request.display_path
        evidence = self.evidence(chosen, values)
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
            texts=self.texts(),
        )
