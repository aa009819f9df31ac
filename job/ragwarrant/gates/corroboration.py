"""Evaluator reliability: the judge's disagreement and abstention rates stay within limits.

A candidate is decided on the baseline's and its own judged examples, so both policies' rates
count, over all decided examples and in every slice. A rate is compared by its one-sided
(1 - alpha) upper Clopper–Pearson bound (Clopper & Pearson 1934, Biometrika 26:404–413;
``upper_rate_bound``, equal to ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``'s
upper end at level 1 - 2 alpha), not its point value: the gate passes only when every bound is at or
below the maximum, i.e. the evidence shows the rate within its limit. A bound above it fails the
gate; ``decision.classify_candidate`` then caps the candidate at INCONCLUSIVE with reason
``evaluator-unreliable`` (it can still be BLOCKed or REJECTed on other grounds). A policy with
nothing the judge and the deterministic checks both judged also fails the disagreement gate: the
contract asked for corroboration and none was possible.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragwarrant.outputs import (
    CorroborationRates,
    CorroborationSummary,
    GateResult,
    GateStatus,
    Scalar,
)
from ragwarrant.stats.distributions import beta_ppf

DISAGREEMENT_GATE_ID = "corroboration:evaluator-reliability:disagreement-rate"
ABSTENTION_GATE_ID = "corroboration:evaluator-reliability:abstention-rate"


def _where(row: CorroborationRates) -> str:
    return f"{row.policy_id}@{row.slice}" if row.slice is not None else row.policy_id


_COUNT_OF = {"disagreement_rate": "n_disagreements", "abstention_rate": "n_abstained"}


def upper_rate_bound(count: int, n: int, alpha: float) -> float:
    """One-sided (1 - alpha) upper Clopper–Pearson bound of a rate ``count / n`` (n > 0).

    Clopper & Pearson (1934), Biometrika 26:404–413: the p solving ``P(X <= count; n, p) =
    alpha``, 1.0 when ``count == n``; in closed form the (1 - alpha) quantile of
    Beta(count + 1, n - count) (e.g. Brown, Cai & DasGupta 2001, Statistical Science
    16:101–133, eq. 4), computed with ``scipy.special.betaincinv`` (``stats.distributions``)
    without importing ``scipy.stats`` (issue 13). It equals ``scipy.stats.binomtest(count, n)
    .proportion_ci(confidence_level=1 - 2 * alpha, method="exact").high`` to 1e-12
    (``tests/gates/test_corroboration.py``).
    """
    if count >= n:
        return 1.0
    return float(beta_ppf(1 - alpha, count + 1, n - count))


def _rate_gate(
    gate_id: str,
    what: str,
    rows: list[CorroborationRates],
    rate_of: str,
    n_of: str,
    limit: float,
    uncomputable: list[str],
    alpha: float,
) -> GateResult:
    details: dict[str, Scalar] = {}
    rated = [r for r in rows if getattr(r, rate_of) is not None]
    bound = {
        id(r): upper_rate_bound(getattr(r, _COUNT_OF[rate_of]), getattr(r, n_of), alpha)
        for r in rated
    }
    for r in rows:
        where = _where(r)
        details[f"{where}.{rate_of}"] = getattr(r, rate_of)
        details[f"{where}.{n_of}"] = getattr(r, n_of)
        details[f"{where}.upper_bound"] = bound.get(id(r))
    worst = max(rated, key=lambda r: (bound[id(r)], r.slice is None), default=None)
    over = [r for r in rated if bound[id(r)] > limit]
    estimate, upper, n = (
        (getattr(worst, rate_of), bound[id(worst)], getattr(worst, n_of))
        if worst is not None
        else (None, None, None)
    )
    failed = bool(over or uncomputable)
    parts = [
        f"{what} rate {getattr(r, rate_of):.3f} for {_where(r)} "
        f"(n {getattr(r, n_of)}): its upper {1 - alpha:g} bound {bound[id(r)]:.3f} is above "
        f"the limit {limit:g}"
        for r in over[:5]
    ]
    parts += [
        f"nothing to corroborate for {p}: no example has both a judge value and text"
        for p in uncomputable
    ]
    if not parts:
        parts = [
            f"highest upper {1 - alpha:g} bound of the {what} rate {upper:.3f} "
            f"({_where(worst)}, rate {estimate:.3f}) <= the limit {limit:g}"
            if worst is not None
            else f"no {what} rate to check"
        ]
    return GateResult(
        id=gate_id,
        kind="corroboration",
        status=GateStatus.FAIL if failed else GateStatus.PASS,
        statistic=f"{what} rate, worst upper bound of policy and slice",
        estimate=estimate,
        upper_bound=upper,
        threshold=limit,
        alpha=alpha,
        n=n,
        method="one-sided Clopper-Pearson upper bound",
        reason="; ".join(parts),
        details=details,
    )


def gate_corroboration(
    summary: CorroborationSummary,
    policies: Sequence[str],
    alpha: float = 0.05,
    *,
    candidate_gates: Sequence[GateResult] = (),
) -> list[GateResult]:
    """The evaluator-reliability gates for a comparison of ``policies`` (baseline and candidate).

    Args:
        summary: the run's corroboration summary (``corroborate``).
        policies: the policies whose judged examples decide the comparison.
        alpha: one-sided level of the rates' upper Clopper–Pearson bounds.
        candidate_gates: the candidate's gates; where its groundedness metric was decided on
            human labels, the disagreement gate is judged against them (``calibrate_on_labels``).

    Returns:
        Two gates, kind ``corroboration``: the disagreement rate (fail when the upper bound of
        a rate of any of ``policies``, overall or in a slice, is above
        ``max_disagreement_rate``, or a policy has no judged example) and the abstention rate
        (fail when a bound is above ``max_abstention_rate``; not-applicable when the contract
        names no repeated samples).
    """
    rows = [r for r in summary.rates if r.policy_id in policies]
    overall = {r.policy_id: r for r in rows if r.slice is None}
    uncomputable = [p for p in policies if p not in overall or overall[p].n_judged == 0]
    gates = [
        _rate_gate(
            DISAGREEMENT_GATE_ID,
            "disagreement",
            rows,
            "disagreement_rate",
            "n_judged",
            summary.max_disagreement_rate,
            uncomputable,
            alpha,
        )
    ]
    if not summary.sample_metrics:
        gates.append(
            GateResult(
                id=ABSTENTION_GATE_ID,
                kind="corroboration",
                status=GateStatus.NOT_APPLICABLE,
                reason="the contract names no repeated judge samples "
                "(corroboration.sample_metrics)",
            )
        )
    else:
        gates.append(
            _rate_gate(
                ABSTENTION_GATE_ID,
                "abstention",
                rows,
                "abstention_rate",
                "n_with_samples",
                summary.max_abstention_rate,
                [],
                alpha,
            )
        )
    return calibrate_on_labels(gates, candidate_gates, summary.groundedness_metric, alpha)


def calibrate_on_labels(
    gates: list[GateResult], candidate_gates: Sequence[GateResult], metric: str, alpha: float
) -> list[GateResult]:
    """The disagreement gate judged against human labels where the candidate has them.

    When the candidate's overall noninferiority gate of the groundedness ``metric`` was decided
    on the judge-corrected bound (``gates.ppi``; ``details.judge_human_disagreements`` present),
    the judge is checked against the reviewers, not the deterministic detectors: the corrected
    bound is valid whatever the judge's error, so the gate fails only when the labels show the
    judge–human disagreement rate above ``max_disagreement_rate`` (its one-sided lower
    Clopper–Pearson bound above the limit). A judge that agrees with every label always passes.
    The detectors' figures stay in ``details`` (``detector.*``). Other gates are unchanged.

    Args:
        gates: ``gate_corroboration``'s gates for this candidate.
        candidate_gates: the candidate's gates (``gates.candidate.evaluate_candidate``).
        metric: the contract's ``corroboration.groundedness_metric``.
    """
    ni = next((g for g in candidate_gates if g.id == f"noninferiority:{metric}"), None)
    details = ni.details if ni is not None else {}
    count, n = details.get("judge_human_disagreements"), details.get("judge_human_outputs")
    if not isinstance(count, int) or not isinstance(n, int) or n == 0:
        return gates
    out = []
    for g in gates:
        if g.id != DISAGREEMENT_GATE_ID or g.threshold is None:
            out.append(g)
            continue
        # one-sided (1 - alpha) lower Clopper–Pearson bound (Clopper & Pearson 1934): 0 at
        # count 0, else the alpha quantile of Beta(count, n - count + 1)
        lower = float(beta_ppf(alpha, count, n - count + 1)) if count > 0 else 0.0
        rate = count / n
        status = GateStatus.FAIL if lower > g.threshold else GateStatus.PASS
        verb = "is above" if status is GateStatus.FAIL else "does not exceed"
        out.append(
            g.model_copy(
                update={
                    "status": status,
                    "statistic": "judge-human disagreement rate on the labelled outputs",
                    "estimate": rate,
                    "lower_bound": lower,
                    "upper_bound": upper_rate_bound(count, n, alpha),
                    "n": n,
                    "reason": f"judged against {n} human-labelled outputs of {metric}: the judge "
                    f"disagrees with the reviewers on {count} (rate {rate:.3f}); its lower "
                    f"{1 - alpha:g} bound {lower:.3f} {verb} the limit {g.threshold:g}",
                    "details": {f"detector.{k}": v for k, v in g.details.items()}
                    | {"calibrated_on": "human labels", "detector.reason": g.reason},
                }
            )
        )
    return out
