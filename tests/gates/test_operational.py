"""Informational operational gates: cost and latency deltas without a claim, never deciding."""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import OperationalMetric
from ragwarrant.gates.operational import difference_in_reader_terms, gate_operational
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
    # ... and says so in the reader's terms: dearer is "+", about five times is about +400 %.
    reading = op.reason.split("cost_usd: the candidate costs +$", 1)[1]
    assert 300 < int(reading.split("(+", 1)[1].split(" %")[0]) < 500


def test_cost_difference_reads_in_dollars_and_percent() -> None:
    """The oriented estimate of a lower-is-better cost (baseline − candidate) reads as what the
    candidate costs more per request, relative to the baseline's mean (issue 30's example)."""
    baseline = np.array([0.0016, 0.0020, 0.0018])
    text = difference_in_reader_terms(COST, -0.00022, baseline)
    assert text == "the candidate costs +$0.00022 per request (+12 %, baseline $0.0018)"
    cheaper = difference_in_reader_terms(COST, 0.0009, baseline)
    assert cheaper == "the candidate costs -$0.0009 per request (-50 %, baseline $0.0018)"
    # a claim's reason words it as its bounds are signed: the gain, positive = candidate better
    gain = difference_in_reader_terms(COST, -0.00022, baseline, gain=True)
    assert gain == (
        "mean gain -$0.00022 per request (-12 %, baseline $0.0018; positive = candidate better)"
    )


def test_latency_quantile_difference_reads_in_its_unit() -> None:
    """A p95 latency reads as the candidate's p95 minus the baseline's, in ms and percent."""
    p95 = OperationalMetric(id="latency_ms", unit="ms", statistic="p95")
    baseline = np.arange(1.0, 101.0)  # p95 (inverted CDF) = 95
    text = difference_in_reader_terms(p95, -19.0, baseline)  # oriented: 19 ms slower
    assert text == "the candidate's p95 latency_ms is +19 ms (+20 %, baseline 95 ms)"
