"""``adapter: auto``: detect which tool wrote a file from its content.

``registry.load_auto`` then reads it with that tool's adapter (``registry.TOOL_ADAPTERS``).

Only the file's structure is looked at (JSON keys, column names, the first JSONL line, the Parquet
schema), never its name. The rules, in order, first match wins:

- deepeval: JSON with ``testCases``, ``testRunData`` or ``test_results``;
- otel: JSONL whose first line has ``resourceSpans`` (OTLP);
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
"""

from __future__ import annotations

import csv
from collections.abc import Callable

import orjson
import pyarrow.parquet as pq

from ragwarrant.adapters import langsmith, otel, phoenix, trulens
from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.adapters._integrity import READER_FAILURES
from ragwarrant.adapters._io import invalid_json
from ragwarrant.errors import EvidenceError

__all__ = ["detect"]


_DETECT_FAILURES: tuple[type[BaseException], ...] = (
    *READER_FAILURES,
    csv.Error,
    orjson.JSONDecodeError,
)


def _first_json_line(request: AdapterRequest) -> bytes:
    with request.path.open("rb") as fh:
        return next((line for line in fh if line.strip()), b"")


def _columns(request: AdapterRequest) -> list[str]:
    fmt, path, display = request.source.format, request.path, request.display_path
    try:
        if fmt == "parquet":
            return list(pq.read_schema(path).names)
        if fmt == "csv":
            with path.open(newline="", encoding="utf-8-sig") as fh:
                return next(csv.reader(fh), [])
        line = _first_json_line(request)
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
        try:
            data = orjson.loads(request.path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise invalid_json(display, exc) from exc
        if isinstance(data, dict):
            for key in ("testRunData", "testCases", "test_results"):
                if key in data:
                    return "deepeval", f"JSON object with {key!r} (DeepEval test run)"
        seen = ", ".join(list(data)[:10]) if isinstance(data, dict) else type(data).__name__
    else:
        if source.format == "jsonl":
            line = _first_json_line(request)
            if otel.is_otlp_json(line):
                return "otel", "first line has 'resourceSpans' (OTLP JSON lines)"
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
