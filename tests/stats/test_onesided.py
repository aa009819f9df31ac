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
    assert boot.test_greater(-1.0, 0.25, power=0.8, inclusive=True).rejects
    strict = boot.test_greater(-1.0, 0.25, power=0.8)
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
