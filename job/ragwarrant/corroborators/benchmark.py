"""The groundedness benchmark protocol on RAGTruth: thresholds, response-level metrics, table.

Two protocols, chosen by the layout of the RAGTruth copy (``corroborators.ragtruth``):

- **official**: each gate's threshold is calibrated on the ``train`` split and the gates are
  scored on the ``test`` split (``quality == good`` records only).
- **sample**: source-grouped k-fold cross-validation. Fold of a source =
  ``sha256(f"{seed}:{source_id}")`` (first 8 bytes, big endian) mod k; each fold is scored with
  thresholds calibrated on the other folds and the out-of-fold predictions are pooled. This is NOT
  the official test split and the output says so.

Metrics are at response level: precision, recall, F1 and false-negative rate (FN / positives),
overall and per task type, beside the always-flag floor. Thresholds are calibrated by maximum F1
with ties to the higher precision (``corroborators.calibration.calibrate_threshold``), pooled over
task types. Latency is the wall time of scoring one response against its uncached context (all
gates in one pass), on this machine.

No question, response or context text reaches the output: only counts, shares and timings.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragwarrant.corroborators.calibration import (
    FLAG_RULE,
    GATES,
    calibrate_threshold,
)
from ragwarrant.corroborators.lexical import index_context, score_response
from ragwarrant.corroborators.ragtruth import TASKS, Layout, RagtruthData, RagtruthRecord
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, UsageError
from ragwarrant.version import __version__

__all__ = [
    "LATENCY_HEADING",
    "PUBLISHED_POINTS",
    "BenchReport",
    "Confusion",
    "Row",
    "calibration_document",
    "fold_of",
    "render_markdown",
    "report_as_json",
    "run_groundedness_bench",
]

LATENCY_HEADING = "### Latency"
"""Markdown heading of the machine-dependent part of the report (everything above is exact)."""

PUBLISHED_POINTS: tuple[tuple[str, float], ...] = (
    ("always-flag floor", 51.8),
    ("best published deterministic lexical ensemble", 56.6),
    ("GPT-4 prompted", 63.4),
)
"""Response-level F1 (%) on the official RAGTruth test split, all task types pooled (issue 4)."""


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


def fold_of(source_id: str, seed: int, folds: int) -> int:
    """Return the cross-validation fold of a source: ``sha256(f"{seed}:{source_id}")`` mod folds.

    The hash's first 8 bytes are read as a big-endian integer, so a source's fold depends only on
    (seed, source_id, folds): every response of a source lands in the same fold.
    """
    return int(sha256_bytes(f"{seed}:{source_id}".encode())[:16], 16) % folds


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


@dataclass(frozen=True, slots=True)
class _Protocol:
    """What a protocol decided: thresholds, out-of-sample flags and which records are evaluated."""

    description: str
    thresholds: dict[str, list[float]]
    flags: dict[str, np.ndarray]
    evaluated: np.ndarray
    n_train: int | None = None
    folds: int | None = None
    seed: int | None = None


def _score_all(data: RagtruthData) -> dict[str, np.ndarray]:
    """Return gate -> score of each record, shape (n_records,), contexts indexed once per source."""
    records = data.records
    index_cache = {sid: index_context(passages) for sid, passages in data.contexts.items()}
    scores = {gate: np.empty(len(records)) for gate in GATES}
    for i, record in enumerate(records):
        result = score_response(record.response, index_cache[record.source_id])
        for gate in GATES:
            scores[gate][i] = getattr(result, gate)
    return scores


def _calibrate(
    scores: np.ndarray, labels: np.ndarray, train: np.ndarray, gate: str, where: str
) -> float:
    """Return the max-F1 threshold of ``gate`` on the ``train`` records.

    Raises:
        InputError: ``ragtruth-no-positive`` when the training records hold no positive.
    """
    if not labels[train].any():
        raise InputError(
            "ragtruth-no-positive",
            f"{where}: no unsupported response to calibrate the {gate} threshold on",
            "use a larger RAGTruth copy (or fewer folds)",
        )
    return calibrate_threshold(scores[train], labels[train]).threshold


def _official_protocol(
    data: RagtruthData, scores: dict[str, np.ndarray], labels: np.ndarray
) -> _Protocol:
    """Calibrate on the train split, flag the test split."""
    splits = np.array([r.split for r in data.records])
    train, evaluated = splits == "train", splits == "test"
    for name, mask in (("train", train), ("test", evaluated)):
        if not mask.any():
            raise InputError(
                "ragtruth-empty",
                f"no quality-good record in the {name} split",
                "pass the complete upstream response.jsonl",
            )
    thresholds: dict[str, list[float]] = {gate: [] for gate in GATES}
    flags: dict[str, np.ndarray] = {}
    for gate in GATES:
        t = _calibrate(scores[gate], labels, train, gate, "train split")
        thresholds[gate].append(t)
        flags[gate] = scores[gate] >= t
    return _Protocol(
        description="official: calibrate on train, report on test (quality == good only)",
        thresholds=thresholds,
        flags=flags,
        evaluated=evaluated,
        n_train=int(train.sum()),
    )


def _cross_validation_protocol(
    data: RagtruthData, scores: dict[str, np.ndarray], labels: np.ndarray, folds: int, seed: int
) -> _Protocol:
    """Source-grouped k-fold: flag each fold with thresholds calibrated on the other folds."""
    if folds < 2:
        raise UsageError(
            "bench-folds", f"--folds must be at least 2, found {folds}", "use --folds 5"
        )
    n = len(data.records)
    thresholds: dict[str, list[float]] = {gate: [] for gate in GATES}
    flags = {gate: np.zeros(n, dtype=bool) for gate in GATES}
    fold = np.array([fold_of(r.source_id, seed, folds) for r in data.records])
    for f in range(folds):
        test = fold == f
        if not test.any():
            continue
        for gate in GATES:
            t = _calibrate(scores[gate], labels, ~test, gate, f"cross-validation fold {f}")
            thresholds[gate].append(t)
            flags[gate][test] = scores[gate][test] >= t
    return _Protocol(
        description=(
            f"sample: source-grouped {folds}-fold cross-validation (seed {seed}); "
            "NOT the official RAGTruth test split"
        ),
        thresholds=thresholds,
        flags=flags,
        evaluated=np.ones(n, dtype=bool),
        folds=folds,
        seed=seed,
    )


def _rows(tasks: np.ndarray, labels: np.ndarray, protocol: _Protocol) -> tuple[Row, ...]:
    """Return the table rows: per task type then ``all``, the always-flag floor then each gate."""
    rows: list[Row] = []
    always = np.ones(len(labels), dtype=bool)
    for task in (*TASKS, "all"):
        mask = protocol.evaluated & (tasks == task if task != "all" else True)
        if not mask.any():
            continue
        rows.append(Row(task, "always-flag", _confusion(always, labels, mask)))
        for gate in GATES:
            rows.append(Row(task, gate, _confusion(protocol.flags[gate], labels, mask)))
    return tuple(rows)


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
    scores = _score_all(data)
    labels = np.fromiter((r.unsupported for r in records), dtype=bool, count=len(records))
    tasks = np.array([r.task_type for r in records])
    if data.layout == "official":
        protocol = _official_protocol(data, scores, labels)
    else:
        protocol = _cross_validation_protocol(data, scores, labels, folds, seed)
    evaluated_records = [r for r, keep in zip(records, protocol.evaluated, strict=True) if keep]
    return BenchReport(
        layout=data.layout,
        protocol=protocol.description,
        folds=protocol.folds,
        seed=protocol.seed,
        n_read=data.n_read,
        n_dropped_quality=data.n_dropped_quality,
        n_train=protocol.n_train,
        n_evaluated=int(protocol.evaluated.sum()),
        n_sources=len({r.source_id for r in evaluated_records}),
        files=dict(data.files),
        thresholds=protocol.thresholds,
        rows=_rows(tasks, labels, protocol),
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
