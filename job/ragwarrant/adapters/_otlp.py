"""OTLP JSON: one ``ExportTraceServiceRequest`` per line (JSON lines), or one per file (a JSON
document, as an OTLP/HTTP JSON body or a trace downloaded from a tracing UI), flattened to one
row per span.

As the OpenTelemetry Collector's file exporter writes them: ``resourceSpans[].scopeSpans[]
.spans[]`` (or the older ``instrumentationLibrarySpans``), 64-bit integers (``intValue``,
``startTimeUnixNano``) as JSON strings of digits. Every defect is an ``EvidenceError`` naming the
line (1 for a document) and the JSON pointer of the offending value inside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from ragwarrant.adapters._integrity import json_ref, wrong_json_type
from ragwarrant.adapters._tables import iter_json_lines
from ragwarrant.errors import EvidenceError

_INT = re.compile(r"[+-]?\d+", re.A)


def _int64(raw: Any) -> int:
    if isinstance(raw, bool) or not (
        isinstance(raw, int) or (isinstance(raw, str) and _INT.fullmatch(raw))
    ):
        raise ValueError("intValue")  # int64 arrives as a JSON string of digits
    return int(raw)


def _any_value(v: dict[str, Any]) -> Any:
    """The Python value of an OTLP ``AnyValue`` (arrays and key-value lists as JSON text).

    Raises:
        ValueError: naming the ``AnyValue`` field that does not hold its type (``intValue`` is an
            int64 written as a JSON string or number, never ``"291.0"``).
    """
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return _int64(v["intValue"])
    if "doubleValue" in v:
        raw = v["doubleValue"]
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise ValueError("doubleValue")
        return float(raw)
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        values = (v["arrayValue"] or {}).get("values", [])
        return orjson.dumps([_any_value(x) for x in values]).decode()
    if "kvlistValue" in v:
        items = (v["kvlistValue"] or {}).get("values", [])
        return orjson.dumps({x["key"]: _any_value(x.get("value", {})) for x in items}).decode()
    return None


def is_otlp_json(first_line: bytes) -> bool:
    """Whether a JSON line looks like an OTLP ``ExportTraceServiceRequest``."""
    return b'"resourceSpans"' in first_line[:4096]


def otlp_document(path: Path, fmt: str) -> dict[str, Any] | None:
    """The file's one ``ExportTraceServiceRequest`` when it is a single JSON document with
    ``resourceSpans``, else None (JSON lines, or not OTLP).

    ``fmt`` ``json``: the whole file is parsed. ``jsonl``: only when the first non-blank line is
    not a whole JSON value (an indented document saved as ``.jsonl``); a file whose first line
    is one is JSON lines (a compact document is one line of it) and still streams.
    """
    if fmt == "jsonl":
        with path.open("rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
        try:
            orjson.loads(first)
            return None
        except orjson.JSONDecodeError:
            pass
    elif fmt != "json":
        return None
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) and "resourceSpans" in doc else None


_STATUS_NAMES: dict[object, str] = {
    0: "UNSET",
    1: "OK",
    2: "ERROR",
    "STATUS_CODE_UNSET": "UNSET",
    "STATUS_CODE_OK": "OK",
    "STATUS_CODE_ERROR": "ERROR",
}
_TIME_KEYS = (
    ("startTimeUnixNano", "start_time_unix_nano"),
    ("endTimeUnixNano", "end_time_unix_nano"),
)


@dataclass(frozen=True)
class _Line:
    """One ``ExportTraceServiceRequest`` being flattened: the file and its line (1 for a
    document), which every error names with the JSON pointer of the offending value."""

    display: str
    number: int

    def objects(self, value: Any, pointer: str) -> list[dict[str, Any]]:
        """A JSON list of objects (null → empty), or a located error."""
        items = value or []
        if not isinstance(items, list):
            raise wrong_json_type(self.display, self.number, pointer, "a list of objects", items)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise wrong_json_type(
                    self.display, self.number, f"{pointer}/{i}", "an object", item
                )
        return items

    def attributes(self, items: Any, pointer: str) -> dict[str, Any]:
        """An OTLP attribute list (at ``pointer``) as a dict.

        Raises:
            EvidenceError: ``evidence-wrong-type`` naming the JSON pointer of the first attribute
                whose value is not a well-formed ``AnyValue``.
        """
        display, line = self.display, self.number
        out: dict[str, Any] = {}
        for i, a in enumerate(items if isinstance(items, list) else []):
            if not isinstance(a, dict) or "key" not in a:
                continue
            try:
                out[str(a["key"])] = _any_value(a.get("value") or {})
            except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
                field = str(exc) if isinstance(exc, ValueError) else "value"
                ref = json_ref(display, f"{pointer}/{i}/value")
                raise EvidenceError(
                    "evidence-wrong-type",
                    f"{ref} (line {line}): attribute {str(a['key'])!r} is not a well-formed "
                    f"OTLP {field}",
                    hint="OTLP JSON writes intValue as a string of digits and doubleValue as a "
                    "number",
                    file=display,
                    row=line,
                    column=ref,
                    expected="an OTLP AnyValue (intValue: a string of digits)",
                    found=field,
                ) from None
        return out

    def spans(
        self, request: dict[str, Any]
    ) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
        """Yield ``(resource attributes, span, JSON pointer of the span)`` for every span."""
        for r, rs in enumerate(self.objects(request["resourceSpans"], "/resourceSpans")):
            base = f"/resourceSpans/{r}"
            resource = rs.get("resource") or {}
            attrs = resource.get("attributes") if isinstance(resource, dict) else None
            res_attrs = self.attributes(attrs, f"{base}/resource/attributes")
            key = "scopeSpans" if rs.get("scopeSpans") else "instrumentationLibrarySpans"
            for s, ss in enumerate(self.objects(rs.get(key), f"{base}/{key}")):
                pointer = f"{base}/{key}/{s}/spans"
                for k, span in enumerate(self.objects(ss.get("spans"), pointer)):
                    yield res_attrs, span, f"{pointer}/{k}"

    def time(self, span: dict[str, Any], key: str, pointer: str) -> int | None:
        """The span's time ``key`` as int64 unix nanoseconds, or None when absent."""
        display, lineno = self.display, self.number
        ref = json_ref(display, f"{pointer}/{key}")
        raw = span.get(key)
        if raw is None:
            return None
        try:
            value = _int64(raw)
        except ValueError:
            raise EvidenceError(
                "evidence-wrong-type",
                f"{ref} (line {lineno}): span {str(span.get('spanId'))!r} {key} is not an integer",
                file=display,
                row=lineno,
                column=ref,
                expected="unix nanoseconds (a string of digits)",
                found=repr(raw)[:40] if isinstance(raw, str | int | float) else type(raw).__name__,
            ) from None
        if not -(2**63) <= value < 2**63:
            raise EvidenceError(
                "evidence-wrong-type",
                f"{ref} (line {lineno}): {key} does not fit in int64",
                file=display,
                row=lineno,
                column=ref,
                expected="unix nanoseconds (int64)",
                found=f"{len(str(abs(value)))} digits",
            )
        return value

    def row(self, res_attrs: dict[str, Any], span: dict[str, Any], pointer: str) -> dict[str, Any]:
        """One flattened span: resource then span attributes (as strings), ids, times, status."""
        row: dict[str, Any] = {k: (str(v) if v is not None else None) for k, v in res_attrs.items()}
        attrs = self.attributes(span.get("attributes"), f"{pointer}/attributes")
        row.update({k: (str(v) if v is not None else None) for k, v in attrs.items()})
        for key, out in (("traceId", "trace_id"), ("spanId", "span_id"), ("name", "name")):
            value = span.get(key)
            row[out] = str(value) if value is not None else None
        parent = span.get("parentSpanId")
        row["parent_span_id"] = str(parent) if parent else None
        row["kind"] = str(span.get("kind")) if span.get("kind") is not None else None
        for key, out in _TIME_KEYS:
            row[out] = self.time(span, key, pointer)
        status = span.get("status")
        code = status.get("code") if isinstance(status, dict) else None
        row["status_code"] = _STATUS_NAMES.get(
            code if isinstance(code, int | str) else None, str(code) if code is not None else None
        )
        return row


