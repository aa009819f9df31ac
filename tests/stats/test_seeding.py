"""Seeded generators: the stream is a fixed function of the contract seed and the scope."""

from __future__ import annotations

import hashlib

import numpy as np

from ragwarrant.stats.seeding import make_rng


def test_stream_is_seed_and_sha256_of_scope():
    """The generator equals default_rng([seed, first 8 bytes of sha256(scope joined by US)])."""
    key = int.from_bytes(hashlib.sha256(b"cand\x1fconfirmatory\x1fm").digest()[:8], "big")
    expected = np.random.default_rng([7, key]).integers(0, 1 << 30, 5)
    actual = make_rng(7, "cand", "confirmatory", "m").integers(0, 1 << 30, 5)
    assert expected.tolist() == actual.tolist()
    assert make_rng(7, "cand", "x").integers(0, 1 << 30) != make_rng(7, "cand", "y").integers(
        0, 1 << 30
    )
