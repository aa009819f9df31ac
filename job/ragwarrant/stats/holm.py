"""Holm's step-down procedure (Holm 1979, Scand. J. Statist. 6:65–70)."""

from __future__ import annotations

import numpy as np


def holm_levels(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Return the Holm level each hypothesis is tested at, shape (m,).

    The hypothesis with the i-th smallest p-value (i = 0..m-1) is tested at alpha / (m - i);
    ties keep their input order.
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    levels = np.empty(m)
    levels[order] = alpha / (m - np.arange(m))
    return levels
