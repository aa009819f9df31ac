"""The few distribution functions the gates need, from ``scipy.special`` (no ``scipy.stats``).

Importing ``scipy.stats`` costs about 1 CPU-s, half of a cold run of the shipped example
(issue 13); ``scipy.special`` holds the kernels its distributions call and costs about a quarter
of that. Each function below returns the float ``scipy.stats`` returns for the same arguments,
bit for bit on a grid that covers the gates' arguments (``tests/stats/test_distributions.py``),
for scipy 1.17 (the locked version; the test fails if another version differs):

- ``t_ppf(q, df)`` = ``scipy.stats.t.ppf(q, df)``: ``t_gen._ppf`` is ``scipy.special.stdtrit``
  (``scipy/stats/_continuous_distns.py``); ``rv_continuous.ppf`` then adds ``loc = 0``, which turns
  a ``-0.0`` (at q = 0.5) into ``0.0``, as here.
- ``t_cdf(x, df)`` = ``scipy.stats.t.cdf(x, df)``: ``t_gen._cdf`` is ``scipy.special.stdtr``.
- ``beta_ppf(q, a, b)`` = ``scipy.stats.beta.ppf(q, a, b)``: ``beta_gen._ppf`` is Boost's
  ``ibeta_inv`` (``scipy.special._ufuncs._beta_ppf``), which the public
  ``scipy.special.betaincinv`` also wraps (its documentation; the switch to Boost closed scipy
  issue #12796).
- ``binom_cdf(k, n, p)`` = ``scipy.stats.binom.cdf(k, n, p)``: ``binom_gen._cdf`` is Boost's
  binomial CDF, ``scipy.special._ufuncs._binom_cdf(floor(k), n, p)``. The public
  ``scipy.special.bdtr`` is Cephes and differs in the last bits, so the private kernel is used.

Only arguments inside each distribution's support are passed (the callers guarantee 0 < q < 1,
df >= 1, a, b > 0, 0 <= p <= 1); ``scipy.stats``' handling of invalid arguments is not copied.

``scipy.special`` is imported on the first call (``load_special``), not with this module.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np


@cache
def load_special() -> ModuleType:
    """``scipy.special``, imported once, numpy's not yet imported lazy submodules deferred first.

    numpy loads ``numpy.f2py``, ``numpy.testing``, ``numpy.ma`` and its other lazy submodules
    through a module ``__getattr__`` (PEP 562) on first access. scipy 1.17's vendored
    array_api_compat (``scipy/_lib/array_api_compat/_internal.py``, ``clone_module``) copies every
    name of ``dir(numpy)`` with ``hasattr`` when ``scipy.special`` is imported, and so executed
    all of them (about a third of that import's CPU, mostly ``numpy.f2py``). Each is bound
    instead to a module object made by ``importlib.util.LazyLoader`` (the standard library's
    lazy import recipe, "Implementing lazy imports" in the ``importlib`` documentation), which
    executes the real module when one of its attributes is first read: what numpy would have
    done on that access, later. Submodules already imported are left alone.

    Returns:
        The ``scipy.special`` module.
    """
    if "scipy.special" not in sys.modules:
        for name in sorted(set(dir(np)) - set(vars(np))):
            full = f"numpy.{name}"
            spec = None if full in sys.modules else importlib.util.find_spec(full)
            if spec is None or spec.loader is None:
                continue
            spec.loader = importlib.util.LazyLoader(spec.loader)
            module = importlib.util.module_from_spec(spec)
            sys.modules[full] = module
            spec.loader.exec_module(module)
            setattr(np, name, module)
    import scipy.special

    return scipy.special


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom at probability ``q`` (0 < q < 1)."""
    return float(load_special().stdtrit(df, q)) + 0.0


def t_cdf(x: float, df: float) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom."""
    return float(load_special().stdtr(df, x))


def beta_ppf(q: float, a: Any, b: Any) -> Any:
    """Quantile of Beta(a, b) at probability ``q`` (0 < q < 1); ``a``, ``b`` may be arrays.

    Returns:
        A float64 ndarray shaped like ``a`` and ``b`` broadcast (a 0-d array for scalars).
    """
    return np.asarray(load_special().betaincinv(a, b, q), dtype=np.float64)


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), 0 <= k <= n, 0 <= p <= 1."""
    kernel = load_special()._ufuncs._binom_cdf  # the kernel of scipy.stats.binom.cdf
    return float(kernel(float(k), n, p))
