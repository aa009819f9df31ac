"""The run manifest: hashes of every input and output, versions, seed and times."""

from __future__ import annotations

import platform
from collections.abc import Iterable
from datetime import UTC, datetime
from importlib import metadata

from ragwarrant.digests import sha256_bytes
from ragwarrant.outputs import FileDigest, Manifest
from ragwarrant.version import __version__

WITHHELD_INPUT_PREFIX = "withheld-input-name/"
"""What an input path with a hygiene finding becomes in manifest.json and the attestation:
``withheld-input-name/<index>`` (its sha256 is kept; ``verify --input`` matches it by hash)."""

RUNTIME_DEPENDENCIES = (
    "pydantic",
    "numpy",
    "scipy",
    "pyarrow",
    "orjson",
    "structlog",
    "PyYAML",
    "cryptography",
)


def dependency_versions(names: Iterable[str] = RUNTIME_DEPENDENCIES) -> dict[str, str]:
    """Installed versions of ``names`` (the runtime dependencies), "not installed" when absent."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def utc_timestamp() -> str:
    """The current UTC time as outputs record it: ``2026-01-31T12:00:00.000000Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def digest_bytes(path: str, data: bytes) -> FileDigest:
    """The FileDigest of ``data`` stored at ``path`` (relative to its directory)."""
    return FileDigest(path=path, sha256=sha256_bytes(data), bytes=len(data))


def build_manifest(
    *,
    run_id: str,
    seed: int | None,
    started_at: str,
    finished_at: str,
    exit_code: int,
    inputs: list[FileDigest],
    outputs: list[FileDigest],
) -> Manifest:
    """Assemble ``manifest.json``; inputs and outputs sorted by path."""
    return Manifest(
        run_id=run_id,
        ragwarrant_version=__version__,
        python_version=platform.python_version(),
        dependencies=dependency_versions(),
        seed=seed,
        started_at=started_at,
        finished_at=finished_at,
        exit_code=exit_code,
        inputs=sorted(inputs, key=lambda d: d.path),
        outputs=sorted(outputs, key=lambda d: d.path),
    )
