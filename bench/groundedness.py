"""The lexical groundedness gates on RAGTruth, per task type: protocol, table, calibration file.

Usage (a developer tool, not part of the decision job; numbers in docs/groundedness-ragtruth.md)::

    .venv/bin/python bench/groundedness.py --ragtruth-dir ../shared/data/ragtruth \
        [--format md|json] [--output FILE] [--folds 5] [--seed 0] \
        [--write-calibration FILE --calibration-version ID]

Two protocols, chosen by the layout of the RAGTruth copy (``bench/ragtruth.py``):

- **official**: every gate of a task type is calibrated on that task type's ``train`` records and
  scored on its ``test`` records (``quality == good`` records only).
- **sample**: source-grouped k-fold cross-validation. Fold of a source =
  ``sha256(f"{seed}:{source_id}")`` (first 8 bytes, big endian) mod k; each fold is scored with
  what the other folds of the same task type gave, and the out-of-fold predictions are pooled.
  This is NOT the official test split and the output says so.

Gates, each calibrated per task type on training rows only (maximum F1, ties to the higher
precision: ``calibration.calibrate_threshold``):

- ``coverage``, ``weakest_sentence``, ``hybrid``: the lexical scores (``lexical``);
- ``record``: record conflicts per sentence (``records``), for task types whose contexts are JSON
  records;
- ``combined``: a logistic regression over every deterministic feature (``features``,
  ``combiner.fit_logistic``), fitted on the training rows of the task type; its threshold is
  calibrated on its own training-row probabilities;
- ``combined_content``: the same over ``features.CONTENT_FEATURES`` only (no feature that grows
  with the response's length, which partly recognises the generator).

A task type whose training rows lack an unsupported or a supported response is calibrated on all
training rows (the report notes it). Metrics per task type, response level: precision, recall,
F1 beside the always-flag floor; the F1 gain over the floor with its 95 % source-clustered
bootstrap interval and the within-generator ROC AUC (``bench/groundedness_metrics.py``). Latency
is the wall time of scoring one response against its uncached context, on this machine.

No question, response or context text reaches the output: only counts, shares and timings.
Bad input raises the job's typed errors; run as a script, they are printed and become its exit
code (66 for a missing or malformed RAGTruth copy, 64 for ``--folds`` below 2).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from groundedness_metrics import GainInterval, gain_interval, within_group_auc
from ragtruth import TASKS, Layout, RagtruthData, RagtruthRecord, load_ragtruth  # bench/ on path

from ragwarrant.audit.writer import write_atomic
from ragwarrant.corroborators.calibration import (
    FLAG_RULE,
    GATES,
    calibrate_threshold,
)
from ragwarrant.corroborators.combiner import DEFAULT_L2, LogisticModel, fit_logistic
from ragwarrant.corroborators.features import CONTENT_FEATURES, FEATURES, response_features
from ragwarrant.corroborators.lexical import index_context, score_response
from ragwarrant.corroborators.records import parse_record
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, RagwarrantError, UsageError
from ragwarrant.version import __version__

LATENCY_HEADING = "### Latency"
"""Markdown heading of the machine-dependent part of the report (everything above is exact)."""

PUBLISHED_POINTS: tuple[tuple[str, float], ...] = (
    ("always-flag floor", 51.8),
    ("best published deterministic lexical ensemble", 56.6),
    ("GPT-4 prompted", 63.4),
)
"""Response-level F1 (%) on the official RAGTruth test split, all task types pooled (issue 4)."""

FLOOR = "always-flag"
"""The floor every gate is compared with: flag every response."""

REPORTED_GATES: tuple[str, ...] = (*GATES, "record", "combined", "combined_content")
"""Gates in table order (``record`` only for task types with JSON-record contexts)."""

COMBINERS: dict[str, tuple[str, ...]] = {
    "combined": FEATURES,
    "combined_content": CONTENT_FEATURES,
}
"""Each combiner gate and the features it is fitted on."""

BOOTSTRAP_SEED = 0
"""Seed of the cluster bootstrap of the F1 gain (the same draws for every gate of a task)."""

N_RESAMPLES = 2000
"""Bootstrap resamples of the F1 gain."""


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
    """One line of the results table: a gate on one task type.

    Attributes:
        task: the task type.
        gate: ``always-flag`` or a name in ``REPORTED_GATES``.
        confusion: the response-level counts.
        gain: F1 gain over the always-flag floor with its cluster-bootstrap interval (None for the
            floor itself).
        auc: within-generator ROC AUC of the gate's score (None for the floor, or when no
            generator has both classes).
    """

    task: str
    gate: str
    confusion: Confusion
    gain: GainInterval | None
    auc: float | None


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Everything the bench prints; ``latency_us`` is the only machine-dependent part.

    ``thresholds`` is task type -> gate -> one threshold per fold (sample) or the train threshold
    (official); ``notes`` lists the task types calibrated on pooled training rows.
    """

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
    thresholds: dict[str, dict[str, list[float]]]
    rows: tuple[Row, ...]
    notes: tuple[str, ...]
    latency_us: dict[str, dict[str, float]]


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


