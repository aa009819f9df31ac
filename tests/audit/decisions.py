"""Decision records for the rendering tests: the shipped example's, and variants of it."""

from __future__ import annotations

from pathlib import Path

from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import CandidateClass, Decision, GateStatus


def load_decision(output_dir: Path) -> Decision:
    """The decision.json of a finished run."""
    return Decision.model_validate_json((output_dir / "decision.json").read_bytes())


def inconclusive_variant(decision: Decision, more: int = 412) -> Decision:
    """The example's decision with its overall noninferiority gate made inconclusive.

    The QA slice's gate is made a failure-coloured row too, so a plot holds several colours.
    """
    cand = decision.candidates[0]
    gates = []
    for g in cand.gates:
        if g.id.startswith("noninferiority:") and g.slice is None:
            g = g.model_copy(update={"status": GateStatus.INCONCLUSIVE, "more_paired_n": more})
        elif g.id == "noninferiority:no_hallucination@QA":
            g = g.model_copy(update={"status": GateStatus.FAIL})
        gates.append(g)
    overall = next(g for g in gates if g.status is GateStatus.INCONCLUSIVE)
    cand = cand.model_copy(
        update={
            "decision_class": CandidateClass.INCONCLUSIVE,
            "reasons": [f"unresolved: {overall.id} — {overall.reason}"],
            "gates": gates,
        }
    )
    return decision.model_copy(
        update={
            "run_class": DecisionClass.INCONCLUSIVE,
            "exit_code": 11,
            "selected_policy": None,
            "candidates": [cand, *decision.candidates[1:]],
        }
    )
