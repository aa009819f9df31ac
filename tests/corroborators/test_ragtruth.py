"""Tests of bench/ragtruth.py (the RAGTruth reader): both layouts found, bad input located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragtruth import load_ragtruth
from tests.corroborators.ragtruth_files import (
    GROUNDED,
    SOURCES,
    make_official,
    make_sample,
    official_responses,
    response,
    write_jsonl,
)

from ragwarrant.errors import InputError

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
    write_jsonl(tmp_path / "response.jsonl", official_responses())
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
        (
            lambda r: r.update(labels=[{"implicit_true": False, "end": 3}]),
            "labels[0].start",
            "expected int, found None",
        ),
        (
            lambda r: r.update(labels=[{"implicit_true": False, "start": 0, "end": 99}]),
            "labels[0].start",
            "expected 0 <= start <= end <= 31 (response length), found 0..99",
        ),
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
    make_official(tmp_path, responses=[response("1", GROUNDED, [], "test", quality="truncated")])
    assert _load_error(tmp_path).code == "ragtruth-empty"


def test_unsupported_spans_keep_the_offsets_of_non_implicit_labels(tmp_path: Path) -> None:
    """Spans with implicit_true false are kept with their offsets; implicit_true ones are not."""
    labels = [
        {"start": 6, "end": 10, "implicit_true": False},
        {"start": 0, "end": 5, "implicit_true": True},
        {"start": 11, "end": 16, "implicit_true": False},
    ]
    make_official(tmp_path, responses=[response("1", GROUNDED, labels, "train")])
    (record,) = load_ragtruth(tmp_path).records
    assert (record.unsupported, record.unsupported_spans) == (True, ((6, 10), (11, 16)))


def test_implicit_true_only_response_has_no_spans(tmp_path: Path) -> None:
    """A response whose labels are all implicit_true is supported and has no span."""
    labels = [{"start": 0, "end": 5, "implicit_true": True}]
    make_official(tmp_path, responses=[response("1", GROUNDED, labels, "train")])
    (record,) = load_ragtruth(tmp_path).records
    assert (record.unsupported, record.unsupported_spans) == (False, ())
