"""Deterministic corroborators: checks that need no model and can second-guess an LLM judge.

``lexical`` scores how much of a response is lexically grounded in its context (coverage,
weakest sentence, hybrid); ``calibration`` calibrates and loads the versioned thresholds of the
gates built on those scores.
"""

from __future__ import annotations

from ragwarrant.corroborators.calibration import (
    DEFAULT_CALIBRATION,
    LexicalCalibration,
    calibrate_threshold,
    load_calibration,
)
from ragwarrant.corroborators.lexical import (
    ContextIndex,
    LexicalScores,
    index_context,
    score_response,
)

__all__ = [
    "DEFAULT_CALIBRATION",
    "ContextIndex",
    "LexicalCalibration",
    "LexicalScores",
    "calibrate_threshold",
    "index_context",
    "load_calibration",
    "score_response",
]
