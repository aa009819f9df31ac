"""bench/bench_lexical.py's vectorised batch floor counts what its per-response floor counts."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def bench_lexical():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_lexical
    finally:
        sys.path.remove(str(REPO / "bench"))
    return bench_lexical


def test_arrow_batch_floor_equals_split_floor(bench_lexical):
    """Unsupported whitespace tokens per response: the pyarrow batch gives the str.split counts."""
    examples = bench_lexical.synthetic_examples(60, np.random.default_rng(1))
    examples[7] = ("x", "Ünïcode ÉTÉ words\u00a0here", ("ünïcode été", "Words"))
    expected = [bench_lexical.split_floor(r, c) for _, r, c in examples]
    assert expected == bench_lexical.arrow_batch_floor(examples).tolist()
    assert sum(expected) > 0
