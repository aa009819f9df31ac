"""At the margin (true delta = -margin) the engine must not PROMOTE more often than alpha."""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import ReleaseContract
from ragwarrant.decision import classify_candidate
from ragwarrant.evidence.index import build_index
from ragwarrant.gates.candidate import evaluate_candidate
from ragwarrant.outputs import CandidateClass
from tests.conftest import base_contract
from tests.evidence.test_index import evidence_table


def test_false_promote_rate_at_margin_within_alpha():
    """300 simulated runs at true delta = -margin: false-PROMOTE rate <= alpha + 3 MC SE."""
    c = base_contract()
    c["statistics"]["resamples"] = 2000
    c["quality_metrics"][0]["scale"] = [-10, 10]  # normal scores: the scale must hold them
    contract = ReleaseContract.model_validate(c)
    margin, n, sims, alpha = 0.05, 300, 300, 0.05
    rng = np.random.default_rng(2026)
    promotes = 0
    for s in range(sims):
        base = rng.normal(0.7, 0.2, n)
        cand = base - margin + rng.normal(0, 0.2, n)
        cost_b = rng.gamma(4, 0.01, n)
        table = evidence_table(
            {
                "base": {"correct": base, "cost_usd": cost_b},
                "cand": {"correct": cand, "cost_usd": cost_b * 0.5},
            }
        )
        index = build_index(table)
        ev = evaluate_candidate(
            index,
            contract.model_copy(
                update={"statistics": contract.statistics.model_copy(update={"seed": s})}
            ),
            "cand",
            np.ones(index.n_examples, bool),
            config_missing=[],
            scope_name="all",
        )
        verdict = classify_candidate(ev, contract, [])
        promotes += verdict.decision_class is CandidateClass.PROMOTE
    rate = promotes / sims
    mc_se = np.sqrt(alpha * (1 - alpha) / sims)
    assert rate <= alpha + 3 * mc_se, f"false-PROMOTE rate {rate:.3f} at the margin"
    # The test has power: it is not an engine that never promotes.
    assert promotes > 0
