"""Canonical evidence: the Arrow schema, pairing and integrity checks."""

from ragwarrant.evidence.schema import (
    EVIDENCE_SCHEMA,
    EVIDENCE_SCHEMA_VERSION,
    TEXT_SCHEMA,
    empty_evidence,
    make_evidence_table,
)

__all__ = [
    "EVIDENCE_SCHEMA",
    "EVIDENCE_SCHEMA_VERSION",
    "TEXT_SCHEMA",
    "empty_evidence",
    "make_evidence_table",
]
