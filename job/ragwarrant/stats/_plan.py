"""The per-unit sums a bootstrap of means and quantiles needs: one home for both engines.

``Column`` is one statistic over a subset of the paired rows; ``SumPlan`` lists the per-unit sum
vectors the statistics are functions of, each once. ``stats.bootstrap.replicates`` (the plain
path) and ``stats._scale.replicates`` (the fast engine for many units) both take a ``SumPlan``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Statistic = Literal["mean", "p50", "p95"]
QUANTILE = {"p50": 0.5, "p95": 0.95}


@dataclass(frozen=True)
class Column:
    """One statistic over a subset of the paired rows (a metric, or a metric in a slice).

    Attributes:
        rows: shape (m,) int, indices of the rows (0..n-1) this column uses, each once.
        candidate, baseline: shape (m,) finite values in metric units, aligned with ``rows``.
        statistic: mean, p50 or p95 of the difference candidate - baseline.
    """

    rows: np.ndarray
    candidate: np.ndarray
    baseline: np.ndarray
    statistic: Statistic


@dataclass(frozen=True)
class UnitSum:
    """One per-unit sum vector: a column's rows per unit (``centre`` None), or the sum per unit
    of its deltas minus ``centre`` (a mean's centred numerator)."""

    column: Column
    centre: float | None

    def vector(self, unit_of: np.ndarray, g: int) -> np.ndarray:
        """Shape (G,) float64, zero for units without a row in the column."""
        units = unit_of[self.column.rows]
        if self.centre is None:
            return np.bincount(units, minlength=g).astype(np.float64)
        delta = (self.column.candidate - self.column.baseline) - self.centre
        return np.bincount(units, weights=delta, minlength=g)


@dataclass(frozen=True)
class SumPlan:
    """The per-unit sums the statistics need, each once, and how each statistic uses them.

    ``sums``: per distinct set of rows its rows per unit (first seen first), per mean its
    centred delta sums, in column order. ``means``: (column j, numerator, denominator) indices
    into ``sums``; a mean's replicate is its estimate + numerator / denominator, both weighted.
    ``quantiles``: (column j, quantile level q, index of the column's rows per unit).
    """

    columns: Sequence[Column]
    sums: list[UnitSum]
    means: list[tuple[int, int, int]]
    quantiles: list[tuple[int, float, int]]

    @classmethod
    def of(cls, columns: Sequence[Column]) -> SumPlan:
        """The plan of ``columns``."""
        plan = cls(columns, [], [], [])
        rows_at: dict[bytes, int] = {}
        for j, col in enumerate(columns):
            den = rows_at.setdefault(col.rows.tobytes(), len(plan.sums))
            if den == len(plan.sums):
                plan.sums.append(UnitSum(col, None))
            if col.statistic != "mean":
                plan.quantiles.append((j, QUANTILE[col.statistic], den))
                continue
            plan.means.append((j, len(plan.sums), den))
            plan.sums.append(UnitSum(col, float((col.candidate - col.baseline).mean())))
        return plan

    def finish_means(self, lin: np.ndarray, out: np.ndarray) -> None:
        """Fill the mean columns of ``out`` (b, k) from ``lin`` = weights @ sums (b, len(sums))."""
        for j, num, den in self.means:
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, j] = self.sums[num].centre + lin[:, num] / lin[:, den]
