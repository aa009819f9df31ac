"""RAGTruth (Niu et al., ACL 2024) files read into validated records: the one RAGTruth reader.

Two layouts, chosen by what the folder holds:

- **official** (a complete upstream copy: ``response.jsonl`` + ``source_info.jsonl``, in DIR or
  DIR/dataset): every record carries ``split`` and ``quality``; records whose ``quality`` is not
  ``good`` are dropped.
- **sample** (the shared partial sample: ``sample_response.jsonl.gz`` +
  ``sample_source_info.jsonl.gz``): no ``split``/``quality`` fields.

A response is *unsupported* (a positive) when it carries at least one hallucination span whose
``implicit_true`` is false (``implicit_true`` spans count as supported). The context of a response
is the question plus passages (QA), the article (Summary) or the JSON of the structured record
(Data2txt, as in RAGTruth's prompt). Texts are kept in memory only.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragwarrant.digests import sha256_file
from ragwarrant.errors import InputError

TASKS: tuple[str, ...] = ("QA", "Summary", "Data2txt")
Layout = Literal["official", "sample"]

_OFFICIAL_FILES = ("response.jsonl", "source_info.jsonl")
_SAMPLE_FILES = ("sample_response.jsonl.gz", "sample_source_info.jsonl.gz")
_SPLITS = ("train", "test")
_DIR_HINT = "pass --ragtruth-dir pointing at RAGTruth's dataset/ folder or the shared sample folder"


@dataclass(frozen=True, slots=True)
class RagtruthRecord:
    """One RAGTruth response, reduced to what the benchmark needs (its text is kept in memory only).

    Attributes:
        source_id: the source it answers.
        task_type: ``QA``, ``Summary`` or ``Data2txt`` (from the source record).
        split: ``train``/``test`` (official layout) or None (sample layout).
        unsupported: True when a label with ``implicit_true`` false is present.
        response: the response text.
        model: the generator that wrote the response (RAGTruth's ``model`` field).
        unsupported_spans: ``(start, end)`` character offsets into ``response`` of the labels
            whose ``implicit_true`` is false, in file order (empty when supported); used by the
            span-supervised attempts of ``bench/groundedness_attempts.py``.
    """

    source_id: str
    task_type: str
    split: str | None
    unsupported: bool
    response: str
    model: str
    unsupported_spans: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class RagtruthData:
    """A validated RAGTruth copy.

    Attributes:
        layout: ``official`` or ``sample``.
        records: the kept responses, in file order.
        contexts: source_id -> context passages.
        files: file name -> sha256 of its bytes as stored.
        n_read: responses read.
        n_dropped_quality: responses dropped because ``quality != "good"`` (official layout).
    """

    layout: Layout
    records: tuple[RagtruthRecord, ...]
    contexts: dict[str, tuple[str, ...]]
    files: dict[str, str]
    n_read: int
    n_dropped_quality: int


def _bad(path: Path, line: int, field: str | None, message: str) -> InputError:
    where = f"{path}:{line}" + (f": field {field!r}" if field else "")
    return InputError(
        "ragtruth-invalid",
        f"{where}: {message}",
        "pass an unmodified RAGTruth copy (upstream dataset/*.jsonl or the shared sample)",
        file=str(path),
        line=line,
        field=field,
    )


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; gzip when the name ends in .gz."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise _bad(path, number, None, f"malformed JSON line: {exc}") from exc
                if not isinstance(obj, dict):
                    raise _bad(
                        path, number, None, f"expected a JSON object, found {type(obj).__name__}"
                    )
                yield number, obj
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(
            "ragtruth-unreadable",
            f"{path}: cannot read: {exc}",
            "check the file is complete and readable",
            file=str(path),
        ) from exc


def _field(
    obj: dict[str, Any],
    name: str,
    kind: type | tuple[type, ...],
    path: Path,
    line: int,
    prefix: str = "",
) -> Any:
    """Return ``obj[name]`` when present and of ``kind`` (bool is never accepted as an int)."""
    if name not in obj:
        raise _bad(path, line, prefix + name, "missing field")
    value = obj[name]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise _bad(path, line, prefix + name, f"expected {expected}, found {type(value).__name__}")
    return value


def _context_of(task: str, info: Any, path: Path, line: int) -> tuple[str, ...]:
    if task == "QA":
        if not isinstance(info, dict):
            raise _bad(
                path, line, "source_info", f"expected an object for QA, found {type(info).__name__}"
            )
        question = _field(info, "question", str, path, line, "source_info.")
        passages = _field(info, "passages", str, path, line, "source_info.")
        return (question, passages)
    if task == "Summary":
        if not isinstance(info, str):
            raise _bad(
                path,
                line,
                "source_info",
                f"expected a string for Summary, found {type(info).__name__}",
            )
        return (info,)
    if not isinstance(info, dict):
        raise _bad(
            path,
            line,
            "source_info",
            f"expected an object for Data2txt, found {type(info).__name__}",
        )
    return (json.dumps(info, ensure_ascii=False),)


def _find_layout(directory: Path) -> tuple[Layout, Path, Path]:
    if not directory.is_dir():
        raise InputError(
            "ragtruth-dir-missing",
            f"{directory}: not a directory",
            _DIR_HINT,
            file=str(directory),
        )
    for folder in (directory, directory / "dataset"):
        for layout, (responses, sources) in (
            ("official", _OFFICIAL_FILES),
            ("sample", _SAMPLE_FILES),
        ):
            r, s = folder / responses, folder / sources
            if r.is_file() or s.is_file():
                missing = s if r.is_file() else r
                if not missing.is_file():
                    raise InputError(
                        "ragtruth-missing-file",
                        f"{missing}: missing (its partner {r if missing is s else s} is present)",
                        f"RAGTruth needs both {responses} and {sources}",
                        file=str(missing),
                    )
                return layout, r, s  # type: ignore[return-value]
    raise InputError(
        "ragtruth-missing-file",
        f"{directory}: holds neither {' + '.join(_OFFICIAL_FILES)} nor {' + '.join(_SAMPLE_FILES)}",
        _DIR_HINT,
        file=str(directory),
    )


def _read_sources(
    source_path: Path,
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """Return ``(source_id -> context passages, source_id -> task type)`` of a source file."""
    contexts: dict[str, tuple[str, ...]] = {}
    tasks: dict[str, str] = {}
    for line, obj in _read_jsonl(source_path):
        sid = str(_field(obj, "source_id", (str, int), source_path, line))
        task = _field(obj, "task_type", str, source_path, line)
        if task not in TASKS:
            raise _bad(
                source_path,
                line,
                "task_type",
                f"expected one of {', '.join(TASKS)}, found {task!r}",
            )
        if "source_info" not in obj:
            raise _bad(source_path, line, "source_info", "missing field")
        if sid in contexts:
            raise _bad(source_path, line, "source_id", f"duplicate source_id {sid!r}")
        contexts[sid] = _context_of(task, obj["source_info"], source_path, line)
        tasks[sid] = task
    return contexts, tasks


def _span_of(label: dict[str, Any], i: int, size: int, path: Path, line: int) -> tuple[int, int]:
    """The ``(start, end)`` of a label: ints with ``0 <= start <= end <= size``."""
    bounds = []
    for key in ("start", "end"):
        value = label.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(path, line, f"labels[{i}].{key}", f"expected int, found {value!r}")
        bounds.append(value)
    start, end = bounds
    if not 0 <= start <= end <= size:
        raise _bad(
            path,
            line,
            f"labels[{i}].start",
            f"expected 0 <= start <= end <= {size} (response length), found {start}..{end}",
        )
    return start, end


def _unsupported_spans(
    labels: list[Any], size: int, path: Path, line: int
) -> tuple[tuple[int, int], ...]:
    """Offsets of the labels with ``implicit_true`` false; every label must be an object with a
    bool ``implicit_true``, and those spans must have int offsets inside a response of ``size``."""
    spans: list[tuple[int, int]] = []
    for i, label in enumerate(labels):
        if not isinstance(label, dict):
            raise _bad(
                path,
                line,
                f"labels[{i}]",
                f"expected an object, found {type(label).__name__}",
            )
        if "implicit_true" not in label:
            raise _bad(path, line, f"labels[{i}].implicit_true", "missing field")
        implicit = label["implicit_true"]
        if not isinstance(implicit, bool):
            raise _bad(
                path,
                line,
                f"labels[{i}].implicit_true",
                f"expected bool, found {type(implicit).__name__}",
            )
        if not implicit:
            spans.append(_span_of(label, i, size, path, line))
    return tuple(spans)


def _official_split(obj: dict[str, Any], path: Path, line: int) -> tuple[str, bool]:
    """Return ``(split, quality is good)`` of an official-layout response record."""
    split = _field(obj, "split", str, path, line)
    if split not in _SPLITS:
        raise _bad(path, line, "split", f"expected train or test, found {split!r}")
    return split, _field(obj, "quality", str, path, line) == "good"


def load_ragtruth(directory: str | Path) -> RagtruthData:
    """Read and validate a RAGTruth copy (official upstream files or the shared sample).

    Args:
        directory: a folder holding ``response.jsonl`` + ``source_info.jsonl`` (or a ``dataset/``
            subfolder with them), or ``sample_response.jsonl.gz`` + ``sample_source_info.jsonl.gz``.

    Returns:
        The validated ``RagtruthData``; official layout keeps only ``quality == "good"`` records.

    Raises:
        InputError: ``ragtruth-dir-missing``, ``ragtruth-missing-file``, ``ragtruth-unreadable``,
            ``ragtruth-empty`` (no usable response) or ``ragtruth-invalid`` (malformed JSON line,
            missing or mistyped field, unknown task type or split, duplicate or unknown
            source_id); the message names file, line, field.
    """
    layout, response_path, source_path = _find_layout(Path(directory))
    contexts, tasks = _read_sources(source_path)
    records: list[RagtruthRecord] = []
    n_read = n_dropped = 0
    for line, obj in _read_jsonl(response_path):
        n_read += 1
        sid = str(_field(obj, "source_id", (str, int), response_path, line))
        if sid not in contexts:
            raise _bad(
                response_path, line, "source_id", f"source_id {sid!r} is not in {source_path.name}"
            )
        response = _field(obj, "response", str, response_path, line)
        model = _field(obj, "model", str, response_path, line)
        labels = _field(obj, "labels", list, response_path, line)
        spans = _unsupported_spans(labels, len(response), response_path, line)
        split: str | None = None
        if layout == "official":
            split, good = _official_split(obj, response_path, line)
            if not good:
                n_dropped += 1
                continue
        records.append(RagtruthRecord(sid, tasks[sid], split, bool(spans), response, model, spans))
    if not records:
        raise InputError(
            "ragtruth-empty",
            f"{response_path}: no usable response",
            "pass a RAGTruth copy with responses",
            file=str(response_path),
        )
    files = {p.name: sha256_file(p) for p in (response_path, source_path)}
    return RagtruthData(layout, tuple(records), contexts, files, n_read, n_dropped)
