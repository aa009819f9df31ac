"""Atomic, NaN-free writing of output files, and the staged commit of a run's directory.

A run writes every output file into a staging directory inside the output volume
(``<out>/.ragwarrant-staging-<run_id>/``, same file system), fsyncs them, then commits
(``commit_staged``): an earlier committed run is first kept under ``<out>/history/<run_id>/``
(hard links, the directory renamed into place in one step), the old ``manifest.json`` is removed,
the new files are renamed in with ``decision.intoto.json`` before ``manifest.json`` and the
manifest LAST. The manifest's presence therefore means a complete run; a directory without one
is not a result. ``clean_stale`` removes what a killed run left (staging directories, orphan
``.<name>.<random>.tmp`` files) at the start of the next.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import BaseModel

from ragwarrant.errors import OutputError
from ragwarrant.mounts import unwritable_hint

STAGING_PREFIX = ".ragwarrant-staging-"
"""Name prefix of a run's staging directory inside the output volume (never a result)."""

HISTORY_DIR = "history"
"""Where a retry keeps an earlier committed run it does not reuse: ``<out>/history/<run_id>/``."""


LOCK_FILE = ".ragwarrant.lock"
"""The lock a run holds in its output directory from cleaning stale files to its commit."""


@dataclass(frozen=True)
class LockErrors:
    """What ``held_lock`` raises when it fails: one code, message and hint per step.

    ``open_message`` and ``lock_message`` are formatted with ``{name}`` (the file's name),
    ``{dir}`` (its directory) and ``{reason}`` (the system's ``strerror``).
    """

    open_code: str
    open_message: str
    open_hint: str
    lock_code: str
    lock_message: str
    lock_hint: str


_OUTPUT_LOCK_ERRORS = LockErrors(
    open_code="output-not-writable",
    open_message="cannot create the lock file in {dir}: {reason}",
    open_hint="make the output directory writable, or pass another --output DIR",
    lock_code="output-not-writable",
    lock_message="cannot lock {name} in {dir}: {reason}",
    lock_hint="put the output on a file system that supports flock (local disk, NFSv4)",
)


