"""Tests of bench/groundedness_spans.py: span labels of units and the per-response aggregates."""

from __future__ import annotations

import numpy as np
from bench import groundedness_spans as spans
from ragtruth import RagtruthRecord

SOURCE = "Alpha beta gamma delta. Epsilon zeta eta theta."
RESPONSE = "Alpha beta gamma. Omega kappa lambda."


def _record(labels: tuple[tuple[int, int], ...]) -> RagtruthRecord:
    return RagtruthRecord("1", "Summary", None, bool(labels), RESPONSE, "m", labels)


def test_units_inside_an_unsupported_span_are_positives() -> None:
    """Only the second sentence, and its tokens, overlap the span; features have their width."""
    start = RESPONSE.index("Omega")
    record = _record(((start, start + len("Omega kappa")),))
    sentences, tokens = spans.build_units(
        [record], {"1": spans.AlignedSource(SOURCE)}, lambda _: 1.0
    )
    assert sentences.y.tolist() == [False, True]
    assert tokens.y.tolist() == [False, False, False, True, True, False]
    assert sentences.x.shape == (2, len(spans.SENTENCE_FEATURES))
    assert tokens.x.shape == (6, len(spans.TOKEN_FEATURES))


def test_novel_sentence_scores_higher_than_copied_one() -> None:
    """A copied sentence has no novelty and a full match; a novel one the reverse."""
    source = spans.AlignedSource(SOURCE)
    copied = spans.sentence_features("Alpha beta gamma.", source, lambda _: 1.0)
    novel = spans.sentence_features("Omega kappa lambda.", source, lambda _: 1.0)
    names = spans.SENTENCE_FEATURES
    assert copied[names.index("novel")] == 0.0 and novel[names.index("novel")] == 1.0
    assert copied[names.index("sequence_gap")] < novel[names.index("sequence_gap")]
    assert copied[names.index("run_gap")] == 0.0


def test_aggregates_match_closed_forms() -> None:
    """max, mean and noisy-or per response; a response without units gets 0."""
    values = np.array([0.5, 0.2, 0.4])
    owner = np.array([0, 0, 1])
    assert spans.aggregate(values, owner, 3, "max").tolist() == [0.5, 0.4, 0.0]
    assert np.allclose(spans.aggregate(values, owner, 3, "mean"), [0.35, 0.4, 0.0])
    assert np.allclose(spans.aggregate(values, owner, 3, "noisy_or"), [1 - 0.5 * 0.8, 0.4, 0.0])
