"""Tests of bench/groundedness_embeddings.py that need no model: features from given vectors."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))  # the script imports its sibling groundedness_spans
emb = importlib.import_module("groundedness_embeddings")


def _unit(*rows: list[float]) -> np.ndarray:
    x = np.array(rows, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


SOURCE = (_unit([1, 0, 0], [0, 1, 0]), _unit([1, 0, 0], [0, 1, 0], [0, 0, 1]))


def test_sentence_equal_to_a_source_sentence_has_no_gap() -> None:
    """Its embedding and every word piece match the source: every gap is 0 but the two-best one
    (the other source sentence is orthogonal)."""
    u = _unit([1, 0, 0])[0]
    features, pair = emb._sentence_rows(u, _unit([1, 0, 0], [0, 0, 1]), SOURCE)
    assert features == [0.0, 0.5, 0.0, 0.0, 0.0]
    assert np.allclose(pair, np.concatenate([u * u, np.zeros(3)]))


def test_unmatched_word_piece_raises_min_gap_not_best_sentence_gap() -> None:
    """One word piece orthogonal to every source piece: min gap 1, mean gap 1/2."""
    u = _unit([0, 1, 0])[0]
    source = (SOURCE[0], _unit([1, 0, 0], [0, 1, 0]))
    features, _ = emb._sentence_rows(u, _unit([0, 1, 0], [0, 0, 1]), source)
    names = emb.SENT_FEATURES
    assert features[names.index("emb_gap")] == 0.0
    assert features[names.index("emb_gap2")] == 0.5
    assert features[names.index("tok_gap_mean")] == 0.5
    assert features[names.index("tok_gap_min")] == 1.0


def test_aggregate_gives_max_then_mean_per_response() -> None:
    """Response 0 owns values 0.2 and 0.6, response 2 owns 0.4; response 1 has none (0)."""
    values = np.array([[0.2], [0.6], [0.4]])
    out = emb._aggregate(values, np.array([0, 0, 2]), 3)
    assert out.tolist() == [[0.6, 0.4], [0.0, 0.0], [0.4, 0.4]]


class _WordTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


def test_packs_keep_whole_sentences_under_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sentences are packed in order and a pack never exceeds MAX_PACK word pieces."""
    monkeypatch.setattr(emb, "MAX_PACK", 5)
    packs = emb._packs("One two three. Four five. Six seven eight nine.", _WordTokenizer())
    assert packs == ["One two three. Four five.", "Six seven eight nine."]
