"""Paired and cluster bootstrap of differences in means and quantiles, vectorised and seeded.

Method: the nonparametric bootstrap (Efron & Tibshirani 1993, ch. 6 and 13) with percentile
confidence bounds. Paired examples are resampled together, so every statistic of one resample
uses the same examples for candidate and baseline. With group labels, whole groups are resampled
(the cluster bootstrap, Davison & Hinkley 1997, §3.8); a group's examples move together.

Each resample is represented by integer counts over the resampling units, drawn as
``rng.integers`` indices and tallied with ``np.bincount``; means are then one matrix product per
chunk of resamples, which keeps 10^6 pairs × 2000 resamples within a fixed memory budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

__all__ = ["BootstrapResult", "Statistic", "paired_bootstrap", "weighted_lower_quantile"]

Statistic = Literal["mean", "p50", "p95"]
_QUANTILE = {"p50": 0.5, "p95": 0.95}


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap distribution of ``k`` statistics of one paired sample.

    Oriented bounds and p-values are computed from it by ``stats.onesided`` (their one home).

    Attributes:
        estimate: shape (k,), each statistic on the original sample.
        replicates: shape (B, k), each statistic on each resample.
        n: number of paired examples; n_units: number of resampled units (examples or groups).
    """

    estimate: np.ndarray
    replicates: np.ndarray
    n: int
    n_units: int


