"""Example ids spelled two ways: the loose form two spellings of one example share, and the
count of ids equal to an earlier one after it (``id_variants``: the index counts them, the hard
gate ``gates.hard.gate_duplicates`` fails on them). An id that is printable ASCII without
capitals or white space (``plain_example_ids``) is its own loose form and spelling: the checks
(these and ``evidence.scope.example_id_checks``) are skipped on such ids.
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


def _loose_all_distinct(example_ids: pa.Array) -> bool:
    """Whether the loose forms are all distinct (vectorised; exact for ASCII-printable ids, and
    non-ASCII ids take ``loose_example_id`` one by one)."""
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
    return pc.count_distinct(loose).as_py() == len(ids)


def id_variants(example_ids: pa.Array) -> tuple[int, list[tuple[str, str]]]:
    """(count, first 1000 pairs) of example ids equal to an earlier one after the loose form.

    ``example_ids`` are distinct (a dictionary), so plain ids (``plain_example_ids``) have none.
    """
    if plain_example_ids(example_ids) or _loose_all_distinct(example_ids):
        return 0, []
    first: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    count = 0
    for raw in (str(x) for x in example_ids.to_pylist()):
        key = loose_example_id(raw)
        seen = first.setdefault(key, raw)
        if seen != raw:
            count += 1
            if len(pairs) < 1000:
                pairs.append((seen, raw))
    return count, pairs
