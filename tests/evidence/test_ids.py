"""Example ids spelled two ways: loose forms and plain ids (``evidence.ids``)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa

from ragwarrant.evidence.ids import loose_example_id, plain_example_ids


def test_loose_example_id_folds_case_white_space_and_invisible_characters():
    """'Q1 ', '\u200bq1' and the full-width 'ｑ１' are all 'q1' loosely; inner spaces collapse."""
    assert {loose_example_id(x) for x in ("q1", "Q1 ", "\u200bq1", "\uff51\uff11")} == {"q1"}
    assert loose_example_id("a  b") == "a b"


def test_plain_ids_are_exactly_those_that_are_their_own_loose_form_and_spelling():
    """``plain_example_ids`` is True only when every id equals its loose form, its trimmed and
    casefolded spelling (so the variant checks it skips would find nothing); for ASCII ids,
    exactly then (a non-ASCII id always takes the full checks)."""
    alphabet = ["a", "z", "0", "-", "_", "~", "A", "Q", " ", "\t", "\x1c", "\x7f", "é", "\u200b"]
    rng = np.random.default_rng(4)
    for _ in range(300):
        ids = ["".join(rng.choice(alphabet[:6], 3)) for _ in range(4)]
        if rng.random() < 0.6:
            ids[int(rng.integers(4))] += str(rng.choice(alphabet))
        arr = pa.array(ids, pa.string()).slice(1)  # an offset into the buffers
        own = all(
            loose_example_id(x) == x == unicodedata.normalize("NFC", x).strip().casefold()
            for x in ids[1:]
        )
        expected = own and all(x.isascii() for x in ids[1:])
        assert plain_example_ids(arr) == expected, ids
        assert plain_example_ids(arr.cast(pa.large_string())) == expected
    assert plain_example_ids(pa.array(["a", None])) is False
    assert plain_example_ids(pa.array([], pa.string())) is True
