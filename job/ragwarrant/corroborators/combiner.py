"""A small L2-penalised logistic regression over the deterministic features, in numpy.

The combiner turns a response's feature vector (``features.FEATURES``) into one score, the fitted
probability that the response is unsupported; a gate flags it when the score is at least a
threshold calibrated like the lexical gates (maximum F1, ties to precision). It is fitted offline
(``fit_logistic``: Newton-Raphson, i.e. iteratively reweighted least squares, on standardised
features with a ridge penalty on the slopes; Hastie, Tibshirani & Friedman, *The Elements of
Statistical Learning*, 2nd ed., 2009, §4.4.1 and §4.4.4) and applied at run time from shipped
coefficients (``LogisticModel.score``): no model download, no scikit-learn.

Pure numpy: arrays in, frozen values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

DEFAULT_L2 = 1.0
"""Ridge penalty on the standardised slopes (the intercept is not penalised)."""

_MAX_ITERATIONS = 100
_TOLERANCE = 1e-10


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """A fitted logistic regression on standardised features.

    Attributes:
        features: feature names, in column order.
        mean: shape ``(k,)``, the training means used to standardise.
        scale: shape ``(k,)``, the training standard deviations (1.0 for a constant feature).
        coef: shape ``(k,)``, slopes on the standardised features.
        intercept: the intercept.
    """

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def score(self, x: ArrayLike) -> np.ndarray:
        """Return the fitted probability of "unsupported" for each row of ``x``.

        Args:
            x: shape ``(n, k)`` (or ``(k,)`` for one response), columns in ``features`` order.

        Returns:
            Shape ``(n,)`` (or ``(1,)``), values in ``(0, 1)``.
        """
        rows = np.atleast_2d(np.asarray(x, dtype=np.float64))
        z = ((rows - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def as_json(self) -> dict[str, Any]:
        """The model as JSON-ready data (round-trips through ``from_json``)."""
        return {
            "features": list(self.features),
            "mean": [float(v) for v in self.mean],
            "scale": [float(v) for v in self.scale],
            "coef": [float(v) for v in self.coef],
            "intercept": float(self.intercept),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> LogisticModel:
        """Build a model from ``as_json`` data.

        Raises:
            ValueError: when the arrays' lengths differ from the feature count or a value is not
                finite.
        """
        features = tuple(str(f) for f in doc["features"])
        arrays = [np.asarray(doc[k], dtype=np.float64) for k in ("mean", "scale", "coef")]
        if any(a.shape != (len(features),) for a in arrays):
            raise ValueError(f"mean, scale and coef must each hold {len(features)} numbers")
        intercept = float(doc["intercept"])
        if not all(np.all(np.isfinite(a)) for a in arrays) or not np.isfinite(intercept):
            raise ValueError("model values must be finite")
        if np.any(arrays[1] <= 0):
            raise ValueError("scale values must be positive")
        return cls(features, arrays[0], arrays[1], arrays[2], intercept)


def fit_logistic(
    x: ArrayLike, labels: ArrayLike, features: Sequence[str], l2: float = DEFAULT_L2
) -> LogisticModel:
    """Fit an L2-penalised logistic regression by Newton-Raphson (IRLS).

    Minimises ``-sum(y log p + (1 - y) log(1 - p)) + l2/2 * ||coef||^2`` over standardised
    features (ESL §4.4.1, §4.4.4); the objective is strictly convex for ``l2 > 0``, so the
    iteration converges to the unique minimum (step-halving guards the first steps).

    Args:
        x: shape ``(n, k)``, finite.
        labels: shape ``(n,)``, booleans or 0/1; True = unsupported.
        features: the ``k`` feature names.
        l2: ridge penalty, > 0.

    Returns:
        The frozen ``LogisticModel``.

    Raises:
        ValueError: when shapes disagree, a value is not finite, ``l2 <= 0``, or the labels hold
            a single class.
    """
    xs = np.asarray(x, dtype=np.float64)
    y = np.asarray(labels).astype(np.float64)
    if xs.ndim != 2 or y.shape != (xs.shape[0],) or xs.shape[1] != len(features):
        raise ValueError(
            f"x must be (n, {len(features)}) and labels (n,); got {xs.shape} and {y.shape}"
        )
    if not np.all(np.isfinite(xs)):
        raise ValueError("x must be finite")
    if not l2 > 0:
        raise ValueError(f"l2 must be > 0, found {l2}")
    if y.min() == y.max():
        raise ValueError("labels must hold both classes to fit a logistic regression")
    mean = xs.mean(axis=0)
    scale = xs.std(axis=0)
    scale[scale == 0] = 1.0
    design = np.column_stack([np.ones(len(y)), (xs - mean) / scale])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    beta = np.zeros(design.shape[1])

    def objective(b: np.ndarray) -> float:
        z = design @ b
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(penalty * b * b))

    current = objective(beta)
    for _ in range(_MAX_ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (p - y) + penalty * beta
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-8:
            trial = beta - size * step
            value = objective(trial)
            if value <= current:
                break
            size /= 2.0
        beta, previous, current = trial, current, value
        if previous - current < _TOLERANCE * (1.0 + abs(current)):
            break
    return LogisticModel(tuple(features), mean, scale, beta[1:].copy(), float(beta[0]))
