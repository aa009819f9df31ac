"""Atomic, NaN-free writing of output files."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import orjson
from pydantic import BaseModel

from ragwarrant.errors import OutputError

__all__ = ["dump_json", "write_atomic", "write_model"]


def dump_json(model: BaseModel) -> bytes:
    """Serialise an output model to indented JSON bytes with a trailing newline.

    The models refuse NaN and Infinity at construction, so nothing non-finite reaches the file.
    """
    data = model.model_dump(mode="json", by_alias=True)
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same directory, fsync, rename.

    Raises:
        OutputError: the directory is not writable (code ``output-not-writable``).
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot write {path}: {exc.strerror}",
            hint="mount a writable volume at /out, or pass --output DIR",
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(
            "output-not-writable",
            f"cannot write {path}: {exc.strerror}",
            hint="check free space and permissions of the output volume",
        ) from exc
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_model(path: Path, model: BaseModel) -> bytes:
    """Write an output model as JSON atomically; return the bytes written."""
    data = dump_json(model)
    write_atomic(path, data)
    return data
