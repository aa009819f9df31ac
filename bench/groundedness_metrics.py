"""Benchmark metrics for a flagging gate: F1 gain over a floor (cluster bootstrap), and AUC.

- ``gain_interval``: the percentile bootstrap interval (Efron & Tibshirani, *An Introduction to the
  Bootstrap*, 1993, ch. 13) of ``F1(gate) - F1(always-flag)``, resampling whole clusters (sources)
  with replacement (the cluster bootstrap; Davison & Hinkley, *Bootstrap Methods and their
  Application*, 1997, §3.8), so the six responses to one source move together. The flags are
  held fixed: the interval covers sampling of sources, not the refitting of thresholds.
- ``within_group_auc``: the ROC AUC computed only over (positive, negative) pairs from the same
  group (generator), i.e. the Mann-Whitney U statistic summed over groups divided by the number of
  within-group pairs (Hanley & McNeil, Radiology 143(1), 1982, for AUC = U / (n1 n0); ties count
  one half). A score that only recognises which model wrote a response scores 0.5 here.

Pure numpy: arrays in, frozen values out; ``rng`` passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True, slots=True)
class GainInterval:
    """F1 gain of a gate over the always-flag floor, with its bootstrap interval.

    Attributes:
        gain: ``F1(gate) - F1(always-flag)`` on the observed data.
        lower, upper: the two-sided percentile interval at ``confidence``.
        confidence: e.g. 0.95.
        n_resamples: bootstrap resamples.
        n_clusters: clusters (sources) resampled.
    """

    gain: float
    lower: float
    upper: float
    confidence: float
    n_resamples: int
    n_clusters: int


def _f1(tp: np.ndarray, flagged: np.ndarray, positive: np.ndarray) -> np.ndarray:
    denominator = flagged + positive
    return np.divide(2.0 * tp, denominator, out=np.zeros_like(denominator), where=denominator > 0)


def gain_interval(
    flags: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    rng: np.random.Generator,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> GainInterval:
    """Cluster-bootstrap interval of a gate's response-level F1 gain over always-flag.

    Args:
        flags: shape ``(n,)`` bool, the gate's flags.
        labels: shape ``(n,)`` bool, True = unsupported.
        clusters: shape ``(n,)``, the cluster (source) of each response.
        rng: the random generator (seeded by the caller).
        n_resamples: bootstrap resamples, >= 100.
        confidence: two-sided level in (0, 1).

    Returns:
        The frozen ``GainInterval``.

    Raises:
        ValueError: when shapes differ, ``n == 0``, ``n_resamples < 100`` or ``confidence`` is
            outside (0, 1).
    """
    f = np.asarray(flags, dtype=bool)
    y = np.asarray(labels, dtype=bool)
    c = np.asarray(clusters)
    if f.ndim != 1 or f.shape != y.shape or f.shape != c.shape or f.size == 0:
        raise ValueError(
            "flags, labels, clusters must be 1-D of one non-zero length; "
            f"got {f.shape}, {y.shape}, {c.shape}"
        )
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, found {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), found {confidence}")
    _, code = np.unique(c, return_inverse=True)
    k = int(code.max()) + 1
    per_cluster = np.column_stack(
        [
            np.bincount(code, weights=f & y, minlength=k),
            np.bincount(code, weights=f, minlength=k),
            np.bincount(code, weights=y, minlength=k),
            np.bincount(code, minlength=k).astype(np.float64),
        ]
    )
    draws = rng.integers(0, k, size=(n_resamples, k))
    weights = np.zeros((n_resamples, k))
    np.add.at(weights, (np.arange(n_resamples)[:, None], draws), 1.0)
    sums = np.vstack([per_cluster.sum(axis=0), weights @ per_cluster])
    gains = _f1(sums[:, 0], sums[:, 1], sums[:, 2]) - _f1(sums[:, 2], sums[:, 3], sums[:, 2])
    alpha = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(gains[1:], [alpha, 1.0 - alpha])
    return GainInterval(float(gains[0]), float(lower), float(upper), confidence, n_resamples, k)


def within_group_auc(scores: ArrayLike, labels: ArrayLike, groups: ArrayLike) -> float | None:
    """ROC AUC over (positive, negative) pairs that share a group; higher score = positive.

    Args:
        scores: shape ``(n,)`` finite.
        labels: shape ``(n,)`` bool.
        groups: shape ``(n,)``, e.g. the generator of each response.

    Returns:
        ``sum_g U_g / sum_g n1_g n0_g`` in [0, 1], ties counting one half; None when no group has
        both a positive and a negative.

    Raises:
        ValueError: when shapes differ.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    g = np.asarray(groups)
    if s.ndim != 1 or s.shape != y.shape or s.shape != g.shape:
        raise ValueError(
            f"scores, labels, groups must be 1-D of one length; got {s.shape}, {y.shape}, {g.shape}"
        )
    u_total = pairs = 0.0
    for group in np.unique(g):
        mask = g == group
        n1 = int(y[mask].sum())
        n0 = int(mask.sum()) - n1
        if n1 == 0 or n0 == 0:
            continue
        from scipy.stats import rankdata  # here: scipy.stats costs ~1 s to import (issue 13)

        ranks = rankdata(s[mask])
        u_total += float(ranks[y[mask]].sum()) - n1 * (n1 + 1) / 2.0
        pairs += n1 * n0
    return u_total / pairs if pairs else None
