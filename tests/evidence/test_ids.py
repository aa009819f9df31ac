"""Example ids spelled two ways: loose forms and plain ids (``evidence.ids``)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa

from ragwarrant.evidence.ids import (
    PY_WHITESPACE,
    id_spellings,
    id_variants,
    loose_example_id,
    plain_example_ids,
)


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


def _spellings_by_definition(ids: list[str]) -> tuple[int, int, tuple[str, str] | None]:
    """Padding and spelling variants counted one id at a time, as ``id_spellings`` defines them."""
    first: dict[str, str] = {}
    variants = []
    for e in ids:
        key = unicodedata.normalize("NFC", e).strip().casefold()
        if first.setdefault(key, e) != e:
            variants.append((first[key], e))
    padded = sum(e != e.strip() for e in ids)
    return padded, len(variants), variants[0] if variants else None


def test_id_spellings_count_as_the_definition_for_ascii_and_other_ids():
    """Arrow's ASCII folding and the Python path for other ids count padding and variants as
    ``str.strip``, NFC and ``casefold`` do, naming the first pair."""
    ascii_ids = ["ex1", "EX1", " ex2", "ex2\x1c", "Ex1", "ex3", "ex2", "\tex4 "]
    assert id_spellings(pa.array(ascii_ids)) == (3, 4, ("ex1", "EX1"))
    other = ["caf\u00e9", "CAFE\u0301", "\u3000x", "X", "\u00df", "SS", "ss"]
    for ids in (ascii_ids, other, ["a", "b"], ["Q1"]):
        assert id_spellings(pa.array(ids)) == _spellings_by_definition(ids), ids
    assert id_spellings(pa.array(["q1", "q2"])) == (0, 0, None)


def test_id_variants_pairs_each_later_id_with_the_first_of_its_loose_form():
    """Ids equal loosely to an earlier one are counted and paired with that earlier id, in order."""
    ids = pa.array(["q1", "Q1 ", "q2", "\u200bq1", "Q2", "q3"])
    assert id_variants(ids) == (3, [("q1", "Q1 "), ("q1", "\u200bq1"), ("q2", "Q2")])
    assert id_variants(pa.array(["q1", "q2"])) == (0, [])
    assert id_variants(pa.array(["Q1", "q2"])) == (0, [])


def test_written_out_white_space_is_every_character_str_strip_removes():
    """The id trim's character set is exactly the code points ``str.isspace`` accepts."""
    expected = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    assert sorted(PY_WHITESPACE) == sorted(expected)
    assert len(set(PY_WHITESPACE)) == len(PY_WHITESPACE)
