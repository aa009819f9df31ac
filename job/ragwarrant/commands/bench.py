"""``ragwarrant bench groundedness``: the lexical groundedness gates on RAGTruth.

Two protocols, chosen by what ``--ragtruth-dir`` holds:

- **official** (a complete upstream copy: ``response.jsonl`` + ``source_info.jsonl``, in DIR or
  DIR/dataset): records whose ``quality`` is not ``good`` are dropped; each gate's threshold is
  calibrated on the ``train`` split and the gates are scored on the ``test`` split.
- **sample** (the shared partial sample: ``sample_response.jsonl.gz`` +
  ``sample_source_info.jsonl.gz``, no ``split``/``quality`` fields): source-grouped k-fold
  cross-validation. Fold of a source = ``sha256(f"{seed}:{source_id}")`` (first 8 bytes, big
  endian) mod k; each fold is scored with thresholds calibrated on the other folds and the
  out-of-fold predictions are pooled. This is NOT the official test split and the output says so.

In both, a response is *unsupported* (a positive) when it carries at least one hallucination span
whose ``implicit_true`` is false (``implicit_true`` spans count as supported). Metrics are at
response level: precision, recall, F1 and false-negative rate (FN / positives), overall and per
task type, beside the always-flag floor. Thresholds are calibrated by maximum F1 with ties to the
higher precision (``corroborators.calibration.calibrate_threshold``), pooled over task types.
The context of a response is the question plus passages (QA), the article (Summary) or the JSON of
the structured record (Data2txt, as in RAGTruth's prompt). Latency is the wall time of scoring one
response against its uncached context (all gates in one pass), on this machine.

No question, response or context text reaches the output: only counts, shares and timings.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragwarrant import __version__
from ragwarrant.audit.writer import write_atomic
from ragwarrant.corroborators.calibration import (
    FLAG_RULE,
    GATES,
    calibrate_threshold,
)
from ragwarrant.corroborators.lexical import index_context, score_response
from ragwarrant.errors import InputError, UsageError

__all__ = [
    "BenchReport",
    "RagtruthData",
    "RagtruthRecord",
    "load_ragtruth",
    "register",
    "render_markdown",
    "run_groundedness_bench",
]

TASKS: tuple[str, ...] = ("QA", "Summary", "Data2txt")
Layout = Literal["official", "sample"]

_OFFICIAL_FILES = ("response.jsonl", "source_info.jsonl")
_SAMPLE_FILES = ("sample_response.jsonl.gz", "sample_source_info.jsonl.gz")
_SPLITS = ("train", "test")
_DIR_HINT = "pass --ragtruth-dir pointing at RAGTruth's dataset/ folder or the shared sample folder"
LATENCY_HEADING = "### Latency"
"""Markdown heading of the machine-dependent part of the report (everything above is exact)."""

PUBLISHED_POINTS: tuple[tuple[str, float], ...] = (
    ("always-flag floor", 51.8),
    ("best published deterministic lexical ensemble", 56.6),
    ("GPT-4 prompted", 63.4),
)
"""Response-level F1 (%) on the official RAGTruth test split, all task types pooled (issue 4)."""


# --------------------------------------------------------------------------------------------
# loading


@dataclass(frozen=True, slots=True)
class RagtruthRecord:
    """One RAGTruth response, reduced to what the benchmark needs (its text is kept in memory only).

    Attributes:
        source_id: the source it answers.
        task_type: ``QA``, ``Summary`` or ``Data2txt`` (from the source record).
        split: ``train``/``test`` (official layout) or None (sample layout).
        unsupported: True when a label with ``implicit_true`` false is present.
        response: the response text.
    """

    source_id: str
    task_type: str
    split: str | None
    unsupported: bool
    response: str


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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def load_ragtruth(directory: str | Path) -> RagtruthData:
    """Read and validate a RAGTruth copy (official upstream files or the shared sample).

    Args:
        directory: a folder holding ``response.jsonl`` + ``source_info.jsonl`` (or a ``dataset/``
            subfolder with them), or ``sample_response.jsonl.gz`` + ``sample_source_info.jsonl.gz``.

    Returns:
        The validated ``RagtruthData``; official layout keeps only ``quality == "good"`` records.

    Raises:
        InputError: ``ragtruth-dir-missing``, ``ragtruth-missing-file``, ``ragtruth-unreadable``,
            or ``ragtruth-invalid`` (malformed JSON line, missing or mistyped field, unknown task
            type or split, duplicate or unknown source_id); the message names file, line, field.
    """
    layout, response_path, source_path = _find_layout(Path(directory))
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
        labels = _field(obj, "labels", list, response_path, line)
        unsupported = False
        for i, label in enumerate(labels):
            if not isinstance(label, dict):
                raise _bad(
                    response_path,
                    line,
                    f"labels[{i}]",
                    f"expected an object, found {type(label).__name__}",
                )
            if "implicit_true" not in label:
                raise _bad(response_path, line, f"labels[{i}].implicit_true", "missing field")
            implicit = label["implicit_true"]
            if not isinstance(implicit, bool):
                raise _bad(
                    response_path,
                    line,
                    f"labels[{i}].implicit_true",
                    f"expected bool, found {type(implicit).__name__}",
                )
            unsupported = unsupported or not implicit
        split: str | None = None
        if layout == "official":
            split = _field(obj, "split", str, response_path, line)
            if split not in _SPLITS:
                raise _bad(response_path, line, "split", f"expected train or test, found {split!r}")
            if _field(obj, "quality", str, response_path, line) != "good":
                n_dropped += 1
                continue
        records.append(RagtruthRecord(sid, tasks[sid], split, unsupported, response))
    if not records:
        raise InputError(
            "ragtruth-empty",
            f"{response_path}: no usable response",
            "pass a RAGTruth copy with responses",
            file=str(response_path),
        )
    files = {p.name: _sha256(p) for p in (response_path, source_path)}
    return RagtruthData(layout, tuple(records), contexts, files, n_read, n_dropped)


# --------------------------------------------------------------------------------------------
# evaluation


@dataclass(frozen=True, slots=True)
class Confusion:
    """Response-level counts of one gate on one slice; flags are predictions of "unsupported"."""

    n: int
    n_positive: int
    n_flagged: int
    true_positives: int

    @property
    def precision(self) -> float | None:
        """``tp / flagged``; None when nothing is flagged."""
        return self.true_positives / self.n_flagged if self.n_flagged else None

    @property
    def recall(self) -> float | None:
        """``tp / positives``; None when there is no positive."""
        return self.true_positives / self.n_positive if self.n_positive else None

    @property
    def f1(self) -> float | None:
        """``2 tp / (flagged + positives)``; None when both are zero."""
        denominator = self.n_flagged + self.n_positive
        return 2 * self.true_positives / denominator if denominator else None

    @property
    def false_negative_rate(self) -> float | None:
        """``(positives - tp) / positives``; None when there is no positive."""
        recall = self.recall
        return None if recall is None else 1.0 - recall


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table."""

    task: str
    gate: str
    confusion: Confusion


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Everything the bench prints; ``latency_us`` is the only machine-dependent part."""

    layout: Layout
    protocol: str
    folds: int | None
    seed: int | None
    n_read: int
    n_dropped_quality: int
    n_train: int | None
    n_evaluated: int
    n_sources: int
    files: dict[str, str]
    thresholds: dict[str, list[float]]
    rows: tuple[Row, ...]
    latency_us: dict[str, float]


def _fold_of(source_id: str, seed: int, folds: int) -> int:
    digest = hashlib.sha256(f"{seed}:{source_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % folds


def _confusion(flags: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> Confusion:
    return Confusion(
        n=int(mask.sum()),
        n_positive=int((labels & mask).sum()),
        n_flagged=int((flags & mask).sum()),
        true_positives=int((flags & labels & mask).sum()),
    )


def _measure_latency(
    records: Sequence[RagtruthRecord], contexts: dict[str, tuple[str, ...]]
) -> dict[str, float]:
    timings = np.empty(len(records), dtype=np.float64)
    clock = time.perf_counter_ns
    for i, record in enumerate(records):
        passages = contexts[record.source_id]
        start = clock()
        score_response(record.response, passages)
        timings[i] = (clock() - start) / 1000.0
    total_s = float(timings.sum()) / 1e6
    return {
        "median_us": float(np.median(timings)),
        "p95_us": float(np.percentile(timings, 95)),
        "mean_us": float(timings.mean()),
        "responses_per_s": len(records) / total_s if total_s > 0 else 0.0,
    }


def run_groundedness_bench(data: RagtruthData, *, folds: int = 5, seed: int = 0) -> BenchReport:
    """Run the benchmark protocol that matches ``data.layout``.

    Args:
        data: a loaded RAGTruth copy.
        folds: number of source-grouped folds (sample layout only), at least 2.
        seed: seed of the fold assignment hash (sample layout only).

    Returns:
        The ``BenchReport``: per task type and pooled, for the always-flag floor and each gate.

    Raises:
        UsageError: ``folds < 2``.
        InputError: ``ragtruth-no-positive`` when a calibration set has no unsupported response,
            ``ragtruth-empty`` when the official layout lacks a train or test record.
    """
    records = data.records
    index_cache = {sid: index_context(passages) for sid, passages in data.contexts.items()}
    scores = {gate: np.empty(len(records)) for gate in GATES}
    for i, record in enumerate(records):
        result = score_response(record.response, index_cache[record.source_id])
        for gate in GATES:
            scores[gate][i] = getattr(result, gate)
    labels = np.fromiter((r.unsupported for r in records), dtype=bool, count=len(records))
    tasks = np.array([r.task_type for r in records])

    thresholds: dict[str, list[float]] = {gate: [] for gate in GATES}
    flags = {gate: np.zeros(len(records), dtype=bool) for gate in GATES}

    def calibrate(gate: str, train: np.ndarray, where: str) -> float:
        if not labels[train].any():
            raise InputError(
                "ragtruth-no-positive",
                f"{where}: no unsupported response to calibrate the {gate} threshold on",
                "use a larger RAGTruth copy (or fewer folds)",
            )
        return calibrate_threshold(scores[gate][train], labels[train]).threshold

    if data.layout == "official":
        splits = np.array([r.split for r in records])
        train, evaluated = splits == "train", splits == "test"
        for name, mask in (("train", train), ("test", evaluated)):
            if not mask.any():
                raise InputError(
                    "ragtruth-empty",
                    f"no quality-good record in the {name} split",
                    "pass the complete upstream response.jsonl",
                )
        for gate in GATES:
            t = calibrate(gate, train, "train split")
            thresholds[gate].append(t)
            flags[gate] = scores[gate] >= t
        protocol = "official: calibrate on train, report on test (quality == good only)"
        n_train: int | None = int(train.sum())
        fold_count: int | None = None
        fold_seed: int | None = None
    else:
        if folds < 2:
            raise UsageError(
                "bench-folds", f"--folds must be at least 2, found {folds}", "use --folds 5"
            )
        fold = np.array([_fold_of(r.source_id, seed, folds) for r in records])
        for f in range(folds):
            test = fold == f
            if not test.any():
                continue
            for gate in GATES:
                t = calibrate(gate, ~test, f"cross-validation fold {f}")
                thresholds[gate].append(t)
                flags[gate][test] = scores[gate][test] >= t
        evaluated = np.ones(len(records), dtype=bool)
        protocol = (
            f"sample: source-grouped {folds}-fold cross-validation (seed {seed}); "
            "NOT the official RAGTruth test split"
        )
        n_train, fold_count, fold_seed = None, folds, seed

    rows: list[Row] = []
    always = np.ones(len(records), dtype=bool)
    for task in (*TASKS, "all"):
        mask = evaluated & (tasks == task if task != "all" else True)
        if not mask.any():
            continue
        rows.append(Row(task, "always-flag", _confusion(always, labels, mask)))
        for gate in GATES:
            rows.append(Row(task, gate, _confusion(flags[gate], labels, mask)))

    evaluated_records = [r for r, keep in zip(records, evaluated, strict=True) if keep]
    return BenchReport(
        layout=data.layout,
        protocol=protocol,
        folds=fold_count,
        seed=fold_seed,
        n_read=data.n_read,
        n_dropped_quality=data.n_dropped_quality,
        n_train=n_train,
        n_evaluated=int(evaluated.sum()),
        n_sources=len({r.source_id for r in evaluated_records}),
        files=dict(data.files),
        thresholds=thresholds,
        rows=tuple(rows),
        latency_us=_measure_latency(evaluated_records, data.contexts),
    )


# --------------------------------------------------------------------------------------------
# rendering


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def render_markdown(report: BenchReport) -> str:
    """Render the report as Markdown; everything above ``LATENCY_HEADING`` is exact and stable."""
    out: list[str] = ["## Results: lexical groundedness gates on RAGTruth", ""]
    if report.layout == "sample":
        out += [
            "**Not the official RAGTruth test split.** Data: the shared partial RAGTruth sample "
            "(no `split` or `quality` field, so no quality filter is applied). Protocol: "
            f"source-grouped {report.folds}-fold cross-validation, folds from "
            f'sha256("{report.seed}:<source_id>"); each fold is scored with thresholds calibrated '
            "on the other folds and the out-of-fold flags are pooled.",
            "",
        ]
    else:
        out += [
            "Data: complete RAGTruth copy; records with `quality` other than `good` dropped "
            f"({report.n_dropped_quality} of {report.n_read}). Protocol: thresholds calibrated on "
            f"the train split ({report.n_train} responses), scored on the test split.",
            "",
        ]
    out += [
        f"Responses scored: {report.n_evaluated} from {report.n_sources} sources. A response is "
        "unsupported (positive) when it has a hallucination span with `implicit_true` false. "
        f"Gates flag when `{FLAG_RULE}`; thresholds are calibrated by maximum response-level F1 "
        "(ties to the higher precision), one threshold for all task types. "
        "Precision, recall, F1 and false-negative rate (FNR) in %; – means undefined (nothing "
        "flagged).",
        "",
        "Input files (sha256): "
        + ", ".join(f"`{name}` `{digest[:16]}…`" for name, digest in sorted(report.files.items())),
        "",
        "| task | gate | responses | unsupported | flagged | precision | recall | F1 | FNR |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        c = row.confusion
        out.append(
            f"| {row.task} | {row.gate} | {c.n} | {c.n_positive} | {c.n_flagged} | "
            f"{_pct(c.precision)} | {_pct(c.recall)} | {_pct(c.f1)} | "
            f"{_pct(c.false_negative_rate)} |"
        )
    out += ["", "Thresholds (score >= threshold flags):", ""]
    for gate, values in report.thresholds.items():
        shown = ", ".join(f"{v:.4f}" for v in values)
        label = "per fold" if report.layout == "sample" else "train"
        out.append(f"- {gate} ({label}): {shown}")
    out += [
        "",
        LATENCY_HEADING,
        "",
        "Machine-dependent (not part of the reproducibility check): wall time to score one "
        "response against its uncached context, all gates in one pass, one core.",
        "",
        "| median µs | p95 µs | mean µs | responses/s |",
        "|---:|---:|---:|---:|",
        "| {median_us:.0f} | {p95_us:.0f} | {mean_us:.0f} | {responses_per_s:.0f} |".format(
            **report.latency_us
        ),
        "",
    ]
    return "\n".join(out)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def report_as_json(report: BenchReport) -> dict[str, Any]:
    """Return the report as a JSON-ready object (no NaN: undefined metrics are ``null``)."""
    return {
        "schema": "ragwarrant.bench.groundedness/1",
        "ragwarrant_version": __version__,
        "layout": report.layout,
        "official_test_split": report.layout == "official",
        "protocol": report.protocol,
        "folds": report.folds,
        "seed": report.seed,
        "n_read": report.n_read,
        "n_dropped_quality": report.n_dropped_quality,
        "n_train": report.n_train,
        "n_evaluated": report.n_evaluated,
        "n_sources": report.n_sources,
        "files_sha256": report.files,
        "flag_rule": FLAG_RULE,
        "thresholds": report.thresholds,
        "rows": [
            {
                "task": row.task,
                "gate": row.gate,
                "n": row.confusion.n,
                "n_positive": row.confusion.n_positive,
                "n_flagged": row.confusion.n_flagged,
                "true_positives": row.confusion.true_positives,
                "precision": _finite(row.confusion.precision),
                "recall": _finite(row.confusion.recall),
                "f1": _finite(row.confusion.f1),
                "false_negative_rate": _finite(row.confusion.false_negative_rate),
            }
            for row in report.rows
        ],
        "published_f1_official_test_split_pct": dict(PUBLISHED_POINTS),
        "latency": report.latency_us,
    }


def calibration_document(data: RagtruthData, version: str) -> dict[str, Any]:
    """Calibrate every gate on all training data and return a calibration file's content.

    Training data: the ``train`` split (official layout) or every record (sample layout).

    Raises:
        InputError: ``ragtruth-no-positive`` when the training data has no unsupported response.
    """
    records = [r for r in data.records if data.layout == "sample" or r.split == "train"]
    labels = np.array([r.unsupported for r in records], dtype=bool)
    if not labels.any():
        raise InputError(
            "ragtruth-no-positive",
            "no unsupported response to calibrate on",
            "use a RAGTruth copy with labelled hallucinations",
        )
    index_cache = {sid: index_context(p) for sid, p in data.contexts.items()}
    results = [score_response(r.response, index_cache[r.source_id]) for r in records]
    gates: dict[str, Any] = {}
    for gate in GATES:
        cal = calibrate_threshold([getattr(s, gate) for s in results], labels)
        gates[gate] = {
            "threshold": cal.threshold,
            "calibration_f1": cal.f1,
            "calibration_precision": cal.precision,
            "calibration_recall": cal.recall,
            "n": cal.n,
            "n_positive": cal.n_positive,
            "n_flagged": cal.n_flagged,
        }
    per_task = {
        task: {
            "responses": sum(r.task_type == task for r in records),
            "unsupported": sum(r.unsupported and r.task_type == task for r in records),
        }
        for task in TASKS
    }
    return {
        "schema_version": 1,
        "version": version,
        "flag_rule": FLAG_RULE,
        "method": (
            "threshold = the observed score with maximum response-level F1 on the calibration "
            "data, ties to the higher precision; one threshold for all "
            "task types (ragwarrant.corroborators.calibration.calibrate_threshold)"
        ),
        "data": {
            "name": "RAGTruth (Niu et al., ACL 2024)",
            "layout": data.layout,
            "subset": (
                "train split, quality == good"
                if data.layout == "official"
                else "shared partial sample, all records (no split/quality fields); "
                "NOT the official train split"
            ),
            "positive": "response has a hallucination span with implicit_true false",
            "files_sha256": data.files,
            "responses": len(records),
            "unsupported": int(labels.sum()),
            "per_task": per_task,
        },
        "created_by": f"ragwarrant {__version__} bench groundedness --write-calibration",
        "gates": gates,
    }


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` atomically, readable by all (the image runs as uid 65532)."""
    write_atomic(path, text.encode("utf-8"))


