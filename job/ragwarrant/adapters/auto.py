"""``adapter: auto``: detect which tool wrote a file from its content, by the tools' own specs.

Every tool adapter declares its format once (``FORMAT``, a ``ToolFormat``); ``TOOLS`` lists the
adapters in detection order and nothing else here knows a tool. Only the file's structure is
looked at (``FileShape``: JSON keys, column names, the first JSONL line, the Parquet schema),
never its name. A tool's ``signature`` (deepeval: a JSON object with ``testCases``,
``testRunData`` or ``test_results``; otel: ``resourceSpans``; langsmith: JSON lines
``{run, example, ...}``) wins over every ``columns`` rule; the column rules (not for JSON
documents) are tried in ``TOOLS`` order: trulens, langsmith, phoenix, otel, ragas.
``registry.load_auto`` then reads the file with that tool's adapter and records why in
``SourceProvenance.detected``.

A file whose adapter is *declared* (``adapter: ragas`` ...) is checked against that tool's
``accepts`` first (``check_declared``): the fields the real library writes, looser than the
detection rules where the adapter reads more shapes. Taken from the exports the tools write
(tests/data/exports: ragas 0.4.3, deepeval 4.3.1, langsmith 0.15.1, arize-phoenix 20.26,
trulens 2.16, OpenTelemetry GenAI semantic conventions). A plain table declared as a tool's
export is refused (``evidence-adapter-mismatch``) instead of being read as if it were one.
"""

from __future__ import annotations

import csv
from pathlib import Path

import orjson
import pyarrow.parquet as pq

from ragwarrant.adapters import deepeval, langsmith, otel, phoenix, ragas, trulens
from ragwarrant.adapters._base import AdapterRequest, FileShape, ToolFormat
from ragwarrant.adapters._dataset import dataset_files, is_dataset
from ragwarrant.adapters._integrity import READER_FAILURES
from ragwarrant.adapters._otlp import otlp_document
from ragwarrant.adapters._tables import invalid_json
from ragwarrant.errors import EvidenceError

#: The tool adapters, in detection order (each module has ``FORMAT`` and ``load``).
TOOLS = (trulens, langsmith, phoenix, otel, ragas, deepeval)
FORMATS: dict[str, ToolFormat] = {m.FORMAT.adapter: m.FORMAT for m in TOOLS}

_FAILURES: tuple[type[BaseException], ...] = (*READER_FAILURES, csv.Error, orjson.JSONDecodeError)


def read_shape(path: Path, fmt: str, display: str) -> FileShape:
    """Read the structure of one file (see ``FileShape``).

    Raises:
        EvidenceError: ``evidence-unparseable`` when the structure cannot be read (a JSON
            document that does not parse: ``_tables.invalid_json``).
    """
    if fmt == "json":
        try:
            doc = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise invalid_json(display, exc) from exc
        obj = doc[0] if isinstance(doc, list) and doc else doc
        names = tuple(obj) if isinstance(obj, dict) else ()
        return FileShape(fmt, names, document=type(doc).__name__)
    try:
        if fmt == "parquet":
            return FileShape(fmt, tuple(pq.read_schema(path).names))
        if fmt == "csv":
            with path.open(newline="", encoding="utf-8-sig") as fh:
                return FileShape(fmt, tuple(next(csv.reader(fh), [])))
        with path.open("rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
        if (doc := otlp_document(path, fmt)) is not None:  # one indented OTLP document
            return FileShape(fmt, tuple(doc), first, otlp_document=True)
        obj = orjson.loads(first) if first else {}
        return FileShape(fmt, tuple(obj) if isinstance(obj, dict) else (), first)
    except _FAILURES as exc:
        raise EvidenceError(
            "evidence-unparseable",
            f"{display} cannot be read as {fmt} to detect its format: {exc}",
            file=display,
            expected=fmt,
        ) from exc


def _by_columns(shape: FileShape) -> tuple[str, str] | None:
    """The first tool whose column rule matches (never for a JSON document)."""
    if shape.format == "json":
        return None
    for f in FORMATS.values():
        if f.columns and (why := f.columns(shape.names)):
            return f.adapter, why
    return None


def detect_shape(shape: FileShape) -> tuple[str, str] | None:
    """``(adapter name, reason)`` of the first tool whose signature, then column rule, matches
    ``shape`` (``TOOLS`` order), or None."""
    for f in FORMATS.values():
        if f.signature and (why := f.signature(shape)):
            return f.adapter, why
    return _by_columns(shape)


def detect(request: AdapterRequest) -> tuple[str, str]:
    """Return ``(adapter name, reason)`` for the source's file.

    Raises:
        EvidenceError: ``evidence-empty`` for an empty file, ``evidence-format-unknown`` when no
            tool's format matches (naming what was seen), ``evidence-unparseable`` when
            unreadable.
    """
    display = request.display_path
    if request.path.stat().st_size == 0:
        raise EvidenceError(
            "evidence-empty",
            f"{display} is empty",
            file=display,
            expected="an export",
            found="no bytes",
        )
    shape = read_shape(request.path, request.source.format, display)
    if hit := detect_shape(shape):
        return hit
    if shape.format != "json":
        seen = ", ".join(shape.names[:15])
    else:
        seen = ", ".join(shape.names[:10]) if shape.document == "dict" else shape.document
    labels = [FORMATS[a].label for a in sorted(FORMATS)]
    raise EvidenceError(
        "evidence-format-unknown",
        f"{display}: cannot tell which tool wrote it (found {seen or 'nothing'})",
        hint=f"name the adapter in the contract ({', '.join(sorted(FORMATS))}, generic)",
        file=display,
        expected=f"an export of {', '.join(labels[:-1])} or {labels[-1]}",
        found=seen[:200],
    )


def check_declared(request: AdapterRequest) -> None:
    """Refuse a file that does not have the format of its declared tool adapter.

    Only the structure is read (of the first part file of a dataset directory). Adapters
    without a ``FORMAT`` (``generic``, ``auto``) are not checked here.

    Raises:
        EvidenceError: ``evidence-adapter-mismatch`` naming the file, the declared adapter, what
            its format has (``expected``) and the names found, and which tool the file looks
            like when a column rule recognises another; ``evidence-unparseable`` when the
            structure cannot be read.
    """
    source, display = request.source, request.display_path
    declared = FORMATS.get(source.adapter)
    if declared is None:
        return
    shape = FileShape(source.format, ())  # an empty dataset directory shows nothing
    if not is_dataset(request.path):
        shape = read_shape(request.path, source.format, display)
    elif parts := dataset_files(request.path, display):
        shape = read_shape(parts[0][1], source.format, f"{display}/{parts[0][0]}")
    if declared.accepts(shape):
        return
    seen = ", ".join(shape.names[:15]) or "no columns or keys"
    other = _by_columns(shape)
    looks = f"; it looks like a {other[0]} export ({other[1]})" if other else ""
    raise EvidenceError(
        "evidence-adapter-mismatch",
        f"{display} is declared 'adapter: {source.adapter}' but is not a {declared.label} "
        f"export: expected {declared.expected}; found {seen}{looks}",
        hint="declare the adapter of the tool that wrote the file ('adapter: auto' detects it; "
        "'adapter: generic' reads a plain table through the source's 'columns')",
        file=display,
        expected=declared.expected,
        found=seen[:200],
    )
