"""Oriented one-sided bootstrap tests: bounds, p-values and the rejection rule, in closed form."""

from __future__ import annotations

import numpy as np
import pytest

from ragwarrant.stats.onesided import OrientedBootstrap, oriented_bootstrap


def _boot(values: list[float], clustered: bool = False) -> OrientedBootstrap:
    return OrientedBootstrap(
        estimate=0.0, replicates=np.array(values), n=10, n_units=10, clustered=clustered
    )


def test_bounds_and_p_value_closed_form():
    """Bounds are numpy's linear quantiles of the replicates; p = (1 + #{<= t}) / (B + 1)."""
    boot = _boot([-2.0, -1.0, 0.0, 1.0, 2.0])
    assert boot.lower(0.25) == -1.0
    assert boot.upper(0.25) == 1.0
    # where numpy's rules differ: linear gives -1.6, inverted-CDF (or nearest) would give -2.0
    assert boot.lower(0.1) == pytest.approx(-1.6)
    assert boot.upper(0.1) == pytest.approx(1.6)
    assert boot.p_greater(-1.0) == pytest.approx(3 / 6)
    assert boot.p_greater(-5.0) == pytest.approx(1 / 6)


def test_inclusive_rule_passes_on_tie_strict_does_not():
    """A lower bound exactly on the threshold rejects only under the inclusive (legacy) rule."""
    boot = _boot([-2.0, -1.0, 0.0, 1.0, 2.0])
    assert boot.percentile_test(-1.0, 0.25, power=0.8, inclusive=True).rejects
    strict = boot.percentile_test(-1.0, 0.25, power=0.8)
    assert not strict.rejects
    assert strict.lower_bound == -1.0 and strict.upper_bound == 1.0


def test_orientation_and_method_name():
    """A lower-is-better metric flips sign; the method names the resampling unit."""
    rng = np.random.default_rng(0)
    cand = rng.normal(1.0, 0.1, (40, 1))
    base = rng.normal(2.0, 0.1, (40, 1))
    (up,) = oriented_bootstrap(cand, base, ["mean"], [1], None, 500, np.random.default_rng(1))
    (down,) = oriented_bootstrap(cand, base, ["mean"], [-1], None, 500, np.random.default_rng(1))
    assert up.estimate == pytest.approx(-down.estimate)
    assert np.allclose(up.replicates, -down.replicates)
    assert down.test_greater(0.0, 0.05, power=0.8).rejects
    assert up.method == "paired percentile bootstrap (B=500, multinomial)"
    groups = np.repeat(np.arange(20), 2)
    (cl,) = oriented_bootstrap(cand, base, ["mean"], [1], groups, 500, np.random.default_rng(1))
    assert cl.n_units == 20 and cl.test_greater(0.0, 0.05, power=0.8).unit_name == "clusters"


def test_a_level_below_one_over_b_plus_one_is_never_met():
    """All B replicates above 0 give p = 1 / (B + 1); at a smaller level the claim is not
    established (it passed on the most extreme replicate; fresh-user re-trial)."""
    import numpy as np

    from ragwarrant.stats.onesided import OrientedBootstrap

    boot = OrientedBootstrap(0.5, np.linspace(0.1, 0.9, 2000), 100, 100)
    assert boot.test_greater(0.0, 0.05, power=0.8).rejects
    small = boot.test_greater(0.0, 0.0003, power=0.8)
    assert small.lower_bound > 0 and small.p_value > 0.0003 and not small.rejects


def test_claim_rule_is_the_guarded_expanded_percentile_and_bound_and_p_agree():
    """test_greater decides by the guarded p-value and its order statistic alike, at every
    threshold, and is stricter than the plain percentile test (issue 10: claims)."""
    rng = np.random.default_rng(3)
    boot = OrientedBootstrap(0.1, rng.normal(0.1, 0.05, 2000), 30, 30)
    stricter = 0
    for threshold in np.linspace(-0.05, 0.1, 61):
        test = boot.test_greater(float(threshold), 0.05, power=0.8)
        assert test.rejects == (test.p_value <= 0.05) == (test.lower_bound > threshold)
        plain = boot.percentile_test(float(threshold), 0.05, power=0.8)
        assert not (test.rejects and not plain.rejects)
        stricter += plain.rejects and not test.rejects
    assert stricter > 0
    assert boot.test_greater(0.0, 0.05, power=0.8).lower_bound < boot.lower(0.05)


def test_claim_rule_names_its_method_and_refuses_one_unit():
    """The gate records the guarded method; a single resampled unit never establishes a claim."""
    boot = OrientedBootstrap(0.5, np.full(2000, 0.5), 1, 1)
    test = boot.test_greater(0.0, 0.05, power=0.8)
    assert not test.rejects and test.p_value == 1.0
    many = OrientedBootstrap(0.5, np.linspace(0.1, 0.9, 2000), 40, 20, clustered=True)
    assert many.test_greater(0.0, 0.05, power=0.8).method == (
        "cluster bootstrap, expanded percentile with G-1 df (B=2000, G=20); Monte Carlo guard: "
        "Clopper-Pearson upper bound of the p-value over B; multinomial resampling"
    )
