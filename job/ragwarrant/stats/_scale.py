"""The fast twin of ``stats.bootstrap.replicates``, run above ``MULTINOMIAL_MAX_UNITS`` units.

Same signature and same resamples as ``bootstrap.replicates`` under half-sampling: the same
child generators give the same bytes, hence the same 0/2 weights per unit. Only the way the
weighted sums are taken differs, for speed and memory at 10^6 pairs (docs/benchmarks.md):

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

from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from ragwarrant.stats._plan import SumPlan

TILE_UNITS = 16_384
"""Units per tile (a multiple of 8, so a tile starts at a byte of the packed weights)."""
ROW_BLOCK = 32
"""Resamples unpacked and multiplied at once in a tile: a 2 MB float32 block."""
WINDOW_SDS = 8.0
"""Half-width of a quantile's window in standard deviations of its cumulative weight (+ 16
positions): a wider window changes no result, only the work."""


def replicates(
    plan: SumPlan,
    unit_of: np.ndarray,
    g: int,
    parts: list[tuple[int, int, np.random.Generator]],
    *,
    chunk_cells: int,
    max_workers: int,
) -> np.ndarray:
    """``bootstrap.replicates`` under half-sampling, chunks on ``max_workers`` threads.

    ``chunk_cells`` is unused: a chunk is ``HALF_SAMPLING_CHUNK`` resamples of packed bits.
    """
    del chunk_cells  # half-sampling chunks have a fixed number of resamples
    first_below = len(plan.sums)  # each quantile arm's rows-below column follows the sums
    quantiles = [
        (
            j,
            tuple(
                _WindowedQuantile(plan, j, q, (den, first_below + 2 * i + arm), unit_of, g, arm)
                for arm in (0, 1)
            ),
        )
        for i, (j, q, den) in enumerate(plan.quantiles)
    ]
    below = [w.below for _, pair in quantiles for w in pair]
    matrix = np.empty((g, len(plan.sums) + len(below)), dtype=np.float32)
    for j, s in enumerate(plan.sums):
        matrix[:, j] = s.vector(unit_of, g)
    for j, values in enumerate(below, start=len(plan.sums)):
        matrix[:, j] = values
    tiles = [matrix[lo : lo + TILE_UNITS] for lo in range(0, g, TILE_UNITS)]
    out = np.empty((parts[-1][1], len(plan.columns)))

    def run_chunk(part: tuple[int, int, np.random.Generator]) -> None:
        start, stop, child = part
        bits = _Bits(child, stop - start, g)
        lin = bits.dot(tiles)
        plan.finish_means(lin, out[start:stop])
        for j, (cand, base) in quantiles:
            out[start:stop, j] = cand.finish(lin, bits) - base.finish(lin, bits)

    pinned = _blas_controller().limit(limits=1, user_api="blas")  # BLAS: one thread per worker
    with pinned, ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        list(pool.map(run_chunk, parts))
    return out


class _Bits:
    """Half-sampling weights of ``b`` resamples over ``g`` units as packed bits (b, ceil(g/8));
    weight = 2 × bit. The bytes are ``rng.bytes(b * ceil(g / 8))``'s, as the reference's."""

    def __init__(self, rng: np.random.Generator, b: int, g: int) -> None:
        self.b, self.g = b, g
        nbytes = (g + 7) // 8
        size = b * nbytes  # the bytes rng.bytes(size) returns (and the same generator state),
        # viewed from the uint32 words without Generator.bytes' three copies
        words = rng.integers(0, 4294967296, size=max(1, (size + 3) // 4), dtype=np.uint32)
        self.packed = words.astype("<u4", copy=False).view(np.uint8)[:size].reshape(b, nbytes)

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


class _WindowedQuantile:
    """One policy's weighted quantile, computed in a window of sorted positions.

    The cumulative weight at sorted position i concentrates around its expectation: at the
    quantile's own position, cumulative weight minus q × total weight has standard deviation
    sqrt(q (1 - q) × sum of squared unit sizes) for weights of variance 1, so the quantile's
    position lies in a window of ``WINDOW_SDS`` such standard deviations (+ 16) either side of
    q × n. The weight of the rows ranked below the window (its column of the float32
    matrix) and the total (column ``den``) come from the shared product; only the window
    is summed cumulatively. Resamples whose target falls outside the window are recomputed over all
    positions, so the result equals ``bootstrap.weighted_lower_quantile``'s.
    """

    def __init__(
        self,
        plan: SumPlan,
        j: int,
        q: float,
        cols: tuple[int, int],
        unit_of: np.ndarray,
        g: int,
        arm: int,
    ) -> None:
        """Column j's candidate (arm 0) or baseline (arm 1) quantile q; ``cols``: the matrix
        columns of its rows per unit and of its rows ranked below the window."""
        col = plan.columns[j]
        values = col.baseline if arm else col.candidate
        units = unit_of[col.rows]
        order = np.argsort(values, kind="stable")
        self.sorted, self.q, self.cols = values[order], q, cols
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
        outside = (below >= target) | (idx >= self.hi - self.lo)
        idx += self.lo
        if np.any(outside):  # over all positions, as bootstrap.weighted_lower_quantile
            rows = np.flatnonzero(outside)
            full = np.cumsum(bits.rows(rows)[:, self.all_units], axis=1)
            idx[rows] = np.sum(full < target[rows, None], axis=1)
        return self.sorted[np.minimum(idx, self.sorted.size - 1)]


@cache
def _blas_controller():  # type: ignore[no-untyped-def]
    """The process's ``threadpoolctl.ThreadpoolController``, built once (building one scans
    every loaded shared library, 2–5 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
