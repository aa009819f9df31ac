"""The tipping-point search of ``stats.missing_sensitivity``."""

from __future__ import annotations

import numpy as np

from ragwarrant.stats.missing_sensitivity import tipping_point, worst_first
from ragwarrant.stats.onesided import OneSidedTest


def _test(rejects: bool) -> OneSidedTest:
    return OneSidedTest(
        estimate=0.0,
        lower_bound=0.0 if rejects else -1.0,
        upper_bound=1.0,
        p_value=0.01 if rejects else 0.5,
        threshold=-0.5,
        alpha=0.05,
        rejects=rejects,
        method="fake",
        n=10,
        n_units=10,
        unit_name="pairs",
        standard_error=0.1,
        more_units_needed=None,
        degenerate_reason=None,
    )


def test_tipping_point_is_the_fewest_imputed_values_that_flip_the_test():
    for flip in range(1, 12):
        calls: list[int] = []

        def run(k: int, flip: int = flip, calls: list[int] = calls) -> OneSidedTest:
            calls.append(k)
            return _test(k < flip)

        sens = tipping_point(run, 11)
        assert sens.tipping_point == flip and not sens.holds
        assert len(calls) <= 5  # bisection, not a scan


def test_no_tipping_point_when_all_imputed_values_leave_it_rejecting():
    sens = tipping_point(lambda k: _test(True), 7)
    assert sens.holds and sens.tipping_point is None and sens.imputed == 7


def test_worst_first_orders_by_oriented_delta():
    assert worst_first(np.array([0.2, -1.0, 0.0, -1.0])).tolist() == [1, 3, 2, 0]
