"""The canonical evidence schema: the one table every adapter produces and every gate reads.

This module owns the schema. One row is one value of one metric for one (policy, example):

| field | type | meaning |
|---|---|---|
| policy_id | dictionary string, not null | the policy that produced the output |
| example_id | string, not null | the pairing key: the same input answered by each policy |
| group_id | string | cluster for the cluster bootstrap (e.g. source document); null = none |
| slice | string | slice value (e.g. task type); null = none |
| split | string | split value (development / confirmatory roles come from the contract) |
| metric | string, not null | canonical metric id (snake_case) |
| value | float64 | the value in metric units; null when missing (see missing_reason) |
| missing_reason | string | null if value is present, else ``null``/``nan``/``absent``/``error`` |
| source | string, not null | ``<evidence source id>:<tool>@<tool version>`` |
| source_sha256 | string, not null | sha256 of the file the row came from |
| source_row | int64, not null | 1-based row (or record) number in that file, for error messages |

Low-cardinality columns (every one but example_id, value and source_row) are dictionary-encoded
strings (``dictionary<int32, string>``): a 10^7-row table then stores its source hash once, not
10^7 times. ``conform_evidence`` casts an adapter's plain-string table to this schema.

A second, private table (``TEXT_SCHEMA``) carries question, response and context text for the
deterministic corroborators. It never leaves the process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

EVIDENCE_SCHEMA_VERSION = "1"

DICTIONARY_STRING = pa.dictionary(pa.int32(), pa.string())

EVIDENCE_SCHEMA = pa.schema(
    [
        pa.field("policy_id", DICTIONARY_STRING, nullable=False),
        pa.field("example_id", pa.string(), nullable=False),
        pa.field("group_id", DICTIONARY_STRING),
        pa.field("slice", DICTIONARY_STRING),
        pa.field("split", DICTIONARY_STRING),
        pa.field("metric", DICTIONARY_STRING, nullable=False),
        pa.field("value", pa.float64()),
        pa.field("missing_reason", DICTIONARY_STRING),
        pa.field("source", DICTIONARY_STRING, nullable=False),
        pa.field("source_sha256", DICTIONARY_STRING, nullable=False),
        pa.field("source_row", pa.int64(), nullable=False),
    ],
    metadata={"ragwarrant.evidence_schema_version": EVIDENCE_SCHEMA_VERSION},
)

TEXT_SCHEMA = pa.schema(
    [
        pa.field("policy_id", pa.string(), nullable=False),
        pa.field("example_id", pa.string(), nullable=False),
        pa.field("question", pa.string()),
        pa.field("response", pa.string()),
        pa.field("contexts", pa.list_(pa.string())),
        pa.field("cited_quotes", pa.list_(pa.string())),
    ],
    metadata={"ragwarrant.text_schema_version": EVIDENCE_SCHEMA_VERSION},
)


def make_evidence_table(columns: Mapping[str, Sequence[object] | pa.Array]) -> pa.Table:
    """Build a canonical evidence table from column data, casting to ``EVIDENCE_SCHEMA``.

    Args:
        columns: every field of ``EVIDENCE_SCHEMA`` by name; sequences of equal length.

    Raises:
        KeyError: a field is missing.
        pyarrow.ArrowInvalid: a value cannot be represented in its field's type (a bug in
            the calling adapter: adapters validate values before building the table).
    """
    arrays = [pa.array(columns[f.name], type=f.type) for f in EVIDENCE_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=EVIDENCE_SCHEMA)


def constant_column(value: str | None, n: int) -> pa.DictionaryArray:
    """A dictionary-encoded column holding ``value`` in all ``n`` rows (one dictionary entry)."""
    if value is None:
        return pa.nulls(n, DICTIONARY_STRING)
    return pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(n, dtype=np.int32)), pa.array([value], pa.string())
    )


def conform_evidence(table: pa.Table) -> pa.Table:
    """Cast a table with the canonical field names to ``EVIDENCE_SCHEMA``.

    The input's string columns may be plain or dictionary-encoded.

    Raises:
        ValueError: the field names differ from the schema's (an adapter bug).
    """
    if table.schema.names != EVIDENCE_SCHEMA.names:
        raise ValueError(
            f"evidence fields {table.schema.names} differ from {EVIDENCE_SCHEMA.names}"
        )
    columns = []
    for f in EVIDENCE_SCHEMA:
        col = table.column(f.name)
        columns.append(col if col.type == f.type else col.cast(f.type))
    return pa.Table.from_arrays(columns, schema=EVIDENCE_SCHEMA)


def empty_evidence() -> pa.Table:
    """Return an empty table with the canonical schema."""
    return EVIDENCE_SCHEMA.empty_table()


def dictionary_codes(arr: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """The int32 codes (-1 for null) of a string or dictionary column and the dictionary they index.

    A plain string column is encoded first (``pyarrow.compute.dictionary_encode``); chunks are
    combined, their dictionaries unified first. A dictionary array without nulls gives its
    indices without a copy (the 10^7-row telemetry check, docs/benchmarks.md).
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.unify_dictionaries() if pa.types.is_dictionary(arr.type) else arr
        arr = arr.combine_chunks()
    enc = arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr)
    indices = enc.indices
    if indices.null_count:
        indices = indices.fill_null(-1)
    return indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False), enc.dictionary
