"""Tests of bench/groundedness.py: fold assignment, both protocols, options, errors.

Run in-process on small synthetic RAGTruth copies (``ragtruth_files``); the shared-sample table,
the shipped calibration and a run of the script itself are in tests/test_bench_groundedness.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import groundedness
import numpy as np
import pytest
from ragtruth import load_ragtruth
from tests.corroborators.ragtruth_files import make_official, make_sample, official_responses

from ragwarrant.corroborators.features import CONTENT_FEATURES, FEATURES, LENGTH_FEATURES
from ragwarrant.errors import InputError, OutputError, UsageError


def test_fold_assignment_groups_by_source_and_depends_on_seed() -> None:
    """A source's fold is a pure function of (seed, source_id); seeds reshuffle folds."""
    ids = [str(i) for i in range(200)]
    assert [groundedness.fold_of(s, 0, 5) for s in ids] == [
        groundedness.fold_of(s, 0, 5) for s in ids
    ]
    assert [groundedness.fold_of(s, 0, 5) for s in ids] != [
        groundedness.fold_of(s, 1, 5) for s in ids
    ]
    assert set(groundedness.fold_of(s, 0, 5) for s in ids) == {0, 1, 2, 3, 4}


def test_fold_is_the_first_eight_hash_bytes_big_endian_mod_k() -> None:
    """fold_of is sha256(f"{seed}:{source_id}"), first 8 bytes big endian, mod k."""
    for sid in ("0", "17", "source-x", "ünïcode"):
        digest = hashlib.sha256(f"3:{sid}".encode()).digest()
        assert groundedness.fold_of(sid, 3, 7) == int.from_bytes(digest[:8], "big") % 7


def test_confusion_metrics_match_their_formulas() -> None:
    """Precision tp/flagged, recall tp/positives, F1 2tp/(flagged+positives), FNR 1 − recall."""
    c = groundedness.Confusion(n=10, n_positive=4, n_flagged=5, true_positives=3)
    assert (c.precision, c.recall, c.f1, c.false_negative_rate) == (0.6, 0.75, 6 / 9, 0.25)


def test_confusion_metrics_are_none_when_undefined() -> None:
    """Nothing flagged and no positive: every metric is None, never NaN."""
    c = groundedness.Confusion(n=3, n_positive=0, n_flagged=0, true_positives=0)
    assert (c.precision, c.recall, c.f1, c.false_negative_rate) == (None, None, None, None)


def test_official_protocol_calibrates_on_train_only(tmp_path: Path) -> None:
    """The official protocol calibrates one threshold per gate on train and scores test only."""
    report = groundedness.run_groundedness_bench(load_ragtruth(make_official(tmp_path)))
    assert report.n_train == 5 and report.n_evaluated == 3
    assert report.thresholds["QA"]["coverage"] == [0.6]
    assert report.folds is None and report.seed is None


def test_content_combiner_is_fitted_without_length_features(tmp_path: Path) -> None:
    """combined_content's model has no feature that grows with length; combined keeps them."""
    data = load_ragtruth(make_official(tmp_path))
    scored = groundedness._score_all(data)
    fit = groundedness._fit(scored, np.ones(len(data.records), dtype=bool), "QA", "test")
    assert fit.models["combined_content"].features == CONTENT_FEATURES
    assert fit.models["combined"].features == FEATURES
    assert not set(LENGTH_FEATURES) & set(CONTENT_FEATURES)
    assert set(LENGTH_FEATURES) < set(FEATURES)


# ------------------------------------------------------------------ the script's options


def run_json(directory: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """Run the script in-process with --format json; its parsed output."""
    out = tmp_path / "bench.json"
    argv = ["--ragtruth-dir", str(directory), "--format", "json", "--output", str(out), *extra]
    assert groundedness.main(argv) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def row(report: dict[str, Any], task: str, gate: str) -> dict[str, Any]:
    (found,) = [r for r in report["rows"] if r["task"] == task and r["gate"] == gate]
    return found


# ------------------------------------------------------------------ official protocol


def test_official_protocol_calibrates_on_train_and_reports_test(tmp_path: Path) -> None:
    """Thresholds come from train only, so the Data2txt test response at 0.4 is missed."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    assert report["layout"] == "official" and report["official_test_split"] is True
    assert report["thresholds"]["QA"]["coverage"] == [0.6]
    assert row(report, "QA", "coverage")["n_flagged"] == 0
    assert row(report, "Summary", "coverage")["true_positives"] == 1
    assert row(report, "Data2txt", "coverage")["recall"] == 0.0


def test_official_protocol_drops_quality_not_good_and_counts_implicit_true_as_supported(
    tmp_path: Path,
) -> None:
    """The truncated record is dropped; the implicit_true-only response is a negative in train."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    assert (
        report["n_read"],
        report["n_dropped_quality"],
        report["n_train"],
        report["n_evaluated"],
    ) == (9, 1, 5, 3)
    floors = [row(report, t, "always-flag") for t in ("QA", "Summary", "Data2txt")]
    assert [(f["n"], f["n_positive"]) for f in floors] == [(1, 0), (1, 1), (1, 1)]
    data = load_ragtruth(tmp_path / "d")
    assert [r.unsupported for r in data.records if r.split == "train"] == [
        False,
        False,
        True,
        True,
        False,
    ]


