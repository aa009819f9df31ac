"""Evaluator-reliability gates and the evaluator-unreliable cap in classify_candidate."""

from __future__ import annotations

from ragwarrant.decision import classify_candidate
from ragwarrant.gates.corroboration import (
    ABSTENTION_GATE_ID,
    DISAGREEMENT_GATE_ID,
    gate_corroboration,
    upper_rate_bound,
)
from ragwarrant.outputs import (
    CandidateClass,
    CorroborationRates,
    CorroborationSummary,
    GateResult,
    GateStatus,
)
from tests.gates.test_gates import contract, evaluate, good_data


def rates(policy, slice_=None, judged=100, dis=5, sampled=100, abstained=2) -> CorroborationRates:
    return CorroborationRates(
        policy_id=policy,
        slice=slice_,
        n_examples=judged,
        n_with_text=judged,
        n_judged=judged,
        n_disagreements=dis,
        disagreement_rate=dis / judged if judged else None,
        judge_supported_lexical_unsupported=dis,
        judge_unsupported_lexical_supported=0,
        answer_type_disagreements=0,
        n_with_samples=sampled,
        n_abstained=abstained,
        abstention_rate=abstained / sampled if sampled else None,
        failed_retrieval=0,
        failed_generation=dis,
        failed_answer=0,
        fabricated_citations=0,
        honest_refusals=0,
    )


BIG = {"judged": 1000, "dis": 40, "sampled": 1000, "abstained": 10}  # bounds under the limits


def summary(rows, samples=("s1", "s2")) -> CorroborationSummary:
    return CorroborationSummary(
        groundedness_metric="faith",
        supported_threshold=0.5,
        answer_relevance_metric=None,
        sample_metrics=list(samples),
        sample_disagreement_max=0.5,
        context_relevance_floor=0.25,
        lexical_gate="hybrid",
        lexical_threshold=0.43,
        calibration_version="lexical-v1",
        calibration_sha256="0" * 64,
        max_disagreement_rate=0.1,
        max_abstention_rate=0.05,
        rates=rows,
    )


def by_id(gates):
    return {g.id: g for g in gates}


def test_rates_within_limits_pass():
    """Disagreement 5 % and abstention 1 % of 1000, upper bounds under 10 % and 5 %, pass."""
    rows = [rates("base", **BIG), rates("cand", **(BIG | {"dis": 50}))]
    g = by_id(gate_corroboration(summary(rows), ("base", "cand")))
    d = g[DISAGREEMENT_GATE_ID]
    assert d.kind == "corroboration" and d.status is GateStatus.PASS
    assert (d.estimate, d.threshold, d.n) == (0.05, 0.1, 1000)
    assert d.method == "one-sided Clopper-Pearson upper bound"
    assert g[ABSTENTION_GATE_ID].status is GateStatus.PASS


def test_rate_below_the_limit_with_a_wide_bound_fails():
    """8 of 100 is under the 10 % limit, but its upper 95 % bound (0.14) is not: fail."""
    g = by_id(gate_corroboration(summary([rates("base"), rates("cand", dis=8)]), ("base", "cand")))
    d = g[DISAGREEMENT_GATE_ID]
    assert d.status is GateStatus.FAIL
    assert d.upper_bound is not None and abs(d.upper_bound - upper_rate_bound(8, 100, 0.05)) < 1e-12
    assert "upper 0.95 bound 0.140 is above the limit 0.1" in d.reason


def test_upper_rate_bound_is_the_one_sided_clopper_pearson_bound():
    """The bound solves P(Binom(n, p) <= k) = alpha (Clopper & Pearson 1934), e.g. 0 of 30."""
    assert abs(upper_rate_bound(0, 30, 0.05) - (1 - 0.05 ** (1 / 30))) < 1e-9


