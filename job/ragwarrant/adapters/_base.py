"""Shared types of the adapters."""

from __future__ import annotations

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
