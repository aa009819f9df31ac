"""Shared types of the adapters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ragwarrant.contract import EvidenceSource, ReleaseContract
from ragwarrant.outputs import SourceRecord


@dataclass(frozen=True)
class AdapterRequest:
    """What an adapter is asked to read.

    Attributes:
        source: the contract's declaration of this evidence source.
        path: the resolved file path (inside the input directory).
        display_path: the path as the contract gives it (used in messages and outputs).
        sha256: hex sha256 of the file's bytes.
        contract: the whole contract (policies, metric ids, price table).
    """

    source: EvidenceSource
    path: Path
    display_path: str
    sha256: str
    contract: ReleaseContract


SourceProvenance = SourceRecord
"""How a source was read: the ``sources[]`` record of the validation report (``SourceRecord``).

Fields: source_id, path (relative to the input directory), sha256, adapter (after ``auto``
detection), tool and tool_version (when the file shows it), metric_names (original name →
canonical metric id), pairing_method (``id-column``, ``question-hash`` or ``span-join``),
rows_read, detected (for ``adapter: auto``, why), notes (e.g. cost modeled from tokens).
"""


@dataclass(frozen=True)
class AdapterResult:
    """An adapter's output.

    Attributes:
        evidence: canonical evidence rows (``ragwarrant.evidence.schema.EVIDENCE_SCHEMA``).
        provenance: how the file was read.
        texts: private question/response/context text (``TEXT_SCHEMA``), when the file has it.
        directions: metric id → ``higher_is_better`` / ``lower_is_better`` as the export itself
            declares it (Phoenix Score ``direction``, TruLens ``<name> direction``), for the run
            to compare with the contract's direction; empty when the file declares none.
    """

    evidence: pa.Table
    provenance: SourceProvenance
    texts: pa.Table | None = None
    directions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileShape:
    """What format checks see of a file: its structure, never its name or its values.

    Attributes:
        format: the source's format (``csv``, ``jsonl``, ``json``, ``parquet``).
        names: the column names (CSV header, Parquet schema, keys of the first JSON line, of a
            JSON document, or of its first record when it is an array).
        first_line: the first non-blank line of a JSON Lines file, else empty.
        document: the type of a JSON file's top level (``dict``, ``list`` ...), else empty.
        otlp_document: a JSON Lines file holding one indented OTLP document.
    """

    format: str
    names: tuple[str, ...]
    first_line: bytes = b""
    document: str = ""
    otlp_document: bool = False

    def has_any(self, *names: str) -> bool:
        """Whether any of ``names`` is a column (or top-level key)."""
        return any(n in self.names for n in names)

    def has_prefix(self, *prefixes: str) -> bool:
        """Whether a name (``attributes.`` removed) starts with one of ``prefixes``."""
        return any(n.removeprefix("attributes.").startswith(prefixes) for n in self.names)


@dataclass(frozen=True)
class ToolFormat:
    """A tool's export format, declared once in its adapter module (``FORMAT``).

    ``adapter: auto`` tries every tool's ``signature`` first, then (files other than JSON) every
    ``columns`` rule, in ``auto.TOOLS`` order; the first reason found names the tool. A file
    declared with the adapter must pass ``accepts`` (looser where the adapter reads more shapes).
    How a table tool's file is read is declared beside it (``_table_tool.TableSpec``).

    Attributes:
        adapter: the contract's ``adapter`` name.
        tool: the provenance ``tool`` (and the evidence rows' ``source`` tag).
        label: the tool's name in messages.
        expected: what a file declared with this adapter must show, in words.
        accepts: whether a file's shape has the format.
        signature: a document-level mark (JSON keys, first JSON line) → why, or None.
        columns: a table's column names → why they are this tool's, or None.
    """

    adapter: str
    tool: str
    label: str
    expected: str
    accepts: Callable[[FileShape], bool]
    signature: Callable[[FileShape], str | None] | None = None
    columns: Callable[[Sequence[str]], str | None] | None = None
