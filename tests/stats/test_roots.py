"""stats.roots.brentq returns scipy.optimize.brentq's root, bit for bit, and fails as it does."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.optimize import brentq as scipy_brentq

from ragwarrant.stats.distributions import binom_cdf
from ragwarrant.stats.paired_binary import tango_score_statistic
from ragwarrant.stats.roots import brentq


def _outcome(solver, f, a, b, **tol) -> tuple[object, float]:
    """(root, its sign bit) or (the exception type, 0)."""
    try:
        root = solver(f, a, b, **tol)
    except (ValueError, RuntimeError) as e:
        return type(e), 0.0
    return root, math.copysign(1, root)


def _same(f, a, b, **tol) -> None:
    assert _outcome(brentq, f, a, b, **tol) == _outcome(scipy_brentq, f, a, b, **tol), (a, b, tol)


def test_clopper_pearson_roots_are_scipys():
    """The rate bound's root of the binomial CDF on [0, 1] (gates.corroboration)."""
    for n in (1, 2, 5, 30, 439, 4391):
        for count in sorted({0, 1, n // 3, n // 2, n - 1} - {n}):
            for tail in (0.001, 0.01, 0.025, 0.05, 0.1):
                _same(lambda p, k=count, m=n, t=tail: binom_cdf(k, m, p) - t, 0, 1)


def test_tango_bound_roots_are_scipys():
    """The Tango bounds' roots of Z(delta0) = +-z on (-1, 1) at tolerance 1e-12 (paired_binary)."""
    edge = 1e-12
    for n in (1, 5, 30, 161, 2000):
        for b in sorted({0, 1, n // 5, n // 2}):
            for c in sorted({0, 2, n // 4} - {n}):
                for alpha in (0.01, 0.05):
                    for z in (NormalDist().inv_cdf(1 - alpha), -NormalDist().inv_cdf(1 - alpha)):
                        f = lambda d, b=b, c=c, n=n, z=z: tango_score_statistic(b, c, n, d) - z  # noqa: E731
                        if b + c <= n and f(-1 + edge) > 0 > f(1 - edge):
                            _same(f, -1 + edge, 1 - edge, xtol=1e-12, rtol=1e-12)


def test_roots_of_other_functions_are_scipys():
    """Interpolation, extrapolation and bisection branches alike, brackets in either order."""
    rng = np.random.default_rng(20261202)
    for i in range(400):
        r, s, k = float(rng.normal()), float(rng.uniform(0.1, 5)), int(rng.choice([1, 3, 5]))
        f = [
            lambda x, r=r, s=s, k=k: s * (x - r) ** k,
            lambda x, r=r, s=s: math.tanh(s * (x - r)),
            lambda x, r=r: math.exp(x) - math.exp(r),
            lambda x, r=r: math.atan(x - r) + 1e-3 * math.sin(40 * (x - r)),
        ][i % 4]
        a, b = r - float(rng.uniform(0.01, 10)), r + float(rng.uniform(0.01, 10))
        tol = {} if i % 2 else {"xtol": float(10 ** rng.uniform(-15, -2)), "rtol": 1e-10}
        _same(f, a, b, **tol)
        _same(f, b, a, **tol)
    _same(lambda x: x, 0.0, 1.0)  # a root at an end of the bracket
    _same(lambda x: x - 1.0, 0.0, 1.0)


def test_bad_brackets_and_tolerances_raise_as_scipy_does():
    """Same-sign ends, NaN values and too-small tolerances are errors, as in scipy."""
    for call in (
        lambda g: g(lambda x: x * x + 1, -1, 1),
        lambda g: g(lambda x: math.nan, 0, 1),
        lambda g: g(lambda x: x, -1, 1, xtol=0.0),
        lambda g: g(lambda x: x, -1, 1, rtol=1e-17),
    ):
        with pytest.raises(ValueError):
            call(scipy_brentq)
        with pytest.raises(ValueError):
            call(brentq)