def test_disagreement_above_limit_in_one_slice_fails():
    """A slice above the limit fails the gate although the policy's overall rate is within it."""
    rows = [rates("base"), rates("cand", dis=5), rates("cand", "billing", judged=20, dis=3)]
    d = by_id(gate_corroboration(summary(rows), ("base", "cand")))[DISAGREEMENT_GATE_ID]
    assert d.status is GateStatus.FAIL
    assert d.estimate == 0.15 and "cand@billing" in d.reason
    assert d.details["cand@billing.disagreement_rate"] == 0.15


def test_baseline_rates_count_too():
    """An unreliable judge on the baseline's outputs fails the candidate's comparison."""
    d = by_id(gate_corroboration(summary([rates("base", dis=30), rates("cand")]), ("base", "cand")))
    assert (
        d[DISAGREEMENT_GATE_ID].status is GateStatus.FAIL
        and "base" in d[DISAGREEMENT_GATE_ID].reason
    )


def test_other_candidates_do_not_count():
    """Rates of a policy outside the comparison are ignored."""
    g = gate_corroboration(
        summary([rates("base", **BIG), rates("cand", **BIG), rates("other", dis=90)]),
        ("base", "cand"),
    )
    assert by_id(g)[DISAGREEMENT_GATE_ID].status is GateStatus.PASS


def test_abstention_above_limit_fails_and_is_not_applicable_without_samples():
    """Abstention 10 % > 5 % fails; with no repeated samples declared the gate is not applicable."""
    g = by_id(
        gate_corroboration(summary([rates("base"), rates("cand", abstained=10)]), ("base", "cand"))
    )
    assert g[ABSTENTION_GATE_ID].status is GateStatus.FAIL and g[ABSTENTION_GATE_ID].estimate == 0.1
    g = by_id(
        gate_corroboration(summary([rates("base"), rates("cand")], samples=()), ("base", "cand"))
    )
    assert g[ABSTENTION_GATE_ID].status is GateStatus.NOT_APPLICABLE


def test_nothing_judged_fails():
    """A policy with no example judged by both sides cannot be corroborated: the gate fails."""
    g = by_id(
        gate_corroboration(
            summary([rates("base"), rates("cand", judged=0, dis=0)]), ("base", "cand")
        )
    )
    assert g[DISAGREEMENT_GATE_ID].status is GateStatus.FAIL
    assert "nothing to corroborate for cand" in g[DISAGREEMENT_GATE_ID].reason
    g = by_id(gate_corroboration(summary([rates("base")]), ("base", "cand")))
    assert g[DISAGREEMENT_GATE_ID].status is GateStatus.FAIL


def test_unreliable_judge_caps_promote_at_inconclusive():
    """A candidate that would PROMOTE is INCONCLUSIVE with reason evaluator-unreliable."""
    ev, verdict = evaluate(good_data())
    assert verdict.decision_class is CandidateClass.PROMOTE
    failing = gate_corroboration(
        summary([rates("base", **BIG), rates("cand", **(BIG | {"dis": 400}))]), ("base", "cand")
    )
    capped = classify_candidate(ev, contract(), failing)
    assert capped.decision_class is CandidateClass.INCONCLUSIVE
    assert capped.reasons[0].startswith(f"evaluator-unreliable: {DISAGREEMENT_GATE_ID}")
    passing = gate_corroboration(
        summary([rates("base", **BIG), rates("cand", **BIG)]), ("base", "cand")
    )
    assert classify_candidate(ev, contract(), passing).decision_class is CandidateClass.PROMOTE


def test_cap_does_not_soften_reject_or_block():
    """A confirmed loss stays REJECT and a hard-gate failure stays BLOCK."""
    failing = gate_corroboration(summary([rates("base"), rates("cand", dis=40)]), ("base", "cand"))
    ev, _ = evaluate(good_data(n=500, delta=-0.2, cost_ratio=0.1))
    assert classify_candidate(ev, contract(), failing).decision_class is CandidateClass.REJECT
    d = good_data()
    d["base"]["correct"][:] = 1.0
    d["cand"]["correct"][:] = 1.0
    ev, _ = evaluate(d)
    assert classify_candidate(ev, contract(), failing).decision_class is CandidateClass.BLOCK


