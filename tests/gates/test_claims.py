"""Improvement claims: the bootstrap bound and the tilted score check must both establish them."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from ragwarrant.contract import ClaimSet
from ragwarrant.gates.claims import claim_family_p_value, gate_claims
from ragwarrant.outputs import GateStatus
from ragwarrant.stats.onesided import clustered_t_test, oriented_bootstrap

CLAIMS = ClaimSet.model_validate(
    {"join": "any", "items": [{"kind": "cost-reduction", "metric": "cost_usd"}]}
)


def _skewed(seed: int, n: int = 30) -> np.ndarray:
    """Oriented cost deltas: cheaper by 0.01 on most examples, much dearer on a few (mean 0)."""
    return 0.01 - np.random.default_rng(seed).gamma(0.5, 0.02, n)


def _boot(d: np.ndarray, seed: int = 0):
    return oriented_bootstrap(
        d[:, None], np.zeros((d.size, 1)), ["mean"], [1], None, 2000, np.random.default_rng(seed)
    )[0]


def test_a_bootstrap_pass_the_score_check_refuses_is_inconclusive():
    """Seed 38: the percentile bound is above 0 (p 0.032) but the score check's p is 0.060."""
    d = _skewed(38)
    boot = _boot(d)
    assert boot.test_greater(0.0, 0.05, power=0.8).rejects
    [gate] = gate_claims(CLAIMS, [boot], ["mean"], 0.05, 0.8, [(d, np.arange(d.size))])
    assert gate.status is GateStatus.INCONCLUSIVE
    assert gate.p_value is not None and gate.p_value > 0.05
    assert "tilted score check" in (gate.method or "")
    assert claim_family_p_value(CLAIMS, [boot], 0.05, [(d, np.arange(d.size))]) > 0.05


def test_a_mean_claims_method_joins_its_three_legs():
    """A mean claim's method (decision.json's text) is its legs joined by '; and ': the guarded
    bootstrap, the t-test (both must reject) and the tilted score check."""
    d = _skewed(38)
    boot = _boot(d)
    [gate] = gate_claims(CLAIMS, [boot], ["mean"], 0.05, 0.8, [(d, np.arange(d.size))])
    t = clustered_t_test(d, np.arange(d.size), 0.0, 0.05, power=0.8)
    assert gate.method == (
        f"{boot.guarded_method}; and {t.method} (both must reject); "
        "and the tilted score check (least favourable null variance)"
    )


def test_a_clear_reduction_still_holds():
    """A candidate cheaper by 0.01 on every example, with small noise, establishes the claim."""
    d = 0.01 + np.random.default_rng(1).normal(0, 0.002, 60)
    [gate] = gate_claims(CLAIMS, [_boot(d)], ["mean"], 0.05, 0.8, [(d, np.arange(d.size))])
    assert gate.status is GateStatus.PASS


def test_false_claim_rate_with_rare_expensive_examples():
    """No true reduction, rare large extra costs, n = 60: false-claim rate <= alpha + 0.02 on
    400 replicates (the bootstrap alone: about 0.08)."""
    reps, hits = 400, 0
    for r in range(reps):
        d = _skewed(1000 + r, 60)
        [gate] = gate_claims(CLAIMS, [_boot(d, r)], ["mean"], 0.05, 0.8, [(d, np.arange(d.size))])
        hits += gate.status is GateStatus.PASS
    assert sps.binomtest(hits, reps).proportion_ci(method="exact").low <= 0.05
    assert hits / reps <= 0.07


def test_each_leg_is_computed_once_per_claim_and_level(monkeypatch):
    """Two mean claims joined by ``any``: t-test and score check run once per (claim, level)."""
    import ragwarrant.gates.claims as claims_module

    calls: list[tuple[str, float]] = []
    real_t, real_score = claims_module.clustered_t_test, claims_module.tilted_score_test

    def counted_t(delta, labels, threshold, alpha, *, power):
        calls.append(("t", alpha))
        return real_t(delta, labels, threshold, alpha, power=power)

    def counted_score(units, threshold, alpha):
        calls.append(("score", alpha))
        return real_score(units, threshold, alpha)

    two = ClaimSet.model_validate(
        {
            "join": "any",
            "items": [
                {"kind": "cost-reduction", "metric": "cost_usd"},
                {"kind": "latency-reduction", "metric": "latency_ms"},
            ],
        }
    )
    ds = [0.01 + np.random.default_rng(s).normal(0, 0.002, 60) for s in (1, 2)]
    samples = [(d, np.arange(d.size)) for d in ds]
    boots = [_boot(d) for d in ds]
    before = gate_claims(two, boots, ["mean", "mean"], 0.05, 0.8, samples)
    monkeypatch.setattr(claims_module, "clustered_t_test", counted_t)
    monkeypatch.setattr(claims_module, "tilted_score_test", counted_score)
    gates = gate_claims(two, boots, ["mean", "mean"], 0.05, 0.8, samples)
    assert [g.status for g in gates] == [GateStatus.PASS, GateStatus.PASS]
    assert gates == before  # identical results
    # Each claim: alpha (p-value and upper bound) and its Holm level (0.025 or 0.05).
    assert sorted(calls) == sorted(
        [("t", 0.05), ("t", 0.025), ("t", 0.05), ("score", 0.05), ("score", 0.025), ("score", 0.05)]
    )


