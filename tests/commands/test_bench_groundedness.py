"""Tests of `ragwarrant bench groundedness`: both protocols, input errors, and the docs table."""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from ragwarrant.commands import bench
from ragwarrant.corroborators.benchmark import LATENCY_HEADING, calibration_document, fold_of
from ragwarrant.corroborators.ragtruth import load_ragtruth
from ragwarrant.errors import InputError, OutputError, UsageError

REPO = Path(__file__).resolve().parents[2]
SHARED_RAGTRUTH = REPO.parent / "shared" / "data" / "ragtruth"
DOCS = REPO / "docs" / "groundedness-ragtruth.md"
DOCS_BEGIN = "<!-- BEGIN bench groundedness output -->"
DOCS_END = "<!-- END bench groundedness output -->"

GROUNDED = "Alpha beta gamma delta epsilon."  # 0 of 5 content tokens unsupported
UNSUPPORTED = "Alpha beta xray yankee zulu."  # 3 of 5
PARTLY = "Alpha beta gamma xray yankee."  # 2 of 5
SLIGHTLY = "Alpha beta gamma delta xray."  # 1 of 5

SOURCES: list[dict[str, Any]] = [
    {
        "source_id": "1",
        "task_type": "QA",
        "source_info": {"question": "alpha beta?", "passages": "passage 1: gamma delta epsilon"},
    },
    {"source_id": "2", "task_type": "Summary", "source_info": "alpha beta gamma delta epsilon"},
    {
        "source_id": "3",
        "task_type": "Data2txt",
        "source_info": {
            "name": "Alpha",
            "attributes": {"beta": True},
            "text": "gamma delta epsilon",
        },
    },
]
HALLUCINATION = {"start": 0, "end": 5, "text": "Alpha", "meta": "", "label_type": "Evident"}


def _label(implicit_true: bool) -> dict[str, Any]:
    return {**HALLUCINATION, "implicit_true": implicit_true, "due_to_null": False}


def _response(sid: str, text: str, labels: list[dict[str, Any]], split: str, quality: str = "good"):
    return {
        "id": "x",
        "source_id": sid,
        "model": "m",
        "temperature": 0.7,
        "labels": labels,
        "split": split,
        "quality": quality,
        "response": text,
    }


def official_responses() -> list[dict[str, Any]]:
    """Train calibrates coverage at 0.6; the test response at 0.4 is then a false negative."""
    return [
        _response("1", GROUNDED, [], "train"),
        _response("2", GROUNDED, [], "train"),
        _response("1", UNSUPPORTED, [_label(False)], "train"),
        _response("3", UNSUPPORTED, [_label(False)], "train"),
        _response("2", SLIGHTLY, [_label(True)], "train"),  # implicit_true: supported
        _response("1", GROUNDED, [], "test"),
        _response("2", UNSUPPORTED, [_label(False)], "test"),
        _response("3", PARTLY, [_label(False)], "test"),
        _response("1", UNSUPPORTED, [], "test", quality="truncated"),  # dropped
    ]