def _timings(fn: Any, records: Sequence[RagtruthRecord]) -> dict[str, float]:
    timings = np.empty(len(records), dtype=np.float64)
    clock = time.perf_counter_ns
    for i, record in enumerate(records):
        start = clock()
        fn(record)
        timings[i] = (clock() - start) / 1000.0
    total_s = float(timings.sum()) / 1e6
    return {
        "median_us": float(np.median(timings)),
        "p95_us": float(np.percentile(timings, 95)),
        "mean_us": float(timings.mean()),
        "responses_per_s": len(records) / total_s if total_s > 0 else 0.0,
    }


def _measure_latency(
    records: Sequence[RagtruthRecord], contexts: dict[str, tuple[str, ...]]
) -> dict[str, dict[str, float]]:
    """Wall time per response, context uncached: the lexical gates, then every feature."""

    def lexical(record: RagtruthRecord) -> None:
        score_response(record.response, contexts[record.source_id])

    def everything(record: RagtruthRecord) -> None:
        passages = contexts[record.source_id]
        response_features(record.response, passages, parse_record(passages))

    return {"lexical": _timings(lexical, records), "all features": _timings(everything, records)}


@dataclass(frozen=True, slots=True)
class _Scored:
    """Every record's features and metadata, in record order (arrays of shape (n,) or (n, k))."""

    features: np.ndarray
    labels: np.ndarray
    tasks: np.ndarray
    sources: np.ndarray
    models: np.ndarray
    has_record: np.ndarray

    def score(self, gate: str) -> np.ndarray:
        """The raw score of a threshold gate (``record``: record conflicts per sentence)."""
        column = "record_conflict_share" if gate == "record" else gate
        return self.features[:, FEATURES.index(column)]

    def columns(self, names: Sequence[str]) -> np.ndarray:
        """The feature columns ``names``, shape (n, len(names)), C-contiguous.

        C order keeps the fitted coefficients bit-identical to fitting on ``features`` itself
        (BLAS sums in another order on a column-major copy).
        """
        return np.ascontiguousarray(self.features[:, [FEATURES.index(name) for name in names]])


def _score_all(data: RagtruthData) -> _Scored:
    """Compute every record's features, each context indexed and parsed once per source."""
    records = data.records
    index_cache = {sid: index_context(passages) for sid, passages in data.contexts.items()}
    record_cache = {sid: parse_record(passages) for sid, passages in data.contexts.items()}
    features = np.array(
        [
            response_features(r.response, index_cache[r.source_id], record_cache[r.source_id])
            for r in records
        ],
        dtype=np.float64,
    ).reshape(len(records), len(FEATURES))
    return _Scored(
        features=features,
        labels=np.fromiter((r.unsupported for r in records), dtype=bool, count=len(records)),
        tasks=np.array([r.task_type for r in records]),
        sources=np.array([r.source_id for r in records]),
        models=np.array([r.model for r in records]),
        has_record=np.array([record_cache[r.source_id] is not None for r in records]),
    )


@dataclass(frozen=True, slots=True)
class _Fit:
    """What training rows gave one task type: gate thresholds and the combiner."""

    thresholds: dict[str, float]
    models: dict[str, LogisticModel]
    pooled: bool


def _threshold_gates(scored: _Scored, task: str) -> tuple[str, ...]:
    """The threshold gates of a task type: the lexical ones, plus ``record`` when it has records."""
    rows = scored.tasks == task
    return (*GATES, "record") if bool(scored.has_record[rows].any()) else GATES


