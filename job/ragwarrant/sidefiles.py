"""Files named by command-line options, read or written beside the run's directories.

``--termination-message-path``, ``--ledger``, ``--signing-key``, ``--summary-json`` and the
``decision.json`` that ``summary`` reads are ordinary files: never a FIFO (reading or writing one
blocks until another process opens its other end), never a device (``/dev/zero`` reads without
end), and, when a symlink, judged by where it leads. A leaf module: every layer may import it.

The checks raise ``OSError`` with a readable ``strerror``, so each caller's existing
``except OSError`` turns them into its own typed error (its code, exit 64/66/73).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_SIDE_FILE_BYTES = 16 << 20
"""The most bytes read from a key file or one run's ``decision.json`` (far above any real one)."""

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def file_kind(mode: int) -> str:
    """Name the kind of file ``mode`` (``st_mode``) describes: "a FIFO", ..., "a regular file"."""
    return next((name for test, name in _KINDS if test(mode)), "a regular file")


def special_file(path: Path) -> str | None:
    """The kind of ``path`` (symlinks followed) when it exists and is not a regular file; else None.

    An absent or unreachable path is None: the caller creates it, or its own open reports it.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _not_regular(fd: int) -> os.stat_result:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"it is {file_kind(st.st_mode)}, not a regular file")
    return st


def read_regular(
    path: Path, *, limit: int = MAX_SIDE_FILE_BYTES, within: Path | None = None
) -> bytes:
    """The bytes of the regular file ``path``, without blocking on a FIFO or reading a device.

    Args:
        path: the file; a symlink is followed.
        limit: the most bytes read; a larger file is refused unread.
        within: when set, ``path`` resolved (every symlink followed) must lie under this
            directory resolved: a link out of it is refused.

    Raises:
        OSError: unreadable; not a regular file (``EINVAL``); larger than ``limit`` (``EFBIG``);
            leading outside ``within`` (``EXDEV``). ``strerror`` says which.
    """
    if within is not None:
        resolved, root = path.resolve(), within.resolve()
        if root not in resolved.parents:
            raise OSError(errno.EXDEV, f"it is a symlink leading outside {within}")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if _not_regular(fd).st_size > limit:
            raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read()  # a regular file: ends at its size, checked above
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes")
    return data


def write_regular(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` (created when absent) with ``data``; regular files only.

    Every symlink is resolved first (the caller checked where it leads); the file is then
    opened without following a link (a link swapped in meanwhile is refused) and without
    blocking (a FIFO is refused, never waited on). The file is rewritten in place, not
    renamed over: Kubernetes bind-mounts ``/dev/termination-log`` as a single file, which a
    rename cannot replace.

    Raises:
        OSError: cannot be opened or written, or is not a regular file (``EINVAL``).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path.resolve(), flags, 0o644)
    try:
        _not_regular(fd)
        os.ftruncate(fd, 0)
        os.write(fd, data)
    finally:
        os.close(fd)
