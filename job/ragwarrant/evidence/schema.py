"""The canonical evidence schema: the one table every adapter produces and every gate reads.

This module owns the schema. One row is one value of one metric for one (policy, example):

| field | type | meaning |
|---|---|---|
| policy_id | string, not null | the policy that produced the output |
| example_id | string, not null | the pairing key: the same input answered by each policy |
| group_id | string | cluster for the cluster bootstrap (e.g. source document); null = none |
| slice | string | slice value (e.g. task type); null = none |
| split | string | split value (development / confirmatory roles come from the contract) |
| metric | string, not null | canonical metric id (snake_case) |
| value | float64 | the value in metric units; null when missing (see missing_reason) |
| missing_reason | string | null when value is present; else ``null``, ``nan``, ``absent``, ``error`` |
| source | string, not null | ``<evidence source id>:<tool>@<tool version>`` |
| source_sha256 | string, not null | sha256 of the file the row came from |
| source_row | int64, not null | 1-based row (or record) number in that file, for error messages |

A second, private table (``TEXT_SCHEMA``) carries question, response and context text for the
deterministic corroborators. It never leaves the process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

__all__ = [
    "EVIDENCE_SCHEMA",
    "EVIDENCE_SCHEMA_VERSION",
    "MISSING_REASONS",
    "TEXT_SCHEMA",
    "empty_evidence",
    "make_evidence_table",
]

EVIDENCE_SCHEMA_VERSION = "1"

MISSING_REASONS = ("null", "nan", "absent", "error")

EVIDENCE_SCHEMA = pa.schema(
    [
        pa.field("policy_id", pa.string(), nullable=False),
        pa.field("example_id", pa.string(), nullable=False),
        pa.field("group_id", pa.string()),
        pa.field("slice", pa.string()),
        pa.field("split", pa.string()),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("missing_reason", pa.string()),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_sha256", pa.string(), nullable=False),
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


def empty_evidence() -> pa.Table:
    """Return an empty table with the canonical schema."""
    return EVIDENCE_SCHEMA.empty_table()
