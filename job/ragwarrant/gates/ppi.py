"""Noninferiority decided on the judge-corrected (PPI++) bound when human labels are given.

The judge-only gate (``gates.noninferiority``) decides on the judge's scores; with human labels
on a uniform random draw (``review``), the same test is decided instead on the PPI++ bound of
the mean *human-scale* paired delta (``stats.ppi``; Angelopoulos, Duchi & Zrnic 2023), which
stays valid whatever the judge's bias. The judge-only figures stay in ``details`` beside the
corrected ones, so decision.json and the reports show both.
"""

from __future__ import annotations

import math

import numpy as np

from ragwarrant.outputs import GateResult, GateStatus, Scalar
from ragwarrant.review import HumanLabelSet
from ragwarrant.stats.ppi import PPIBound, labels_needed, ppi_mean_bound

METHOD = "ppi++ (cross-fitted, score)"


def _reason(
    judge: GateResult,
    bound: PPIBound,
    status: GateStatus,
    more: int | None,
    labels: HumanLabelSet,
    n_imputed: int,
) -> str:
    """The gate's reason: the corrected bound against -margin, the judge-only bound beside it,
    the outcome (with the "more labels" hint when inconclusive), the labels missing and
    imputed, and a caveat when the judge-only test resampled clusters."""
    where = judge.reason.split(":", 1)[0]
    notes = ""
    if labels.missing:
        notes = (
            f"; labels_missing: {labels.missing} of {labels.drawn} drawn items lack a label, the "
            f"{n_imputed} in this test imputed adversarially (the candidate's label at the "
            "scale's worst end, the baseline's at its best)"
        )
    if judge.details.get("units") == "clusters":  # the PPI++ bound does not resample clusters
        notes += (
            " (the bound treats examples as independent; the judge-only test resampled clusters)"
        )
    fail = status is GateStatus.FAIL  # a loss: its upper bound below -margin proves it
    side, value = ("upper", bound.upper_bound) if fail else ("lower", bound.lower_bound)
    head = (
        f"{where}: judge-corrected (PPI++) {side} bound {value:+.4g} {'<' if fail else 'vs'} "
        f"-margin {judge.threshold:+.4g} (judge-only lower bound {judge.lower_bound:+.4g}; lambda "
        f"{bound.lam:.3g}, {bound.n} human labels of {bound.n_total} judged, judge bias "
        f"{bound.judge_bias:+.4g})"
    )
    if status is GateStatus.PASS:
        return head + ": noninferior on the human scale" + notes
    if status is GateStatus.FAIL:
        return head + ": a confirmed loss beyond the margin on the human scale" + notes
    if bound.standard_error <= 0:
        tail = (
            f"; the human deltas show no spread (each {bound.estimate:+.4g}): a bound without "
            "variance cannot show noninferiority; labels on items where the reviewers tell the "
            "policies apart are needed"
        )
    elif more:
        tail = f"; about {more} more human labels would likely resolve it"
    elif bound.estimate > judge.threshold:  # type: ignore[operator]
        tail = (
            f"; no feasible number of labels among these {bound.n_total} judged examples "
            "would likely resolve it: more judged examples, with labels, are needed"
        )
    else:
        tail = "; the estimate is beyond the margin: more labels would more likely confirm a loss"
    return head + ": inconclusive" + tail + notes


