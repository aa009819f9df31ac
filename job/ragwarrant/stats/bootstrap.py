"""Paired and cluster bootstrap of differences in means and quantiles: one joint resample.

Method: the nonparametric bootstrap (Efron & Tibshirani 1993, ch. 6 and 13) with percentile
confidence bounds. Paired examples are resampled together, so every statistic of one resample
uses the same examples for candidate and baseline. With group labels, whole groups are resampled
(the cluster bootstrap, Davison & Hinkley 1997, §3.8); a group's examples move together.

One resample serves every column: a resample is a weight per resampling unit, and each column
(a metric, or a metric inside a protected slice, marked by ``present``) uses the weights of its
own units, so joint tests (the intersection-union test of a candidate) see joint replicates. A
mean is the weighted ratio sum(w * delta) / sum(w * rows) over the column's units; a quantile is
the weighted inverted-CDF quantile. The weights are drawn by one of three schemes, recorded in
``BootstrapResult.method``:

- ``multinomial``: counts of G draws with replacement among G units (Efron 1979), for
  G <= ``MULTINOMIAL_MAX_UNITS``.
- ``counts over bins``: when only means are asked and the units take at most
  ``BINS_MAX_LEVELS`` distinct rows (binary or Likert deltas, equal cluster sizes), units with
  the same row are exchangeable, so the multinomial counts over the distinct rows,
  ``rng.multinomial(G, share of each row)``, give exactly the multinomial bootstrap's
  distribution at a cost independent of G.
- ``half-sampling``: for larger G, weights 2 * Bernoulli(1/2) per unit (mean 1, variance 1, as
  the multinomial's). It is an exchangeable weighted bootstrap (Præstgaard & Wellner 1993,
  Ann. Probab. 21:2053–2086, Theorem 2.1), first-order equivalent to Efron's bootstrap for
  means and quantiles, like the Poisson(1) weights of Hanley & MacGibbon (2006, Comput. Methods
  Programs Biomed. 83:57–62) and Chamandy et al. (2012, "Estimating uncertainty for massive
  data streams", Google). A resample is then one random bit per unit: drawn as bytes, unpacked
  in tiles into a preallocated float32 buffer, multiplied by the (centred) per-unit sums with
  one BLAS call per tile and block of 32 resamples (which stays in the core's cache), and
  accumulated in float64.

Resamples are drawn in chunks from child generators spawned from ``rng``, so the result does not
depend on the number of worker threads; BLAS is pinned to one thread inside them
(``threadpoolctl``), so two workers use two cores, not two times the BLAS pool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

import numpy as np

__all__ = [
    "BINS_MAX_LEVELS",
    "MULTINOMIAL_MAX_UNITS",
    "BootstrapResult",
    "Column",
    "Statistic",
    "joint_bootstrap",
    "paired_bootstrap",
    "statistic_value",
    "weighted_lower_quantile",
]

Statistic = Literal["mean", "p50", "p95"]
_QUANTILE = {"p50": 0.5, "p95": 0.95}
MULTINOMIAL_MAX_UNITS = 20_000
"""Above this many resampled units the weights are half-sampling weights (module docstring)."""
BINS_MAX_LEVELS = 256
"""At most this many distinct unit rows: exact multinomial counts over bins."""
_TILE_UNITS = 16_384
_ROW_BLOCK = 32
"""Resamples unpacked and multiplied at once in a tile: a 2 MB float32 block that stays in
cache between its unpacking and its product (the whole chunk's 16 MB tile did not)."""


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
    return float(np.quantile(values, _QUANTILE[statistic], method="inverted_cdf"))


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


class _TileBlocks:
    """A (g, c) float32 matrix stored as its tiles' active columns only.

    ``blocks[t]`` is ``linear[lo:hi, active[t]]`` exactly as numpy's indexing makes it (the
    operand the tile's product always had), so products are unchanged; a protected slice's
    columns are no longer stored as zeros on every other slice's tiles (at 10^6 pairs with 5
    slices, 45 MB instead of 108 MB).
    """

    def __init__(self, linear: np.ndarray, active: list[np.ndarray]) -> None:
        self.shape = linear.shape
        self.blocks = [
            linear[lo : lo + _TILE_UNITS, cols]
            for lo, cols in zip(range(0, linear.shape[0], _TILE_UNITS), active, strict=True)
        ]


def _random_bytes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Shape (n,) uint8: the bytes ``rng.bytes(n)`` returns, in one array.

    ``Generator.bytes`` draws ceil(n / 4) uint32 words and returns their little-endian bytes
    through three copies (``astype``, ``tobytes``, a slice): 4n bytes of transient memory per
    call, 128 MB for one chunk of 256 resamples of 10^6 units. This views the words instead
    (``tests/stats/test_bootstrap.py`` checks the bytes and the generator state are the same).
    """
    words = rng.integers(0, 4294967296, size=max(1, (n + 3) // 4), dtype=np.uint32)  # as bytes
    return words.astype("<u4", copy=False).view(np.uint8)[:n]


class _Weights:
    """The weights of ``b`` resamples over ``g`` units (one chunk), by one scheme.

    Multinomial: dense counts (b, g) float64 from ``rng.integers`` tallied by one flat
    ``np.bincount``. Half-sampling: packed random bits (b, ceil(g / 8)) uint8; weight = 2 * bit.
    """

    def __init__(self, rng: np.random.Generator, b: int, g: int, half: bool) -> None:
        self.b, self.g, self.half = b, g, half
        if half:
            nbytes = (g + 7) // 8
            self.packed = _random_bytes(rng, b * nbytes).reshape(b, nbytes)
        else:
            draws = rng.integers(0, g, size=(b, g))
            draws += (np.arange(b) * g)[:, None]
            self.dense = np.bincount(draws.ravel(), minlength=b * g).reshape(b, g).astype(float)

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> _Weights:
        """Multinomial-style weights given as a dense (b, g) matrix (tests, bins)."""
        self = cls.__new__(cls)
        self.b, self.g, self.half = dense.shape[0], dense.shape[1], False
        self.dense = np.asarray(dense, dtype=np.float64)
        return self

    def dot(
        self,
        linear: np.ndarray | _TileBlocks,
        linear32: np.ndarray | _TileBlocks,
        active: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Weights @ ``linear`` (g, c) → (b, c) float64.

        ``linear32`` is its float32 copy (half-sampling multiplies tiles of ``_TILE_UNITS``
        units in float32 and accumulates in float64), possibly stored per tile
        (``_TileBlocks``); ``active[t]`` lists the columns non-zero in tile t (None: all).
        """
        if not self.half:
            assert isinstance(linear, np.ndarray)
            return self.dense @ linear
        out = np.zeros((self.b, linear.shape[1]))
        buf = np.empty((_ROW_BLOCK, _TILE_UNITS), dtype=np.float32)
        cols: np.ndarray | slice
        for t, lo in enumerate(range(0, self.g, _TILE_UNITS)):
            hi = min(self.g, lo + _TILE_UNITS)
            if isinstance(linear32, _TileBlocks):
                assert active is not None
                cols, block = active[t], linear32.blocks[t]
            elif active is None:
                cols, block = slice(None), linear32[lo:hi]
            else:
                cols, block = active[t], linear32[lo:hi, active[t]]
            packed = self.packed[:, lo // 8 : (hi + 7) // 8]
            for r in range(0, self.b, _ROW_BLOCK):  # a block of rows stays in the core's cache
                rows = slice(r, min(self.b, r + _ROW_BLOCK))
                tile = buf[: rows.stop - r, : hi - lo]
                np.copyto(tile, np.unpackbits(packed[rows], axis=1, count=hi - lo))
                out[rows, cols] += tile @ block
        return 2.0 * out

    def take(self, units: np.ndarray) -> np.ndarray:
        """Weights of the given units, shape (b, len(units)) float64."""
        if not self.half:
            return self.dense[:, units]
        shift = (7 - (units & 7)).astype(np.uint8)
        return 2.0 * ((self.packed[:, units >> 3] >> shift) & 1)

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """All g weights of the given resample rows, shape (len(rows), g) float64."""
        if not self.half:
            return self.dense[rows]
        return 2.0 * np.unpackbits(self.packed[rows], axis=1, count=self.g).astype(float)


class _WindowedQuantile:
    """One policy's quantile under resample weights, computed in a window of sorted positions.

    The cumulative weight at sorted position i concentrates around its expectation: at the
    quantile's own position, cumulative weight minus q × total weight has standard deviation
    sqrt(q (1 - q) × sum of squared unit sizes) for weights of variance 1, so the quantile's
    position lies in a narrow window around q × n (8 standard deviations either side, + 16; a
    wider window changes no result, only the work). The weight ranked below the window
    is one column of the shared matrix product; only the window is gathered and summed
    cumulatively. Rows whose target falls outside the window are recomputed over all positions,
    so the result equals ``weighted_lower_quantile``.
    """

    def __init__(self, values: np.ndarray, q: float, unit_of: np.ndarray, n_units: int) -> None:
        n = values.size
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]
        self.q = q
        self.unit_sizes = np.bincount(unit_of, minlength=n_units).astype(np.float64)
        squares = float(np.sum(self.unit_sizes**2))
        self.n_units = n_units
        half = int(np.ceil(8.0 * np.sqrt(q * (1 - q) * squares))) + 16
        centre = int(q * n)
        self.lo = max(0, centre - half)
        self.hi = min(n, centre + half)
        self.key_lo = max(0, centre - int(np.ceil(8.0 * np.sqrt(squares))) - 16)
        units_sorted = unit_of[self.order]
        self.below = np.bincount(units_sorted[: self.lo], minlength=n_units).astype(np.float64)
        self.window_units = units_sorted[self.lo : self.hi]
        self.all_units = units_sorted
        self.estimate = float(weighted_lower_quantile(self.sorted, np.ones((1, n)), q)[0])

    def key_pattern(self) -> np.ndarray:
        """Shape (G,) bool: units with a row ranked below ``key_lo``, for the tile layout.

        ``key_lo`` is the window's lower end of earlier releases (8 × sqrt(sum of squared unit
        sizes) + 16 below q × n); keeping it as the layout key keeps their replicates, bit for
        bit, while the window itself is narrower.
        """
        pattern = np.zeros(self.n_units, dtype=bool)
        pattern[self.all_units[: self.key_lo]] = True
        return pattern

    def release(self) -> None:
        """Drop what only building the linear columns needs (4 (G,) arrays at 10^6 units)."""
        del self.order, self.unit_sizes, self.below

    def linear(self) -> np.ndarray:
        """Shape (G, 2): the per-unit vectors whose weighted sums the quantile needs."""
        return np.column_stack([self.unit_sizes, self.below])

    def finish(self, lin: np.ndarray, weights: _Weights) -> np.ndarray:
        """Quantile per resample from ``lin`` = weights @ ``linear()`` (b, 2); shape (b,)."""
        target = self.q * lin[:, 0]
        below = lin[:, 1]
        cw = np.cumsum(weights.take(self.window_units), axis=1) + below[:, None]
        idx = np.sum(cw < target[:, None], axis=1)
        out = self.sorted[np.minimum(self.lo + idx, self.sorted.size - 1)]
        outside = (below >= target) | (idx >= self.hi - self.lo)
        if np.any(outside):
            rows = np.flatnonzero(outside)
            full = weights.rows(rows)[:, self.all_units]
            out[rows] = weighted_lower_quantile(self.sorted, full, self.q)
        return out


@dataclass(frozen=True)
class Column:
    """One statistic over a subset of the paired rows (a metric, or a metric in a slice).

    Attributes:
        rows: shape (m,) int, indices of the rows (0..n-1) this column uses.
        candidate, baseline: shape (m,) finite values in metric units, aligned with ``rows``.
        statistic: mean, p50 or p95 of the difference candidate - baseline.
    """

    rows: np.ndarray
    candidate: np.ndarray
    baseline: np.ndarray
    statistic: Statistic


def _validate(columns: Sequence[Column], n: int, groups: np.ndarray | None, resamples: int) -> None:
    for j, col in enumerate(columns):
        if col.statistic not in get_args(Statistic):
            raise ValueError(f"unknown statistics ['{col.statistic}']; expected mean, p50 or p95")
        m = col.rows.shape
        if col.rows.ndim != 1 or col.candidate.shape != m or col.baseline.shape != m:
            raise ValueError(f"column {j}: rows, candidate and baseline must have one shape (m,)")
        if m[0] < 2:
            raise ValueError(f"need at least 2 paired examples per column, got {m[0]}")
        if m[0] and (col.rows.min() < 0 or col.rows.max() >= n):
            raise ValueError(f"column {j}: row indices must lie in [0, {n})")
        if not (np.all(np.isfinite(col.candidate)) and np.all(np.isfinite(col.baseline))):
            raise ValueError("values must be finite; handle missing values before the bootstrap")
    if groups is not None and groups.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {groups.shape}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")


@dataclass(frozen=True)
class _Linear:
    """One per-unit linear column, sparse: its values on ``units`` (distinct), zero elsewhere.

    ``units`` None: dense, one value per unit. ``make`` computes the values when they are read
    (for the tile layout's pattern, then once more for the matrix), so no copy of every
    column is ever held beside the matrix.
    """

    units: np.ndarray | None
    make: Callable[[], np.ndarray]

    @property
    def values(self) -> np.ndarray:
        """The column's values on ``units``."""
        return self.make()


@dataclass
class _Plan:
    """Per-unit linear columns and the finishing rule of every statistic.

    ``linear`` holds each distinct column once. ``key`` lists what orders the tile layout
    (``_tile_layout``), in order: a column's non-zero pattern (its index), or an explicit
    per-unit pattern (a quantile's units ranked below ``_WindowedQuantile.key_lo``).
    """

    linear: list[_Linear]
    key: list[int | np.ndarray]
    means: list[tuple[int, float, int, int]]  # (column, estimate, numerator col, denominator col)
    # (column, candidate, baseline, their (unit sizes, below) linear columns)
    quantiles: list[tuple[int, _WindowedQuantile, _WindowedQuantile, list[int], list[int]]]

    def add(self, lin: _Linear, *, keyed: bool = True) -> int:
        """Append a distinct column (to the layout key too when ``keyed``); return its index."""
        self.linear.append(lin)
        if keyed:
            self.key.append(len(self.linear) - 1)
        return len(self.linear) - 1


def _unit_index(units: np.ndarray, clustered: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(distinct units, each row's position among them; None without clusters: one row each)."""
    if not clustered:
        return units, None
    distinct, inverse = np.unique(units, return_inverse=True)
    return distinct, inverse.reshape(-1)


def _unit_sums(weights: np.ndarray, inverse: np.ndarray | None, m: int) -> np.ndarray:
    """Sum of ``weights`` over each of m units' rows, as ``np.bincount`` adds them (row order);
    without clusters a unit's sum is 0.0 + its one weight."""
    if inverse is None:
        return 0.0 + weights
    return np.bincount(inverse, weights=weights, minlength=m)


def _mean_column(col: Column, est: float, units: tuple[np.ndarray, np.ndarray | None]) -> _Linear:
    """A mean's numerator: the centred unit sums of candidate - baseline, computed when read."""
    distinct, inverse = units

    def make() -> np.ndarray:
        return _unit_sums((col.candidate - col.baseline) - est, inverse, distinct.size)

    return _Linear(distinct, make)


_PARALLEL_SORT_ROWS = 65_536
"""From this many rows a quantile's two sorts run on two threads (numpy's sort releases the GIL)."""


def _quantile_pair(
    col: Column, q: float, unit_of: np.ndarray, g: int
) -> tuple[_WindowedQuantile, _WindowedQuantile]:
    """The candidate's and the baseline's windowed quantile of one column (the same objects on
    one thread or two)."""
    if col.rows.size < _PARALLEL_SORT_ROWS:
        return (
            _WindowedQuantile(col.candidate, q, unit_of, g),
            _WindowedQuantile(col.baseline, q, unit_of, g),
        )
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="quantile") as pool:
        qc, qb = pool.map(
            lambda v: _WindowedQuantile(v, q, unit_of, g), (col.candidate, col.baseline)
        )
    return qc, qb


def _plan(
    columns: Sequence[Column], unit_of: np.ndarray, g: int, clustered: bool
) -> tuple[_Plan, np.ndarray]:
    """Linear columns (centred unit sums of deltas, unit row counts, quantile vectors).

    Each column is sparse over its own units (``_Linear``): a protected slice's columns hold
    the slice's units only. The unit row counts are computed once per set of rows, shared by
    every mean and quantile of those rows.
    """
    plan = _Plan([], [], [], [])
    sizes: dict[bytes, tuple[int, tuple[np.ndarray, np.ndarray | None]]] = {}
    keyed: set[bytes] = set()  # rows whose counts are in the layout key as a mean's denominator
    estimate = np.empty(len(columns))
    for j, col in enumerate(columns):
        rows = col.rows.tobytes()
        if rows not in sizes:
            index = _unit_index(unit_of[col.rows] if clustered else col.rows, clustered)
            counts = _unit_sums(np.ones(col.rows.size), index[1], index[0].size)
            sizes[rows] = (plan.add(_Linear(index[0], _held(counts)), keyed=False), index)
        den, index = sizes[rows]
        if col.statistic == "mean":
            if rows not in keyed:
                keyed.add(rows)
                plan.key.append(den)
            est = float((col.candidate - col.baseline).mean())
            num = plan.add(_mean_column(col, est, index))
            plan.means.append((j, est, num, den))
            estimate[j] = est
            continue
        q = _QUANTILE[col.statistic]
        qc, qb = _quantile_pair(col, q, unit_of[col.rows], g)
        below_c = plan.add(_Linear(None, _held(qc.below)), keyed=False)
        below_b = plan.add(_Linear(None, _held(qb.below)), keyed=False)
        plan.key += [den, qc.key_pattern(), den, qb.key_pattern()]
        plan.quantiles.append((j, qc, qb, [den, below_c], [den, below_b]))
        estimate[j] = qc.estimate - qb.estimate
    return plan, estimate


def _dense(
    plan: _Plan,
    g: int,
    dtype: type = np.float64,
    perm: np.ndarray | None = None,
    order: Literal["C", "F"] = "C",
) -> np.ndarray:
    """The (g, c) matrix of the plan's distinct linear columns; row i is unit ``perm[i]``.

    With ``order="F"`` each column is written (and its pages touched) on its own, and the
    plan's sparse column is dropped once written, so the sparse and the dense copy of all
    columns are never resident together.
    """
    out: np.ndarray = np.zeros((g, len(plan.linear)), dtype=dtype, order=order)
    position = None
    if perm is not None:
        position = np.empty_like(perm)
        position[perm] = np.arange(perm.size)

    def fill(j: int) -> None:
        lin = plan.linear[j]
        units = np.arange(g) if lin.units is None else lin.units
        out[units if position is None else position[units], j] = lin.values
        if order == "F":
            plan.linear[j] = _Linear(None, _nothing)  # what it held is in the matrix now

    _each_column(len(plan.linear), g, fill)
    return out


def _each_column(c: int, g: int, fill: Callable[[int], None]) -> None:
    """``fill(j)`` for every column (or tile) j < c; on two threads from ``_PARALLEL_SORT_ROWS``
    units g (each column's values, scatter and compare are numpy loops that release the GIL;
    each j writes its own column or list item, so the result is the same on one thread or two).
    """
    if g < _PARALLEL_SORT_ROWS or c < 2:
        for j in range(c):
            fill(j)
        return
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="columns") as pool:
        list(pool.map(fill, range(c)))


def _tiled(plan: _Plan, g: int) -> tuple[_TileBlocks, list[np.ndarray]]:
    """The half-sampling operand: float32 columns in tile layout, stored per tile."""
    perm, active = _tile_layout(plan, _nonzero(plan, g))
    return _TileBlocks(_dense(plan, g, np.float32, perm, order="F"), active), active


def _nothing() -> np.ndarray:
    return np.zeros(0)


def _held(values: np.ndarray) -> Callable[[], np.ndarray]:
    """A ``_Linear.make`` for values computed already."""
    return lambda: values


def _nonzero(plan: _Plan, g: int) -> np.ndarray:
    """Shape (g, c) bool: where each linear column is non-zero."""
    nz = np.zeros((g, len(plan.linear)), dtype=bool, order="F")  # written column by column

    def fill(j: int) -> None:
        lin = plan.linear[j]
        nz[slice(None) if lin.units is None else lin.units, j] = lin.values != 0

    _each_column(len(plan.linear), g, fill)
    return nz


def _layout_key(plan: _Plan, nonzero: np.ndarray) -> np.ndarray:
    """Shape (g, len(plan.key)) bool: the patterns that order the tile layout."""
    key = np.empty((nonzero.shape[0], len(plan.key)), dtype=bool)
    for j, k in enumerate(plan.key):
        key[:, j] = nonzero[:, k] if isinstance(k, int) else k
    return key


def _finish(plan: _Plan, lin: np.ndarray, weights: _Weights | None, out: np.ndarray) -> None:
    """Fill ``out`` (b, k) from ``lin`` = weights @ linear (b, c)."""
    for j, est, num, den in plan.means:
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = est + lin[:, num] / lin[:, den]
    for j, qc, qb, cc, cb in plan.quantiles:
        assert weights is not None
        out[:, j] = qc.finish(lin[:, cc], weights) - qb.finish(lin[:, cb], weights)


def _bins(plan: _Plan, g: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct unit rows and their counts, or None when there are more than BINS_MAX_LEVELS."""
    for lin in plan.linear:
        values = lin.values
        zeros = lin.units is not None and lin.units.size < g and not np.any(values == 0)
        if np.unique(values).size + zeros > BINS_MAX_LEVELS:
            return None
    rows, counts = np.unique(_dense(plan, g), axis=0, return_counts=True)
    if rows.shape[0] > BINS_MAX_LEVELS:
        return None
    return rows, counts


def _units(groups: np.ndarray | None, n: int) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(n), n
    _, unit_of = np.unique(groups, return_inverse=True)
    unit_of = unit_of.reshape(-1)
    return unit_of, int(unit_of.max()) + 1


def _layout_order(plan: _Plan, nonzero: np.ndarray) -> np.ndarray:
    """Shape (g,) int64: units sorted by their layout key (``_layout_key``, first column most
    significant), ties by unit: ``np.lexsort([np.arange(g), *packbits(key, axis=1).T[::-1]])``.

    A least-significant-digit radix sort: the key columns are cut into digits of 16 (column j
    of a digit at bit 15 - j, the order of the packed bytes), and the units are sorted by each
    digit, the last first, with numpy's stable argsort, which sorts 16-bit integers by radix;
    stability keeps the later digits' order, and the units' order, among ties (Knuth, TAOCP
    vol. 3, §5.2.5). No (g, keys) matrix, and a fraction of the lexsort's time at 10^6 units.
    """
    g = nonzero.shape[0]
    keys = plan.key
    order = np.arange(g)
    for lo in reversed(range(0, len(keys), 16)):
        digit = np.zeros(g, dtype=np.uint16)
        for j, k in enumerate(keys[lo : lo + 16]):
            column = nonzero[:, k] if isinstance(k, int) else k
            digit |= column.astype(np.uint16) << np.uint16(15 - j)
        order = order[np.argsort(digit[order], kind="stable")]
    return order


def _tile_layout(plan: _Plan, nonzero: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Reorder units so that units using the same columns are contiguous; active columns per tile.

    The weights are independent and identically distributed over units, so a fixed relabelling
    of units (sorted by their layout key, ``_Plan.key``: which means' columns they enter, then
    by their canonical order) changes no distribution; it lets each tile multiply only the
    columns that are non-zero in it (a slice's columns only on the slice's tiles). Quantile unit
    indices are remapped in place.

    Args:
        nonzero: shape (g, c) bool, where each linear column is non-zero (``_nonzero``).

    Returns:
        The permutation (position → unit) and, per tile, the columns non-zero in it.
    """
    perm = _layout_order(plan, nonzero)
    newpos = np.empty_like(perm)
    newpos[perm] = np.arange(perm.size)
    for _, qc, qb, _, _ in plan.quantiles:
        for q in (qc, qb):
            q.window_units = newpos[q.window_units]
            q.all_units = newpos[q.all_units]
    starts = range(0, perm.size, _TILE_UNITS)
    active: list[np.ndarray] = [np.zeros(0, dtype=np.intp)] * len(starts)

    def tile(t: int) -> None:  # tile by tile: no permuted copy of the whole (g, c) pattern
        active[t] = np.flatnonzero(nonzero[perm[starts[t] : starts[t] + _TILE_UNITS]].any(axis=0))

    _each_column(len(starts), perm.size, tile)
    return perm, active


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

    Args:
        columns: the statistics; column j uses the rows ``columns[j].rows`` of the n rows.
        n: the number of paired rows the columns index.
        rng: the only source of randomness; one child generator is spawned per chunk, so the
            result does not depend on ``max_workers``.
        resamples: B.
        groups: shape (n,) cluster labels (cluster bootstrap), or None (one unit per row). Units
            are ordered by sorted label, so the input's row order never changes a result.
        chunk_cells: resamples × units drawn at once under the multinomial; bounds memory.
        max_workers: threads running chunks, each with BLAS pinned to one thread.

    Returns:
        BootstrapResult with estimate (k,), replicates (B, k), the scheme's name and the rows and
        units per column.

    Raises:
        ValueError: a column with fewer than 2 rows, mismatched shapes, rows out of range,
            non-finite values, unknown statistic, bad groups or resamples.
    """
    _validate(columns, n, groups, resamples)
    unit_of, g = _units(groups, n)
    plan, estimate = _plan(columns, unit_of, g, groups is not None)
    column_units = np.array(
        [
            c.rows.size
            if groups is None
            else np.count_nonzero(np.bincount(unit_of[c.rows], minlength=g))
            for c in columns
        ]
    )
    column_n = np.array([c.rows.size for c in columns])
    common: dict[str, Any] = {
        "n": n,
        "n_units": g,
        "column_n": column_n,
        "column_units": column_units,
    }
    replicates = np.empty((resamples, len(columns)))
    bins = None if plan.quantiles or g <= BINS_MAX_LEVELS else _bins(plan, g)
    if bins is not None:
        rows, counts = bins
        draws = rng.multinomial(g, counts / g, size=resamples).astype(np.float64)
        _finish(plan, draws @ rows, None, replicates)
        method = f"multinomial, counts over {rows.shape[0]} bins"
        return BootstrapResult(estimate, replicates, method=method, **common)
    half = g > MULTINOMIAL_MAX_UNITS
    active: list[np.ndarray] | None = None
    linear: np.ndarray | _TileBlocks
    if half:  # float32 tiles in a layout where slices are contiguous (``_tile_layout``)
        linear, active = _tiled(plan, g)
    else:
        linear = _dense(plan, g)
    plan.linear.clear()  # the sparse columns are in ``linear`` now: free them
    for _, qc, qb, _, _ in plan.quantiles:
        qc.release()
        qb.release()
    linear32 = linear
    chunk = max(1, min(resamples, (256 if half else chunk_cells // max(g, 1))))
    starts = list(range(0, resamples, chunk))
    children = rng.spawn(len(starts))

    def run_chunk(i: int) -> None:
        start = starts[i]
        weights = _Weights(children[i], min(chunk, resamples - start), g, half)
        lin = weights.dot(linear, linear32, active)
        _finish(plan, lin, weights, replicates[start : start + weights.b])

    workers = min(max_workers, len(starts))
    with _pinned_blas():
        if workers <= 1:
            for i in range(len(starts)):
                run_chunk(i)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(run_chunk, range(len(starts))))
    method = "half-sampling 0/2 weights" if half else "multinomial"
    return BootstrapResult(estimate, replicates, method=method, **common)


def _pinned_blas():  # type: ignore[no-untyped-def]
    """A context limiting BLAS to one thread (threadpoolctl), for use around worker threads."""
    return _blas_controller().limit(limits=1, user_api="blas")


@cache
def _blas_controller():  # type: ignore[no-untyped-def]
    """The process's ``threadpoolctl.ThreadpoolController``, built once.

    Building one scans every loaded shared library (2–5 ms); ``threadpool_limits`` builds one per
    call, 17 times in a run of the shipped example (issue 13). The BLAS the workers call is
    numpy's, loaded with numpy before this module runs, so the first controller holds it.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


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
        max_workers: threads running chunks (numpy releases the GIL in its heavy kernels).

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
