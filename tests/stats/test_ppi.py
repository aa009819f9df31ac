"""PPI++ judge-corrected bounds against closed forms and Tango's score bound."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from ragwarrant.stats.paired_binary import tango_test
from ragwarrant.stats.ppi import labels_needed, power_tuned_lambda, ppi_mean_bound

Z95 = NormalDist().inv_cdf(0.95)


def _sample(seed: int, n_total: int = 400, n: int = 60, bias: float = 0.1, noise: float = 0.3):
    """Human deltas y, a biased noisy judge f = y + bias + noise, and a random labelled subset."""
    rng = np.random.default_rng(seed)
    y_all = rng.normal(0.0, 1.0, n_total)
    f_all = y_all + bias + rng.normal(0.0, noise, n_total)
    labelled = rng.choice(n_total, size=n, replace=False)
    return f_all, f_all[labelled], y_all[labelled], labelled


def _cross_fitted(f_all, f_lab, y):
    """Rectifiers and mean lambda with lambda cross-fitted over even/odd label positions,
    written out from the PPI++ formulas."""
    n, n_unl = y.size, f_all.size - y.size
    var_f = np.var(f_all, ddof=1)
    rect, lams = np.empty(n), []
    folds = ((slice(0, None, 2), slice(1, None, 2)), (slice(1, None, 2), slice(0, None, 2)))
    for own, other in folds:
        yo, fo = y[other], f_lab[other]
        cov = np.mean((yo - yo.mean()) * (fo - fo.mean()))
        lam = float(np.clip(cov / ((1 + n / n_unl) * var_f), 0, 1))
        rect[own] = y[own] - lam * f_lab[own]
        lams.append(lam * y[own].size / n)
    return rect, sum(lams)


def test_matches_closed_form_with_a_split_sample():
    """Estimate, lambda and se follow the cross-fitted PPI++ formulas, written out."""
    f_all, f_lab, y, labelled = _sample(1)
    mask = np.ones(f_all.size, dtype=bool)
    mask[labelled] = False
    f_unl = f_all[mask]
    rect, lam = _cross_fitted(f_all, f_lab, y)
    estimate = lam * f_unl.mean() + rect.mean()
    se = math.sqrt(np.var(rect) / y.size + lam**2 * np.var(f_unl) / f_unl.size)
    res = ppi_mean_bound(f_all, f_lab, y, alpha=0.05, unlabelled_mask=mask)
    assert 0 < lam < 1
    assert res.lam == pytest.approx(lam, rel=1e-12)
    assert res.estimate == pytest.approx(estimate, rel=1e-12)
    assert res.standard_error == pytest.approx(se, rel=1e-12)
    # without the mask the unlabelled deltas are the multiset difference: same result
    assert ppi_mean_bound(f_all, f_lab, y, alpha=0.05).lower_bound == pytest.approx(
        res.lower_bound, rel=1e-9
    )
    # continuous deltas at n = 60: the score bound is close to the Wald bound, not equal
    assert res.lower_bound == pytest.approx(estimate - Z95 * se, abs=0.1 * se)
    assert res.lower_bound != pytest.approx(estimate - Z95 * se, abs=1e-6)
    assert res.judge_bias == pytest.approx(np.mean(f_lab - y), rel=1e-12)
    assert (res.n, res.n_total) == (60, 400)


def test_without_a_useful_judge_the_bound_is_tangos_score_bound():
    """A constant judge (lambda 0) on paired 0/1 outcomes: the bounds and p-value are Tango's
    score bounds for a paired difference of proportions (the EL-tilted null variance of the
    three-valued difference is Tango's restricted-MLE variance)."""
    rng = np.random.default_rng(7)
    cell = rng.choice(4, size=150, p=[0.7, 0.12, 0.08, 0.10])
    cand, base = np.isin(cell, (0, 2)).astype(float), np.isin(cell, (0, 1)).astype(float)
    y = cand - base
    b, c = int(np.sum(y > 0)), int(np.sum(y < 0))
    tango = tango_test(b, c, y.size, threshold=-0.05, alpha=0.05)
    res = ppi_mean_bound(np.zeros(600), np.zeros(150), y, alpha=0.05, threshold=-0.05)
    assert res.lam == 0.0
    assert res.lower_bound == pytest.approx(tango.lower_bound, abs=1e-8)
    assert res.upper_bound == pytest.approx(tango.upper_bound, abs=1e-8)
    assert res.p_value == pytest.approx(tango.p_value, abs=1e-10)
    wald = y.mean() - Z95 * y.std() / math.sqrt(y.size)
    assert res.lower_bound < wald  # the loss-side variance is the null's, larger here


def test_p_value_and_lower_bound_agree():
    """The score p-value at the lower bound is alpha (the bound inverts the same test)."""
    f_all, f_lab, y, _ = _sample(6, noise=0.4)
    res = ppi_mean_bound(f_all, f_lab, y, alpha=0.05)
    at_bound = ppi_mean_bound(f_all, f_lab, y, alpha=0.05, threshold=res.lower_bound)
    assert at_bound.p_value == pytest.approx(0.05, abs=1e-6)
    above = ppi_mean_bound(f_all, f_lab, y, alpha=0.05, threshold=res.lower_bound + 0.01)
    assert above.p_value > 0.05
    assert res.lower_bound < res.estimate < res.upper_bound


def test_perfect_judge_and_constant_judge_are_the_two_ends():
    """A judge equal to the human delta gets lambda = 1 - n/N; a constant judge gets lambda 0."""
    f_all, f_lab, y, _ = _sample(2, noise=0.0, bias=0.0)
    perfect = ppi_mean_bound(f_all, f_lab, y, alpha=0.05)
    assert perfect.lam == pytest.approx(1 - 60 / 400, rel=0.1)
    human_only_se = math.sqrt(np.var(y) / y.size)
    assert perfect.standard_error < 0.5 * human_only_se
    constant = ppi_mean_bound(np.zeros(400), np.zeros(60), y, alpha=0.05)
    assert constant.lam == 0.0
    assert constant.estimate == pytest.approx(y.mean())
    assert constant.standard_error == pytest.approx(human_only_se)


def test_every_example_labelled_gives_the_human_only_bound():
    """n = N: lambda 0, the bound is the human-only score bound (that of a constant judge)."""
    _, _, y, _ = _sample(3)
    f = y + 0.2
    res = ppi_mean_bound(f, f, y, alpha=0.05)
    human_only = ppi_mean_bound(np.zeros(2 * y.size), np.zeros(y.size), y, alpha=0.05)
    assert res.lam == 0.0
    assert res.estimate == pytest.approx(y.mean())
    assert res.lower_bound == pytest.approx(human_only.lower_bound, rel=1e-10)


def test_bias_is_removed():
    """A judge biased by +0.5 toward the candidate: the judge-only mean is off, PPI is not."""
    rng = np.random.default_rng(4)
    estimates = []
    for _ in range(200):
        y_all = rng.normal(-0.2, 1.0, 300)
        f_all = 0.5 + y_all + rng.normal(0.0, 0.5, 300)
        lab = rng.choice(300, 50, replace=False)
        estimates.append(ppi_mean_bound(f_all, f_all[lab], y_all[lab], alpha=0.05).estimate)
    assert np.mean(estimates) == pytest.approx(-0.2, abs=0.03)


def test_lambda_is_clipped():
    """A judge anti-correlated with the reviewers gets lambda 0, not a negative weight."""
    assert power_tuned_lambda(-0.3, 1.0, 50, 300) == 0.0
    assert power_tuned_lambda(5.0, 1.0, 50, 300) == 1.0
    assert power_tuned_lambda(0.5, 1.0, 50, 0) == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0.0, 1.0], [0.0], [1.0]), "at least 2 labelled"),
        (([0.0], [0.0, 1.0], [1.0, 0.0]), "must include the labelled"),
        (([0.0, 1.0, 2.0], [0.0, 1.0], [1.0]), "same shape"),
        (([0.0, np.nan, 2.0], [0.0, 2.0], [1.0, 0.0]), "finite"),
        ((np.zeros((2, 2)), [0.0, 2.0], [1.0, 0.0]), "one-dimensional"),
    ],
)
def test_invalid_input_raises(args, message):
    """Each invalid argument names what is wrong."""
    with pytest.raises(ValueError, match=message):
        ppi_mean_bound(*args, alpha=0.05)