def iter_otlp_json_batches(
    path: Path, display: str, batch_rows: int = 1 << 16, document: dict[str, Any] | None = None
) -> Iterator[pa.Table]:
    """Stream an OTLP JSON-lines file, or one OTLP JSON document, as tables of flattened spans.

    Each span becomes a row: ``trace_id``, ``span_id``, ``parent_span_id``, ``name``, ``kind``,
    ``start_time_unix_nano``, ``end_time_unix_nano`` (int64 ns, parsed from their string form),
    ``status_code`` (``OK``/``ERROR``/``UNSET``), then every resource and span attribute under its
    own key (span attributes win). All attribute columns are strings, parsed by the readers.
    With ``document`` (from ``otlp_document``) that one request is read, as line 1.

    Raises:
        EvidenceError: ``evidence-unparseable`` naming the line that is not JSON or not OTLP;
            ``evidence-wrong-type`` for a time that is not an integer.
    """
    requests = (
        iter([(1, document)])
        if document is not None
        else iter_json_lines(path, display, "one OTLP JSON object per line")
    )
    rows: list[dict[str, Any]] = []
    for lineno, obj in requests:
        if not isinstance(obj, dict) or "resourceSpans" not in obj:
            raise EvidenceError(
                "evidence-unparseable",
                f"{display} line {lineno} is not an OTLP trace export (no 'resourceSpans')",
                file=display,
                row=lineno,
                expected='{"resourceSpans": [...]}',
                found=(", ".join(obj) if isinstance(obj, dict) else type(obj).__name__)[:60],
            )
        line = _Line(display, lineno)
        rows += [line.row(res, span, pointer) for res, span, pointer in line.spans(obj)]
        if len(rows) >= batch_rows:
            yield _rows_to_table(rows)
            rows = []
    if rows:
        yield _rows_to_table(rows)


def _rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    keys = dict.fromkeys(k for r in rows for k in r)
    times = {out for _, out in _TIME_KEYS}
    schema = pa.schema([(k, pa.int64() if k in times else pa.string()) for k in keys])
    return pa.Table.from_pylist(rows, schema)
