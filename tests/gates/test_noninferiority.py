"""gate_noninferiority on the issue-10 result object: status, method and reason recorded."""

from __future__ import annotations

import numpy as np

from ragwarrant.gates.noninferiority import gate_noninferiority
from ragwarrant.outputs import GateStatus
from ragwarrant.stats import noninferiority as ni


def _gate(cand, base, **kw):
    test = ni.test_noninferiority(
        np.asarray(cand, float),
        np.asarray(base, float),
        margin_abs=0.05,
        alpha=0.05,
        rng=np.random.default_rng(0),
        **kw,
    )
    return gate_noninferiority("correct", None, test, 0.05, 0.05, 0.8)


def test_pass_records_method_and_units():
    """A clearly noninferior binary sample passes and records Tango's method and its unit."""
    g = _gate(np.ones(200), np.ones(200), kind="binary")
    assert g.status is GateStatus.PASS
    assert g.method == "Tango score test for paired proportions"
    assert g.details["units"] == "pairs"
    assert g.p_value is not None and g.p_value <= 0.05


def test_all_tied_small_sample_is_inconclusive_with_reason_and_units_needed():
    """30 tied pairs do not pass: INCONCLUSIVE, the degenerate reason, and the pairs needed."""
    g = _gate(np.ones(30), np.ones(30), kind="binary")
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.details["degenerate_reason"] == "all pairs tied (no discordant pair)"
    assert "all pairs tied" in g.reason
    assert g.more_paired_n is not None and g.more_paired_n >= 22


def test_confirmed_loss_fails():
    """An upper bound below -margin is a confirmed loss (FAIL)."""
    g = _gate(np.zeros(200), np.ones(200), kind="binary")
    assert g.status is GateStatus.FAIL


def test_an_alpha_below_the_bootstrap_floor_names_it_not_a_straddle():
    """alpha 1e-12 on 300 near-equal pairs: the bound clears -margin but p cannot reach alpha
    with 100,000 resamples. The reason says so (not "straddles"), details record the floor,
    and no count ("about 0 more") is given (fresh-user trial)."""
    rng = np.random.default_rng(1)
    base = rng.random(300) * 0.9 + 0.05
    cand = base + rng.normal(0, 0.02, 300)
    test = ni.test_noninferiority(
        cand, base, kind="continuous", margin_abs=0.05, alpha=1e-12, rng=np.random.default_rng(0)
    )
    g = gate_noninferiority("correct", None, test, 0.05, 1e-12, 0.8)
    assert g.status is GateStatus.INCONCLUSIVE and g.lower_bound > -0.05
    assert "straddles" not in g.reason and "about 0" not in g.reason
    assert f"but p {g.p_value:.3g} > alpha 1e-12" in g.reason
    assert "below the smallest p-value the bootstrap can show" in g.reason
    assert g.more_paired_n is None and 2e-4 < g.details["p_floor"] < 4e-4