def _human_pairs(
    example_ids: np.ndarray, labels: HumanLabelSet, least_favourable: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mask of ``example_ids`` with a human pair; whether each of those is a real label, not
    imputed; the candidate's and the baseline's human values there). Every drawn example
    without both labels gets ``least_favourable``, so withholding labels never helps the
    candidate (the worst-case bound of Manski 1989, "Anatomy of the selection problem")."""
    real = labels.values()
    imputed = {i: least_favourable for i in labels.missing_ids if i not in real}
    human = real | imputed
    mask = np.fromiter((i in human for i in example_ids.tolist()), bool, example_ids.size)
    kept = example_ids[mask].tolist()
    is_real = np.fromiter((i in real for i in kept), bool, len(kept))
    hc, hb = np.array([human[i] for i in kept], dtype=np.float64).reshape(-1, 2).T
    return mask, is_real, hc, hb


def _too_few(
    judge: GateResult, details: dict[str, Scalar], labels: HumanLabelSet, n: int, minimum: int
) -> GateResult:
    """The judge-only gate made INCONCLUSIVE: ``n`` real labels, below ``minimum``; ``details``
    its own with the judge-only results."""
    return judge.model_copy(
        update={
            "status": GateStatus.INCONCLUSIVE,
            "reason": f"{judge.reason.split(':', 1)[0]}: {n} human labels in this test; the "
            f"judge-corrected bound needs at least {minimum} (the contract's min_paired_n): "
            f"about {minimum - n} more human labels are needed (the judge alone does not "
            "decide)",
            "more_paired_n": minimum - n,
            "details": details
            | {
                "labels_drawn": labels.drawn,
                "labels_missing": labels.missing,
                "labelled_n": n,
                "labelled_n_min": minimum,
                "units": "human labels",
            },
        }
    )


def gate_corrected(
    judge: GateResult,
    example_ids: np.ndarray,
    judge_pair: tuple[np.ndarray, np.ndarray],
    labels: HumanLabelSet,
    *,
    sign: int,
    power: float,
    agree_at: float,
    min_labelled: int,
    least_favourable: tuple[float, float],
) -> GateResult:
    """The noninferiority gate ``judge`` re-decided on the PPI++ bound of the human delta.

    Args:
        judge: the judge-only gate (its threshold = -margin and alpha are kept).
        example_ids: shape (N,) example ids of the test's paired examples.
        judge_pair: shape (N,) judge values of the candidate and of the baseline, metric units.
        labels: the human labels of the metric; those of examples in ``example_ids`` are used.
        sign: the metric's direction sign (+1 higher is better), orienting the deltas
            (positive = candidate better).
        power: the power of the "more labels" hint.
        agree_at: the value from which an output counts as good, for the judge–human
            disagreement count (``details.judge_human_disagreements`` of
            ``judge_human_outputs``, read by ``gates.corroboration.calibrate_on_labels``).
        min_labelled: the fewest real human labels in this test for the bound to decide
            (the contract's ``min_paired_n`` of the test); below it the gate is INCONCLUSIVE
            with the count of labels still needed.
        least_favourable: (candidate's, baseline's) human value imputed for a drawn example
            of this test without both labels: the candidate's worst and the baseline's best
            end of the scale (``gates.paired.least_favourable_ends``), metric units.

    Returns:
        A GateResult with the same id: estimate and bounds are the corrected ones (one-sided
        at the gate's alpha), ``method`` is ``METHOD``, ``more_paired_n`` counts human labels
        (``details.units`` = "human labels"), and ``details`` holds the judge-only estimate,
        bound, status and method, lambda, n, N, the judge's bias and the missing labels.
        Pass when the lower bound exceeds -margin, fail when the upper bound is below it.
        Human deltas without spread (a zero standard error: every labelled item shows the same
        delta) make the bound the estimate itself: such a test never passes (INCONCLUSIVE).
    """
    assert judge.threshold is not None and judge.alpha is not None
    mask, is_real, hc, hb = _human_pairs(example_ids, labels, least_favourable)
    n_real = int(is_real.sum())
    n_imputed = is_real.size - n_real
    details: dict[str, Scalar] = judge.details | {
        "judge_only_estimate": judge.estimate,
        "judge_only_lower_bound": judge.lower_bound,
        "judge_only_status": judge.status.value,
        "judge_only_method": judge.method,
    }
    if n_real < max(min_labelled, 2):
        return _too_few(judge, details, labels, n_real, max(min_labelled, 2))
    judge_deltas = sign * (judge_pair[0] - judge_pair[1])
    bound = ppi_mean_bound(
        judge_deltas,
        judge_deltas[mask],
        sign * (hc - hb),
        alpha=judge.alpha,
        unlabelled_mask=~mask,
        threshold=judge.threshold,
    )
    # labelled outputs (both policies') the judge and the reviewers class differently, each
    # output good when its value is at or beyond ``agree_at`` in the metric's direction
    judged = np.concatenate([j[mask][is_real] for j in judge_pair])
    human = np.concatenate([hc[is_real], hb[is_real]])
    good_judged, good_human = sign * (judged - agree_at) >= 0, sign * (human - agree_at) >= 0
    upper = bound.upper_bound
    more = None
    spread = bound.standard_error > 0  # without it the bound is the estimate: no PASS
    if bound.lower_bound > judge.threshold and spread:
        status = GateStatus.PASS
    elif upper < judge.threshold:
        status = GateStatus.FAIL
    else:
        status = GateStatus.INCONCLUSIVE
        more = labels_needed(bound, judge.threshold, power) if spread else None
    details |= {
        "units": "human labels",
        "ppi_lambda": bound.lam,
        "labelled_n": n_real,
        "judged_n": bound.n_total,
        "judge_bias": bound.judge_bias,
        "standard_error": bound.standard_error,
        "labels_drawn": labels.drawn,
        "labels_missing": labels.missing,
        "labels_imputed": n_imputed,
        "labelled_n_min": min_labelled,
        "labels_outside_test": len(labels.example_ids) - n_real,
        "judge_human_disagreements": int(np.count_nonzero(good_judged != good_human)),
        "judge_human_outputs": 2 * n_real,
    }
    return judge.model_copy(
        update={
            "status": status,
            "estimate": bound.estimate,
            "lower_bound": bound.lower_bound,
            "upper_bound": upper if math.isfinite(upper) else None,
            "p_value": bound.p_value,
            "reason": _reason(judge, bound, status, more, labels, n_imputed),
            "more_paired_n": more,
            "method": METHOD,
            "details": details,
        }
    )