def weighted_lower_quantile(sorted_values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Inverted-CDF quantile of ``sorted_values`` under each row of integer ``weights``.

    Args:
        sorted_values: shape (n,), ascending.
        weights: shape (b, n), non-negative counts aligned with ``sorted_values``.
        q: the quantile in (0, 1).

    Returns:
        shape (b,): the smallest value whose cumulative weight reaches ``q`` × total weight
        (Hyndman & Fan 1996, definition 1).
    """
    cw = np.cumsum(weights, axis=1)
    target = q * cw[:, -1]
    idx = np.sum(cw < target[:, None], axis=1)
    return sorted_values[np.minimum(idx, len(sorted_values) - 1)]


class _WindowedQuantile:
    """One policy's quantile under resample weights, computed in a window of sorted positions.

    The cumulative weight at sorted position i concentrates around its expectation (standard
    deviation at most sqrt(sum of squared unit sizes)), so the quantile's position lies in a
    narrow window around q × n. The weight ranked below the window is one matrix-vector product;
    only the window is gathered and summed cumulatively. Rows whose target falls outside the
    window are recomputed over all positions, so the result equals ``weighted_lower_quantile``.
    """

    def __init__(
        self, values: np.ndarray, q: float, unit_of: np.ndarray | None, unit_sizes: np.ndarray
    ) -> None:
        n = values.size
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]
        self.q = q
        self.unit_of = unit_of
        self.unit_sizes = unit_sizes
        half = int(np.ceil(8.0 * np.sqrt(np.sum(unit_sizes**2)))) + 16
        centre = int(q * n)
        self.lo = max(0, centre - half)
        self.hi = min(n, centre + half)
        units_sorted = self.order if unit_of is None else unit_of[self.order]
        n_units = unit_sizes.size
        self.below = np.bincount(units_sorted[: self.lo], minlength=n_units).astype(np.float64)
        self.window_units = units_sorted[self.lo : self.hi]
        self.all_units = units_sorted

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """Quantile under each row of unit ``weights`` (b, n_units); returns shape (b,)."""
        target = self.q * (weights @ self.unit_sizes)
        below = weights @ self.below
        cw = np.cumsum(weights[:, self.window_units], axis=1) + below[:, None]
        idx = np.sum(cw < target[:, None], axis=1)
        out = self.sorted[np.minimum(self.lo + idx, self.sorted.size - 1)]
        outside = (below >= target) | (idx >= self.hi - self.lo)
        if np.any(outside):
            rows = np.flatnonzero(outside)
            out[rows] = weighted_lower_quantile(
                self.sorted, weights[rows][:, self.all_units], self.q
            )
        return out


def _validate(
    candidate: np.ndarray,
    baseline: np.ndarray,
    statistics: Sequence[Statistic],
    groups: np.ndarray | None,
    resamples: int,
) -> None:
    if candidate.ndim != 2 or candidate.shape != baseline.shape:
        raise ValueError(
            "candidate and baseline must both have shape (n, k); "
            f"got {candidate.shape} and {baseline.shape}"
        )
    n, k = candidate.shape
    if n < 2:
        raise ValueError(f"need at least 2 paired examples, got {n}")
    if len(statistics) != k:
        raise ValueError(
            f"need one statistic per column: {k} columns, {len(statistics)} statistics"
        )
    bad = [s for s in statistics if s not in get_args(Statistic)]
    if bad:
        raise ValueError(f"unknown statistics {bad}; expected mean, p50 or p95")
    if not (np.all(np.isfinite(candidate)) and np.all(np.isfinite(baseline))):
        raise ValueError("values must be finite; handle missing values before the bootstrap")
    if groups is not None and groups.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {groups.shape}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")


def paired_bootstrap(
    candidate: np.ndarray,
    baseline: np.ndarray,
    statistics: Sequence[Statistic],
    *,
    rng: np.random.Generator,
    resamples: int = 2000,
    groups: np.ndarray | None = None,
    chunk_cells: int = 4_000_000,
    max_workers: int = 2,
) -> BootstrapResult:
    """Bootstrap ``statistic(candidate) - statistic(baseline)`` per column over paired examples.

    For ``mean`` this is the mean paired difference (a ratio of totals under the cluster
    bootstrap); for ``p50``/``p95`` the difference of the two policies' inverted-CDF quantiles
    on the same resample. Signs are raw (candidate - baseline): callers orient them.

    Args:
        candidate, baseline: shape (n, k) finite values; row i of both is the same example.
        statistics: one of mean/p50/p95 per column.
        rng: the only source of randomness; one child generator is spawned per chunk, so the
            result does not depend on ``max_workers``.
        resamples: B, the number of bootstrap resamples.
        groups: shape (n,) cluster labels for a cluster bootstrap, or None to resample examples.
        chunk_cells: resamples × units drawn at once; bounds memory (about 16 bytes per cell
            per worker).
        max_workers: threads running chunks (numpy releases the GIL in its heavy kernels).

    Returns:
        A BootstrapResult with estimate (k,) and replicates (B, k).

    Raises:
        ValueError: shapes disagree, fewer than 2 pairs, non-finite values, unknown statistic.
    """
    candidate = np.asarray(candidate, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    _validate(candidate, baseline, statistics, groups, resamples)
    n, k = candidate.shape
    unit_of: np.ndarray | None
    if groups is None:
        unit_of = None
        n_units = n
        unit_sizes = np.ones(n)
    else:
        _, unit_of = np.unique(groups, return_inverse=True)
        n_units = int(unit_of.max()) + 1
        unit_sizes = np.bincount(unit_of, minlength=n_units).astype(np.float64)
    mean_cols = [j for j, s in enumerate(statistics) if s == "mean"]
    q_cols = [j for j, s in enumerate(statistics) if s != "mean"]

    delta = candidate[:, mean_cols] - baseline[:, mean_cols]
    if unit_of is None:
        unit_sums = delta
    else:
        unit_sums = np.zeros((n_units, len(mean_cols)))
        np.add.at(unit_sums, unit_of, delta)
    quantiles = [
        (
            _WindowedQuantile(candidate[:, j], _QUANTILE[statistics[j]], unit_of, unit_sizes),
            _WindowedQuantile(baseline[:, j], _QUANTILE[statistics[j]], unit_of, unit_sizes),
        )
        for j in q_cols
    ]

    estimate = np.empty(k)
    estimate[mean_cols] = delta.mean(axis=0)
    ones = np.ones((1, n_units))
    for j, (qc, qb) in zip(q_cols, quantiles, strict=True):
        estimate[j] = qc(ones)[0] - qb(ones)[0]

    replicates = np.empty((resamples, k))
    chunk = max(1, min(resamples, chunk_cells // max(n_units, 1)))
    starts = list(range(0, resamples, chunk))
    children = rng.spawn(len(starts))

    def run_chunk(i: int) -> None:
        start = starts[i]
        b = min(chunk, resamples - start)
        draws = children[i].integers(0, n_units, size=(b, n_units))
        weights = np.empty((b, n_units))
        for r in range(b):
            weights[r] = np.bincount(draws[r], minlength=n_units)
        del draws
        if mean_cols:
            totals = weights @ unit_sizes
            replicates[start : start + b, mean_cols] = (weights @ unit_sums) / totals[:, None]
        for j, (qc, qb) in zip(q_cols, quantiles, strict=True):
            replicates[start : start + b, j] = qc(weights) - qb(weights)

    workers = min(max_workers, len(starts))
    if workers <= 1:
        for i in range(len(starts)):
            run_chunk(i)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run_chunk, range(len(starts))))
    return BootstrapResult(estimate=estimate, replicates=replicates, n=n, n_units=n_units)
