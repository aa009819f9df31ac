"""Paired per-example values of one metric for a candidate and the baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np

from ragwarrant.contract import MissingValuePolicy, OperationalMetric, QualityMetric
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.stats.missing_sensitivity import adversarial_pairs, missingness_shift


@dataclass(frozen=True)
class PairedMetric:
    """Aligned values of one metric.

    Attributes:
        examples: shape (n,) example codes that are paired (finite value for both policies).
        candidate, baseline: shape (n,) values in metric units.
        either: examples (in scope) where at least one policy has a row: the coverage denominator.
        missing_candidate, missing_baseline: rows in scope whose value is missing or infinite.
        imputed: missing values replaced under ``on_missing: worst`` (the candidate's at the
            scale's worst end, the baseline's at its best end).
        unpaired_candidate, unpaired_baseline: examples in scope with a finite value for the
            other policy only (this one's row absent, or its value missing and not imputed, or
            infinite).
        excluded: under ``on_missing: exclude`` (with a declared scale), the examples left out
            because a policy's value is missing or infinite (on one side or on both, the
            other side having a row): (example codes, candidate values, baseline values),
            shape (m,) each, with every missing side imputed at its least favourable end
            (``least_favourable_ends``) for the sensitivity analysis of
            ``stats.missing_sensitivity``; None otherwise.
    """

    examples: np.ndarray
    candidate: np.ndarray
    baseline: np.ndarray
    either: int
    missing_candidate: int
    missing_baseline: int
    imputed: int
    unpaired_candidate: int = 0
    unpaired_baseline: int = 0
    excluded: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def n(self) -> int:
        """Paired n."""
        return int(self.examples.size)

    @property
    def coverage(self) -> float:
        """Paired n over examples where either policy has a row (1.0 when there are none)."""
        return self.n / self.either if self.either else 0.0


def least_favourable_ends(quality: QualityMetric | OperationalMetric) -> tuple[float, float]:
    """(value for a missing candidate, value for a missing baseline) under ``worst``.

    The imputation least favourable to the candidate: its missing values at the worst end of
    the scale, the baseline's at the best end, so a missing value can never make the candidate
    look better (the worst-case bound of Manski 1989, "Anatomy of the selection problem",
    J. Human Resources 24:343–360). Imputing the baseline's worst end instead let a baseline
    with 20 % missing scores turn a 10-point loss into a PROMOTE (third trial).
    """
    # an operational metric's [min_value, max_value], both declared under worst|exclude
    low, high = cast(tuple[float, float], quality.scale)
    return (low, high) if quality.direction.sign > 0 else (high, low)


def pair_metric(
    index: EvidenceIndex,
    metric: str,
    baseline: str,
    candidate: str,
    scope: np.ndarray,
    quality: QualityMetric | OperationalMetric | None = None,
    on_missing: MissingValuePolicy = MissingValuePolicy.FAIL,
) -> PairedMetric:
    """Pair ``metric`` between two policies over the examples in ``scope``.

    Args:
        index: the evidence index.
        scope: shape (E,) bool, the examples this test may use (e.g. the confirmatory split).
        quality: the metric's declaration (its scale, or an operational metric's
            [min_value, max_value], gives the worst value), if any.
        on_missing: ``worst`` imputes the value least favourable to the candidate (its worst
            end for the candidate, the best end for the baseline); otherwise missing
            values are not paired (``fail`` then fails the non-finite gate; ``exclude`` leaves the
            coverage gate to judge).

    Returns:
        PairedMetric; empty arrays when either policy has no rows.
    """
    empty = np.zeros(0)
    cb = index.columns.get((baseline, metric))
    cc = index.columns.get((candidate, metric))
    if cb is None or cc is None:
        has = (cb.has_row if cb is not None else False) | (cc.has_row if cc is not None else False)
        either = int(np.sum(np.asarray(has) & scope)) if cb is not None or cc is not None else 0
        return PairedMetric(empty.astype(np.int64), empty, empty, either, 0, 0, 0)
    # A narrow scope (a protected slice) is paired on its own examples: the same counts and
    # pairs as the full-length masks, without ~15 passes over every example per call
    sub = np.flatnonzero(scope) if np.count_nonzero(scope) <= scope.size // 2 else None

    def at(a: np.ndarray) -> np.ndarray:  # a full-length array at the scope's positions
        return a if sub is None else a[sub]

    def code(positions: np.ndarray) -> np.ndarray:  # the example codes of scope positions
        return positions if sub is None else sub[positions]

    scope = scope if sub is None else np.ones(sub.size, dtype=bool)
    vb, vc = (cb.value.copy(), cc.value.copy()) if sub is None else (at(cb.value), at(cc.value))
    has_b, has_c = at(cb.has_row), at(cc.has_row)
    cb_missing, cc_missing = at(cb.missing), at(cc.missing)
    miss_b = (cb_missing | at(cb.infinite)) & scope
    miss_c = (cc_missing | at(cc.infinite)) & scope
    imputed = 0
    if on_missing is MissingValuePolicy.WORST and quality is not None:
        worst, best = least_favourable_ends(quality)
        imp_b, imp_c = cb_missing & scope, cc_missing & scope
        vb[imp_b] = best
        vc[imp_c] = worst
        imputed = int(imp_b.sum() + imp_c.sum())
    fin_b = scope & has_b & np.isfinite(vb)
    fin_c = scope & has_c & np.isfinite(vc)
    excluded = None
    if on_missing is MissingValuePolicy.EXCLUDE and quality is not None:
        # the pairs ``exclude`` drops, each missing side at its least favourable end: an
        # example missing on both sides is left out too, and could hide a loss as well
        lost, cand, base = adversarial_pairs(
            vc,
            vb,
            miss_c & (fin_b | miss_b),
            miss_b & (fin_c | miss_c),
            *least_favourable_ends(quality),
        )
        excluded = code(lost), cand, base
    either = int(np.sum((has_b | has_c) & scope))
    kept = np.flatnonzero(fin_b & fin_c)
    return PairedMetric(
        examples=code(kept),
        candidate=vc[kept],
        baseline=vb[kept],
        either=either,
        missing_candidate=int(miss_c.sum()),
        missing_baseline=int(miss_b.sum()),
        imputed=imputed,
        unpaired_candidate=int(np.sum(fin_b & ~fin_c)),
        unpaired_baseline=int(np.sum(fin_c & ~fin_b)),
        excluded=excluded,
    )


def missingness_notes(
    index: EvidenceIndex,
    metric: str,
    pm: PairedMetric,
    policies: Mapping[str, str],
    scope: np.ndarray,
) -> dict[str, tuple[str, float]]:
    """Under ``on_missing: exclude`` (``pm.excluded`` set): per side, the other metric that
    differs most between the side's rows in ``scope`` where ``metric`` is missing and the rest
    (``stats.missing_sensitivity.missingness_shift``; a diagnostic, it decides nothing).

    Every other metric column the evidence has for the side's policy (judge scores included)
    is compared where at least 2 values fall on each side of the split; the one with the
    smallest Mann-Whitney p-value is named.

    Args:
        policies: side ("candidate", "baseline") -> policy id.

    Returns:
        side -> (a sentence with the counts, the mean shift and the p-value; that p-value), for
        each side with at least 2 missing values and something to compare; {} when not under
        ``exclude``.
    """
    notes: dict[str, tuple[str, float]] = {}
    if pm.excluded is None:
        return notes
    for side, policy in policies.items():
        col = index.columns[(policy, metric)]
        lost = scope & (col.missing | col.infinite)
        kept = scope & col.has_row & np.isfinite(col.value)
        shifts = []
        for other in sorted(m for (p, m) in index.columns if p == policy and m != metric):
            v = index.columns[(policy, other)].value
            a, b = v[lost & np.isfinite(v)], v[kept & np.isfinite(v)]
            if a.size >= 2 and b.size >= 2:
                shifts.append((missingness_shift(a, b), other))
        if not shifts:
            continue
        sh, other = min(shifts, key=lambda t: t[0].p_value)
        notes[side] = (
            f"on the {sh.n_missing} rows where the {side}'s {metric} is missing, its {other} is "
            f"{abs(sh.difference):.3g} {'lower' if sh.difference < 0 else 'higher'} than on the "
            f"other {sh.n_present} (Mann-Whitney p = {sh.p_value:.3g}, the smallest of "
            f"{len(shifts)} comparison{'s' if len(shifts) > 1 else ''}, unadjusted)",
            sh.p_value,
        )
    return notes