def test_official_protocol_falls_back_to_pooled_training_rows_and_says_so(tmp_path: Path) -> None:
    """Summary train has no positive and Data2txt train no negative: both use pooled rows."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    assert report["notes"] == [
        "Summary (train): calibrated on pooled training rows",
        "Data2txt (train): calibrated on pooled training rows",
    ]


def test_official_protocol_reports_each_task_type_with_gain_and_auc(tmp_path: Path) -> None:
    """Per task type: the floor, the lexical gates, the combiner; record only on Data2txt."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    gates = {(r["task"], r["gate"]) for r in report["rows"]}
    lexical = (
        "always-flag",
        "coverage",
        "weakest_sentence",
        "hybrid",
        "combined",
        "combined_content",
    )
    assert gates == {
        *((t, g) for t in ("QA", "Summary", "Data2txt") for g in lexical),
        ("Data2txt", "record"),
    }
    floor = row(report, "Summary", "always-flag")
    assert floor["f1_gain_over_floor"] is None and floor["within_generator_auc"] is None
    summary = row(report, "Summary", "coverage")
    assert summary["f1"] == 1.0 and summary["f1_gain_over_floor"] == 0.0
    assert summary["f1_gain_ci95"] == [0.0, 0.0]


def test_files_under_dataset_subfolder_are_found(tmp_path: Path) -> None:
    """--ragtruth-dir may be the upstream repository root holding dataset/."""
    make_official(tmp_path / "root" / "dataset")
    assert run_json(tmp_path / "root", tmp_path)["layout"] == "official"


def test_markdown_output_carries_no_input_text(tmp_path: Path) -> None:
    """Only numbers reach the output: no question, response or context word appears."""
    out = tmp_path / "bench.md"
    assert (
        groundedness.main(
            ["--ragtruth-dir", str(make_official(tmp_path / "d")), "--output", str(out)]
        )
        == 0
    )
    text = out.read_text(encoding="utf-8").lower()
    for word in ("alpha", "xray", "yankee", "gamma", "passage"):
        assert word not in text
    assert "| summary | hybrid |" in text


def test_markdown_goes_to_stdout_without_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --output the Markdown report is printed."""
    assert groundedness.main(["--ragtruth-dir", str(make_official(tmp_path / "d"))]) == 0
    assert "| task | gate |" in capsys.readouterr().out


def test_unwritable_output_is_output_error(tmp_path: Path) -> None:
    """An output path in a missing directory raises OutputError naming the path."""
    target = tmp_path / "missing" / "bench.md"
    with pytest.raises(OutputError) as info:
        groundedness.main(
            ["--ragtruth-dir", str(make_official(tmp_path / "d")), "--output", str(target)]
        )
    assert str(target) in info.value.message


# ------------------------------------------------------------------ sample protocol


def test_sample_protocol_is_cross_validation_and_says_not_official(tmp_path: Path) -> None:
    """The gz sample runs grouped k-fold CV and is labelled as not the official test split."""
    directory = make_sample(tmp_path / "s")
    report = run_json(directory, tmp_path, "--folds", "3")
    assert report["layout"] == "sample" and report["official_test_split"] is False
    assert "NOT the official RAGTruth test split" in report["protocol"]
    assert len(report["thresholds"]["Summary"]["coverage"]) == 3
    assert row(report, "Summary", "coverage")["f1"] == 1.0
    assert row(report, "Summary", "coverage")["within_generator_auc"] == 1.0
    md = tmp_path / "bench.md"
    groundedness.main(["--ragtruth-dir", str(directory), "--folds", "3", "--output", str(md)])
    assert "**Not the official RAGTruth test split.**" in md.read_text(encoding="utf-8")


def test_fewer_than_two_folds_is_usage_error(tmp_path: Path) -> None:
    """--folds 1 cannot cross-validate."""
    with pytest.raises(UsageError):
        groundedness.main(["--ragtruth-dir", str(make_sample(tmp_path / "s")), "--folds", "1"])


def test_write_calibration_produces_a_loadable_file(tmp_path: Path) -> None:
    """--write-calibration writes a file load_calibration accepts, with the given version."""
    from ragwarrant.corroborators.calibration import load_calibration

    target = tmp_path / "cal.json"
    groundedness.main(
        [
            "--ragtruth-dir",
            str(make_official(tmp_path / "d")),
            "--output",
            str(tmp_path / "b.md"),
            "--write-calibration",
            str(target),
            "--calibration-version",
            "lexical-t",
        ]
    )
    calibration = load_calibration(target)
    assert calibration.version == "lexical-t"
    assert calibration.thresholds["coverage"] == 0.6  # train split only
    assert calibration.task_thresholds["QA"]["coverage"] == 0.6
    assert json.loads(target.read_bytes())["data"]["responses"] == 5


def test_train_without_positive_cannot_calibrate(tmp_path: Path) -> None:
    """Calibration needs an unsupported train response."""
    responses = [r for r in official_responses() if not (r["split"] == "train" and r["labels"])]
    with pytest.raises(InputError) as info:
        groundedness.main(["--ragtruth-dir", str(make_official(tmp_path, responses=responses))])
    assert info.value.code == "ragtruth-no-positive"
