"""Shared types of the adapters."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ragwarrant.contract import EvidenceSource, ReleaseContract

__all__ = ["AdapterRequest", "AdapterResult", "SourceProvenance"]


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


@dataclass(frozen=True)
class SourceProvenance:
    """Where a source's rows came from and how they were read.

    Attributes:
        source_id: the contract's evidence source id.
        path: the path relative to the input directory.
        sha256: the file's sha256.
        adapter: the adapter that read it (after ``auto`` detection).
        tool: the tool that wrote the file; ``tool_version`` when the file shows it.
        metric_names: original column/metric name → canonical metric id.
        pairing_method: ``id-column``, ``question-hash`` or ``span-join``.
        detected: for ``adapter: auto``, why this adapter was chosen.
        rows_read: rows (or records) read from the file.
        notes: anything else a reviewer should know (e.g. cost modeled from tokens).
    """

    source_id: str
    path: str
    sha256: str
    adapter: str
    tool: str
    tool_version: str | None
    metric_names: dict[str, str]
    pairing_method: str
    rows_read: int
    detected: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AdapterResult:
    """An adapter's output.

    Attributes:
        evidence: canonical evidence rows (``ragwarrant.evidence.schema.EVIDENCE_SCHEMA``).
        provenance: how the file was read.
        texts: private question/response/context text (``TEXT_SCHEMA``), when the file has it.
    """

    evidence: pa.Table
    provenance: SourceProvenance
    texts: pa.Table | None = None
