"""``adapter: auto``: detect which tool wrote a file from its content.

``registry.load_auto`` then reads it with that tool's adapter (``registry.TOOL_ADAPTERS``).

Only the file's structure is looked at (JSON keys, column names, the first JSONL line, the Parquet
schema), never its name. The rules, in order, first match wins:

- deepeval: JSON with ``testCases``, ``testRunData`` or ``test_results``;
- otel: JSONL whose first line has ``resourceSpans`` (OTLP), or one JSON document with it;
- langsmith: JSONL rows ``{run, example, ...}`` or runs;
- trulens: ``app_version`` with ``record_json`` or ``<name> feedback cost in USD`` columns;
- langsmith: ``feedback.*`` columns;
- phoenix: ``context.span_id`` with ``context.trace_id`` (spans), or a span id column with
  ``*_score`` / ``score`` / ``result.score`` columns (evaluations, annotations, document
  evaluations);
- otel: ``gen_ai.*`` / ``llm.token_count.*`` columns with ``trace_id``;
- ragas: ``user_input`` or ``question``, with ``response``/``answer`` or
  ``retrieved_contexts``/``contexts``.

What was detected and why is recorded in ``SourceProvenance.detected``.

A file whose adapter is *declared* (``adapter: ragas`` ...) is checked against that tool's format
first (``check_declared``): the fields the real library writes (``DECLARED_FORMATS``), looser
than the detection rules where the adapter reads more shapes. A plain table declared as a tool's
export is refused (``evidence-adapter-mismatch``) instead of being read as if it were one.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pyarrow.parquet as pq

from ragwarrant.adapters import langsmith, otel, phoenix, trulens
from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.adapters._dataset import dataset_files, is_dataset
from ragwarrant.adapters._integrity import READER_FAILURES
from ragwarrant.adapters._otlp import otlp_document
from ragwarrant.adapters._tables import invalid_json
from ragwarrant.errors import EvidenceError

_DETECT_FAILURES: tuple[type[BaseException], ...] = (
    *READER_FAILURES,
    csv.Error,
    orjson.JSONDecodeError,
)


def _first_json_line(request: AdapterRequest) -> bytes:
    return _first_line(request.path)


def _first_line(path: Path) -> bytes:
    with path.open("rb") as fh:
        return next((line for line in fh if line.strip()), b"")


def _columns(request: AdapterRequest) -> list[str]:
    return _columns_of(request.path, request.source.format, request.display_path)


def _columns_of(path: Path, fmt: str, display: str) -> list[str]:
    try:
        if fmt == "parquet":
            return list(pq.read_schema(path).names)
        if fmt == "csv":
            with path.open(newline="", encoding="utf-8-sig") as fh:
                return next(csv.reader(fh), [])
        if fmt == "json":
            doc = orjson.loads(path.read_bytes())
            obj = doc[0] if isinstance(doc, list) and doc else doc
        elif (doc := otlp_document(path, fmt)) is not None:
            obj = doc  # one indented OTLP document saved as JSON lines
        else:
            line = _first_line(path)
            obj = orjson.loads(line) if line else {}
        return list(obj) if isinstance(obj, dict) else []
    except _DETECT_FAILURES as exc:
        raise EvidenceError(
            "evidence-unparseable",
            f"{display} cannot be read as {fmt} to detect its format: {exc}",
            file=display,
            expected=fmt,
        ) from exc


Rule = Callable[[list[str], set[str]], tuple[str, str] | None]


def _trulens_rule(names: list[str], s: set[str]) -> tuple[str, str] | None:
    if "app_version" not in s:
        return None
    if "record_json" in s:
        why = "record_json"
    elif any(c.endswith(trulens.COST_SUFFIX) for c in names):
        why = "'<name> feedback cost in USD'"
    else:
        return None
    return "trulens", f"columns app_version and {why} (TruLens records-and-feedback table)"


def _langsmith_rule(names: list[str], s: set[str]) -> tuple[str, str] | None:
    feedback = [c for c in names if c.startswith("feedback.")]
    if not feedback:
        return None
    return "langsmith", f"feedback.* columns ({', '.join(feedback[:3])}) (LangSmith to_pandas)"


def _phoenix_rule(names: list[str], s: set[str]) -> tuple[str, str] | None:
    span_col = next((c for c in phoenix.SPAN_ID_COLUMNS if c in s), None)
    if span_col == "context.span_id" and "context.trace_id" in s:
        return "phoenix", "columns context.span_id and context.trace_id (Phoenix spans dataframe)"
    if not span_col:
        return None
    scores = [c for c in names if c.endswith("_score")] or [
        c for c in names if c in ("score", "result.score")
    ]
    if not scores:
        return None
    return "phoenix", f"column {span_col} with {', '.join(scores[:3])} (Phoenix evaluations)"


def _otel_rule(names: list[str], s: set[str]) -> tuple[str, str] | None:
    gen_ai = [
        c
        for c in names
        if c.removeprefix("attributes.").startswith(("gen_ai.", "llm.token_count."))
    ]
    if not gen_ai or not any(c in s for c in ("trace_id", "traceId")):
        return None
    return (
        "otel",
        f"gen_ai.* / llm.token_count.* attributes ({', '.join(gen_ai[:2])}) with trace_id",
    )


def _ragas_rule(names: list[str], s: set[str]) -> tuple[str, str] | None:
    question = next((c for c in ("user_input", "question") if c in s), None)
    other = next(
        (c for c in ("response", "answer", "retrieved_contexts", "contexts") if c in s), None
    )
    if not (question and other):
        return None
    return "ragas", f"columns {question} and {other} (Ragas EvaluationResult.to_pandas)"


#: The column rules, in order; the first that matches wins.
_COLUMN_RULES: tuple[Rule, ...] = (
    _trulens_rule,
    _langsmith_rule,
    _phoenix_rule,
    _otel_rule,
    _ragas_rule,
)


def _detect_columns(names: list[str]) -> tuple[str, str] | None:
    s = set(names)
    return next((hit for rule in _COLUMN_RULES if (hit := rule(names, s)) is not None), None)


def _detect_json(path: Path, display: str) -> tuple[tuple[str, str] | None, str]:
    """``(adapter, reason)`` of a JSON document, or None and what its top level holds."""
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise invalid_json(display, exc) from exc
    if not isinstance(data, dict):
        return None, type(data).__name__
    if "resourceSpans" in data:
        return ("otel", "JSON document with 'resourceSpans' (one OTLP trace export)"), ""
    for key in ("testRunData", "testCases", "test_results"):
        if key in data:
            return ("deepeval", f"JSON object with {key!r} (DeepEval test run)"), ""
    return None, ", ".join(list(data)[:10])


def detect(request: AdapterRequest) -> tuple[str, str]:
    """Return ``(adapter name, reason)`` for the source's file.

    Raises:
        EvidenceError: ``evidence-empty`` for an empty file, ``evidence-format-unknown`` when no
            rule matches (naming what was seen), ``evidence-unparseable`` when unreadable.
    """
    source, display = request.source, request.display_path
    if request.path.stat().st_size == 0:
        raise EvidenceError(
            "evidence-empty",
            f"{display} is empty",
            file=display,
            expected="an export",
            found="no bytes",
        )
    if source.format == "json":
        hit, seen = _detect_json(request.path, display)
        if hit:
            return hit
    else:
        if source.format == "jsonl":
            line = _first_json_line(request)
            if otel.is_otlp_json(line):
                return "otel", "first line has 'resourceSpans' (OTLP JSON lines)"
            if otlp_document(request.path, "jsonl") is not None:
                return "otel", "one indented JSON document with 'resourceSpans' (OTLP)"
            if langsmith.is_raw_jsonl(line):
                return (
                    "langsmith",
                    "first line is a LangSmith run / experiment row {run, example, ...}",
                )
        names = _columns(request)
        hit = _detect_columns(names)
        if hit:
            return hit
        seen = ", ".join(names[:15])
    raise EvidenceError(
        "evidence-format-unknown",
        f"{display}: cannot tell which tool wrote it (found {seen or 'nothing'})",
        hint="name the adapter in the contract "
        "(ragas, deepeval, langsmith, phoenix, trulens, otel, generic)",
        file=display,
        expected="an export of ragas, deepeval, langsmith, phoenix, trulens or OpenTelemetry",
        found=seen[:200],
    )


@dataclass(frozen=True)
class _Shape:
    """What ``check_declared`` sees of a file: its column (or top-level key) names and its first
    non-blank line (JSON Lines only, else empty)."""

    names: list[str]
    first_line: bytes

    def has_any(self, *names: str) -> bool:
        return any(n in self.names for n in names)

    def has_prefix(self, *prefixes: str) -> bool:
        return any(n.removeprefix("attributes.").startswith(prefixes) for n in self.names)


@dataclass(frozen=True)
class DeclaredFormat:
    """The fields a tool's real export has, checked for a file declared with its adapter.

    Attributes:
        tool: the tool's name in messages.
        expected: what the file must show, in words (the error's ``expected``).
        test: whether a file's shape shows it.
    """

    tool: str
    expected: str
    test: Callable[[_Shape], bool]


def _is_trulens(shape: _Shape) -> bool:
    return _trulens_rule(shape.names, set(shape.names)) is not None


#: Adapter name → the format a file declared with it must have. Taken from the exports the tools
#: write (tests/data/exports: ragas 0.4.3, deepeval 4.3.1, langsmith 0.15.1, arize-phoenix 20.26,
#: trulens 2.16, OpenTelemetry GenAI semantic conventions); looser than the detection rules where
#: the adapter reads more shapes (Phoenix evaluations without a score column, telemetry without a
#: trace id).
DECLARED_FORMATS: dict[str, DeclaredFormat] = {
    "deepeval": DeclaredFormat(
        "DeepEval",
        "a DeepEval test run: a JSON object with testCases (or testRunData / test_results)",
        lambda s: s.has_any("testCases", "testRunData", "test_results"),
    ),
    "langsmith": DeclaredFormat(
        "LangSmith",
        "a LangSmith experiment: feedback.* / inputs.* / outputs.* columns (to_pandas), or "
        "JSON lines {run, example, ...}",
        lambda s: (
            langsmith.is_raw_jsonl(s.first_line)
            or any(n.startswith(("feedback.", "inputs.", "outputs.")) for n in s.names)
        ),
    ),
    "otel": DeclaredFormat(
        "OpenTelemetry",
        "OpenTelemetry GenAI / OpenInference spans: gen_ai.* or llm.* attribute columns, or "
        "OTLP JSON with resourceSpans (JSON lines, or one document)",
        lambda s: (
            otel.is_otlp_json(s.first_line)
            or "resourceSpans" in s.names
            or s.has_prefix("gen_ai.", "llm.")
        ),
    ),
    "phoenix": DeclaredFormat(
        "Phoenix",
        "a Phoenix spans or evaluations table: a context.span_id (or span_id) column",
        lambda s: s.has_any(*phoenix.SPAN_ID_COLUMNS),
    ),
    "ragas": DeclaredFormat(
        "Ragas",
        "a Ragas result table (EvaluationResult.to_pandas): a user_input (or legacy question) "
        "column beside the metric columns",
        lambda s: s.has_any("user_input", "question"),
    ),
    "trulens": DeclaredFormat(
        "TruLens",
        "a TruLens records-and-feedback table: app_version with record_json or "
        "'<name> feedback cost in USD' columns",
        _is_trulens,
    ),
}


def _shape(path: Path, fmt: str, display: str) -> _Shape:
    """The shape of a file, or of the first part file of a dataset directory."""
    if is_dataset(path):
        parts = dataset_files(path, display)
        if not parts:
            return _Shape([], b"")
        rel, path = parts[0]
        display = f"{display}/{rel}"
    first = _first_line(path) if fmt == "jsonl" else b""
    return _Shape(_columns_of(path, fmt, display), first)


def check_declared(request: AdapterRequest) -> None:
    """Refuse a file that does not have the format of its declared tool adapter.

    Only the structure is read (column names, top-level keys, the first JSON line). Adapters
    without an entry in ``DECLARED_FORMATS`` (``generic``, ``auto``) are not checked here.

    Raises:
        EvidenceError: ``evidence-adapter-mismatch`` naming the file, the declared adapter, what
            its format has (``expected``) and the names found, and which tool the file looks
            like when the detection rules recognise another; ``evidence-unparseable`` when the
            structure cannot be read.
    """
    source, display = request.source, request.display_path
    declared = DECLARED_FORMATS.get(source.adapter)
    if declared is None:
        return
    shape = _shape(request.path, source.format, display)
    if declared.test(shape):
        return
    seen = ", ".join(shape.names[:15]) or "no columns or keys"
    other = _detect_columns(shape.names) if source.format != "json" else None
    looks = f"; it looks like a {other[0]} export ({other[1]})" if other else ""
    raise EvidenceError(
        "evidence-adapter-mismatch",
        f"{display} is declared 'adapter: {source.adapter}' but is not a {declared.tool} "
        f"export: expected {declared.expected}; found {seen}{looks}",
        hint="declare the adapter of the tool that wrote the file ('adapter: auto' detects it; "
        "'adapter: generic' reads a plain table through the source's 'columns')",
        file=display,
        expected=declared.expected,
        found=seen[:200],
    )
