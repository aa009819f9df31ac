"""Bootstrap tests of oriented deltas shared by the noninferiority and claim gates."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragwarrant.stats.bootstrap import BootstrapResult, Statistic, paired_bootstrap

__all__ = ["OrientedTest", "make_rng", "run_bootstrap"]


def make_rng(seed: int, *scope: str) -> np.random.Generator:
    """A generator seeded by the contract's seed and a stable hash of ``scope``.

    The stream of one test does not depend on which other tests run or in which order.
    """
    digest = hashlib.sha256("\x1f".join(scope).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


@dataclass(frozen=True)
class OrientedTest:
    """Bootstrap distribution of an oriented delta (positive = candidate better).

    Attributes:
        estimate: the oriented statistic on the sample (metric units).
        replicates: shape (B,) oriented bootstrap replicates.
        n: paired examples; n_units: resampled units (clusters under the cluster bootstrap).
    """

    estimate: float
    replicates: np.ndarray
    n: int
    n_units: int

    def lower(self, alpha: float) -> float:
        """One-sided (1 - alpha) lower percentile bound."""
        return float(np.quantile(self.replicates, alpha))

    def upper(self, alpha: float) -> float:
        """One-sided (1 - alpha) upper percentile bound."""
        return float(np.quantile(self.replicates, 1 - alpha))

    def p_greater(self, threshold: float) -> float:
        """Percentile-inversion p-value for H0: delta <= threshold, never 0.

        (1 + #{replicates <= threshold}) / (B + 1) (Davison & Hinkley 1997, eq. 4.11): a
        bootstrap with B resamples cannot show a p-value below 1 / (B + 1).
        """
        count = int(np.sum(self.replicates <= threshold))
        return (count + 1) / (self.replicates.size + 1)

    def standard_error(self) -> float:
        """Bootstrap standard error."""
        return float(np.std(self.replicates, ddof=1))


def run_bootstrap(
    candidate: np.ndarray,
    baseline: np.ndarray,
    statistics: Sequence[Statistic],
    signs: Sequence[int],
    groups: np.ndarray | None,
    resamples: int,
    rng: np.random.Generator,
) -> list[OrientedTest]:
    """Bootstrap several metrics over the same paired examples and orient each.

    Args:
        candidate, baseline: shape (n, k).
        statistics: per column; signs: +1 when higher is better, -1 when lower is better.
        groups: shape (n,) cluster labels, or None.
    """
    res: BootstrapResult = paired_bootstrap(
        candidate, baseline, statistics, rng=rng, resamples=resamples, groups=groups
    )
    return [
        OrientedTest(
            estimate=float(s * res.estimate[j]),
            replicates=s * res.replicates[:, j],
            n=res.n,
            n_units=res.n_units,
        )
        for j, s in enumerate(signs)
    ]