def _fit(scored: _Scored, train: np.ndarray, task: str, where: str) -> _Fit:
    """Calibrate a task type's gates and fit its combiner on ``train`` rows of that task type.

    A task type whose training rows lack an unsupported or a supported response is calibrated on
    all training rows instead (``pooled``).

    Raises:
        InputError: ``ragtruth-no-positive`` when even the pooled training rows have no positive.
    """
    rows = train & (scored.tasks == task)
    y = scored.labels
    pooled = not (y[rows].any() and not y[rows].all())
    if pooled:
        rows = train
    if not y[rows].any():
        raise InputError(
            "ragtruth-no-positive",
            f"{where}: no unsupported response to calibrate the {task} gates on",
            "use a larger RAGTruth copy (or fewer folds)",
        )
    thresholds = {
        gate: calibrate_threshold(scored.score(gate)[rows], y[rows])
        for gate in _threshold_gates(scored, task)
    }
    models: dict[str, LogisticModel] = {}
    if not y[rows].all():
        for gate, names in COMBINERS.items():
            x = scored.columns(names)[rows]
            models[gate] = fit_logistic(x, y[rows], names)
            thresholds[gate] = calibrate_threshold(models[gate].score(x), y[rows])
    return _Fit(thresholds, models, pooled)


@dataclass
class _Protocol:
    """What a protocol decided: thresholds, out-of-sample flags and scores, evaluated records."""

    description: str
    evaluated: np.ndarray
    flags: dict[str, np.ndarray]
    combined_scores: dict[str, np.ndarray]
    thresholds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    n_train: int | None = None
    folds: int | None = None
    seed: int | None = None

    def apply(self, scored: _Scored, fit: _Fit, task: str, test: np.ndarray, where: str) -> None:
        """Flag the ``test`` rows of ``task`` with ``fit``; record thresholds and fallbacks."""
        for gate, threshold in fit.thresholds.items():
            self.thresholds.setdefault(task, {}).setdefault(gate, []).append(threshold)
            if gate not in COMBINERS:
                self.flags[gate][test] = scored.score(gate)[test] >= threshold
        for gate, model in fit.models.items():
            score = self.combined_scores[gate]
            score[test] = model.score(scored.columns(COMBINERS[gate])[test])
            self.flags[gate][test] = score[test] >= fit.thresholds[gate]
        if fit.pooled:
            self.notes.append(f"{task} ({where}): calibrated on pooled training rows")


def _empty_protocol(n: int, description: str, evaluated: np.ndarray) -> _Protocol:
    return _Protocol(
        description=description,
        evaluated=evaluated,
        flags={gate: np.zeros(n, dtype=bool) for gate in REPORTED_GATES},
        combined_scores={gate: np.full(n, np.nan) for gate in COMBINERS},
    )


def _official_protocol(data: RagtruthData, scored: _Scored) -> _Protocol:
    """Calibrate each task type on the train split, flag the test split."""
    splits = np.array([r.split for r in data.records])
    train, evaluated = splits == "train", splits == "test"
    for name, mask in (("train", train), ("test", evaluated)):
        if not mask.any():
            raise InputError(
                "ragtruth-empty",
                f"no quality-good record in the {name} split",
                "pass the complete upstream response.jsonl",
            )
    protocol = _empty_protocol(
        len(splits),
        "official: calibrate each task type on train, report on test (quality == good only)",
        evaluated,
    )
    for task in TASKS:
        test = evaluated & (scored.tasks == task)
        if test.any():
            protocol.apply(scored, _fit(scored, train, task, "train split"), task, test, "train")
    protocol.n_train = int(train.sum())
    return protocol


def _cross_validation_protocol(
    data: RagtruthData, scored: _Scored, folds: int, seed: int
) -> _Protocol:
    """Source-grouped k-fold: flag each fold with what the other folds of its task type gave."""
    if folds < 2:
        raise UsageError(
            "bench-folds", f"--folds must be at least 2, found {folds}", "use --folds 5"
        )
    n = len(data.records)
    protocol = _empty_protocol(
        n,
        f"sample: source-grouped {folds}-fold cross-validation (seed {seed}); "
        "NOT the official RAGTruth test split",
        np.ones(n, dtype=bool),
    )
    fold = np.array([fold_of(r.source_id, seed, folds) for r in data.records])
    for f in range(folds):
        in_fold = fold == f
        for task in TASKS:
            test = in_fold & (scored.tasks == task)
            if test.any():
                where = f"cross-validation fold {f}"
                protocol.apply(scored, _fit(scored, ~in_fold, task, where), task, test, f"fold {f}")
    protocol.folds, protocol.seed = folds, seed
    return protocol


