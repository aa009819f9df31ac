"""Which files of an output directory its manifest does not list (each may have been planted).

A light module (no pydantic model is built, nothing of ``audit.verify`` is loaded) so that
``ragwarrant summary`` can refuse a directory with a planted file without paying verify's
import cost; ``audit.verify`` reports the same files as mismatches.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragwarrant.audit.attestation import ATTESTATION_FILENAME
from ragwarrant.audit.writer import HISTORY_DIR, LOCK_FILE, STAGING_PREFIX
from ragwarrant.outputs import MANIFEST_FILE

if TYPE_CHECKING:
    from ragwarrant.outputs import Manifest


def unlisted_files(out: Path, manifest: Manifest) -> list[str]:
    """Files in the output directory ``out`` that ``manifest`` does not list, each may be planted.

    A file is anything but a directory: a regular file, a symlink (to anything), a FIFO, socket
    or device; each is judged by ``lstat``/``stat`` alone, never opened (a FIFO would block).
    Not counted: ``manifest.json`` itself, the attestation (written after the manifest), the
    runs' lock file while it is empty (as a run leaves it), an unfinished attempt's staging
    directory and earlier runs kept under ``history/`` (a ``history`` that is not a real
    directory, a link or a FIFO, is counted). Shared by ``verify`` and ``summary``
    (which must not pay verify's import cost).

    Returns:
        Relative POSIX paths, sorted.
    """
    listed = {d.path for d in manifest.outputs} | {MANIFEST_FILE, ATTESTATION_FILENAME}
    return [
        rel
        for path in sorted(out.rglob("*"))
        if (path.is_symlink() or not path.is_dir())
        and (rel := path.relative_to(out).as_posix()) not in listed
        and not rel.startswith(f"{HISTORY_DIR}/")  # history itself only as a real directory
        and not rel.startswith(STAGING_PREFIX)
        and not (rel == LOCK_FILE and path.is_file() and path.stat().st_size == 0)
    ]
