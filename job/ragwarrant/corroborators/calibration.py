"""Threshold calibration for the lexical gates, and the versioned calibration files that hold them.

A lexical gate flags a response as unsupported when ``score >= threshold``. The threshold is
calibrated on labelled responses by maximising response-level F1; ties go to the higher
precision. ``calibrate_threshold`` is pure (arrays in, the threshold out). ``load_calibration``
reads a versioned JSON file, by default the one shipped as package data
(``ragwarrant/data/calibration/lexical-v1.json``; ``lexical-v2.json`` is shipped beside it), and
returns it with its sha256 so a run can record exactly which calibration it used.

Calibration file shape (``schema_version`` 1: one pooled threshold per gate)::

    {
      "schema_version": 1,
      "version": "lexical-v1",
      "flag_rule": "score >= threshold",
      "method": "...", "data": {...}, "created_by": "...",
      "gates": {"coverage": {"threshold": 0.2, ...}, "weakest_sentence": {...}, "hybrid": {...}}
    }

Extra keys inside a gate (calibration F1, precision, recall, n) are provenance for the reader of
the file; the job keeps only the thresholds.

``schema_version`` 2 (``lexical-v2``) adds per-task-type calibration: ``"tasks": {"QA": {"gates":
{"coverage": {"threshold": ...}, ..., "combined": {...}}, "combiner": {...}}, ...}``, where a
task's gates may add ``record`` and ``combined`` and ``combiner`` holds the logistic-regression
coefficients (``combiner.LogisticModel.as_json``). ``gates`` stays the pooled calibration used
when an example's task type is unknown (``corroborate`` picks between them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragwarrant.corroborators.combiner import LogisticModel
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, InternalError

DEFAULT_CALIBRATION = "lexical-v1"
"""Version id of the calibration shipped with the package."""

FLAG_RULE = "score >= threshold"
"""How every lexical gate applies its threshold."""

GATES: tuple[str, ...] = ("coverage", "weakest_sentence", "hybrid")
"""Gate names a calibration file must give a threshold for."""

_SCHEMA_VERSIONS = (1, 2)
_TASK_GATES = (*GATES, "record", "combined")


def calibrate_threshold(scores: ArrayLike, labels: ArrayLike) -> float:
    """Choose the threshold with maximum response-level F1; ties go to the higher precision.

    Candidates are the distinct observed scores (flag when ``score >= candidate``), which covers
    every achievable partition of the responses by a threshold except "flag none" (F1 = 0).
    With ``k`` responses flagged, of which ``tp`` are positive, out of ``P`` positives,
    ``F1 = 2 tp / (k + P)`` and ``precision = tp / k``. Among candidates with equal F1 the higher
    precision wins (equal F1 and equal precision force the same ``k``, so no further tie can
    remain when ``P > 0``). Equal ratios of integers are equal floats under
    IEEE-754 correctly rounded division, so the tie comparison is exact.

    Args:
        scores: shape ``(n,)``, finite floats; higher means less grounded.
        labels: shape ``(n,)``, booleans (or 0/1); True means the response is unsupported.

    Returns:
        The threshold: flag when ``score >= threshold``; one of the observed scores.

    Raises:
        ValueError: when shapes differ or are not 1-D, ``n == 0``, a score is not finite, a label
            is not 0/1, or there is no positive (F1 is then undefined for every threshold).
    """
    s = np.asarray(scores, dtype=np.float64)
    y_raw = np.asarray(labels)
    if s.ndim != 1 or y_raw.ndim != 1 or s.shape != y_raw.shape:
        raise ValueError(
            f"scores and labels must be 1-D of the same length; got shapes {s.shape} and "
            f"{y_raw.shape}"
        )
    if s.size == 0:
        raise ValueError("cannot calibrate a threshold on zero responses")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be finite; found {int(np.sum(~np.isfinite(s)))} non-finite")
    if not np.all((y_raw == 0) | (y_raw == 1)):
        raise ValueError("labels must be booleans or 0/1")
    y = y_raw.astype(bool)
    n_positive = int(y.sum())
    if n_positive == 0:
        raise ValueError("cannot calibrate a threshold without any positive (unsupported) response")

    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    tp_cum = np.cumsum(y[order])
    # the last index of each run of equal scores: flagging ">= that score" flags indices 0..last.
    last = np.flatnonzero(np.append(s_sorted[1:] != s_sorted[:-1], True))
    flagged = last + 1
    tp = tp_cum[last]
    f1 = 2.0 * tp / (flagged + n_positive)
    precision = tp / flagged
    # lexsort sorts ascending by the last key first: max F1, then max precision, then max threshold.
    best = np.lexsort((s_sorted[last], precision, f1))[-1]
    return float(s_sorted[last[best]])


@dataclass(frozen=True, slots=True)
class LexicalCalibration:
    """A versioned set of lexical-gate thresholds, as loaded from a calibration file.

    Every gate flags a response when ``score >= threshold`` (``FLAG_RULE``).

    Attributes:
        version: the calibration's version id, e.g. ``"lexical-v1"``; record it in every run.
        thresholds: gate name -> pooled threshold, for examples of no calibrated task type.
        source: the file it was read from (a path, or ``package:ragwarrant/data/...``).
        sha256: hex sha256 of the file's bytes.
        task_thresholds: task type -> gate -> threshold (schema 2; empty for schema 1).
        combiners: task type -> the fitted combiner (schema 2; empty for schema 1).
    """

    version: str
    thresholds: Mapping[str, float]
    source: str
    sha256: str
    task_thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    combiners: Mapping[str, LogisticModel] = field(default_factory=dict)


_REGENERATE = "regenerate the file with `python bench/groundedness.py --write-calibration FILE`"


def load_calibration(
    path: str | Path | None = None, *, version: str = DEFAULT_CALIBRATION
) -> LexicalCalibration:
    """Load a lexical calibration file; by default the one shipped with the package.

    Args:
        path: a calibration JSON file; ``None`` reads the shipped ``version`` from package data.
        version: the shipped calibration to read when ``path`` is None (``lexical-v1``,
            ``lexical-v2``).

    Returns:
        The validated ``LexicalCalibration`` with the file's sha256.

    Raises:
        InputError: ``calibration-unreadable`` / ``calibration-invalid`` when a user-given file
            cannot be read or does not match the schema (message names the file and field).
        InternalError: the same problems in the shipped package data (a packaging bug).
    """
    error: type[InputError] | type[InternalError]
    if path is None:
        name = f"data/calibration/{version}.json"
        source, file = f"package:ragwarrant/{name}", resources.files("ragwarrant").joinpath(name)
        error, hint = InternalError, "reinstall ragwarrant; the package data is incomplete"
    else:
        source, file = str(path), Path(path)
        error, hint = InputError, "pass an existing, readable calibration JSON file"
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise error(
            "calibration-unreadable",
            f"{source}: cannot read the calibration file: {exc.strerror or exc}",
            hint,
            file=source,
        ) from exc

    def invalid(field: str, expected: str, found: object) -> InputError | InternalError:
        return error(
            "calibration-invalid",
            f"{source}: field {field!r}: expected {expected}, found {found!r}",
            _REGENERATE,
            file=source,
            field=field,
        )

    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(
            "calibration-invalid", f"{source}: not valid JSON: {exc}", _REGENERATE, file=source
        ) from exc
    if not isinstance(doc, dict):
        raise invalid("<root>", "a JSON object", type(doc).__name__)
    if doc.get("schema_version") not in _SCHEMA_VERSIONS:
        raise invalid("schema_version", "1 or 2", doc.get("schema_version"))
    for key in ("version", "method", "created_by"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            raise invalid(key, "a non-empty string", doc.get(key))
    if doc.get("flag_rule") != FLAG_RULE:
        raise invalid("flag_rule", repr(FLAG_RULE), doc.get("flag_rule"))
    if not isinstance(doc.get("data"), dict):
        raise invalid("data", "an object describing the calibration data", doc.get("data"))
    task_thresholds, combiners = _tasks(doc.get("tasks", {}), invalid)
    return LexicalCalibration(
        version=doc["version"],
        thresholds=_thresholds(doc.get("gates"), GATES, "gates", invalid, required=True),
        source=source,
        sha256=sha256_bytes(raw),
        task_thresholds=task_thresholds,
        combiners=combiners,
    )


def _thresholds(
    gates: Any, names: tuple[str, ...], where: str, invalid: Any, *, required: bool
) -> dict[str, float]:
    """Read ``{gate: {"threshold": x}}`` (x a number in [0, 1], never a bool); every name must
    be present when ``required``."""
    if not isinstance(gates, dict):
        raise invalid(where, "an object of gate -> {threshold, ...}", gates)
    thresholds: dict[str, float] = {}
    for gate in names:
        record = gates.get(gate)
        if record is None and not required:
            continue
        if not isinstance(record, dict):
            raise invalid(f"{where}.{gate}", "an object with a threshold", record)
        value = record.get("threshold")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise invalid(f"{where}.{gate}.threshold", "a finite number in [0, 1]", value)
        thresholds[gate] = float(value)
    return thresholds


def _tasks(
    tasks: Any, invalid: Any
) -> tuple[dict[str, dict[str, float]], dict[str, LogisticModel]]:
    """Read a schema-2 ``tasks`` block: per task type, gate thresholds and the combiner."""
    if not isinstance(tasks, dict):
        raise invalid("tasks", "an object of task type -> {gates, combiner}", tasks)
    thresholds: dict[str, dict[str, float]] = {}
    combiners: dict[str, LogisticModel] = {}
    for task, block in tasks.items():
        if not isinstance(block, dict):
            raise invalid(f"tasks.{task}", "an object with gates", block)
        gates = _thresholds(
            block.get("gates"), _TASK_GATES, f"tasks.{task}.gates", invalid, required=False
        )
        thresholds[task] = gates
        if "combiner" in block:
            try:
                combiners[task] = LogisticModel.from_json(block["combiner"])
            except (KeyError, TypeError, ValueError) as exc:
                raise invalid(f"tasks.{task}.combiner", f"a logistic model ({exc})", "…") from exc
    return thresholds, combiners
