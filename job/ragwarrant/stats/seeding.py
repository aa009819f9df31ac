"""Seeded random generators: one stream per (contract seed, scope), independent of run order."""

from __future__ import annotations

import hashlib

import numpy as np


def make_rng(seed: int, *scope: str) -> np.random.Generator:
    """A generator seeded by the contract's seed and a stable hash of ``scope``.

    The scope strings are joined by the ASCII unit separator and hashed with SHA-256; the first
    8 bytes (big-endian) and the seed form numpy's ``SeedSequence`` entropy, so the stream of one
    test does not depend on which other tests run or in which order.
    """
    digest = hashlib.sha256("\x1f".join(scope).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])