def _gate_row(task: str, gate: str, scored: _Scored, protocol: _Protocol, mask: np.ndarray) -> Row:
    flags = protocol.flags[gate]
    score = protocol.combined_scores[gate] if gate in COMBINERS else scored.score(gate)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    return Row(
        task,
        gate,
        _confusion(flags, scored.labels, mask),
        gain_interval(
            flags[mask], scored.labels[mask], scored.sources[mask], rng, n_resamples=N_RESAMPLES
        ),
        within_group_auc(score[mask], scored.labels[mask], scored.models[mask]),
    )


def _rows(scored: _Scored, protocol: _Protocol) -> tuple[Row, ...]:
    """Per task type: the always-flag floor, then each gate calibrated for that task type."""
    rows: list[Row] = []
    always = np.ones(len(scored.labels), dtype=bool)
    for task in TASKS:
        mask = protocol.evaluated & (scored.tasks == task)
        if not mask.any():
            continue
        rows.append(Row(task, FLOOR, _confusion(always, scored.labels, mask), None, None))
        fitted = protocol.thresholds[task]
        for gate in REPORTED_GATES:
            if gate in fitted and len(fitted[gate]) == len(fitted["coverage"]):
                rows.append(_gate_row(task, gate, scored, protocol, mask))
    return tuple(rows)


def run_groundedness_bench(data: RagtruthData, *, folds: int = 5, seed: int = 0) -> BenchReport:
    """Run the benchmark protocol that matches ``data.layout``, per task type.

    Args:
        data: a loaded RAGTruth copy.
        folds: number of source-grouped folds (sample layout only), at least 2.
        seed: seed of the fold assignment hash (sample layout only).

    Returns:
        The ``BenchReport``: per task type, the always-flag floor and each gate.

    Raises:
        UsageError: ``folds < 2``.
        InputError: ``ragtruth-no-positive`` when a calibration set has no unsupported response,
            ``ragtruth-empty`` when the official layout lacks a train or test record.
    """
    records = data.records
    scored = _score_all(data)
    if data.layout == "official":
        protocol = _official_protocol(data, scored)
    else:
        protocol = _cross_validation_protocol(data, scored, folds, seed)
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
        rows=_rows(scored, protocol),
        notes=tuple(protocol.notes),
        latency_us=_measure_latency(evaluated_records, data.contexts),
    )


# --------------------------------------------------------------------------------------------
# rendering


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f}"


def _gain_cells(gain: GainInterval | None) -> str:
    if gain is None:
        return "– | –"
    return f"{_signed(gain.gain)} | [{_signed(gain.lower)}, {_signed(gain.upper)}]"


