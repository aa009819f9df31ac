"""Oriented one-sided tests: the one home of bounds, p-values and their method names.

A gate asks for a test of H0: delta <= threshold against H1: delta > threshold on an oriented
delta (positive = candidate better) and gets a frozen ``OneSidedTest`` back: estimate, lower and
upper one-sided bounds, p-value, the method's name and whether the test rejects. Nothing outside
``stats`` computes a quantile of bootstrap replicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ragwarrant.stats.bootstrap import Statistic, paired_bootstrap
from ragwarrant.stats.power import additional_pairs_needed

__all__ = ["OneSidedTest", "OrientedBootstrap", "UnitName", "oriented_bootstrap"]

UnitName = Literal["pairs", "clusters"]


@dataclass(frozen=True)
class OneSidedTest:
    """One-sided test of H0: delta <= threshold vs H1: delta > threshold, delta oriented.

    Attributes:
        estimate: the oriented statistic on the sample (metric units, positive = better).
        lower_bound, upper_bound: one-sided (1 - alpha) lower and upper confidence bounds.
        p_value: p-value of H0 (never 0).
        threshold: the value delta must exceed (e.g. -margin_abs, or 0 for a claim).
        alpha: the one-sided level of the bounds and of ``rejects``.
        rejects: whether the test rejects H0 at ``alpha`` (the gate passes only then).
        method: name of the interval/test method, recorded per gate.
        n: paired examples (rows); n_units: independent units (pairs or clusters).
        unit_name: what ``n_units`` and ``more_units_needed`` count.
        standard_error: standard error of the estimate (NaN when not defined).
        more_units_needed: additional units likely to resolve an unresolved test at the stated
            power, or None (resolved, or no sample size would resolve it at this effect).
        degenerate_reason: why the data cannot support a normal-theory or bootstrap bound
            (e.g. all pairs tied), or None.
    """

    estimate: float
    lower_bound: float
    upper_bound: float
    p_value: float
    threshold: float
    alpha: float
    rejects: bool
    method: str
    n: int
    n_units: int
    unit_name: UnitName
    standard_error: float
    more_units_needed: int | None
    degenerate_reason: str | None = None


@dataclass(frozen=True)
class OrientedBootstrap:
    """Bootstrap distribution of an oriented delta (positive = candidate better).

    Bounds are percentile bounds (Efron & Tibshirani 1993, §13.3); the p-value is the
    percentile-inversion p-value with the add-one correction (Davison & Hinkley 1997, eq. 4.11).

    Attributes:
        estimate: the oriented statistic on the sample (metric units).
        replicates: shape (B,) oriented bootstrap replicates.
        n: paired examples; n_units: resampled units (clusters under the cluster bootstrap).
        clustered: whether whole clusters were resampled.
        resampling: the resampling scheme (``stats.bootstrap.BootstrapResult.method``).
    """

    estimate: float
    replicates: np.ndarray
    n: int
    n_units: int
    clustered: bool = False
    resampling: str = "multinomial"

    @property
    def method(self) -> str:
        """The method's name, as recorded in a gate."""
        kind = "cluster" if self.clustered else "paired"
        return f"{kind} percentile bootstrap (B={self.replicates.size}, {self.resampling})"

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

    def test_greater(
        self, threshold: float, alpha: float, *, power: float, inclusive: bool = False
    ) -> OneSidedTest:
        """Test H0: delta <= threshold at one-sided level ``alpha`` by the percentile bound.

        Args:
            threshold: the value delta must exceed.
            alpha: one-sided level of both bounds.
            power: the power the "more units needed" hint aims for.
            inclusive: reject when the lower bound equals the threshold too (the rule of the
                first landing for noninferiority; issue 10 replaces it by
                ``stats.noninferiority.test_noninferiority``).

        Returns:
            OneSidedTest; it rejects only when the lower bound exceeds the threshold and the
            percentile p-value is at most ``alpha`` (so a level below 1 / (B + 1) is never
            met); ``more_units_needed`` is the normal-approximation hint of
            ``additional_pairs_needed`` in resampled units.
        """
        lcb = self.lower(alpha)
        # never reject with a p-value above alpha (a bound from the most extreme of B
        # replicates cannot support a level below 1 / (B + 1); issue 10's one rule)
        agrees = self.p_greater(threshold) <= alpha
        rejects = lcb >= threshold if inclusive else (lcb > threshold and agrees)
        se = self.standard_error()
        more = None
        if not rejects:
            more = additional_pairs_needed(self.estimate, threshold, se, self.n_units, alpha, power)
        return OneSidedTest(
            estimate=self.estimate,
            lower_bound=lcb,
            upper_bound=self.upper(alpha),
            p_value=self.p_greater(threshold),
            threshold=threshold,
            alpha=alpha,
            rejects=rejects,
            method=self.method,
            n=self.n,
            n_units=self.n_units,
            unit_name="clusters" if self.clustered else "pairs",
            standard_error=se,
            more_units_needed=more,
        )


def oriented_bootstrap(
    candidate: np.ndarray,
    baseline: np.ndarray,
    statistics: Sequence[Statistic],
    signs: Sequence[int],
    groups: np.ndarray | None,
    resamples: int,
    rng: np.random.Generator,
) -> list[OrientedBootstrap]:
    """Bootstrap several metrics over the same paired examples and orient each.

    Args:
        candidate, baseline: shape (n, k), row i of both is the same example.
        statistics: per column; signs: +1 when higher is better, -1 when lower is better.
        groups: shape (n,) cluster labels for the cluster bootstrap, or None.
        resamples: B; rng: the only source of randomness.

    Returns:
        One OrientedBootstrap per column, sharing the same resamples.
    """
    res = paired_bootstrap(
        candidate, baseline, statistics, rng=rng, resamples=resamples, groups=groups
    )
    return [
        OrientedBootstrap(
            estimate=float(s * res.estimate[j]),
            replicates=s * res.replicates[:, j],
            n=res.n,
            n_units=res.n_units,
            clustered=groups is not None,
            resampling=res.method,
        )
        for j, s in enumerate(signs)
    ]
