"""The fast engine of ``stats.bootstrap.joint_bootstrap`` above ``MULTINOMIAL_MAX_UNITS`` units.

Same signature and same resamples as ``bootstrap.reference_bootstrap`` under half-sampling:
the same child generators give the same bytes, hence the same 0/2 weights per unit. Only the
way the weighted sums are taken differs, for speed and memory at 10^6 pairs
(docs/benchmarks.md):

- the weights stay packed as bits (one byte per 8 units and resample); each tile of
  ``TILE_UNITS`` units is unpacked ``ROW_BLOCK`` resamples at a time into a float32 block that
  stays in cache, and multiplied by the tile's float32 per-unit sums (one BLAS call), the
  products accumulated in float64 over tiles. A mean's replicate therefore differs from the
  reference's float64 product by float32 rounding only: relative to the mean's bootstrap
  standard error, under 1e-5 (``tests/stats/test_bootstrap.py``). Unit counts are integers
  below 2^24 per tile, so their sums are exact;
- a quantile is found in a window of sorted positions around q × n (``_WindowedQuantile``);
  the weights are integers, so its sums are exact and it equals the reference's quantile;
- chunks run on ``max_workers`` threads, each with BLAS pinned to one thread (threadpoolctl),
  so two workers use two cores, not two times the BLAS pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from ragwarrant.stats import bootstrap as ref
from ragwarrant.stats.bootstrap import BootstrapResult, Column

TILE_UNITS = 16_384
"""Units per tile (a multiple of 8, so a tile starts at a byte of the packed weights)."""
ROW_BLOCK = 32
"""Resamples unpacked and multiplied at once in a tile: a 2 MB float32 block."""
WINDOW_SDS = 8.0
"""Half-width of a quantile's window in standard deviations of its cumulative weight (+ 16
positions): a wider window changes no result, only the work."""


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
    """``bootstrap.joint_bootstrap`` for more than ``MULTINOMIAL_MAX_UNITS`` units (validated).

    ``chunk_cells`` is unused: a chunk is ``HALF_SAMPLING_CHUNK`` resamples of packed bits.
    """
    del chunk_cells  # half-sampling chunks have a fixed number of resamples
    unit_of, g = ref.units_of(groups, n)
    plan = ref.SumPlan.of(columns)
    bins = ref.counts_over_bins(columns, plan, unit_of, g)
    if bins is not None:
        return ref.over_bins(columns, plan, bins, rng, resamples, unit_of)
    quantiles = _quantiles(columns, plan, unit_of, g)
    matrix = _float32_sums(plan, quantiles, unit_of, g)
    tiles = [matrix[lo : lo + TILE_UNITS] for lo in range(0, g, TILE_UNITS)]
    replicates = np.empty((resamples, len(columns)))
    chunks = ref.chunks(rng, resamples, ref.HALF_SAMPLING_CHUNK)

    def run_chunk(chunk: tuple[int, int, np.random.Generator]) -> None:
        start, stop, child = chunk
        bits = _Bits(child, stop - start, g)
        lin = bits.dot(tiles)
        plan.finish_means(lin, replicates[start:stop])
        for j, q in quantiles:
            replicates[start:stop, j] = q[0].finish(lin, bits) - q[1].finish(lin, bits)

    with _pinned_blas(), ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        list(pool.map(run_chunk, chunks))
    return ref.result(columns, replicates, unit_of, g, "half-sampling 0/2 weights")


def _float32_sums(
    plan: ref.SumPlan,
    quantiles: list[tuple[int, tuple[_WindowedQuantile, _WindowedQuantile]]],
    unit_of: np.ndarray,
    g: int,
) -> np.ndarray:
    """Shape (G, c) float32: the plan's sums, then each quantile's units-below column."""
    below = [q.below for _, pair in quantiles for q in pair]
    matrix = np.empty((g, len(plan.sums) + len(below)), dtype=np.float32)
    for j, s in enumerate(plan.sums):
        matrix[:, j] = s.vector(unit_of, g)
    for j, values in enumerate(below, start=len(plan.sums)):
        matrix[:, j] = values
    return matrix


def _quantiles(
    columns: Sequence[Column], plan: ref.SumPlan, unit_of: np.ndarray, g: int
) -> list[tuple[int, tuple[_WindowedQuantile, _WindowedQuantile]]]:
    """(column j, candidate's and baseline's windowed quantile) per quantile column; their
    units-below columns follow the plan's sums in the float32 matrix (``_float32_sums``)."""
    rows_at = {s.column.rows.tobytes(): i for i, s in enumerate(plan.sums) if s.centre is None}
    out: list[tuple[int, tuple[_WindowedQuantile, _WindowedQuantile]]] = []
    for j, col in enumerate(columns):
        if col.statistic == "mean":
            continue
        q, units, den = ref.QUANTILE[col.statistic], unit_of[col.rows], rows_at[col.rows.tobytes()]
        below = len(plan.sums) + 2 * len(out)
        cand = _WindowedQuantile(col.candidate, q, units, g, den, below)
        base = _WindowedQuantile(col.baseline, q, units, g, den, below + 1)
        out.append((j, (cand, base)))
    return out


