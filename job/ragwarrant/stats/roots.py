"""Brent's bracketing root finder, as ``scipy.optimize.brentq`` computes it, without scipy.

Importing ``scipy.optimize`` costs about 0.3 CPU-s of every cold run (issue 13) for one scalar
root finder, which the Tango bounds (``stats.paired_binary``) and the Clopper–Pearson rate bound
(``gates.corroboration``) call a few times each. ``brentq`` below is Brent's method (R. P. Brent
1973, *Algorithms for Minimization without Derivatives*, ch. 4) in the variant of
``scipy.optimize.brentq`` (C. Harris, ``scipy/optimize/Zeros/brentq.c``, BSD-3-Clause): inverse
quadratic extrapolation while the function values shrink, secant interpolation once the bracket
flips, bisection otherwise, and a step of at least ``delta = (xtol + rtol |x|) / 2``. Every
floating-point operation is the one scipy performs, in the same order, so the root is the same
float; ``tests/stats/test_roots.py`` checks it bit for bit against ``scipy.optimize.brentq`` on
the callers' functions and on a grid of others.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["BRENTQ_RTOL", "BRENTQ_XTOL", "brentq"]

BRENTQ_XTOL = 2e-12
#: scipy's default and smallest allowed relative tolerance, 4 machine epsilons.
BRENTQ_RTOL = 4 * 2.220446049250313e-16
_MAXITER = 100


def _value(f: Callable[[float], float], x: float) -> float:
    fx = float(f(x))
    if math.isnan(fx):
        raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
    return fx


def _step(
    xs: tuple[float, float, float],
    fs: tuple[float, float, float],
    steps: tuple[float, float],
    delta: float,
) -> tuple[float, float]:
    """The next (previous step, step) from (x_pre, x_cur, x_blk), their values, (s_pre, s_cur).

    Interpolation (secant when x_pre is the far end of the bracket, else inverse quadratic) is
    taken only when it is short against the last step and the half-bracket; else bisection.
    """
    (xpre, xcur, xblk), (fpre, fcur, fblk), (spre, scur) = xs, fs, steps
    sbis = (xblk - xcur) / 2
    if not (abs(spre) > delta and abs(fcur) < abs(fpre)):
        return sbis, sbis
    if xpre == xblk:
        stry = -fcur * (xcur - xpre) / (fcur - fpre)
    else:
        dpre = (fpre - fcur) / (xpre - xcur)
        dblk = (fblk - fcur) / (xblk - xcur)
        stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
    limit = 3 * abs(sbis) - delta
    if 2 * abs(stry) < (abs(spre) if abs(spre) < limit else limit):  # C's MIN(a, b)
        return scur, stry
    return sbis, sbis


def brentq(
    f: Callable[[float], float],
    a: float,
    b: float,
    xtol: float = BRENTQ_XTOL,
    rtol: float = BRENTQ_RTOL,
) -> float:
    """A root of ``f`` in [a, b], where f(a) and f(b) differ in sign (or one is zero).

    Same contract and result as ``scipy.optimize.brentq(f, a, b, xtol=xtol, rtol=rtol)``
    (maxiter 100): it stops when the bracket around x is narrower than xtol + rtol |x|.

    Raises:
        ValueError: ``xtol <= 0``, ``rtol`` below 4 machine epsilons, f(a) and f(b) of the same
            sign, or a NaN function value.
        RuntimeError: no convergence in 100 iterations.
    """
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < BRENTQ_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {BRENTQ_RTOL:g})")
    xpre, xcur = float(a), float(b)
    fpre, fcur = _value(f, xpre), _value(f, xcur)
    if fpre * fcur > 0:
        raise ValueError("f(a) and f(b) must have different signs")
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    xblk = fblk = spre = scur = 0.0
    for _ in range(_MAXITER):
        if fpre * fcur < 0:
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):  # keep the best estimate in x_cur
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        spre, scur = _step((xpre, xcur, xblk), (fpre, fcur, fblk), (spre, scur), delta)
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = _value(f, xcur)
    raise RuntimeError(f"Failed to converge after {_MAXITER} iterations, value is {xcur}")
