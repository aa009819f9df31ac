"""A bracketing root finder by bisection, so the gates need no ``scipy.optimize`` (issue 13).

Bisection (e.g. Press et al. 2007, *Numerical Recipes*, 3rd ed., §9.1.1) halves a bracket
[a, b] on which a continuous f changes sign until it is narrower than ``xtol`` (relative to the
root's size); it needs about log2((b - a) / xtol) evaluations (some 40 at 1e-12 on [-1, 1]),
which is cheap for the scalar functions here (Tango's score statistic, the tilted score
check's p-value). Its root agrees with ``scipy.optimize.brentq`` to the tolerance, not to the
last bit.
"""

from __future__ import annotations

from collections.abc import Callable


def bisect(f: Callable[[float], float], a: float, b: float, xtol: float = 1e-12) -> float:
    """A root of ``f`` in [a, b]: the midpoint of a sign-changing bracket narrower than
    ``xtol`` × max(1, |a|, |b|).

    Raises:
        ValueError: f(a) and f(b) have the same strict sign, or a bound is not finite.
    """
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError("f(a) and f(b) must differ in sign")
    lo, hi, f_lo = (a, b, fa) if a < b else (b, a, fb)
    while hi - lo > xtol * max(1.0, abs(lo), abs(hi)):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        f_mid = f(mid)
        if f_mid == 0.0:
            return mid
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