def _write_jsonl(path: Path, rows: list[Any], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if gz:
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_official(tmp_path: Path, responses: list[Any] | None = None, sources=None) -> Path:
    _write_jsonl(
        tmp_path / "response.jsonl", official_responses() if responses is None else responses
    )
    _write_jsonl(tmp_path / "source_info.jsonl", SOURCES if sources is None else sources)
    return tmp_path


def make_sample(tmp_path: Path, n_sources: int = 12) -> Path:
    """Sample layout (gz, no split/quality): per source one grounded, one unsupported answer."""
    sources, responses = [], []
    for i in range(n_sources):
        sid = str(100 + i)
        sources.append(
            {
                "source_id": sid,
                "task_type": "Summary",
                "source_info": "alpha beta gamma delta epsilon",
            }
        )
        for text, labels in ((GROUNDED, []), (UNSUPPORTED, [_label(False)])):
            responses.append(
                {
                    "source_id": sid,
                    "task_type": "Summary",
                    "model": "m",
                    "response": text,
                    "labels": labels,
                }
            )
    _write_jsonl(tmp_path / "sample_response.jsonl.gz", responses, gz=True)
    _write_jsonl(tmp_path / "sample_source_info.jsonl.gz", sources, gz=True)
    return tmp_path


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
    """Thresholds come from train only, so the test response at 0.4 is missed (recall 1/2)."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    assert report["layout"] == "official" and report["official_test_split"] is True
    assert report["thresholds"]["coverage"] == [0.6]
    coverage = row(report, "all", "coverage")
    assert (coverage["n"], coverage["n_positive"], coverage["n_flagged"]) == (3, 2, 1)
    assert (coverage["precision"], coverage["recall"]) == (1.0, 0.5)
    assert coverage["f1"] == 2 / 3 and coverage["false_negative_rate"] == 0.5


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
    floor = row(report, "all", "always-flag")
    assert (floor["n"], floor["n_positive"], floor["n_flagged"]) == (3, 2, 3)
    assert floor["f1"] == 2 * 2 / (3 + 2)
    # if implicit_true counted as unsupported, train would calibrate coverage at 0.2, flagging 0.4
    data = load_ragtruth(tmp_path / "d")
    assert [r.unsupported for r in data.records if r.split == "train"] == [
        False,
        False,
        True,
        True,
        False,
    ]


def test_official_protocol_reports_each_task_type(tmp_path: Path) -> None:
    """Per-task rows exist for every task type with test records, beside the always-flag floor."""
    report = run_json(make_official(tmp_path / "d"), tmp_path)
    assert {(r["task"], r["gate"]) for r in report["rows"]} == {
        (t, g)
        for t in ("QA", "Summary", "Data2txt", "all")
        for g in ("always-flag", "coverage", "weakest_sentence", "hybrid")
    }
    qa = row(report, "QA", "coverage")
    assert (qa["n_positive"], qa["recall"], qa["false_negative_rate"]) == (0, None, None)
    assert row(report, "Data2txt", "coverage")["recall"] == 0.0
    assert row(report, "Summary", "coverage")["f1"] == 1.0


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
    assert "| all | hybrid |" in text


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
    assert len(report["thresholds"]["coverage"]) == 3
    assert row(report, "all", "coverage")["f1"] == 1.0
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


def test_fold_assignment_groups_by_source_and_depends_on_seed() -> None:
    """A source's fold is a pure function of (seed, source_id); seeds reshuffle folds."""
    ids = [str(i) for i in range(200)]
    assert [fold_of(s, 0, 5) for s in ids] == [fold_of(s, 0, 5) for s in ids]
    assert [fold_of(s, 0, 5) for s in ids] != [fold_of(s, 1, 5) for s in ids]
    assert set(fold_of(s, 0, 5) for s in ids) == {0, 1, 2, 3, 4}


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
    assert calibration.data["responses"] == 5


# ------------------------------------------------------------------ malformed input


def _load_error(directory: Path) -> InputError:
    with pytest.raises(InputError) as info:
        load_ragtruth(directory)
    return info.value


def test_missing_directory(tmp_path: Path) -> None:
    """A missing --ragtruth-dir is named."""
    error = _load_error(tmp_path / "nope")
    assert error.code == "ragtruth-dir-missing" and str(tmp_path / "nope") in error.message


def test_directory_without_ragtruth_files(tmp_path: Path) -> None:
    """A folder with neither layout names both expected file pairs."""
    error = _load_error(tmp_path)
    assert error.code == "ragtruth-missing-file"
    assert "response.jsonl" in error.message and "sample_response.jsonl.gz" in error.message


def test_missing_partner_file(tmp_path: Path) -> None:
    """response.jsonl without source_info.jsonl names the missing file."""
    _write_jsonl(tmp_path / "response.jsonl", official_responses())
    error = _load_error(tmp_path)
    assert error.code == "ragtruth-missing-file"
    assert error.message.startswith(str(tmp_path / "source_info.jsonl"))


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    """A broken JSON line is reported as file:line."""
    make_official(tmp_path)
    path = tmp_path / "response.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-3]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    error = _load_error(tmp_path)
    assert error.code == "ragtruth-invalid"
    assert error.message.startswith(f"{path}:3: malformed JSON line")
    assert error.context["line"] == 3


def test_non_object_line(tmp_path: Path) -> None:
    """A JSON line that is not an object is rejected with its line."""
    make_official(tmp_path, sources=[*SOURCES, [1, 2]])
    error = _load_error(tmp_path)
    assert error.message.startswith(f"{tmp_path / 'source_info.jsonl'}:4: expected a JSON object")


@pytest.mark.parametrize(
    ("mutate", "field", "found"),
    [
        (lambda r: r.pop("labels"), "labels", "missing field"),
        (lambda r: r.pop("response"), "response", "missing field"),
        (lambda r: r.update(response=7), "response", "expected str, found int"),
        (lambda r: r.pop("split"), "split", "missing field"),
        (lambda r: r.update(split="dev"), "split", "expected train or test"),
        (lambda r: r.pop("quality"), "quality", "missing field"),
        (
            lambda r: r.update(source_id="999"),
            "source_id",
            "source_id '999' is not in source_info.jsonl",
        ),
        (lambda r: r.update(source_id=True), "source_id", "expected str or int, found bool"),
        (lambda r: r.update(labels=[{"start": 0}]), "labels[0].implicit_true", "missing field"),
        (
            lambda r: r.update(labels=[{"implicit_true": "no"}]),
            "labels[0].implicit_true",
            "expected bool",
        ),
        (lambda r: r.update(labels=["x"]), "labels[0]", "expected an object"),
    ],
)
def test_bad_response_field_names_file_line_and_field(
    tmp_path: Path, mutate, field: str, found: str
) -> None:
    """Each missing or mistyped response field is reported with file, line and field."""
    responses = official_responses()
    mutate(responses[1])
    make_official(tmp_path, responses=responses)
    error = _load_error(tmp_path)
    assert error.code == "ragtruth-invalid"
    assert error.message.startswith(f"{tmp_path / 'response.jsonl'}:2: field {field!r}: {found}")
    assert (error.context["line"], error.context["field"]) == (2, field)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s.update(task_type="Chat"), "task_type"),
        (lambda s: s.pop("source_info"), "source_info"),
        (lambda s: s.update(source_info="just text"), "source_info"),
        (lambda s: s.update(source_info={"question": "q"}), "source_info.passages"),
        (lambda s: s.update(source_id="2"), "source_id"),
    ],
)
def test_bad_source_field_names_file_line_and_field(tmp_path: Path, mutate, field: str) -> None:
    """Source records are validated: task type, context shape per task, unique source_id."""
    sources = json.loads(json.dumps(SOURCES))
    mutate(sources[0])
    sources = [sources[1], sources[0], sources[2]]  # the bad record on line 2
    make_official(tmp_path, sources=sources)
    error = _load_error(tmp_path)
    assert error.message.startswith(f"{tmp_path / 'source_info.jsonl'}:2: field {field!r}")


