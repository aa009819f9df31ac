"""Evidence fingerprints of one look, and whether a later look's evidence extends an earlier one's.

A repeated look may only add examples: the earlier look's examples must all still be there, with
the same pairing (cluster and slice) and the same values. That is proved without keeping any
evidence value: each look keeps sorted 64-bit digests (BLAKE2b, ``hashlib``) of

- ``ids``: each decided example's id;
- ``keys``: (example id, its cluster's smallest example id, its slice), the pairing key;
- ``cells:<policy>/<metric>``: (pairing key, the value as read) of every decided example that
  has a row for that policy and metric.

The later evidence extends the earlier one when each earlier digest set is a subset of the later
one of the same name. A collision of two 64-bit digests among 10^6 cells has probability about
3e-8 (the birthday bound n^2 / 2^65), so a change goes unseen only by such a collision.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from ragwarrant.evidence.index import EvidenceIndex

Fingerprint = dict[str, np.ndarray]
"""Digest-set name → shape (n,) sorted unique uint64 digests."""

_SEP = "\x1f"


def _digests(texts: Sequence[str]) -> np.ndarray:
    out = np.fromiter(
        (
            int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            for t in texts
        ),
        dtype=np.uint64,
        count=len(texts),
    )
    return np.unique(out)


def fingerprint(index: EvidenceIndex, scope: np.ndarray, policies: Sequence[str]) -> Fingerprint:
    """The digest sets of the decided examples (``scope``) of ``policies``.

    Args:
        index: the evidence index.
        scope: shape (E,) bool, the examples the run decides on (its confirmatory scope).
        policies: the baseline and candidate policy ids.

    Returns:
        ``ids``, ``keys`` and one ``cells:<policy>/<metric>`` set per indexed column of
        ``policies`` (see the module docstring).
    """
    examples = np.flatnonzero(scope)
    ids = index.example_ids.astype(str)
    leader: dict[int, str] = {}  # cluster → its smallest example id
    for e in np.flatnonzero(index.group >= 0):
        g = int(index.group[e])
        leader[g] = min(leader.get(g, ids[e]), ids[e])
    keys = [
        _SEP.join(
            (
                ids[e],
                leader.get(int(index.group[e]), "") if index.group[e] >= 0 else "",
                "" if index.slice[e] is None else str(index.slice[e]),
            )
        )
        for e in examples
    ]
    key_of = dict(zip(examples.tolist(), keys, strict=True))
    out: Fingerprint = {
        "ids": _digests([str(i) for i in index.example_ids[examples]]),
        "keys": _digests(keys),
    }
    for (policy, metric), col in sorted(index.columns.items()):
        if policy not in policies:
            continue
        rows = examples[col.has_row[examples]]
        out[f"cells:{policy}/{metric}"] = _digests(
            [f"{key_of[int(e)]}{_SEP}{float(col.raw[e])!r}" for e in rows]
        )
    return out


def encode_fingerprint(fp: Mapping[str, np.ndarray]) -> dict[str, str]:
    """Name → base64 of the little-endian uint64 digests (JSON-safe, deterministic)."""
    return {k: base64.b64encode(fp[k].astype("<u8").tobytes()).decode() for k in sorted(fp)}


def decode_fingerprint(encoded: Mapping[str, str]) -> Fingerprint:
    """Inverse of ``encode_fingerprint``.

    Raises:
        ValueError: a value is not base64 of a whole number of 8-byte digests.
    """
    out: Fingerprint = {}
    for k, v in encoded.items():
        raw = base64.b64decode(v, validate=True)
        if len(raw) % 8:
            raise ValueError(f"digest set {k!r} is not a whole number of 8-byte digests")
        out[k] = np.frombuffer(raw, dtype="<u8").astype(np.uint64)
    return out


_SHRANK = {
    "ids": "{n} of the earlier look's {total} examples are gone (the evidence shrank)",
    "keys": "{n} of the earlier look's {total} examples changed their pairing (cluster or slice)",
}
"""The first two checks of ``extension_problem``, in order; then every ``cells:`` set."""


def extension_problem(
    earlier: Mapping[str, np.ndarray], later: Mapping[str, np.ndarray]
) -> str | None:
    """Why ``later`` does not extend ``earlier``, or None when it does.

    Returns:
        The first problem found, in this order: examples gone, pairing changed, values changed
        (or rows removed) of a (policy, metric); counts only, never an id or a value.
    """
    none = np.empty(0, np.uint64)
    for name in [*_SHRANK, *sorted(k for k in earlier if k.startswith("cells:"))]:
        kept = np.isin(earlier.get(name, none), later.get(name, none), assume_unique=True)
        n = int(np.count_nonzero(~kept))  # digests of the earlier look missing from the later
        if n:
            total = int(earlier[name].size)
            if name in _SHRANK:
                return _SHRANK[name].format(n=n, total=total)
            what = name.removeprefix("cells:")
            return f"{n} of the earlier look's {total} values of {what} were changed or removed"
    return None


def same_evidence(earlier: Mapping[str, np.ndarray], later: Mapping[str, np.ndarray]) -> bool:
    """Whether the two fingerprints hold exactly the same digest sets."""
    return set(earlier) == set(later) and all(np.array_equal(earlier[k], later[k]) for k in earlier)


def shared_examples(earlier: Mapping[str, np.ndarray], later: Mapping[str, np.ndarray]) -> int:
    """How many of the earlier look's decided examples (``ids`` digests) ``later`` decides too."""
    before, now = earlier.get("ids"), later.get("ids")
    if before is None or now is None:
        return 0
    return int(np.count_nonzero(np.isin(before, now, assume_unique=True)))
