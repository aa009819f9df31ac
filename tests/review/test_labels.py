"""Reading reviewers' labels back against the recorded draw: unblinding and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwarrant.errors import EvidenceError
from ragwarrant.review import read_labels, read_queue
from ragwarrant.review.queue import DrawnItem, ReviewQueue, draw_tag

TAG = draw_tag(1, [], 3, ("correct", "base", "cand"))
QUEUE = ReviewQueue(
    metric="correct",
    baseline="base",
    candidate="cand",
    seed=1,
    population=10,
    evidence=[],
    items=[
        DrawnItem(item_id=f"{TAG}-r1", example_id="ex1", shown=("candidate", "baseline")),
        DrawnItem(item_id=f"{TAG}-r2", example_id="ex2", shown=("baseline", "candidate")),
        DrawnItem(item_id=f"{TAG}-r3", example_id="ex3", shown=("candidate", "baseline")),
    ],
)


def _labels(tmp_path: Path, text: str):
    path = tmp_path / "labels.csv"
    path.write_text(text.replace("\nr", f"\n{TAG}-r"))
    return read_labels(path, "labels.csv", QUEUE, (0.0, 1.0))


def test_labels_answer_one_draw_only(tmp_path):
    """A queue whose item ids do not carry its own draw tag (another draw's, or none) accepts
    no label: label-outside-draw."""
    other = QUEUE.model_copy(update={"seed": 2})
    path = tmp_path / "labels.csv"
    path.write_text(f"item_id,label_a,label_b\n{TAG}-r1,1,0\n")
    with pytest.raises(EvidenceError) as err:
        read_labels(path, "labels.csv", other, (0.0, 1.0))
    assert err.value.code == "label-outside-draw"


def test_unblinds_and_counts_missing(tmp_path):
    """A and B are mapped back to candidate and baseline; an unlabelled item is counted."""
    got = _labels(tmp_path, "item_id,label_a,label_b\nr1,1,0\nr2,1,0.5\nr3,,1\n")
    assert got.example_ids == ("ex1", "ex2")
    assert got.candidate_values.tolist() == [1.0, 0.5]
    assert got.baseline_values.tolist() == [0.0, 1.0]
    assert (got.drawn, got.missing) == (3, 1)
    assert got.values() == {"ex1": (1.0, 0.0), "ex2": (0.5, 1.0)}
    assert got.missing_ids == ("ex3",)


def test_an_item_absent_from_the_file_is_missing(tmp_path):
    """Items of the draw with no row at all are counted as missing too."""
    got = _labels(tmp_path, "item_id,label_a,label_b\nr1,1,0\n")
    assert (got.drawn, got.missing) == (3, 2)


@pytest.mark.parametrize(
    ("text", "code", "row", "column"),
    [
        ("item_id,label_a,label_b\nr9,1,0\n", "label-outside-draw", 2, "item_id"),
        ("item_id,label_a,label_b\nr1,1,0\nr1,1,0\n", "label-duplicate", 3, "item_id"),
        ("item_id,label_a,label_b\nr1,yes,0\n", "label-not-a-number", 2, "label_a"),
        ("item_id,label_a,label_b\nr1,1,\u0661\n", "label-not-a-number", 2, "label_b"),
        ("item_id,label_a,label_b\nr1,0_1,1\n", "label-not-a-number", 2, "label_a"),
        ("item_id,label_a,label_b\nr1,1,1.5\n", "label-out-of-scale", 2, "label_b"),
        ("item_id,label_a\nr1,1\n", "labels-columns-missing", 1, "label_b"),
    ],
)
def test_located_errors(tmp_path, text, code, row, column):
    """Each bad label names the file, row and column, and never echoes the value."""
    with pytest.raises(EvidenceError) as info:
        _labels(tmp_path, text)
    err = info.value
    assert (err.code, err.file, err.row, err.column) == (code, "labels.csv", row, column)
    assert "yes" not in err.message and "1.5" not in err.message


def test_labels_with_a_utf8_bom_are_read(tmp_path):
    """Excel's "CSV UTF-8" starts with a byte-order mark; the header still names item_id."""
    path = tmp_path / "labels.csv"
    path.write_bytes(f"item_id,label_a,label_b\n{TAG}-r1,1,0\n".encode("utf-8-sig"))
    got = read_labels(path, "labels.csv", QUEUE, (0.0, 1.0))
    assert got.example_ids == ("ex1",)


def test_invalid_queue_names_the_field(tmp_path):
    """A queue that is not the draw record is refused with its JSON pointer."""
    path = tmp_path / "queue.json"
    path.write_text('{"metric": "correct"}')
    with pytest.raises(EvidenceError, match="review-queue|is not a review queue") as info:
        read_queue(path, "queue.json")
    assert info.value.code == "review-queue-invalid"


@pytest.mark.parametrize(
    ("data", "row"),
    [
        (b"item_id,label_a,label_b\nr1,1,0\n" + b"x" * 200_000 + b",1,0\n", 3),
        (b"item_id,label_a,label_b\nr1,1,0\nr2,\xff,0\n", 3),
    ],
)
def test_an_unreadable_labels_row_is_located(tmp_path, data, row):
    """A field past the csv module's limit, or bytes that are not UTF-8: located, not a crash."""
    path = tmp_path / "labels.csv"
    path.write_bytes(data.replace(b"\nr", f"\n{TAG}-r".encode()))
    with pytest.raises(EvidenceError) as info:
        read_labels(path, "labels.csv", QUEUE, (0.0, 1.0))
    assert (info.value.code, info.value.file, info.value.row) == (
        "labels-unreadable",
        *("labels.csv", row),
    )


@pytest.mark.parametrize("name", ["labels.csv", "queue.json"])
def test_review_files_are_read_bounded(tmp_path, monkeypatch, name):
    """A labels file or queue past MAX_REVIEW_FILE_BYTES is refused unread, naming the file."""
    monkeypatch.setattr("ragwarrant.review.queue.MAX_REVIEW_FILE_BYTES", 16)
    path = tmp_path / name
    path.write_text("item_id,label_a,label_b\n" + f"{TAG}-r1,1,0\n" * 4)
    read = read_queue if name == "queue.json" else read_labels
    with pytest.raises(EvidenceError) as info:
        read(path, name, *((QUEUE, (0.0, 1.0)) if read is read_labels else ()))
    assert (info.value.code, info.value.file) == ("review-file-unreadable", name)
    assert "larger than 16 bytes" in info.value.message


@pytest.mark.parametrize(
    ("cell", "column", "bad"), [("0.5,1", "label_a", "0.5"), ("1,0.999", "label_b", "0.999")]
)
def test_a_binary_metric_takes_only_0_and_1(tmp_path, cell, column, bad):
    """On a binary metric a label inside the scale but neither 0 nor 1 is refused, located,
    without echoing the value."""
    path = tmp_path / "labels.csv"
    path.write_text(f"item_id,label_a,label_b\n{TAG}-r1,1,0\n{TAG}-r2,{cell}\n")
    assert read_labels(path, "labels.csv", QUEUE, (0.0, 1.0)).example_ids == ("ex1", "ex2")
    with pytest.raises(EvidenceError) as info:
        read_labels(path, "labels.csv", QUEUE, (0.0, 1.0), binary=True)
    err = info.value
    assert (err.code, err.file, err.row, err.column) == (
        "label-not-binary",
        "labels.csv",
        3,
        column,
    )
    assert err.message.startswith(f"labels.csv row 3: {column} is neither 0 nor 1")
    assert bad not in err.message
