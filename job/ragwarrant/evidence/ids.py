"""Example ids spelled two ways: the loose form two spellings of one example share, and the
count of ids equal to an earlier one after it (``id_variants``: the index counts them, the hard
gate ``gates.hard.gate_duplicates`` fails on them), and the exact spellings that only white
space at either end, letter case or NFC/NFD tell apart (``id_spellings``: warned about by
``evidence.scope.example_id_checks``). An id that is printable ASCII without capitals or white
space (``plain_example_ids``) is its own loose form and spelling: the checks are skipped on such
ids.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._integrity import is_invisible


def loose_example_id(example_id: str) -> str:
    """An example id compared loosely: NFKC, casefolded, invisible characters removed, white
    space trimmed and collapsed. Two ids with the same loose form are one example written two
    ways (``'q1'``, ``'Q1 '``, ``'\u200bq1'``)."""
    if example_id.isascii() and example_id.isprintable():
        return " ".join(example_id.lower().split())
    text = unicodedata.normalize("NFKC", example_id).casefold()
    return " ".join("".join(ch for ch in text if not is_invisible(ch)).split())


_NOT_PLAIN = np.ones(256, dtype=bool)
_NOT_PLAIN[0x21:0x7F] = False  # printable ASCII but the space ...
_NOT_PLAIN[ord("A") : ord("Z") + 1] = True  # ... and without capitals
"""Bytes that may make an id's loose form (or trimmed, case-folded spelling) differ from it:
white space, control characters, capitals and every byte of a non-ASCII character."""


def plain_example_ids(ids: pa.Array) -> bool:
    """Whether every id is printable ASCII without white space or capital letters.

    Such an id is its own ``loose_example_id``, its own NFC-normalised, trimmed and casefolded
    spelling, and has no white space to pad it, so distinct plain ids have no variants: the
    vectorised variant checks can be skipped. One pass over the ids' UTF-8 bytes (about 5 ms
    for 10^6 ids, against 0.5-1 s for the string kernels of the checks).

    Args:
        ids: shape (n,) Arrow strings (``string`` or ``large_string``); any other type, or a
            null, answers False (the caller then runs the full check).
    """
    large = pa.types.is_large_string(ids.type)
    if ids.null_count or not (large or pa.types.is_string(ids.type)):
        return False
    _, offsets_buffer, data = ids.buffers()
    if len(ids) == 0 or data is None:
        return True
    width = np.dtype(np.int64 if large else np.int32)
    offsets = np.frombuffer(
        offsets_buffer, dtype=width, count=len(ids) + 1, offset=ids.offset * width.itemsize
    )
    text = np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]]
    return not _NOT_PLAIN[text].any()


def id_variants(example_ids: pa.Array) -> tuple[int, list[tuple[str, str]]]:
    """(count, first 1000 pairs) of example ids equal to an earlier one after the loose form.

    ``example_ids`` are distinct (a dictionary), so plain ids (``plain_example_ids``) have none.
    Loose forms are computed with Arrow (exact for ASCII-printable ids; the others take
    ``loose_example_id`` one by one); each pair is (the first id of a loose form, a later one).
    """
    if plain_example_ids(example_ids):
        return 0, []
    ids = example_ids.cast(pa.string())
    loose = pc.replace_substring_regex(pc.utf8_trim_whitespace(pc.utf8_lower(ids)), r"\s+", " ")
    plain = pc.and_(pc.string_is_ascii(ids), pc.utf8_is_printable(ids)).to_numpy(
        zero_copy_only=False
    )
    if not plain.all():
        forms = np.asarray(loose.to_pylist(), dtype=object)
        odd = np.flatnonzero(~plain)
        forms[odd] = [loose_example_id(str(ids[int(i)].as_py())) for i in odd]
        loose = pa.array(forms.tolist(), pa.string())
    return _repeats(loose, ids, 1000)


#: Every character ``str.strip()`` removes (``str.isspace``), so Arrow trims ids as Python does.
#: Written out: computing it walks all 1.1 million code points, about 0.1 s of every cold start
#: (issue 13); ``tests/evidence/test_ids.py`` checks it against ``str.isspace``.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def id_spellings(example_ids: pa.Array) -> tuple[int, int, tuple[str, str] | None]:
    """How many ids are padded with white space, how many are spelling variants, the first pair.

    A spelling variant is an id equal to an earlier one once NFC-normalised, trimmed
    (``str.strip``) and casefolded; the pair is (that earlier id, the first such id).

    Args:
        example_ids: shape (E,) distinct Arrow strings (the index's ``id_array``).

    Returns:
        (padded, variants, first pair or None); (0, 0, None) for plain ids without a pass.
        ASCII ids are folded with Arrow (NFC is then the identity and ``casefold`` is ASCII
        lower-casing); any non-ASCII id makes every id take the definition in Python.
    """
    if plain_example_ids(example_ids):
        return 0, 0, None
    ids = example_ids
    trimmed = pc.utf8_trim(ids, characters=PY_WHITESPACE)
    padded = int(pc.sum(pc.not_equal(ids, trimmed)).as_py() or 0)
    if pc.all(pc.string_is_ascii(ids)).as_py():
        keys = pc.ascii_lower(trimmed)
    else:
        keys = pa.array(
            [unicodedata.normalize("NFC", e).strip().casefold() for e in ids.to_pylist()],
            pa.string(),
        )
    variants, pairs = _repeats(keys, ids, 1)
    return padded, variants, pairs[0] if pairs else None


def _repeats(keys: pa.Array, ids: pa.Array, shown: int) -> tuple[int, list[tuple[str, str]]]:
    """How many ``keys`` equal an earlier one's, and the first ``shown`` of them as (the id of
    the key's first position, the id of the later one), in order."""
    codes = pc.dictionary_encode(keys).indices.to_numpy()
    _, first_of_code = np.unique(codes, return_index=True)
    is_first = np.zeros(codes.size, dtype=bool)
    is_first[first_of_code] = True
    later = np.flatnonzero(~is_first)
    earlier = first_of_code[codes[later[:shown]]]
    pairs = [
        (str(ids[int(j)].as_py()), str(ids[int(i)].as_py()))
        for i, j in zip(later[:shown], earlier, strict=True)
    ]
    return int(later.size), pairs
