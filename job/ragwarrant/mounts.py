"""The container's mount points: a leaf module, so the CLI can name them without loading more.

``/in`` holds the inputs (read only), ``/out`` receives the outputs. Their mention in an output,
a log line or an error message is not a private path (``audit.hygiene``).
"""

from __future__ import annotations

import errno
from pathlib import Path

DEFAULT_MOUNTS: tuple[str, ...] = ("/in", "/out")


def unwritable_hint(directory: Path, error: int | None = None) -> str:
    """The hint of ``output-not-writable`` for ``directory``: when the OS ``error`` was ENOTDIR,
    a folder on its path is a file; in the container's ``/out`` (the default), mount a volume
    there; elsewhere (an ``--output`` given), make it writable."""
    if error == errno.ENOTDIR:
        return "a folder on that path is a file: pass another --output (folders only on its path)"
    if directory == Path("/out") or Path("/out") in directory.parents:
        return "mount a writable volume at /out (the job runs as uid 65532), or pass --output DIR"
    return "make that directory (or the one it is created in) writable, or pass another --output"
