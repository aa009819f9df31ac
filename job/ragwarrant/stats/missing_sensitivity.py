"""Tipping-point sensitivity of a noninferiority test to values excluded as missing.

Under ``on_missing: exclude`` a test sees only complete pairs. When the candidate's values are
missing exactly where it fails (informative missingness), the complete pairs hide its losses:
8 of 300 candidate values missing on its worst examples against 6 baseline values missing at
random gave a false PROMOTE in about 20-25 % of runs at the margin (issue 33), and neither the
count-based balance test nor pairing coverage can see it, because the counts look like chance.

The sensitivity analysis (ICH E9(R1), 2019, "Addendum on estimands and sensitivity analysis",
§A.5.2; the tipping-point analysis of Ratitch, O'Kelly & Tosiello 2013, Pharmaceutical
Statistics 12:337–347): every excluded value is imputed at the end of the scale least
favourable to the candidate (the candidate's at its worst end, the baseline's at its best end:
the worst-case bound of ``gates.paired``, Manski 1989), most damaging first, and the same test
is rerun. An example blank for both policies is excluded too and imputed on both sides (a
fresh-user trial: 12 of 300 blank for both, exactly where the candidate scored 0 against 0.85,
PROMOTEd on the other 288 pairs). The complete-case decision stands only when the test still
rejects with every such value imputed; otherwise the tipping point is the fewest imputed pairs
that stop it rejecting (found by bisection, taking the test's rejection as monotone in the
number imputed: each imputed pair is at least as unfavourable as any before it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragwarrant.stats.onesided import OneSidedTest


@dataclass(frozen=True)
class Sensitivity:
    """The outcome of the tipping-point analysis.

    Attributes:
        imputed: m, the excluded pairs (one or both values missing), all imputed adversarially.
        tipping_point: the fewest of them (most damaging first) with which the test no longer
            rejects, or None when it still rejects with all m imputed.
        test: the test with all m imputed.
    """

    imputed: int
    tipping_point: int | None
    test: OneSidedTest

    @property
    def holds(self) -> bool:
        """Whether the decision survives every excluded value at its adversarial end."""
        return self.tipping_point is None


def adversarial_pairs(
    candidate: np.ndarray,
    baseline: np.ndarray,
    lost_c: np.ndarray,
    lost_b: np.ndarray,
    worst: float,
    best: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs ``exclude`` drops, the missing side at its least favourable end.

    Args:
        candidate, baseline: shape (n,) values in metric units (the missing side's ignored).
        lost_c, lost_b: shape (n,) bool, where the candidate's (the baseline's) value is
            missing; both are set on an example missing for both policies.
        worst, best: the scale's end least favourable to the candidate (its value) and to
            the baseline's side (the baseline's value): (low, high) when higher is better.

    Returns:
        (positions, candidate, baseline), shape (m,) each, m = number of lost pairs.
    """
    at = np.flatnonzero(lost_c | lost_b)
    return at, np.where(lost_c[at], worst, candidate[at]), np.where(lost_b[at], best, baseline[at])


def worst_first(oriented_delta: np.ndarray) -> np.ndarray:
    """Order (indices) of imputed pairs, most damaging first: the smallest oriented delta
    (candidate minus baseline, positive = candidate better) first, stable for ties."""
    return np.argsort(np.asarray(oriented_delta, dtype=np.float64), kind="stable")


def tipping_point(run: Callable[[int], OneSidedTest], m: int) -> Sensitivity:
    """Rerun a test with the k most damaging of ``m`` imputed pairs added, k = m first.

    Args:
        run: k -> the test on the complete pairs plus the first k imputed pairs in
            ``worst_first`` order; ``run(0)`` (the complete-case test) is taken to reject.
        m: the number of imputed pairs (>= 1).

    Returns:
        Sensitivity: ``tipping_point`` None when ``run(m)`` rejects, else the smallest k in
        1..m whose test does not reject (bisection: about log2(m) + 1 tests).
    """
    full = run(m)
    if full.rejects:
        return Sensitivity(m, None, full)
    lo, hi = 0, m  # run(lo) rejects, run(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if run(mid).rejects else (lo, mid)
    return Sensitivity(m, hi, full)


@dataclass(frozen=True)
class Shift:
    """How a value differs on rows where another metric is missing (a diagnostic, not a test
    any gate decides by).

    Attributes:
        difference: mean where missing minus mean elsewhere, in the value's units.
        p_value: two-sided Mann-Whitney p-value (unadjusted).
        n_missing, n_present: the rows compared.
    """

    difference: float
    p_value: float
    n_missing: int
    n_present: int


def missingness_shift(where_missing: np.ndarray, elsewhere: np.ndarray) -> Shift:
    """Compare one metric on the rows where another is missing with the rest.

    Missing values that hide losses leave a trace in what was recorded: the rows where the
    candidate's faithfulness is blank may show a lower answer relevancy (missing not at random,
    Little & Rubin 2019, "Statistical Analysis with Missing Data", 3rd ed., §1.3). Two-sided
    Mann-Whitney U test (Mann & Whitney 1947; ``scipy.stats.mannwhitneyu``, exact for small
    samples without ties).

    Args:
        where_missing, elsewhere: shape (k,), (m,) finite values, k, m >= 1.
    """
    from scipy.stats import mannwhitneyu  # ~1 CPU-s to import: only when a run needs it

    p = float(mannwhitneyu(where_missing, elsewhere, alternative="two-sided").pvalue)
    diff = float(np.mean(where_missing) - np.mean(elsewhere))
    return Shift(diff, p, int(where_missing.size), int(elsewhere.size))