def test_a_claim_on_fewer_units_than_the_floor_is_inconclusive():
    """A clear reduction on 8 pairs is not established (the tests are liberal at tiny n); on
    ``MIN_CLAIM_UNITS`` pairs the same reduction is."""
    from ragwarrant.gates.claims import MIN_CLAIM_UNITS

    d = 0.01 + np.random.default_rng(3).normal(0, 0.001, 40)
    small = d[:8]
    [gate] = gate_claims(CLAIMS, [_boot(small)], ["mean"], 0.05, 0.8, [(small, np.arange(8))])
    assert gate.status is GateStatus.INCONCLUSIVE
    assert f"fewer than the {MIN_CLAIM_UNITS} a claim needs" in gate.reason
    assert gate.more_paired_n == MIN_CLAIM_UNITS - 8
    # the count is in the test's own unit (the trial's "too few clusters (1)": "19 more
    # paired examples" for a single cluster)
    assert "8 paired examples, fewer" in gate.reason and gate.details["units"] == "pairs"
    assert claim_family_p_value(CLAIMS, [_boot(small)], 0.05, [(small, np.arange(8))]) == 1.0
    enough = d[:MIN_CLAIM_UNITS]
    sample = [(enough, np.arange(enough.size))]
    [gate] = gate_claims(CLAIMS, [_boot(enough)], ["mean"], 0.05, 0.8, sample)
    assert gate.status is GateStatus.PASS


def test_the_floor_applies_to_a_quantile_claim():
    """A p95 claim (bootstrap only) on 8 pairs is INCONCLUSIVE however clear its gain."""
    d = 0.01 + np.random.default_rng(4).normal(0, 0.001, 8)
    (boot,) = oriented_bootstrap(
        d[:, None], np.zeros((8, 1)), ["p95"], [1], None, 2000, np.random.default_rng(0)
    )
    [gate] = gate_claims(CLAIMS, [boot], ["p95"], 0.05, 0.8, [None])
    assert gate.status is GateStatus.INCONCLUSIVE


def _constant_gate(n: int, alpha: float = 0.05, delta: float = 0.005):
    """The cost-reduction gate on n pairs whose oriented delta is ``delta`` on every row."""
    candidate, baseline = np.full(n, 0.010 - delta), np.full(n, 0.010)
    boot = oriented_bootstrap(
        candidate[:, None], baseline[:, None], ["mean"], [-1], None, 2000, np.random.default_rng(0)
    )[0]
    d = baseline - candidate
    [gate] = gate_claims(CLAIMS, [boot], ["mean"], alpha, 0.8, [(d, np.arange(n))])
    return gate


def test_a_constant_reduction_decides_alike_at_every_n():
    """Cheaper by 0.005 on every row: established at N = 64 (exact zero variance) as at N = 200
    (round-off variance), by the exact sign test, with no "more data" hint."""
    small, large = _constant_gate(64), _constant_gate(200)
    assert small.status is GateStatus.PASS
    assert large.status is GateStatus.PASS
    assert small.more_paired_n is None and large.more_paired_n is None
    assert "exact sign test" in (small.method or "")


def test_a_constant_increase_is_no_gain():
    """Dearer by 0.005 on every row: the claim fails (no benefit), whatever N."""
    assert _constant_gate(64, delta=-0.005).status is GateStatus.FAIL
    assert _constant_gate(200, delta=-0.005).status is GateStatus.FAIL


def test_an_unresolved_constant_reason_agrees_with_its_bound():
    """At a level below 0.5^20 the sign test cannot reject 20 constant pairs: the reason says the
    bound is above 0 and names the zero variance, never that the bound "does not exclude 0"."""
    gate = _constant_gate(20, alpha=1e-7)
    assert gate.status is GateStatus.INCONCLUSIVE
    assert "does not exclude 0" not in gate.reason
    assert "> 0 at level" in gate.reason and "zero variance" in gate.reason
    assert "more data would" not in gate.reason