def test_unresolved_candidate_keeps_both_reasons():
    """An INCONCLUSIVE candidate under an unreliable judge lists evaluator-unreliable first."""
    ev, verdict = evaluate(good_data(n=60, delta=-0.05, seed=3))
    failing = gate_corroboration(summary([rates("base"), rates("cand", dis=40)]), ("base", "cand"))
    assert (
        verdict.decision_class is CandidateClass.INCONCLUSIVE
    )  # the interval straddles the margin
    v = classify_candidate(ev, contract(), failing)
    assert v.decision_class is CandidateClass.INCONCLUSIVE
    assert v.reasons[0].startswith("evaluator-unreliable") and any(
        r.startswith("unresolved") for r in v.reasons
    )


def test_upper_rate_bound_equals_scipy_binomtest():
    """The closed-form bound (a beta quantile) is binomtest's exact upper end, to 1e-12."""
    from scipy.stats import binomtest

    for n in (1, 2, 7, 30, 101, 439, 4391):
        for count in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for alpha in (0.01, 0.05, 0.1):
                ci = binomtest(count, n).proportion_ci(1 - 2 * alpha, method="exact")
                assert abs(upper_rate_bound(count, n, alpha) - ci.high) < 1e-12, (count, n, alpha)


def _labelled_gate(disagreements: int, outputs: int, metric: str = "faith") -> GateResult:
    """A candidate's noninferiority gate decided on human labels (``gates.ppi``)."""
    return GateResult(
        id=f"noninferiority:{metric}",
        kind="noninferiority",
        status=GateStatus.PASS,
        reason="decided on the judge-corrected bound",
        details={"judge_human_disagreements": disagreements, "judge_human_outputs": outputs},
    )


def test_perfect_judge_is_never_unreliable_against_human_labels():
    """Detectors disagree with 75 % of a judge that matches every human label: the gate passes."""
    rows = [rates("base", judged=100, dis=75), rates("cand", judged=100, dis=75)]
    plain = by_id(gate_corroboration(summary(rows), ("base", "cand")))[DISAGREEMENT_GATE_ID]
    assert plain.status is GateStatus.FAIL
    for n in (2, 20, 400):
        got = by_id(
            gate_corroboration(
                summary(rows), ("base", "cand"), candidate_gates=[_labelled_gate(0, n)]
            )
        )[DISAGREEMENT_GATE_ID]
        assert got.status is GateStatus.PASS
        assert got.estimate == 0.0 and got.n == n
        assert got.details["calibrated_on"] == "human labels"
        assert got.details["detector.base.disagreement_rate"] == 0.75


def test_judge_far_from_the_labels_fails():
    """A judge disagreeing with 40 of 100 labelled outputs is shown above a 0.1 limit."""
    rows = [rates("base", **BIG), rates("cand", **BIG)]
    got = by_id(
        gate_corroboration(
            summary(rows), ("base", "cand"), candidate_gates=[_labelled_gate(40, 100)]
        )
    )[DISAGREEMENT_GATE_ID]
    assert got.status is GateStatus.FAIL
    assert got.lower_bound is not None and got.lower_bound > 0.1
    assert "disagrees with the reviewers on 40" in got.reason


def test_labels_of_another_metric_leave_the_detector_gate():
    """Labels on a metric other than the groundedness metric do not change the gate."""
    rows = [rates("base", judged=100, dis=75), rates("cand", judged=100, dis=75)]
    gates = gate_corroboration(
        summary(rows), ("base", "cand"), candidate_gates=[_labelled_gate(0, 50, metric="other")]
    )
    assert by_id(gates)[DISAGREEMENT_GATE_ID].status is GateStatus.FAIL
