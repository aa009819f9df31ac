"""Paired and cluster bootstrap of differences in means and quantiles: one joint resample.

Method: the nonparametric bootstrap (Efron & Tibshirani 1993, ch. 6 and 13) with percentile
confidence bounds. Paired examples are resampled together, so every statistic of one resample
uses the same examples for candidate and baseline. With group labels, whole groups are resampled
(the cluster bootstrap, Davison & Hinkley 1997, §3.8); a group's examples move together.

A resample is a weight per resampling unit (example or group), shared by every column (a
metric, or a metric inside a protected slice), so joint tests (the intersection-union test of a
candidate) see joint replicates. ``joint_bootstrap`` reads in four steps:

1. validate the arguments (``_validate``) and plan the per-unit sums (``stats._plan.SumPlan``);
2. draw the weights, B rows of one weight per unit (``_weights``), in chunks, each from a child
   generator spawned from ``rng`` (so threads or chunk order never change a result);
3. take the weighted sums each statistic is a function of (``replicates``): a mean is
   estimate + sum(w * (delta - estimate)) / sum(w * rows) over the column's units (a ratio of
   totals under the cluster bootstrap; centred for accuracy); a quantile is the weighted
   inverted-CDF quantile of each policy's values, each row weighted by its unit's weight;
4. return a frozen ``BootstrapResult``.

The weights follow one of three schemes, recorded in ``BootstrapResult.method``:

- ``multinomial``: counts of G draws with replacement among G units (Efron 1979), for
  G <= ``MULTINOMIAL_MAX_UNITS``.
- ``counts over bins``: when only means are asked and the units take at most
  ``BINS_MAX_LEVELS`` distinct rows of sums (binary or Likert deltas, equal cluster sizes),
  units with the same row are exchangeable, so the multinomial counts over the distinct rows,
  ``rng.multinomial(G, share of each row)``, give exactly the multinomial bootstrap's
  distribution at a cost independent of G.
- ``half-sampling``: for larger G, weights 2 * Bernoulli(1/2) per unit (mean 1, variance 1, as
  the multinomial's), drawn as the bits of ``rng.bytes``. It is an exchangeable weighted
  bootstrap (Præstgaard & Wellner 1993, Ann. Probab. 21:2053–2086, Theorem 2.1), first-order
  equivalent to Efron's bootstrap for means and quantiles, like the Poisson(1) weights of
  Hanley & MacGibbon (2006, Comput. Methods Programs Biomed. 83:57–62).

Above ``MULTINOMIAL_MAX_UNITS`` units steps 2 and 3 run in ``stats._scale.replicates``, the
same computation with bit-packed weights, float32 products and worker threads: same seed, same
weights; quantiles equal, means equal up to float32 rounding of the products (``_scale``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

import numpy as np
from numpy.typing import ArrayLike

from ragwarrant.stats import _scale
from ragwarrant.stats._plan import QUANTILE, Column, Statistic, SumPlan

MULTINOMIAL_MAX_UNITS = 20_000
"""Above this many resampled units the weights are half-sampling weights (module docstring)."""
BINS_MAX_LEVELS = 256
"""At most this many distinct unit rows: exact multinomial counts over bins."""
HALF_SAMPLING_CHUNK = 256
"""Resamples per child generator under half-sampling (the multinomial: ``chunk_cells // G``)."""


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap distribution of ``k`` statistics of one paired sample.

    Oriented bounds and p-values are computed from it by ``stats.onesided`` (their one home).

    Attributes:
        estimate: shape (k,), each statistic on the original sample.
        replicates: shape (B, k), each statistic on each resample (all columns share it).
        n: number of paired examples (rows); n_units: number of resampled units (examples or
            groups) over all columns.
        method: the resampling scheme (``multinomial``, ``multinomial, counts over V bins`` or
            ``half-sampling 0/2 weights``), recorded in each gate's method.
        column_n: shape (k,), rows present per column; column_units: shape (k,), units with a
            row present per column.
    """

    estimate: np.ndarray
    replicates: np.ndarray
    n: int
    n_units: int
    method: str = "multinomial"
    column_n: np.ndarray | None = None
    column_units: np.ndarray | None = None


def statistic_value(values: np.ndarray, statistic: Statistic) -> float:
    """One sample's statistic, as the bootstrap computes it on the original sample.

    Args:
        values: shape (n,), n >= 1, in metric units.
        statistic: ``mean``, or ``p50``/``p95``: the inverted-CDF quantile (Hyndman & Fan 1996,
            definition 1, as ``weighted_lower_quantile`` with equal weights).
    """
    if statistic == "mean":
        return float(np.mean(values))
    return float(np.quantile(values, QUANTILE[statistic], method="inverted_cdf"))


def weighted_lower_quantile(sorted_values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Inverted-CDF quantile of ``sorted_values`` under each row of non-negative ``weights``.

    Args:
        sorted_values: shape (n,), ascending.
        weights: shape (b, n), non-negative weights aligned with ``sorted_values``.
        q: the quantile in (0, 1).

    Returns:
        shape (b,): the smallest value whose cumulative weight reaches ``q`` × total weight
        (Hyndman & Fan 1996, definition 1).
    """
    cw = np.cumsum(weights, axis=1)
    target = q * cw[:, -1]
    idx = np.sum(cw < target[:, None], axis=1)
    return sorted_values[np.minimum(idx, len(sorted_values) - 1)]


def joint_bootstrap(
    columns: Sequence[Column],
    n: int,
    *,
    rng: np.random.Generator,
    resamples: int = 2000,
    groups: np.ndarray | None = None,
    chunk_cells: int = 4_000_000,
    max_workers: int = 2,
) -> BootstrapResult:
    """Bootstrap every column's statistic of candidate - baseline on one joint resample.

    Steps and schemes: module docstring. Above ``MULTINOMIAL_MAX_UNITS`` units the replicates
    come from ``stats._scale.replicates`` (same arguments as ``replicates``, same result up to
    float32 rounding of the means).

    Args:
        columns: the statistics; column j uses the rows ``columns[j].rows`` of the n rows.
        n: the number of paired rows the columns index.
        rng: the only source of randomness; one child generator is spawned per chunk, so the
            result does not depend on ``max_workers``.
        resamples: B.
        groups: shape (n,) cluster labels (cluster bootstrap), or None (one unit per row). Units
            are ordered by sorted label, so the input's row order never changes a result.
        chunk_cells: resamples × units drawn at once under the multinomial; bounds memory.
        max_workers: threads running chunks in the fast engine.

    Returns:
        BootstrapResult with estimate (k,), replicates (B, k), the scheme's name and the rows and
        units per column.

    Raises:
        ValueError: a column with fewer than 2 rows, mismatched shapes, rows out of range,
            non-finite values, unknown statistic, bad groups or resamples.
    """
    _validate(columns, n, groups, resamples)
    unit_of, g = (np.arange(n), n) if groups is None else unit_codes(groups)
    plan = SumPlan.of(columns)
    bins = _counts_over_bins(plan, unit_of, g)
    if bins is not None:  # the multinomial as counts over the distinct unit rows
        rows, counts = bins
        draws = rng.multinomial(g, counts / g, size=resamples).astype(np.float64)
        out = np.empty((resamples, len(columns)))
        plan.finish_means(draws @ rows, out)
        method = f"multinomial, counts over {rows.shape[0]} bins"
    else:  # chunks of resamples, each drawn from its own child generator
        half = g > MULTINOMIAL_MAX_UNITS
        chunk = HALF_SAMPLING_CHUNK if half else chunk_cells // max(g, 1)
        chunk = max(1, min(resamples, chunk))
        starts = range(0, resamples, chunk)
        children = rng.spawn(len(starts))
        parts = [(s, min(s + chunk, resamples), c) for s, c in zip(starts, children, strict=True)]
        engine = _scale.replicates if half else replicates  # the fast twin for many units
        out = engine(plan, unit_of, g, parts, chunk_cells=chunk_cells, max_workers=max_workers)
        method = "half-sampling 0/2 weights" if half else "multinomial"
    estimates = [
        statistic_value(c.candidate - c.baseline, "mean")
        if c.statistic == "mean"
        else statistic_value(c.candidate, c.statistic) - statistic_value(c.baseline, c.statistic)
        for c in columns
    ]
    units = [np.count_nonzero(np.bincount(unit_of[c.rows], minlength=g)) for c in columns]
    return BootstrapResult(
        np.array(estimates),
        out,
        n=unit_of.size,
        n_units=g,
        method=method,
        column_n=np.array([c.rows.size for c in columns]),
        column_units=np.array(units),
    )


def _validate(columns: Sequence[Column], n: int, groups: np.ndarray | None, resamples: int) -> None:
    for j, col in enumerate(columns):
        if col.statistic not in get_args(Statistic):
            raise ValueError(f"unknown statistics ['{col.statistic}']; expected mean, p50 or p95")
        if col.rows.shape != col.candidate.shape:
            raise ValueError(f"column {j}: rows and candidate must have one shape (m,)")
        as_pairs(col.candidate, col.baseline, what=f"paired examples in column {j}")
        if col.rows.min() < 0 or col.rows.max() >= n:
            raise ValueError(f"column {j}: row indices must lie in [0, {n})")
    if groups is not None and groups.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {groups.shape}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")


def as_pairs(
    candidate: ArrayLike,
    baseline: ArrayLike,
    *,
    names: tuple[str, str] = ("candidate", "baseline"),
    what: str = "paired examples",
    alpha: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The two arms of a paired sample as float64 arrays, checked (every test's first step).

    Args:
        candidate, baseline: shape (n,) finite values; row i of both is the same example.
        names: the two arguments' names, for the messages; what: the rows' name, ditto.
        alpha: when given, a one-sided level that must lie in (0, 0.5).

    Returns:
        (candidate, baseline), shape (n,) float64 each.

    Raises:
        ValueError: an array not one-dimensional, shapes that differ, n < 2, non-finite
            values, or alpha outside (0, 0.5).
    """
    arms = np.asarray(candidate, dtype=np.float64), np.asarray(baseline, dtype=np.float64)
    for name, arm in zip(names, arms, strict=True):
        if arm.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {arm.shape}")
    if arms[0].shape != arms[1].shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same shape, got {arms[0].shape} and "
            f"{arms[1].shape}"
        )
    if arms[0].size < 2:
        raise ValueError(f"need at least 2 {what}, got {arms[0].size}")
    if not all(np.all(np.isfinite(arm)) for arm in arms):
        raise ValueError("values must be finite; handle missing values before the test")
    if alpha is not None and not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    return arms


def replicates(
    plan: SumPlan,
    unit_of: np.ndarray,
    g: int,
    parts: list[tuple[int, int, np.random.Generator]],
    *,
    chunk_cells: int,
    max_workers: int,
) -> np.ndarray:
    """Shape (B, k): every column's statistic on each resample (steps 2 and 3).

    Per chunk (``parts``: first and end resample, child generator) the (b, G) float64 weights
    (``_weights``), then the weighted sums: ``plan.finish_means`` for means; for a quantile,
    the difference of the two policies' weighted inverted-CDF quantiles, each row weighted by
    its unit's weight (in blocks of about ``chunk_cells`` row weights). ``max_workers`` is
    unused: chunks run in order (``_scale.replicates``, the same computation for many units,
    runs them on threads).
    """
    del max_workers  # chunks run in order here; the result does not depend on it
    matrix = np.column_stack([s.vector(unit_of, g) for s in plan.sums])
    out = np.empty((parts[-1][1], len(plan.columns)))
    half = g > MULTINOMIAL_MAX_UNITS
    for start, stop, child in parts:
        weights, chunk = _weights(child, stop - start, g, half), out[start:stop]
        plan.finish_means(weights @ matrix, chunk)
        for j, q, _ in plan.quantiles:
            col = plan.columns[j]
            units = unit_of[col.rows]
            oc = np.argsort(col.candidate, kind="stable")
            ob = np.argsort(col.baseline, kind="stable")
            step = max(1, chunk_cells // col.rows.size)
            for r in range(0, stop - start, step):
                w = weights[r : r + step]
                cand = weighted_lower_quantile(col.candidate[oc], w[:, units[oc]], q)
                chunk[r : r + step, j] = cand - weighted_lower_quantile(
                    col.baseline[ob], w[:, units[ob]], q
                )
    return out


def unit_codes(labels: ArrayLike) -> tuple[np.ndarray, int]:
    """(shape (n,) dense code 0..G-1 of each row's label in sorted label order, G labels)."""
    codes = np.unique(np.asarray(labels), return_inverse=True)[1].reshape(-1)
    return codes, int(codes.max()) + 1


def _counts_over_bins(
    plan: SumPlan, unit_of: np.ndarray, g: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct unit rows of the sums and their counts, when only means are asked, G exceeds
    ``BINS_MAX_LEVELS`` and at most that many distinct rows exist; otherwise None."""
    if g <= BINS_MAX_LEVELS or plan.quantiles:
        return None
    for s in plan.sums:  # one column with too many values rules bins out cheaply
        if np.unique(s.vector(unit_of, g)).size > BINS_MAX_LEVELS:
            return None
    matrix = np.column_stack([s.vector(unit_of, g) for s in plan.sums])
    rows, counts = np.unique(matrix, axis=0, return_counts=True)
    return None if rows.shape[0] > BINS_MAX_LEVELS else (rows, counts)


def _weights(rng: np.random.Generator, b: int, g: int, half: bool) -> np.ndarray:
    """Shape (b, G) float64: multinomial counts of G draws among G units per row, or 2 × the
    bits of ``rng.bytes`` (each row's ceil(G / 8) bytes, most significant bit first)."""
    if half:
        nbytes = (g + 7) // 8
        packed = np.frombuffer(rng.bytes(b * nbytes), dtype=np.uint8).reshape(b, nbytes)
        return 2.0 * np.unpackbits(packed, axis=1, count=g).astype(np.float64)
    draws = rng.integers(0, g, size=(b, g))
    draws += (np.arange(b) * g)[:, None]
    return np.bincount(draws.ravel(), minlength=b * g).reshape(b, g).astype(np.float64)


def paired_bootstrap(
    candidate: np.ndarray,
    baseline: np.ndarray,
    statistics: Sequence[Statistic],
    *,
    rng: np.random.Generator,
    resamples: int = 2000,
    groups: np.ndarray | None = None,
    present: np.ndarray | None = None,
    chunk_cells: int = 4_000_000,
    max_workers: int = 2,
) -> BootstrapResult:
    """Bootstrap ``statistic(candidate) - statistic(baseline)`` per column over one resample.

    For ``mean`` this is the mean paired difference (a ratio of totals under the cluster
    bootstrap); for ``p50``/``p95`` the difference of the two policies' inverted-CDF quantiles
    on the same resample. Signs are raw (candidate - baseline): callers orient them. Every
    column uses the same resample weights over units (module docstring), so the replicates of
    all columns are joint.

    Args:
        candidate, baseline: shape (n, k) values; row i of both is the same example. Finite where
            ``present``.
        statistics: one of mean/p50/p95 per column.
        rng: the only source of randomness; one child generator is spawned per chunk, so the
            result does not depend on ``max_workers``.
        resamples: B, the number of bootstrap resamples.
        groups: shape (n,) cluster labels for a cluster bootstrap, or None to resample examples.
            Units are ordered by sorted label (row order within a unit does not matter).
        present: shape (n, k) bool, which rows each column uses (e.g. a protected slice, or the
            examples where a metric is paired), or None for all.
        chunk_cells: resamples × units drawn at once under the multinomial; bounds memory.
        max_workers: threads running chunks in the fast engine (numpy releases the GIL).

    Returns:
        A BootstrapResult with estimate (k,), replicates (B, k) and the scheme's name.

    Raises:
        ValueError: shapes disagree, fewer than 2 pairs in a column, non-finite values, unknown
            statistic.
    """
    candidate = np.asarray(candidate, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    if candidate.ndim != 2 or candidate.shape != baseline.shape:
        raise ValueError(
            "candidate and baseline must both have shape (n, k); "
            f"got {candidate.shape} and {baseline.shape}"
        )
    n, k = candidate.shape
    if len(statistics) != k:
        raise ValueError(
            f"need one statistic per column: {k} columns, {len(statistics)} statistics"
        )
    if present is not None and (present.shape != (n, k) or present.dtype != np.bool_):
        raise ValueError(f"present must be a bool array of shape {(n, k)}, got {present.shape}")
    columns = []
    for j, stat in enumerate(statistics):
        rows = np.arange(n) if present is None else np.flatnonzero(present[:, j])
        columns.append(Column(rows, candidate[rows, j], baseline[rows, j], stat))
    return joint_bootstrap(
        columns,
        n,
        rng=rng,
        resamples=resamples,
        groups=groups,
        chunk_cells=chunk_cells,
        max_workers=max_workers,
    )
