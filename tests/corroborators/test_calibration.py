"""Tests of threshold calibration by maximum F1 and of the versioned calibration files."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from ragwarrant.corroborators.calibration import (
    DEFAULT_CALIBRATION,
    FLAG_RULE,
    GATES,
    calibrate_threshold,
    load_calibration,
)
from ragwarrant.errors import InputError


def _reference(scores: list[float], labels: list[bool]) -> float:
    """Brute force with exact fractions: max F1, then max precision, over observed scores."""
    n_positive = sum(labels)
    best: tuple[Fraction, Fraction, float] | None = None
    for t in sorted(set(scores)):
        flagged = [y for s, y in zip(scores, labels, strict=True) if s >= t]
        tp = sum(flagged)
        key = (Fraction(2 * tp, len(flagged) + n_positive), Fraction(tp, len(flagged)), t)
        if best is None or key > best:
            best = key
    assert best is not None
    return best[2]


def test_perfect_separation_picks_lowest_positive_score() -> None:
    """When positives all score above negatives, the threshold is the lowest positive score."""
    assert calibrate_threshold([0.9, 0.8, 0.3, 0.1], [True, True, False, False]) == 0.8


def test_f1_tie_goes_to_higher_precision() -> None:
    """Two thresholds with F1 = 2/3: flag one (precision 1) beats flag four (precision 1/2)."""
    # t=0.9: 2*1/(1+2)=2/3, precision 1; t=0.6: 2*2/(4+2)=2/3, precision 1/2
    assert calibrate_threshold([0.9, 0.8, 0.7, 0.6], [True, False, False, True]) == 0.9


def test_f1_tie_goes_to_higher_precision_whatever_the_input_order() -> None:
    """The tie is broken by precision, not by which candidate comes first."""
    assert calibrate_threshold([0.6, 0.7, 0.8, 0.9], [True, False, False, True]) == 0.9


def test_equal_scores_are_flagged_together() -> None:
    """A threshold cannot split tied scores: F1 1/2 flagging all three 0.5s beats 0 for none."""
    assert calibrate_threshold([0.5, 0.5, 0.5, 0.1], [True, False, False, False]) == 0.5


def test_matches_brute_force_reference_on_random_data() -> None:
    """Vectorised calibration equals an exact-fraction brute force on 200 seeded draws."""
    rng = np.random.default_rng(20261129)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        scores = np.round(rng.random(n), 1).tolist()  # rounding forces ties
        labels = (rng.random(n) < 0.4).tolist()
        if not any(labels):
            labels[0] = True
        assert calibrate_threshold(scores, labels) == _reference(scores, labels)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.1, 0.2], [True], "same length"),
        ([[0.1]], [[True]], "1-D"),
        ([], [], "zero responses"),
        ([0.1, float("nan")], [True, False], "finite"),
        ([0.1, 0.2], [2, 0], "0/1"),
        ([0.1, 0.2], [False, False], "without any positive"),
    ],
)
def test_invalid_arguments_raise_value_error(scores: object, labels: object, message: str) -> None:
    """Shape, emptiness, non-finite scores, non-binary labels and no positive are rejected."""
    with pytest.raises(ValueError, match=message):
        calibrate_threshold(scores, labels)  # type: ignore[arg-type]


def test_shipped_calibration_loads_with_version_hash_and_all_gates() -> None:
    """The packaged lexical-v1 file loads, names its version and data, and hashes its bytes."""
    calibration = load_calibration()
    raw = (
        resources.files("ragwarrant")
        .joinpath("data", "calibration", f"{DEFAULT_CALIBRATION}.json")
        .read_bytes()
    )
    assert calibration.version == DEFAULT_CALIBRATION
    assert calibration.sha256 == hashlib.sha256(raw).hexdigest()
    assert set(calibration.thresholds) == set(GATES)
    doc = json.loads(raw)
    assert doc["flag_rule"] == FLAG_RULE and doc["data"]["name"].startswith("RAGTruth")
    assert calibration.source.startswith("package:")


def _valid_document() -> dict[str, object]:
    return {
        "schema_version": 1,
        "version": "lexical-test",
        "flag_rule": FLAG_RULE,
        "method": "hand-made",
        "data": {"name": "none"},
        "created_by": "test",
        "gates": {gate: {"threshold": 0.5} for gate in GATES},
    }


def test_user_calibration_file_loads(tmp_path: Path) -> None:
    """A valid user file loads with its path as source."""
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(_valid_document()), encoding="utf-8")
    calibration = load_calibration(path)
    assert (calibration.version, calibration.source) == ("lexical-test", str(path))
    assert dict(calibration.thresholds) == dict.fromkeys(GATES, 0.5)


def test_missing_calibration_file_is_input_error(tmp_path: Path) -> None:
    """A missing file raises InputError calibration-unreadable naming the file."""
    path = tmp_path / "absent.json"
    with pytest.raises(InputError) as info:
        load_calibration(path)
    assert info.value.code == "calibration-unreadable"
    assert str(path) in info.value.message


def test_malformed_calibration_json_is_input_error(tmp_path: Path) -> None:
    """A file that is not JSON raises InputError calibration-invalid."""
    path = tmp_path / "cal.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_calibration(path)
    assert info.value.code == "calibration-invalid"
    assert "not valid JSON" in info.value.message


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("version"), "version"),
        (lambda d: d.update(schema_version=3), "schema_version"),
        (
            lambda d: d.update(tasks={"QA": {"gates": {"hybrid": {"threshold": 2}}}}),
            "tasks.QA.gates.hybrid.threshold",
        ),
        (
            lambda d: d.update(tasks={"QA": {"gates": {}, "combiner": {"features": ["a"]}}}),
            "tasks.QA.combiner",
        ),
        (lambda d: d.update(flag_rule="score > threshold"), "flag_rule"),
        (lambda d: d["gates"].pop("hybrid"), "gates.hybrid"),
        (lambda d: d["gates"]["coverage"].update(threshold=1.5), "gates.coverage.threshold"),
        (lambda d: d["gates"]["coverage"].update(threshold=True), "gates.coverage.threshold"),
        (lambda d: d.update(data=[]), "data"),
    ],
)
def test_invalid_calibration_field_is_named(tmp_path: Path, mutate: object, field: str) -> None:
    """Each schema violation raises InputError naming the offending field."""
    document = _valid_document()
    mutate(document)  # type: ignore[operator]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_calibration(path)
    assert info.value.code == "calibration-invalid"
    assert f"field {field!r}" in info.value.message
    assert info.value.context["field"] == field
