"""Informational operational gates: cost and latency deltas without a claim, never deciding."""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import OperationalMetric
from ragwarrant.gates.operational import gate_operational
from ragwarrant.pipeline import run_job
from ragwarrant.stats.onesided import OrientedBootstrap
from tests.conftest import simulate

COST = OperationalMetric(id="cost_usd", unit="usd", direction="lower_is_better")


def test_gate_reports_the_two_sided_percentile_interval() -> None:
    """Bounds are the alpha/2 and 1 - alpha/2 percentiles of the oriented replicates."""
    test = OrientedBootstrap(estimate=0.5, replicates=np.linspace(0.0, 1.0, 1001), n=40, n_units=20)
    g = gate_operational(COST, test, 0.1, 40)
    assert (g.id, g.kind, g.status.value, g.estimate, g.n) == (
        "operational:cost_usd",
        "operational",
        "not-applicable",
        0.5,
        40,
    )
    assert (round(g.lower_bound or 0, 6), round(g.upper_bound or 0, 6)) == (0.05, 0.95)


def test_gate_without_pairs_estimates_nothing_and_says_why() -> None:
    """Fewer than two paired examples: no estimate, no bounds, the count in the reason."""
    g = gate_operational(COST, None, 0.05, 1)
    assert (g.estimate, g.lower_bound, g.upper_bound) == (None, None, None)
    assert "1 paired example(s), at least 2 needed" in g.reason


def test_run_shows_the_cost_delta_without_a_claim(make_input, tmp_path) -> None:
    """A contract with a cost metric and a quality claim only still records the cost delta."""

    def quality_claim(c):
        c["claims"] = {
            "join": "any",
            "items": [{"kind": "quality-improvement", "metric": "correct"}],
        }

    root = make_input(data=simulate(300, quality_delta=0.15, cost_ratio=5.0), mutate=quality_claim)
    d = run_job(root, tmp_path / "out", on_stage=lambda event, **fields: None).decision
    [cand] = d.candidates
    [op] = [g for g in cand.gates if g.kind == "operational"]
    # Five times dearer: the oriented delta (baseline − candidate cost) is clearly negative.
    assert (op.metric, op.upper_bound is not None and op.upper_bound < 0) == ("cost_usd", True)
    assert cand.decision_class.value == "PROMOTE"
