"""The largest value magnitude the statistics can aggregate without float64 overflow.

Every statistic here is built from paired deltas ``d = candidate − baseline`` (``|d| <= 2M`` when
every value has ``|x| <= M``), their sums over up to ``n`` examples (``<= 2Mn``) and sums of
squares of such sums (``<= (2Mn)^2``, since a sum of squares of non-negative terms is at most the
square of their sum). Capping ``M`` at ``sqrt(float64 max) / (4n)`` keeps the largest of them at a
quarter of the float64 range, leaving room for the small constant factors (``g / (g − 1)``, a
mean's weights) applied on top. Beyond it a variance overflows to ``inf`` (numpy warns) and a
bound computed from it contradicts the estimate; the gates refuse such values instead
(``gates.hard.gate_value_range``).
"""

from __future__ import annotations

import math

import numpy as np

_SQRT_MAX = math.sqrt(float(np.finfo(np.float64).max))  # about 1.34e154


def max_safe_magnitude(n_examples: int) -> float:
    """The largest ``|x|`` of a metric value that ``n_examples`` paired examples can carry.

    Args:
        n_examples: the number of examples aggregated (at least 1 is assumed).

    Returns:
        ``sqrt(finfo(float64).max) / (4 · max(n_examples, 1))``, e.g. 1.1e152 for 30 examples.
    """
    return _SQRT_MAX / (4.0 * max(int(n_examples), 1))
