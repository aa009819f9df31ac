"""The adapter registry and the one entry point that reads an evidence source."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

from ragwarrant.adapters import auto, deepeval, generic, langsmith, otel, phoenix, ragas, trulens
from ragwarrant.adapters._base import AdapterRequest, AdapterResult
from ragwarrant.contract import EvidenceSource, ReleaseContract
from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import conform_evidence

__all__ = ["ADAPTERS", "file_sha256", "load_source"]

Adapter = Callable[[AdapterRequest], AdapterResult]

ADAPTERS: dict[str, Adapter] = {
    "auto": auto.load,
    "deepeval": deepeval.load,
    "generic": generic.load,
    "langsmith": langsmith.load,
    "otel": otel.load,
    "phoenix": phoenix.load,
    "ragas": ragas.load,
    "trulens": trulens.load,
}


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_source(
    source: EvidenceSource, path: Path, sha256: str, contract: ReleaseContract
) -> AdapterResult:
    """Read one evidence source with its declared adapter.

    Raises:
        EvidenceError: ``adapter-unknown`` for an adapter name not in ``ADAPTERS``, or whatever the
            adapter raises for a file that does not match it.
    """
    adapter = ADAPTERS.get(source.adapter)
    if adapter is None:
        raise EvidenceError(
            "adapter-unknown",
            f"evidence source {source.id!r} names adapter {source.adapter!r}; "
            f"known adapters: {', '.join(sorted(ADAPTERS))}",
            file=source.path,
            expected=" | ".join(sorted(ADAPTERS)),
            found=source.adapter,
        )
    result = adapter(AdapterRequest(source, path, source.path, sha256, contract))
    return dataclasses.replace(result, evidence=conform_evidence(result.evidence))
