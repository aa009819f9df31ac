"""Tests of `ragwarrant bench groundedness`: both protocols, input errors, and the docs table."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from tests.corroborators.ragtruth_files import (
    make_official,
    make_sample,
    official_responses,
)

from ragwarrant.commands import bench
from ragwarrant.corroborators.benchmark import LATENCY_HEADING, calibration_document
from ragwarrant.corroborators.ragtruth import load_ragtruth
from ragwarrant.errors import InputError, OutputError, UsageError

REPO = Path(__file__).resolve().parents[2]
SHARED_RAGTRUTH = REPO.parent / "shared" / "data" / "ragtruth"
DOCS = REPO / "docs" / "groundedness-ragtruth.md"
DOCS_BEGIN = "<!-- BEGIN bench groundedness output -->"
DOCS_END = "<!-- END bench groundedness output -->"
LEXICAL_V1_SHA256 = "e56191a676803f5a7367873eca8810c0ec68f8ace85636bd48eba35664aef9f1"


def run_cli(*argv: str) -> int:
    """Parse argv with a parser built from bench.register and call the handler, like cli.py."""
    parser = argparse.ArgumentParser(prog="ragwarrant")
    bench.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


def run_json(directory: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "bench.json"
    assert (
        run_cli(
            "bench",
            "groundedness",
            "--ragtruth-dir",
            str(directory),
            "--format",
            "json",
            "--output",
            str(out),
            *extra,
        )
        == 0
    )
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
        run_cli(
            "bench",
            "groundedness",
            "--ragtruth-dir",
            str(make_official(tmp_path / "d")),
            "--output",
            str(out),
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
    assert (
        run_cli("bench", "groundedness", "--ragtruth-dir", str(make_official(tmp_path / "d"))) == 0
    )
    assert "| task | gate |" in capsys.readouterr().out


def test_unwritable_output_is_output_error(tmp_path: Path) -> None:
    """An output path in a missing directory raises OutputError naming the path."""
    target = tmp_path / "missing" / "bench.md"
    with pytest.raises(OutputError) as info:
        run_cli(
            "bench",
            "groundedness",
            "--ragtruth-dir",
            str(make_official(tmp_path / "d")),
            "--output",
            str(target),
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
    run_cli(
        "bench",
        "groundedness",
        "--ragtruth-dir",
        str(directory),
        "--folds",
        "3",
        "--output",
        str(md),
    )
    assert "**Not the official RAGTruth test split.**" in md.read_text(encoding="utf-8")


def test_fewer_than_two_folds_is_usage_error(tmp_path: Path) -> None:
    """--folds 1 cannot cross-validate."""
    with pytest.raises(UsageError):
        run_cli(
            "bench",
            "groundedness",
            "--ragtruth-dir",
            str(make_sample(tmp_path / "s")),
            "--folds",
            "1",
        )


def test_write_calibration_produces_a_loadable_file(tmp_path: Path) -> None:
    """--write-calibration writes a file load_calibration accepts, with the given version."""
    from ragwarrant.corroborators.calibration import load_calibration

    target = tmp_path / "cal.json"
    run_cli(
        "bench",
        "groundedness",
        "--ragtruth-dir",
        str(make_official(tmp_path / "d")),
        "--output",
        str(tmp_path / "b.md"),
        "--write-calibration",
        str(target),
        "--calibration-version",
        "lexical-t",
    )
    calibration = load_calibration(target)
    assert calibration.version == "lexical-t"
    assert calibration.thresholds["coverage"] == 0.6  # train split only
    assert calibration.task_thresholds["QA"]["coverage"] == 0.6
    assert calibration.data["responses"] == 5


def test_train_without_positive_cannot_calibrate(tmp_path: Path) -> None:
    """Calibration needs an unsupported train response."""
    responses = [r for r in official_responses() if not (r["split"] == "train" and r["labels"])]
    with pytest.raises(InputError) as info:
        run_cli(
            "bench",
            "groundedness",
            "--ragtruth-dir",
            str(make_official(tmp_path, responses=responses)),
        )
    assert info.value.code == "ragtruth-no-positive"


# ------------------------------------------------------------------ the committed docs table


def _shared_sample() -> Path:
    if not (SHARED_RAGTRUTH / "sample_response.jsonl.gz").is_file():
        pytest.skip(f"shared RAGTruth sample absent: expected it at {SHARED_RAGTRUTH}")
    return SHARED_RAGTRUTH


def test_command_reproduces_the_docs_table(tmp_path: Path) -> None:
    """The committed table in docs/groundedness-ragtruth.md is what the command prints now."""
    out = tmp_path / "bench.md"
    assert (
        run_cli(
            "bench", "groundedness", "--ragtruth-dir", str(_shared_sample()), "--output", str(out)
        )
        == 0
    )
    produced = out.read_text(encoding="utf-8").split(LATENCY_HEADING)[0].strip()
    docs = DOCS.read_text(encoding="utf-8")
    committed = docs.split(DOCS_BEGIN)[1].split(DOCS_END)[0].strip()
    assert committed == produced


def test_shared_sample_counts_match_its_readme(tmp_path: Path) -> None:
    """Positives per task equal the README's 'label whose implicit_true is false' counts."""
    report = run_json(_shared_sample(), tmp_path)
    expected = {"QA": (817, 208), "Summary": (900, 232), "Data2txt": (900, 564)}
    for task, counts in expected.items():
        floor = row(report, task, "always-flag")
        assert (floor["n"], floor["n_positive"]) == counts


def test_shipped_calibration_is_regenerated_from_the_shared_sample() -> None:
    """lexical-v2.json equals what --write-calibration produces on the shared sample."""
    shipped = json.loads(
        resources.files("ragwarrant")
        .joinpath("data", "calibration", "lexical-v2.json")
        .read_text("utf-8")
    )
    produced = calibration_document(load_ragtruth(_shared_sample()), "lexical-v2")
    # Same keys, strings and integers; floats equal up to the last bits, which numpy's
    # CPU-dispatched exp/log kernels may change from one machine to another.
    assert _close(produced, shipped)


def _close(a: Any, b: Any) -> bool:
    """Equal structure; floats within 1e-12 relative, everything else equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1.0)
    return bool(a == b) and type(a) is type(b)


def test_legacy_calibration_v1_is_unchanged() -> None:
    """lexical-v1.json (pooled, pre-v2 tokens) is kept byte for byte for contracts that name it."""
    raw = resources.files("ragwarrant").joinpath("data", "calibration", "lexical-v1.json")
    assert hashlib.sha256(raw.read_bytes()).hexdigest() == LEXICAL_V1_SHA256