def test_invalid_alpha_raises():
    """alpha must be a one-sided level in (0, 0.5)."""
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean_bound([0.0, 1.0, 2.0], [0.0, 1.0], [0.0, 1.0], alpha=0.7)


def test_labels_needed_resolves_at_the_stated_power():
    """At n + more labels the projected bound at the same moments clears the threshold."""
    f_all, f_lab, y, _ = _sample(5, n_total=2000, n=40, noise=0.6)
    y = y - y.mean() + 0.1
    res = ppi_mean_bound(f_all, f_lab, y, alpha=0.05)
    more = labels_needed(res, threshold=0.0, power=0.8)
    assert more is not None and more > 0
    explained = res.covariance**2 / res.judge_variance
    z = Z95 + NormalDist().inv_cdf(0.8)

    def se(m: int) -> float:
        return math.sqrt((res.human_variance - (1 - m / res.n_total) * explained) / m)

    m = res.n + more
    assert res.estimate - z * se(m) >= 0.0
    assert res.estimate - z * se(m - 1) < 0.0
    assert labels_needed(res, threshold=0.3, power=0.8) is None  # estimate below threshold


def test_a_near_constant_unlabelled_part_gives_a_finite_bound():
    """Unlabelled judge deltas almost constant (their variance share rounds to 0 and the
    labelled share to exactly 1.0, once a division by zero): the score bound is still found."""
    y = np.r_[np.zeros(20), np.ones(20)]
    f_lab = y.copy()
    f_lab[::7] = 1 - f_lab[::7]  # an imperfect judge: lambda in (0, 1), rectifiers vary
    f_unl = np.r_[np.zeros(200), np.full(200, 1e-12)]
    res = ppi_mean_bound(np.r_[f_lab, f_unl], f_lab, y, alpha=0.05)
    assert res.lam > 0
    assert math.isfinite(res.lower_bound) and res.lower_bound < res.estimate < res.upper_bound
