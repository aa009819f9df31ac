"""Human labels read back against the recorded draw, unblinded to candidate and baseline.

The reviewers' CSV has one row per item: ``item_id``, ``label_a``, ``label_b`` (values on the
metric's scale; an empty cell is a missing label). Every labelled item must be one of the
queue's items, and item ids carry the draw's tag (``review.queue.draw_tag``), so labels written
for another draw's items are refused (a label for an item outside the draw is an error: the
sample would no longer be the uniform random draw the bound assumes); items without both labels
are counted as missing and reported, never dropped silently.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragwarrant.adapters._cells import parse_number
from ragwarrant.display import number
from ragwarrant.errors import EvidenceError
from ragwarrant.limits import MAX_CSV_FIELD_CHARS
from ragwarrant.review.queue import ReviewQueue, queue_tag, read_review_file

LABEL_COLUMNS = ("item_id", "label_a", "label_b")


@dataclass(frozen=True)
class HumanLabelSet:
    """Human labels of one metric on the drawn examples, unblinded.

    Attributes:
        metric, baseline, candidate: from the queue.
        example_ids: shape (n,) example ids with both labels.
        candidate_values, baseline_values: shape (n,) human values in metric units.
        drawn: items in the draw; missing: drawn items without both labels.
        missing_ids: the example ids of those ``missing`` items (the gate imputes them).
    """

    metric: str
    baseline: str
    candidate: str
    example_ids: tuple[str, ...]
    candidate_values: np.ndarray
    baseline_values: np.ndarray
    drawn: int
    missing: int
    missing_ids: tuple[str, ...] = ()

    def values(self) -> dict[str, tuple[float, float]]:
        """Example id → (candidate's, baseline's) human value."""
        pairs = zip(self.candidate_values.tolist(), self.baseline_values.tolist(), strict=True)
        return dict(zip(self.example_ids, pairs, strict=True))


def _error(code: str, message: str, relative: str, row: int, column: str | None) -> EvidenceError:
    return EvidenceError(
        code,
        message,
        hint="label only the items of the queue the contract names, on the metric's scale",
        file=relative,
        row=row,
        column=column,
    )


def _value(
    cell: str, scale: tuple[float, float], where: tuple[str, int, str], binary: bool
) -> float | None:
    """The label in ``cell`` (None when empty); located errors for text, out-of-scale, or (a
    ``binary`` metric) a value other than 0 and 1."""
    if not cell.strip():
        return None
    relative, row, column = where
    value = parse_number(cell.strip())
    if value is None:
        raise _error(
            "label-not-a-number",
            f"{relative} row {row}: {column} is not a number (plain ASCII decimal digits)",
            *where,
        )
    if not math.isfinite(value) or not scale[0] <= value <= scale[1]:
        raise _error(
            "label-out-of-scale",
            f"{relative} row {row}: {column} is outside the scale "
            f"[{number(scale[0])}, {number(scale[1])}]",
            *where,
        )
    if binary and value not in (0.0, 1.0):
        raise _error(
            "label-not-binary",
            f"{relative} row {row}: {column} is neither 0 nor 1 (the metric is binary)",
            *where,
        )
    return value


def _rows(path: Path, relative: str) -> list[dict[str, str]]:
    try:  # Excel's "CSV UTF-8" has a BOM
        text = read_review_file(path, relative).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        row = exc.object.count(b"\n", 0, exc.start) + 1
        message = f"{relative} row {row}: not UTF-8 text"
        raise _error("labels-unreadable", message, relative, row, None) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        missing = [c for c in LABEL_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise _error(
                "labels-columns-missing",
                f"{relative} lacks the column(s) {', '.join(missing)}",
                relative,
                1,
                missing[0],
            )
        return list(reader)
    except csv.Error:  # "field larger than field limit": the one error the reader raises
        row = reader.reader.line_num  # DictReader.line_num lags the failed record
        raise _error(
            "labels-unreadable",
            f"{relative} row {row}: a field is longer than {MAX_CSV_FIELD_CHARS:,} characters",
            relative,
            row,
            None,
        ) from None


def read_labels(
    path: Path,
    relative: str,
    queue: ReviewQueue,
    scale: tuple[float, float],
    binary: bool = False,
) -> HumanLabelSet:
    """Read the reviewers' labels and unblind them with the queue.

    Args:
        path: the labels CSV; relative: its name in the input directory (for messages).
        queue: the draw the labels answer.
        scale: the metric's (low, high); every label must lie in it.
        binary: the metric is binary (``review.sample.binary_metric``): every label is 0 or 1.

    Returns:
        HumanLabelSet with the items labelled for both policies, and the count of the others.

    Raises:
        EvidenceError: ``review-file-unreadable`` (not a readable regular file of at most
            ``limits.MAX_REVIEW_FILE_BYTES``), ``labels-unreadable`` (not UTF-8, or a field
            longer than ``limits.MAX_CSV_FIELD_CHARS``), ``labels-columns-missing``,
            ``label-outside-draw`` (an item id not in the queue, or not carrying the queue's
            draw tag), ``label-duplicate``, ``label-not-a-number``, ``label-out-of-scale``,
            ``label-not-binary``; each names the file, the row (1 = header) and the column,
            never the value.
    """
    tag = queue_tag(queue)
    items = {it.item_id: it for it in queue.items if it.item_id.startswith(f"{tag}-")}
    seen: set[str] = set()
    labelled: dict[str, tuple[float, float]] = {}
    for row, record in enumerate(_rows(path, relative), start=2):
        item_id = (record.get("item_id") or "").strip()
        if item_id not in items:
            raise _error(
                "label-outside-draw",
                f"{relative} row {row}: item_id is not an item of the review queue "
                "(labels answer one draw: its item ids carry the draw's tag)",
                relative,
                row,
                "item_id",
            )
        if item_id in seen:
            raise _error(
                "label-duplicate",
                f"{relative} row {row}: a second row for one item",
                relative,
                row,
                "item_id",
            )
        seen.add(item_id)
        a = _value(record.get("label_a") or "", scale, (relative, row, "label_a"), binary)
        b = _value(record.get("label_b") or "", scale, (relative, row, "label_b"), binary)
        if a is None or b is None:
            continue
        shown = dict(zip(items[item_id].shown, (a, b), strict=True))
        labelled[items[item_id].example_id] = (shown["candidate"], shown["baseline"])
    values = np.array(list(labelled.values()), dtype=np.float64).reshape(-1, 2)
    return HumanLabelSet(
        metric=queue.metric,
        baseline=queue.baseline,
        candidate=queue.candidate,
        example_ids=tuple(labelled),
        candidate_values=values[:, 0],
        baseline_values=values[:, 1],
        drawn=len(queue.items),
        missing=len(queue.items) - len(labelled),
        missing_ids=tuple(it.example_id for it in queue.items if it.example_id not in labelled),
    )