class _Bits:
    """Half-sampling weights of ``b`` resamples over ``g`` units as packed bits (b, ceil(g/8));
    weight = 2 × bit. The bytes are ``rng.bytes(b * ceil(g / 8))``'s, as the reference's."""

    def __init__(self, rng: np.random.Generator, b: int, g: int) -> None:
        self.b, self.g = b, g
        nbytes = (g + 7) // 8
        self.packed = _random_bytes(rng, b * nbytes).reshape(b, nbytes)

    def dot(self, tiles: list[np.ndarray]) -> np.ndarray:
        """Weights @ the float32 matrix whose row tiles are ``tiles``: shape (b, c) float64."""
        out = np.zeros((self.b, tiles[0].shape[1]))
        buf = np.empty((ROW_BLOCK, TILE_UNITS), dtype=np.float32)
        for t, block in enumerate(tiles):
            lo, size = t * TILE_UNITS, block.shape[0]
            packed = self.packed[:, lo // 8 : (lo + size + 7) // 8]
            for r in range(0, self.b, ROW_BLOCK):  # a block of rows stays in the core's cache
                rows = slice(r, min(self.b, r + ROW_BLOCK))
                tile = buf[: rows.stop - r, :size]
                np.copyto(tile, np.unpackbits(packed[rows], axis=1, count=size))
                out[rows] += tile @ block
        return 2.0 * out

    def take(self, units: np.ndarray) -> np.ndarray:
        """Weights of the given units, shape (b, len(units)) float64."""
        shift = (7 - (units & 7)).astype(np.uint8)
        return 2.0 * ((self.packed[:, units >> 3] >> shift) & 1)

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """All g weights of the given resample rows, shape (len(rows), g) float64."""
        return 2.0 * np.unpackbits(self.packed[rows], axis=1, count=self.g).astype(float)


def _random_bytes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Shape (n,) uint8: the bytes ``rng.bytes(n)`` returns (and the same generator state),
    viewed from the uint32 words without ``Generator.bytes``' three copies (4n bytes)."""
    words = rng.integers(0, 4294967296, size=max(1, (n + 3) // 4), dtype=np.uint32)
    return words.astype("<u4", copy=False).view(np.uint8)[:n]


class _WindowedQuantile:
    """One policy's weighted quantile, computed in a window of sorted positions.

    The cumulative weight at sorted position i concentrates around its expectation: at the
    quantile's own position, cumulative weight minus q × total weight has standard deviation
    sqrt(q (1 - q) × sum of squared unit sizes) for weights of variance 1, so the quantile's
    position lies in a window of ``WINDOW_SDS`` such standard deviations (+ 16) either side of
    q × n. The weight of the rows ranked below the window (column ``below_col`` of the float32
    matrix) and the total (column ``rows_col``) come from the shared product; only the window
    is summed cumulatively. Resamples whose target falls outside the window are recomputed over all
    positions, so the result equals ``bootstrap.weighted_lower_quantile``'s.
    """

    def __init__(
        self, values: np.ndarray, q: float, units: np.ndarray, g: int, rows_col: int, below_col: int
    ) -> None:
        order = np.argsort(values, kind="stable")
        self.sorted, self.q, self.cols = values[order], q, [rows_col, below_col]
        squares = float(np.sum(np.bincount(units, minlength=g).astype(np.float64) ** 2))
        half = int(np.ceil(WINDOW_SDS * np.sqrt(q * (1 - q) * squares))) + 16
        centre = int(q * values.size)
        self.lo, self.hi = max(0, centre - half), min(values.size, centre + half)
        self.all_units = units[order]
        self.below = np.bincount(self.all_units[: self.lo], minlength=g).astype(np.float64)
        self.window_units = self.all_units[self.lo : self.hi]

    def finish(self, lin: np.ndarray, bits: _Bits) -> np.ndarray:
        """The quantile per resample, shape (b,), from ``lin`` = weights @ matrix (b, c)."""
        target = self.q * lin[:, self.cols[0]]
        below = lin[:, self.cols[1]]
        cw = np.cumsum(bits.take(self.window_units), axis=1) + below[:, None]
        idx = np.sum(cw < target[:, None], axis=1)
        out = self.sorted[np.minimum(self.lo + idx, self.sorted.size - 1)]
        outside = (below >= target) | (idx >= self.hi - self.lo)
        if np.any(outside):
            rows = np.flatnonzero(outside)
            full = bits.rows(rows)[:, self.all_units]
            out[rows] = ref.weighted_lower_quantile(self.sorted, full, self.q)
        return out


def _pinned_blas():  # type: ignore[no-untyped-def]
    """A context limiting BLAS to one thread (threadpoolctl), for use around worker threads."""
    return _blas_controller().limit(limits=1, user_api="blas")


@cache
def _blas_controller():  # type: ignore[no-untyped-def]
    """The process's ``threadpoolctl.ThreadpoolController``, built once (building one scans
    every loaded shared library, 2–5 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