def _auc(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _protocol_text(report: BenchReport) -> str:
    if report.layout == "sample":
        return (
            "**Not the official RAGTruth test split.** The official train/test files are not "
            "available here: data is the shared partial RAGTruth sample (no `split` or `quality` "
            "field, so no quality filter is applied). Protocol: source-grouped "
            f"{report.folds}-fold cross-validation, folds from "
            f'sha256("{report.seed}:<source_id>"); each fold is scored with thresholds and '
            "combiner fitted on the other folds of the same task type, and the out-of-fold "
            "flags are pooled."
        )
    return (
        "Data: complete RAGTruth copy; records with `quality` other than `good` dropped "
        f"({report.n_dropped_quality} of {report.n_read}). Protocol: thresholds and combiner "
        f"fitted per task type on the train split ({report.n_train} responses), scored on the "
        "test split."
    )


def render_markdown(report: BenchReport) -> str:
    """Render the report as Markdown; everything above ``LATENCY_HEADING`` is exact and stable."""
    out: list[str] = [
        "## Results: deterministic groundedness gates on RAGTruth, per task type",
        "",
        _protocol_text(report),
        "",
        f"Responses scored: {report.n_evaluated} from {report.n_sources} sources. A response is "
        "unsupported (positive) when it has a hallucination span with `implicit_true` false. "
        f"Gates flag when `{FLAG_RULE}`, with one threshold per task type calibrated by maximum "
        "response-level F1 (ties to the higher precision) on training rows only. `record`: "
        "conflicts with the JSON record per sentence; `combined`: logistic regression over all "
        "deterministic features (L2 "
        f"{DEFAULT_L2:g}), fitted on training rows of the task type; `combined_content`: the "
        "same without the features that grow with response length (counts of unsupported, "
        "missing-number and content tokens). Precision, recall, F1 and "
        "the gain over the always-flag floor in %; the gain interval is a 95 % percentile "
        f"bootstrap over sources ({N_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}, flags held "
        "fixed). AUC: ROC AUC over pairs of responses written by the same generator. "
        "– means undefined.",
        "",
        "Input files (sha256): "
        + ", ".join(f"`{name}` `{digest[:16]}…`" for name, digest in sorted(report.files.items())),
        "",
        "| task | gate | responses | unsupported | flagged | precision | recall | F1 | "
        "gain over floor | gain 95 % CI | within-generator AUC |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        c = row.confusion
        out.append(
            f"| {row.task} | {row.gate} | {c.n} | {c.n_positive} | {c.n_flagged} | "
            f"{_pct(c.precision)} | {_pct(c.recall)} | {_pct(c.f1)} | "
            f"{_gain_cells(row.gain)} | {_auc(row.auc)} |"
        )
    label = "per fold" if report.layout == "sample" else "train"
    out += ["", f"Thresholds ({label}; score >= threshold flags):", ""]
    for task, gates in report.thresholds.items():
        for gate, values in gates.items():
            out.append(f"- {task} {gate}: " + ", ".join(f"{v:.4f}" for v in values))
    if report.notes:
        out += ["", "Notes:", "", *(f"- {note}" for note in report.notes)]
    out += [
        "",
        LATENCY_HEADING,
        "",
        "Machine-dependent (not part of the reproducibility check): wall time to score one "
        "response against its uncached context, one core.",
        "",
        "| what | median µs | p95 µs | mean µs | responses/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for what, t in report.latency_us.items():
        out.append(
            f"| {what} | {t['median_us']:.0f} | {t['p95_us']:.0f} | {t['mean_us']:.0f} | "
            f"{t['responses_per_s']:.0f} |"
        )
    out.append("")
    return "\n".join(out)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _row_json(row: Row) -> dict[str, Any]:
    c = row.confusion
    gain = row.gain
    return {
        "task": row.task,
        "gate": row.gate,
        "n": c.n,
        "n_positive": c.n_positive,
        "n_flagged": c.n_flagged,
        "true_positives": c.true_positives,
        "precision": _finite(c.precision),
        "recall": _finite(c.recall),
        "f1": _finite(c.f1),
        "false_negative_rate": _finite(c.false_negative_rate),
        "f1_gain_over_floor": None if gain is None else gain.gain,
        "f1_gain_ci95": None if gain is None else [gain.lower, gain.upper],
        "within_generator_auc": _finite(row.auc),
    }


def report_as_json(report: BenchReport) -> dict[str, Any]:
    """Return the report as a JSON-ready object (no NaN: undefined metrics are ``null``)."""
    return {
        "schema": "ragwarrant.bench.groundedness/2",
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
        "bootstrap": {"seed": BOOTSTRAP_SEED, "n_resamples": N_RESAMPLES, "cluster": "source"},
        "thresholds": report.thresholds,
        "notes": list(report.notes),
        "rows": [_row_json(row) for row in report.rows],
        "published_f1_official_test_split_pct": dict(PUBLISHED_POINTS),
        "latency": report.latency_us,
    }


def _fit_record(fit: _Fit, scored: _Scored, rows: np.ndarray) -> dict[str, Any]:
    y = scored.labels[rows]
    out: dict[str, Any] = {
        "responses": int(rows.sum()),
        "unsupported": int(y.sum()),
        "pooled_fallback": fit.pooled,
        "gates": {
            gate: {"threshold": t}
            for gate, t in fit.thresholds.items()
            if gate != "combined_content"
        },
    }
    if "combined" in fit.models:
        out["combiner"] = fit.models["combined"].as_json()
    return out


def calibration_document(data: RagtruthData, version: str) -> dict[str, Any]:
    """Calibrate every gate per task type (and pooled) on all training data; a calibration file.

    Training data: the ``train`` split (official layout) or every record (sample layout). The
    pooled thresholds serve examples whose task type is unknown.

    Raises:
        InputError: ``ragtruth-no-positive`` when the training data has no unsupported response.
    """
    scored = _score_all(data)
    train = np.array([data.layout == "sample" or r.split == "train" for r in data.records])
    y = scored.labels
    if not y[train].any():
        raise InputError(
            "ragtruth-no-positive",
            "no unsupported response to calibrate on",
            "use a RAGTruth copy with labelled hallucinations",
        )
    pooled = {
        gate: {"threshold": calibrate_threshold(scored.score(gate)[train], y[train])}
        for gate in GATES
    }
    tasks = {
        task: _fit_record(
            _fit(scored, train, task, "calibration"), scored, train & (scored.tasks == task)
        )
        for task in TASKS
        if (train & (scored.tasks == task)).any()
    }
    return {
        "schema_version": 2,
        "version": version,
        "flag_rule": FLAG_RULE,
        "method": (
            "per task type: threshold = the observed score with maximum response-level F1 on the "
            "task type's training rows, ties to the higher precision "
            "(ragwarrant.corroborators.calibration.calibrate_threshold); combiner = L2-penalised "
            f"logistic regression (l2 {DEFAULT_L2:g}) over ragwarrant.corroborators.features."
            "FEATURES on standardised features, fitted by Newton-Raphson "
            "(ragwarrant.corroborators.combiner.fit_logistic), its threshold calibrated on its "
            "training-row probabilities; pooled thresholds (all task types) for an unknown task "
            "type. The benchmark never reports these fitted values: it refits on training folds."
        ),
        "features": list(FEATURES),
        "data": {
            "name": "RAGTruth (Niu et al., ACL 2024)",
            "layout": data.layout,
            "subset": (
                "train split, quality == good"
                if data.layout == "official"
                else "shared partial sample, all records (no split/quality fields); NOT the "
                "official train split; its Data2txt part is very likely the official test "
                "Data2txt portion, so do not evaluate this file on the RAGTruth test split"
            ),
            "positive": "response has a hallucination span with implicit_true false",
            "files_sha256": data.files,
            "responses": int(train.sum()),
            "unsupported": int(y[train].sum()),
        },
        "created_by": f"ragwarrant {__version__} bench groundedness --write-calibration",
        "gates": pooled,
        "tasks": tasks,
    }


# --------------------------------------------------------------------------------------------
# command line


def _write(path: Path, text: str) -> None:
    """Write ``text`` atomically, readable by all (the job's one atomic writer)."""
    write_atomic(path, text.encode("utf-8"))


def build_parser() -> argparse.ArgumentParser:
    """The options of ``bench/groundedness.py`` (those of the former ``bench groundedness``)."""
    parser = argparse.ArgumentParser(
        prog="bench/groundedness.py",
        description="Lexical groundedness gates on RAGTruth (response-level P/R/F1/FNR, latency).",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print or write its table (or JSON) and optionally a calibration file.

    Returns:
        0 when the table (and calibration file) were written.

    Raises:
        UsageError: ``bench-folds`` (``--folds`` below 2).
        InputError: the RAGTruth copy is missing, malformed or cannot be calibrated on.
        OutputError: ``--output`` or ``--write-calibration`` cannot be written.
    """
    args = build_parser().parse_args(argv)
    data = load_ragtruth(args.ragtruth_dir)
    report = run_groundedness_bench(data, folds=args.folds, seed=args.seed)
    if args.format == "json":
        text = json.dumps(report_as_json(report), indent=2, allow_nan=False) + "\n"
    else:
        text = render_markdown(report)
    if args.output is None:
        print(text, end="")
    else:
        _write(args.output, text)
    if args.write_calibration is not None:
        document = calibration_document(data, args.calibration_version)
        _write(args.write_calibration, json.dumps(document, indent=2, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RagwarrantError as exc:
        print(
            f"error: {exc.code}: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""),
            file=sys.stderr,
        )
        sys.exit(int(exc.exit_code))
