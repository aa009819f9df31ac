"""Private text columns of a generic results file: question, response, contexts, cited quotes.

The contract's column mapping (``columns.question`` …) names them. The text goes into the
``TEXT_SCHEMA`` table for the deterministic corroborators and never into any output.

A list cell (``contexts``, ``cited_quotes``) may be an Arrow list of strings, a JSON array string,
or a Python-repr list (as pandas writes lists to CSV, parsed with ``ast.literal_eval`` only,
never ``eval``). A string cell that does not start with ``[`` is one passage.
"""

from __future__ import annotations

from contextlib import suppress

import orjson
import pyarrow as pa

from ragwarrant.adapters._cells import parse_list_literal
from ragwarrant.adapters._columns import column_as_string
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.contract import EvidenceSource
from ragwarrant.evidence.schema import TEXT_SCHEMA


def parse_passages(cell: object, display: str, row: int, column: str) -> list[str] | None:
    """Parse one list-of-passages cell: a string not starting with ``[`` is one passage, a JSON
    array string is read as JSON, anything else as ``_cells.parse_list_literal`` reads it.

    Args:
        cell: a list of strings, a JSON array string, a Python-repr list string, a plain string
            (one passage), or None/empty (no value).
        display, row, column: where the cell is, for the error message (row is 1-based).

    Returns:
        The passages, or None for a null or blank cell.

    Raises:
        EvidenceError: ``evidence-wrong-type`` when a ``[``-prefixed string is neither JSON nor a
            Python literal, or the value is not a list of strings (``parse_list_literal``).
    """
    if isinstance(cell, str):
        text = cell.strip()
        if text and not text.startswith("["):
            return [cell]
        with suppress(orjson.JSONDecodeError):
            cell = orjson.loads(text)
    return parse_list_literal(cell, display, row, column)


def read_texts(
    table: pa.Table, source: EvidenceSource, policy: pa.Array, example: pa.Array, display: str
) -> pa.Table | None:
    """Return the private text table of a results file, or None when no text column is mapped.

    Args:
        table: the file as read.
        source: its contract declaration (``columns.question``, ``response``, ``contexts``,
            ``cited_quotes``).
        policy, example: the policy and example id of each row (aligned with ``table``).
        display: the file as the contract names it.

    Returns:
        A ``TEXT_SCHEMA`` table with one row per file row.

    Raises:
        EvidenceError: a mapped column is missing, or a list cell cannot be parsed.
    """
    cols = source.columns
    mapped = {k: getattr(cols, k) for k in ("question", "response", "contexts", "cited_quotes")}
    if not any(mapped.values()):
        return None
    require_columns(table.schema.names, [c for c in mapped.values() if c], display)
    n = table.num_rows
    data: dict[str, object] = {"policy_id": policy, "example_id": example}
    for field in ("question", "response"):
        name = mapped[field]
        data[field] = (
            column_as_string(table, name, display, allow_null=True)
            if name
            else pa.nulls(n, pa.string())
        )
    for field in ("contexts", "cited_quotes"):
        name = mapped[field]
        if not name:
            data[field] = [None] * n
            continue
        col = table.column(name).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        cells = enumerate(col.to_pylist(), start=1)
        data[field] = [parse_passages(v, display, i, name) for i, v in cells]
    return pa.Table.from_pydict(data, schema=TEXT_SCHEMA)