def _run(args: argparse.Namespace) -> int:
    data = load_ragtruth(args.ragtruth_dir)
    report = run_groundedness_bench(data, folds=args.folds, seed=args.seed)
    if args.format == "json":
        text = json.dumps(report_as_json(report), indent=2, allow_nan=False) + "\n"
    else:
        text = render_markdown(report)
    if args.output is None:
        print(text, end="")
    else:
        _write_atomic(Path(args.output), text)
    if args.write_calibration is not None:
        document = calibration_document(data, args.calibration_version)
        _write_atomic(
            Path(args.write_calibration), json.dumps(document, indent=2, allow_nan=False) + "\n"
        )
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench groundedness`` to the ``ragwarrant`` command line."""
    bench = subparsers.add_parser("bench", help="benchmarks of ragwarrant's deterministic checks")
    kinds = bench.add_subparsers(dest="bench_kind", metavar="BENCHMARK", required=True)
    parser = kinds.add_parser(
        "groundedness",
        help="lexical groundedness gates on RAGTruth (response-level P/R/F1/FNR, latency)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--ragtruth-dir",
        required=True,
        type=Path,
        metavar="DIR",
        help="RAGTruth dataset/ folder (response.jsonl + source_info.jsonl) or the shared sample",
    )
    parser.add_argument("--output", type=Path, metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="default: md")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (sample only)")
    parser.add_argument("--seed", type=int, default=0, help="fold-assignment seed (sample only)")
    parser.add_argument(
        "--write-calibration",
        type=Path,
        metavar="FILE",
        help="also calibrate every gate on all training data and write a calibration file",
    )
    parser.add_argument(
        "--calibration-version",
        default="lexical-v1",
        metavar="ID",
        help="version id written into --write-calibration (default: lexical-v1)",
    )
    parser.set_defaults(handler=_run)
