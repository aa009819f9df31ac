"""The claims' t-test leg and the intersection of two tests (issue 10: claims)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragwarrant.contract import ClaimSet
from ragwarrant.gates.claims import gate_claims
from ragwarrant.stats.onesided import OrientedBootstrap, both_reject, clustered_t_test


def test_without_clusters_it_is_the_paired_t_test():
    """Every example its own cluster: bounds and p equal scipy's one-sample t-test."""
    rng = np.random.default_rng(0)
    d = rng.lognormal(0, 1, 40) - 1.5
    test = clustered_t_test(d, np.arange(40), -0.2, 0.05, power=0.8)
    ref = sps.ttest_1samp(d, -0.2, alternative="greater")
    assert test.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    half = sps.t.ppf(0.95, 39) * d.std(ddof=1) / math.sqrt(40)
    assert test.lower_bound == pytest.approx(d.mean() - half, rel=1e-9)
    assert test.method == "paired t-test" and test.n_units == 40


def test_clusters_use_the_cr1_variance_with_g_minus_1_df():
    """Clusters: SE^2 = G/(G-1) * sum of squared cluster residual sums / n^2, G - 1 df."""
    d = np.array([1.0, 2.0, 0.5, 3.0, -1.0, 0.0, 2.5])
    labels = np.array(["a", "a", "b", "b", "b", "c", "d"])
    test = clustered_t_test(d, labels, 0.0, 0.05, power=0.8)
    r = d - d.mean()
    sums = np.array([r[:2].sum(), r[2:5].sum(), r[5], r[6]])
    se = math.sqrt(4 / 3 * np.sum(sums**2)) / 7
    assert test.standard_error == pytest.approx(se)
    assert test.lower_bound == pytest.approx(d.mean() - sps.t.ppf(0.95, 3) * se)
    assert test.unit_name == "clusters" and test.n_units == 4


def test_intersection_rejects_only_when_both_do_and_keeps_the_wider_bounds():
    """both_reject: reject iff both reject; min lower, max upper, max p, both methods named."""
    rng = np.random.default_rng(1)
    d = rng.normal(0.3, 1.0, 50)
    strong = clustered_t_test(d, np.arange(50), 0.0, 0.05, power=0.8)
    weak = clustered_t_test(d, np.arange(50), 0.25, 0.05, power=0.8)
    both = both_reject(strong, weak)
    assert strong.rejects and not weak.rejects and not both.rejects
    assert both.lower_bound == min(strong.lower_bound, weak.lower_bound)
    assert both.p_value == max(strong.p_value, weak.p_value)
    assert "(both must reject)" in both.method


def test_a_mean_claim_the_t_test_does_not_support_is_not_established():
    """A bootstrap whose replicates all lie above 0 establishes nothing when the claim's raw
    sample (one huge saving among many losses) gives the t-test no rejection."""
    d = np.r_[np.full(29, -0.1), 40.0]
    boot = OrientedBootstrap(float(d.mean()), np.linspace(0.5, 2.5, 2000), 30, 30)
    claims = ClaimSet.model_validate({"items": [{"kind": "cost-reduction", "metric": "cost"}]})
    (alone,) = gate_claims(claims, [boot], ["mean"], 0.05, 0.8)
    (gate,) = gate_claims(claims, [boot], ["mean"], 0.05, 0.8, [(d, np.arange(30))])
    assert alone.status.value == "pass"
    assert gate.status.value == "inconclusive"
    assert "paired t-test" in (gate.method or "") and "both must reject" in (gate.method or "")


def test_a_constant_delta_takes_the_exact_sign_test():
    """Every pair shows +0.005: p = 0.5^n, both bounds the constant; 3 pairs need 2 more at 0.05."""
    t = clustered_t_test(np.full(64, 0.005), np.arange(64), 0.0, 0.05, power=0.8)
    assert t.rejects and t.p_value == 0.5**64
    assert t.lower_bound == t.upper_bound == 0.005
    noisy = np.full(200, 0.01) - np.full(200, 0.005)  # mean 0.004999999999999999
    assert clustered_t_test(noisy, np.arange(200), 0.0, 0.05, power=0.8).p_value == 0.5**200
    few = clustered_t_test(np.full(3, 0.005), np.arange(3), 0.0, 0.05, power=0.8)
    assert not few.rejects and few.p_value == 0.125 and few.more_units_needed == 2
    flat = clustered_t_test(np.zeros(64), np.arange(64), 0.0, 0.05, power=0.8)
    assert not flat.rejects and flat.p_value == 1.0 and flat.more_units_needed is None