def test_corrupt_gzip_is_unreadable(tmp_path: Path) -> None:
    """A truncated gzip member is reported as unreadable, naming the file."""
    make_sample(tmp_path)
    path = tmp_path / "sample_response.jsonl.gz"
    path.write_bytes(path.read_bytes()[:40])
    error = _load_error(tmp_path)
    assert error.code == "ragtruth-unreadable" and str(path) in error.message


def test_no_good_record_is_empty(tmp_path: Path) -> None:
    """When every record is dropped there is nothing to benchmark."""
    make_official(tmp_path, responses=[_response("1", GROUNDED, [], "test", quality="truncated")])
    assert _load_error(tmp_path).code == "ragtruth-empty"


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
    expected = {
        "QA": (817, 208),
        "Summary": (900, 232),
        "Data2txt": (900, 564),
        "all": (2617, 1004),
    }
    for task, counts in expected.items():
        floor = row(report, task, "always-flag")
        assert (floor["n"], floor["n_positive"]) == counts


def test_shipped_calibration_is_regenerated_from_the_shared_sample() -> None:
    """lexical-v1.json equals what --write-calibration produces on the shared sample."""
    shipped = json.loads(
        resources.files("ragwarrant")
        .joinpath("data", "calibration", "lexical-v1.json")
        .read_text("utf-8")
    )
    assert calibration_document(load_ragtruth(_shared_sample()), "lexical-v1") == shipped
