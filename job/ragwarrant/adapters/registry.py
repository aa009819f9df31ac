"""The adapter registry and the one entry point that reads an evidence source."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from ragwarrant.adapters import auto, generic
from ragwarrant.adapters._base import AdapterRequest, AdapterResult
from ragwarrant.adapters._dataset import check_dataset, is_dataset
from ragwarrant.adapters._integrity import check_file, dataset_unsupported
from ragwarrant.adapters._telemetry import check_operational_evidence
from ragwarrant.contract import EvidenceSource, ReleaseContract
from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import conform_evidence

Adapter = Callable[[AdapterRequest], AdapterResult]

#: The tool adapters ``adapter: auto`` chooses among (``auto.TOOLS``, each with its ``FORMAT``).
TOOL_ADAPTERS: dict[str, Adapter] = {m.FORMAT.adapter: m.load for m in auto.TOOLS}


def load_auto(request: AdapterRequest) -> AdapterResult:
    """Detect the file's tool (``auto.detect``), read it with that adapter, record the detection.

    Raises:
        EvidenceError: as ``auto.detect``, then whatever the chosen adapter raises.
    """
    name, why = auto.detect(request)
    result = TOOL_ADAPTERS[name](request)
    provenance = result.provenance.model_copy(update={"detected": f"{name}: {why}"})
    return dataclasses.replace(result, provenance=provenance)


#: Every adapter name a contract may give (``contract.AdapterName`` is tested equal to the keys).
ADAPTERS: dict[str, Adapter] = {"auto": load_auto, "generic": generic.load, **TOOL_ADAPTERS}


def load_source(
    source: EvidenceSource, path: Path, sha256: str, contract: ReleaseContract
) -> AdapterResult:
    """Read one evidence source with its declared adapter.

    ``path`` may be a dataset directory (``adapters._dataset``): every part file then passes the
    boundary checks, and ``sha256`` is the source's ``dataset_sha256``.

    Raises:
        EvidenceError: ``adapter-unknown`` for an adapter name not in ``ADAPTERS``;
            ``evidence-adapter-mismatch`` for a file that lacks its declared tool's format
            (``auto.check_declared``), or whatever the adapter raises;
            ``evidence-dataset-unsupported`` when an adapter that reads one file is given a
            directory; ``evidence-limit`` past the contract's ``limits.evidence_rows``.
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
    if is_dataset(path):
        check_dataset(path, source.format, source.path)
    else:
        check_file(path, source.format, source.path)
    request = AdapterRequest(source, path, source.path, sha256, contract)
    auto.check_declared(request)  # a plain table declared as a tool's export is not read as one
    try:
        result = adapter(request)
    except IsADirectoryError as exc:
        raise dataset_unsupported(source.path) from exc
    rows, limit = result.evidence.num_rows, contract.limits.evidence_rows
    if rows > limit:  # checked once read, before it is conformed, indexed and resampled
        raise EvidenceError(
            "evidence-limit",
            f"{source.path} gives {rows:,} evidence rows (one per policy, example and metric); "
            f"the limit is {limit:,}",
            hint="sample the evaluation, or raise limits.evidence_rows in the contract",
            file=source.path,
            expected=f"at most {limit} rows",
            found=f"{rows} rows",
        )
    evidence = conform_evidence(result.evidence)
    operational = frozenset(m.id for m in contract.operational_metrics)
    check_operational_evidence(evidence, result.provenance.metric_names, operational, source.path)
    return dataclasses.replace(result, evidence=evidence)
