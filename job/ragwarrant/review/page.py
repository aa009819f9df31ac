"""The review queue as a reviewer sees it: a CSV and a self-contained offline HTML page.

Both show, per item, the question, the retrieved contexts and the two outputs as A and B (the
policies hidden, ``review.queue``), with empty ``label_a``/``label_b`` for the reviewer. The
CSV filled in is a labels file the job reads (``review.labels``); the page, opened from disk
with no network, writes the same CSV with its "Download labels" button.

Every text is shown through ``display.visible`` keeping line feeds: control characters (ESC)
and format characters (bidirectional overrides U+202A-U+202E and isolates U+2066-U+2069,
zero-width characters) appear as escapes such as ``\\x1b`` and ``\\u202e``. A CSV cell starting
with ``=``, ``+``, ``-``, ``@``, tab or carriage return is prefixed with ``'`` so a spreadsheet
does not run it as a formula (OWASP, "CSV Injection").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from ragwarrant.corroborators.corroborate import TextRecord
from ragwarrant.display import template, visible
from ragwarrant.review.labels import LABEL_COLUMNS
from ragwarrant.review.queue import ReviewQueue

CSV_COLUMNS = ("item_id", "question", "contexts", "output_a", "output_b", "label_a", "label_b")
_CONTEXT_SEPARATOR = "\n---\n"
#: First characters a spreadsheet reads as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class ReviewRow:
    """One blinded item: its id, question, contexts and the two outputs, A and B."""

    item_id: str
    question: str
    contexts: str
    output_a: str
    output_b: str


def review_rows(queue: ReviewQueue, texts: Mapping[tuple[str, str], TextRecord]) -> list[ReviewRow]:
    """The queue's items with their texts; an absent text is an empty string.

    Args:
        texts: (policy id, example id) → its texts (``corroborators.corroborate.text_records``).
    """
    policy = {"candidate": queue.candidate, "baseline": queue.baseline}
    empty = TextRecord(None, None, None, ())
    shown = partial(visible, keep="\n")  # control and format characters escaped, line feeds kept
    rows = []
    for item in queue.items:
        a, b = (texts.get((policy[role], item.example_id), empty) for role in item.shown)
        question = a.question or b.question or ""
        contexts = a.contexts or b.contexts or ()
        rows.append(
            ReviewRow(
                item.item_id,
                shown(question),
                _CONTEXT_SEPARATOR.join(map(shown, contexts)),
                shown(a.response or ""),
                shown(b.response or ""),
            )
        )
    return rows


def render_csv(rows: list[ReviewRow]) -> str:
    """The review CSV: ``CSV_COLUMNS``, labels empty, one row per item in queue order.

    A text cell starting with a formula character is prefixed with ``'`` (``_FORMULA_START``).
    """
    assert LABEL_COLUMNS[0] == CSV_COLUMNS[0] and set(LABEL_COLUMNS) <= set(CSV_COLUMNS)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        cells = (r.question, r.contexts, r.output_a, r.output_b)
        writer.writerow(
            [r.item_id, *("'" + c if c.startswith(_FORMULA_START) else c for c in cells), "", ""]
        )
    return out.getvalue()


def render_html(queue: ReviewQueue, rows: list[ReviewRow], scale: tuple[float, float]) -> str:
    """The offline review page (Jinja2, autoescaped; no script or style loaded from elsewhere).

    Args:
        scale: the metric's (low, high); the label inputs accept values in it.
    """
    page = template("review.html.j2", autoescape=True, keep_trailing_newline=False)
    return page.render(queue=queue, rows=rows, low=scale[0], high=scale[1])
