"""The deterministic features of one response, for the combiner and the benchmark.

One vector per response, every entry finite, in ``FEATURES`` order:

- the lexical scores (``lexical.score_response``): ``coverage``, ``weakest_sentence``,
  ``numeric``, ``hybrid``;
- ``type_coverage``: share of the response's *distinct* content tokens absent from the context;
- ``log_unsupported``, ``log_numeric_missing``: ``log1p`` of the unsupported content tokens and of
  the numeric tokens absent from the context (counts, not shares: a long answer with three
  invented figures is worse than a short one with one);
- ``log_content``: ``log1p`` of the response's content tokens (its length);
- ``honest_refusal``: 1.0 when the response only declines to answer (``checks.is_honest_refusal``);
- the record checks (``records.check_record``; 0.0 without a structured record), each as
  ``log1p`` of its count: ``record_false_attribute``, ``record_negated_true_attribute``,
  ``record_null_attribute``, ``record_hours``, ``record_stars``, and ``record_conflict_share``
  (conflicts per sentence).

Pure: strings in, a numpy vector out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragwarrant.corroborators.checks import is_honest_refusal
from ragwarrant.corroborators.lexical import (
    STOP_WORDS,
    ContextIndex,
    index_context,
    score_response,
    tokenize,
)
from ragwarrant.corroborators.records import StructuredRecord, check_record

FEATURES: tuple[str, ...] = (
    "coverage", "weakest_sentence", "numeric", "hybrid", "type_coverage", "log_unsupported",
    "log_numeric_missing", "log_content", "honest_refusal", "record_false_attribute",
    "record_negated_true_attribute", "record_null_attribute", "record_hours", "record_stars",
    "record_conflict_share",
)  # fmt: skip
"""Feature names, in vector order."""

LENGTH_FEATURES: tuple[str, ...] = ("log_unsupported", "log_numeric_missing", "log_content")
"""Features that grow with the response's length: counts, not shares. Response length partly
recognises the generator on RAGTruth (issue 15), so a combiner meant to rank responses *within*
one generator leaves them out."""

CONTENT_FEATURES: tuple[str, ...] = tuple(f for f in FEATURES if f not in LENGTH_FEATURES)
"""``FEATURES`` without ``LENGTH_FEATURES``: shares, flags and per-sentence rates only."""


def response_features(
    response: str,
    context: ContextIndex | Sequence[str],
    record: StructuredRecord | None = None,
) -> np.ndarray:
    """Compute the ``FEATURES`` vector of one response.

    Args:
        response: the generated text.
        context: the context passages or their ``ContextIndex``.
        record: the context's structured record (``records.parse_record``), or None.

    Returns:
        Shape ``(len(FEATURES),)``, all finite.
    """
    index = context if isinstance(context, ContextIndex) else index_context(context)
    lexical = score_response(response, index)
    checks = check_record(response, record) if record is not None else None
    types = {t for t in tokenize(response) if t not in STOP_WORDS}
    return np.array(
        [
            lexical.coverage,
            lexical.weakest_sentence,
            lexical.numeric,
            lexical.hybrid,
            sum(1 for t in types if t not in index.tokens) / len(types) if types else 0.0,
            math.log1p(lexical.n_unsupported),
            math.log1p(lexical.n_numeric_missing),
            math.log1p(lexical.n_content),
            1.0 if is_honest_refusal(response) else 0.0,
            *(math.log1p(c) for c in (checks.counts if checks else (0, 0, 0, 0, 0))),
            0.0 if checks is None else checks.conflicts_per_sentence,
        ],
        dtype=np.float64,
    )
