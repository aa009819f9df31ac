"""Choosing the candidates to test on the confirmatory split, and the run's selection."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ragwarrant.decision import CandidateVerdict
from ragwarrant.gates.candidate import CandidateEvaluation
from ragwarrant.outputs import CandidateClass, GateResult, GateStatus
from ragwarrant.selection import ConfirmatoryPlan, multiplicity_gates, plan_tests, select

CONTRACT = SimpleNamespace(claims=SimpleNamespace(join="all"))
DEV = np.array([True, False])


def _evaluation(policy: str, quality: float, cost: float, p: float = 0.01, ok: bool = True):
    status = GateStatus.PASS if ok else GateStatus.FAIL
    gates = [GateResult(id="noninferiority:q", kind="noninferiority", status=status, reason="r")]
    return CandidateEvaluation(policy, gates, 50, quality, cost, p)


FIGURES = {"a": (0.01, 0.5, True), "b": (0.03, 0.1, True), "c": (0.09, 0.9, False)}


def _evaluate(policy: str, scope: np.ndarray, name: str) -> CandidateEvaluation:
    quality, cost, ok = FIGURES[policy]
    return _evaluation(policy, quality, cost, ok=ok)


def test_development_split_tests_only_the_best_ranked_candidate():
    """Of several candidates, the best class then best quality is the one tested; all get a note."""
    plan = plan_tests(["a", "b", "c"], DEV, _evaluate, CONTRACT)  # type: ignore[arg-type]
    assert (plan.method, plan.to_test, list(plan.development)) == (
        "development-split",
        ["b"],
        ["a", "b", "c"],
    )
    assert plan.notes[2].startswith("c on the development split: REJECT, quality delta +0.09")


def test_without_development_every_candidate_is_tested():
    """One candidate is a single test; several without a development split go to Holm."""
    assert plan_tests(["a"], DEV, _evaluate, CONTRACT).method == "single-candidate"  # type: ignore[arg-type]
    plan = plan_tests(["a", "b"], None, _evaluate, CONTRACT)  # type: ignore[arg-type]
    assert (plan.method, plan.to_test) == ("holm-across-candidates", ["a", "b"])
    empty_dev = plan_tests(["a", "b"], np.zeros(2, bool), _evaluate, CONTRACT)  # type: ignore[arg-type]
    assert empty_dev.method == "holm-across-candidates"


def test_multiplicity_gates_only_for_holm():
    """Holm gates are added when the method is Holm across candidates, and only then."""
    evals = {p: _evaluation(p, 0.0, 0.0, p=0.001) for p in ("a", "b")}
    holm = multiplicity_gates(ConfirmatoryPlan("holm-across-candidates", ["a", "b"]), evals, 0.05)
    assert [g.id for g in holm["a"]] == ["multiplicity:holm-across-candidates"]
    single = multiplicity_gates(ConfirmatoryPlan("single-candidate", ["a"]), evals, 0.05)
    assert single == {"a": []}


def test_select_prefers_the_best_promoted_and_reports_one_criterion_picks():
    """The selected policy is the best-ranked PROMOTEd one; the picks follow quality and cost."""
    evals = {p: _evaluation(p, *FIGURES[p][:2]) for p in ("a", "b", "c")}
    verdicts = {
        "a": CandidateVerdict(CandidateClass.PROMOTE, []),
        "b": CandidateVerdict(CandidateClass.INCONCLUSIVE, []),
        "c": CandidateVerdict(CandidateClass.PROMOTE, []),
    }
    plan = ConfirmatoryPlan("holm-across-candidates", ["a", "b", "c"])
    selection = select(plan, evals, verdicts)
    assert (selection.selected_policy, selection.quality_only_pick, selection.cost_only_pick) == (
        "c",
        "c",
        "c",
    )
    nothing = {p: CandidateVerdict(CandidateClass.REJECT, []) for p in evals}
    assert select(plan, evals, nothing).selected_policy is None


def test_development_choice_stays_selected_and_picks_come_from_development():
    """On the development split the tested candidate stays selected even when not PROMOTEd."""
    dev = {p: _evaluation(p, *FIGURES[p][:2]) for p in ("a", "b")}
    plan = ConfirmatoryPlan("development-split", ["b"], dev, ["n"])
    conf = {"b": _evaluation("b", -1.0, -1.0)}
    selection = select(plan, conf, {"b": CandidateVerdict(CandidateClass.REJECT, [])})
    assert (selection.selected_policy, selection.quality_only_pick, selection.cost_only_pick) == (
        "b",
        "b",
        "a",
    )
    assert selection.notes == ["n"]