@contextlib.contextmanager
def held_lock(path: Path, errors: LockErrors, *, append: bool = False) -> Iterator[int]:
    """Open ``path`` (created when absent, mode 0o644) and hold an exclusive ``flock`` on it for
    the ``with`` block, waiting for another holder's lock.

    Yields the locked descriptor (``O_RDWR | O_CLOEXEC``, and ``O_APPEND`` with ``append``: the
    ledger appends its lines on it); closing it on leaving (however the block ends) releases the
    lock, and the kernel releases it when the process dies, so a killed holder never blocks.

    Raises:
        OutputError: the file cannot be opened (``errors.open_code``) or locked
            (``errors.lock_code``).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else 0)
    fields = {"name": path.name, "dir": path.parent}
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        message = errors.open_message.format(reason=exc.strerror, **fields)
        raise OutputError(errors.open_code, message, hint=errors.open_hint) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            message = errors.lock_message.format(reason=exc.strerror, **fields)
            raise OutputError(errors.lock_code, message, hint=errors.lock_hint) from exc
        yield fd
    finally:
        os.close(fd)


def output_lock(output_dir: Path) -> contextlib.AbstractContextManager[int]:
    """Hold an exclusive ``flock`` on ``<out>/.ragwarrant.lock`` (waiting for another run's).

    Two runs into one output directory would otherwise remove each other's staging directory
    (``clean_stale``) and interleave their commits. The lock file and ``history/`` must not be
    symlinks: the run writes, moves and removes files there, and through a link it would do so
    wherever the link leads (the run's own files replace a link by name, never write through it).

    Raises:
        OutputError: the lock file cannot be created or locked (code ``output-not-writable``);
            ``output-link`` when the lock file or ``history/`` is a symlink, naming it
            (relative to the output directory).
    """
    for name in (LOCK_FILE, HISTORY_DIR):
        if (output_dir / name).is_symlink():
            raise OutputError(
                "output-link",
                f"{name} in the output directory is a symlink; the job never writes through a "
                "link it did not make",
                hint=f"remove the link {name} from the output directory (or use a fresh one)",
            )
    return held_lock(output_dir / LOCK_FILE, _OUTPUT_LOCK_ERRORS)


def dump_json(model: BaseModel) -> bytes:
    """Serialise an output model to indented JSON bytes with a trailing newline.

    The models refuse NaN and Infinity at construction, so nothing non-finite reaches the file.
    """
    data = model.model_dump(mode="json", by_alias=True)
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, sync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same directory, fsync, rename.

    Args:
        path: the file to (re)place.
        data: its bytes.
        mode: permission bits of the written file: 0o644 for outputs that are published, 0o600
            for files that hold inputs (``k8s render`` packages contracts and evidence).
        sync_dir: fsync the directory after the rename, so the new name survives a power loss.
            False for a file of a staging directory: ``commit_staged`` syncs it once for all
            its files (each fsync costs milliseconds of wall time on a real disk; issue 13).

    Raises:
        OutputError: the directory is not writable (code ``output-not-writable``).
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot write {path}: {exc.strerror}",
            hint=unwritable_hint(path.parent),
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(
            "output-not-writable",
            f"cannot write {path}: {exc.strerror}",
            hint="check free space and permissions of the output volume",
        ) from exc
    if sync_dir:
        fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """fsync a directory, so the renames into it survive a power loss (best effort)."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_model(path: Path, model: BaseModel, *, sync_dir: bool = True) -> bytes:
    """Write an output model as JSON atomically (``write_atomic``); return the bytes written."""
    data = dump_json(model)
    write_atomic(path, data, sync_dir=sync_dir)
    return data


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def clean_stale(output_dir: Path) -> list[str]:
    """Remove what killed runs left: staging directories and orphan temp files.

    Looks in ``output_dir`` and ``output_dir/history``. Runs must not share an output volume
    concurrently (a Kubernetes Job or AWS Batch retry starts after the killed attempt ended).

    Returns:
        The names removed, relative to ``output_dir``.
    """
    removed: list[str] = []
    for folder in (output_dir, output_dir / HISTORY_DIR):
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            name = path.name  # a staging directory, or a temp file ``.<name>.<random>.tmp``
            orphan_tmp = name.startswith(".") and name.endswith(".tmp") and path.is_file()
            if name.startswith(STAGING_PREFIX) or orphan_tmp:
                _remove(path)
                removed.append(path.relative_to(output_dir).as_posix())
    return removed


def make_staging(output_dir: Path, run_id: str) -> Path:
    """Create an empty staging directory for ``run_id`` inside ``output_dir``.

    Raises:
        OutputError: the directory cannot be created (code ``output-not-writable``).
    """
    staging = output_dir / f"{STAGING_PREFIX}{run_id}"
    _remove(staging)
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot create a staging directory in {output_dir}: {exc.strerror}",
            hint=unwritable_hint(output_dir),
        ) from exc
    return staging


def _keep_earlier(output_dir: Path, earlier_id: str, names: Sequence[str]) -> None:
    """Keep the committed run's ``names`` under ``history/<earlier_id>/``, renamed in at once."""
    final = output_dir / HISTORY_DIR / earlier_id
    if final.exists():  # kept already by an attempt killed before it finished committing
        return
    staging = output_dir / HISTORY_DIR / f"{STAGING_PREFIX}{earlier_id}"
    _remove(staging)
    staging.mkdir(parents=True)
    for name in names:
        src, dst = output_dir / name, staging / name
        if not src.is_file():
            continue
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError:
            shutil.copy2(src, dst, follow_symlinks=False)
    fsync_dir(staging)
    os.rename(staging, final)
    fsync_dir(final.parent)


def commit_staged(
    staging: Path,
    output_dir: Path,
    names: Sequence[str],
    earlier: tuple[str, Sequence[str]] | None = None,
) -> None:
    """Commit a staged run into ``output_dir``: ``names`` renamed in, in order, the last last.

    The staging directory is synced once (its files were, each as written), the output
    directory once after every file but the last is renamed in and once after the last: the
    manifest's name can survive a power loss only with every other file's (the directory is
    synced between them), without one sync per file.

    Args:
        staging: the staging directory (``make_staging``) holding every file of ``names``.
        output_dir: the output volume.
        names: the run's files in commit order; the manifest must be last (its presence means
            the run completed), the attestation just before it.
        earlier: ``(run_id, file names)`` of a committed run already in ``output_dir``, kept
            under ``history/<run_id>/`` first; None when there is none.

    Raises:
        OutputError: a file cannot be moved (code ``output-not-writable``).
    """
    try:
        fsync_dir(staging)
        if earlier is not None:
            _keep_earlier(output_dir, earlier[0], earlier[1])
        (output_dir / names[-1]).unlink(missing_ok=True)  # no longer a completed run
        fsync_dir(output_dir)
        stale = set(earlier[1]) if earlier is not None else set()
        for name in sorted(stale - set(names)):
            (output_dir / name).unlink(missing_ok=True)
        for name in names[:-1]:
            os.replace(staging / name, output_dir / name)
        fsync_dir(output_dir)  # every other file is in before the manifest's name is
        os.replace(staging / names[-1], output_dir / names[-1])
        fsync_dir(output_dir)
        staging.rmdir()
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot commit the run into {output_dir}: {exc.strerror}",
            hint="check free space and permissions of the output volume",
        ) from exc
