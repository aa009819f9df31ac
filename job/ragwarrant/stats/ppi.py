"""Judge-corrected bounds on the human scale: prediction-powered inference with power tuning.

A judge (an LLM or any automatic scorer) gives a paired delta f_i (candidate − baseline) on all
N examples; human reviewers give the human-scale delta y_i on a uniform random subset of n of
them. The PPI++ estimate of the mean human delta (Angelopoulos, Duchi & Zrnic 2023, "PPI++:
Efficient Prediction-Powered Inference", arXiv:2311.01453, §2 and Example 1; the rectifier of
Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference", Science
382:669) is

    theta_hat = lambda * mean_U(f) + mean_L(y - lambda * f),

with L the n labelled examples and U the N − n unlabelled ones. It is unbiased for the mean
human delta whatever the judge's bias (the rectifier mean_L(y − lambda f) removes it), and its
CLT standard error is

    se^2 = Var_L(y - lambda f) / n + lambda^2 Var_U(f) / (N - n).

The power-tuned lambda minimising se (PPI++ eq. (6), specialised to the mean, with the
unlabelled sample of size N − n) is

    lambda_hat = Cov_L(y, f) / ((1 + n / (N - n)) Var_{L+U}(f)),   clipped to [0, 1],

so lambda = 0 gives the human-only mean and lambda = 1 the original PPI estimator. Writing the
unlabelled count as N − n and 1 / (1 + n / (N − n)) = 1 − n / N, the optimum variance is
[Var(y) − (1 − n/N) Cov(y, f)^2 / Var(f)] / n: the judge helps in proportion to its squared
correlation with the human delta. Moments follow the reference implementation ``ppi_py``
(``ppi_mean_ci``, ``_calc_lhat_glm``): population (1/n) standard deviations in ``se``, the
covariance with 1/n, Var(f) over labelled and unlabelled with ddof = 1. The bound is the
one-sided normal (CLT) bound theta_hat − z_{1−alpha} se.

Sign convention: deltas are oriented (positive = candidate better), the units the metric's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from ragwarrant.stats.power import feasible_hint, resolvable_gap

__all__ = ["PPIBound", "labels_needed", "power_tuned_lambda", "ppi_mean_bound"]

_Z = NormalDist().inv_cdf
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PPIBound:
    """One-sided PPI++ lower bound on the mean human-scale paired delta.

    Attributes:
        estimate: theta_hat, the judge-corrected mean delta (metric units, oriented).
        lower_bound: theta_hat − z_{1−alpha} × standard_error (one-sided level ``alpha``).
        alpha: the one-sided level.
        lam: the power-tuned lambda in [0, 1] (0: human labels only; 1: plain PPI).
        n: labelled examples; n_total: judged examples N (the labelled ones included).
        judge_bias: mean(f − y) on the labelled examples (positive: the judge favours the
            candidate more than the reviewers do).
        judge_only_estimate: mean(f) over all N judged examples (the uncorrected estimate).
        standard_error: the CLT standard error of ``estimate``.
        rectifier_variance, judge_variance, covariance, human_variance: the plug-in moments
            (Var_L(y − lambda f), Var_{L+U}(f), Cov_L(y, f), Var_L(y)); ``labels_needed``
            reads them.
    """

    estimate: float
    lower_bound: float
    alpha: float
    lam: float
    n: int
    n_total: int
    judge_bias: float
    judge_only_estimate: float
    standard_error: float
    rectifier_variance: float
    judge_variance: float
    covariance: float
    human_variance: float


def _as_vector(name: str, values: npt.ArrayLike) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def _validate(
    judge_all: npt.ArrayLike, judge_labelled: npt.ArrayLike, human: npt.ArrayLike, alpha: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    f_all = _as_vector("judge_all", judge_all)
    f_lab = _as_vector("judge_labelled", judge_labelled)
    y = _as_vector("human", human)
    if f_lab.shape != y.shape:
        raise ValueError(
            f"judge_labelled and human must have the same shape, got {f_lab.shape} and {y.shape}"
        )
    if y.size < 2:
        raise ValueError(f"at least 2 labelled examples are needed, got {y.size}")
    if f_all.size < y.size:
        raise ValueError(
            f"judge_all (N={f_all.size}) must include the labelled examples (n={y.size})"
        )
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    return f_all, f_lab, y


def _unlabelled_moments(f_all: FloatArray, f_lab: FloatArray) -> tuple[int, float, float]:
    """(N − n, mean, population variance) of the judge deltas outside the labelled subset.

    The labelled examples are part of ``f_all``, so the unlabelled sums are the differences of
    the sums over all N and over the labelled n.
    """
    n_unl = f_all.size - f_lab.size
    if n_unl == 0:
        return 0, 0.0, 0.0
    mean = (float(f_all.sum()) - float(f_lab.sum())) / n_unl
    centred_all = f_all - mean
    centred_lab = f_lab - mean
    second = (float(centred_all @ centred_all) - float(centred_lab @ centred_lab)) / n_unl
    return n_unl, mean, max(second, 0.0)


def power_tuned_lambda(
    covariance: float, judge_variance: float, n: int, n_unlabelled: int
) -> float:
    """PPI++ power-tuned lambda for a mean, clipped to [0, 1].

    Args:
        covariance: Cov_L(y, f) on the n labelled examples (1/n normalisation).
        judge_variance: Var(f) over all N judged examples (ddof = 1).
        n: labelled examples; n_unlabelled: the other N − n judged examples.

    Returns:
        Cov_L(y, f) / ((1 + n / (N − n)) Var(f)) clipped to [0, 1] (Angelopoulos, Duchi &
        Zrnic 2023, eq. (6); ``ppi_py._calc_lhat_glm``); 0.0 when there is no unlabelled
        example or the judge deltas are constant (the judge then carries no information).
    """
    if n_unlabelled == 0 or judge_variance <= 0.0:
        return 0.0
    return float(np.clip(covariance / ((1.0 + n / n_unlabelled) * judge_variance), 0.0, 1.0))


def ppi_mean_bound(
    judge_all: npt.ArrayLike, judge_labelled: npt.ArrayLike, human: npt.ArrayLike, alpha: float
) -> PPIBound:
    """PPI++ one-sided lower confidence bound on the mean human paired delta.

    Args:
        judge_all: judge deltas f on all N examples, shape (N,), the labelled ones included,
            oriented (positive = candidate better), metric units.
        judge_labelled: judge deltas on the n labelled examples, shape (n,), in the order of
            ``human``; these are entries of ``judge_all`` (a uniform random subset of it).
        human: human deltas y on the same examples, shape (n,), same units and orientation.
        alpha: one-sided level in (0, 0.5).

    Returns:
        PPIBound (see the module docstring for the estimator, its standard error and lambda);
        with n = N (every example labelled) lambda is 0 and the bound is the human-only one.

    Raises:
        ValueError: non-finite or mis-shaped arrays, n < 2, N < n, or alpha outside (0, 0.5).
    """
    f_all, f_lab, y = _validate(judge_all, judge_labelled, human, alpha)
    n = y.size
    n_unl, mean_unl, var_unl = _unlabelled_moments(f_all, f_lab)
    var_f = float(np.var(f_all, ddof=1))
    cov = float(np.mean((y - y.mean()) * (f_lab - f_lab.mean())))
    lam = power_tuned_lambda(cov, var_f, n, n_unl)
    rectifier = y - lam * f_lab
    estimate = lam * mean_unl + float(rectifier.mean())
    var_r = float(np.var(rectifier))
    se = math.sqrt(var_r / n + (lam * lam * var_unl / n_unl if n_unl else 0.0))
    return PPIBound(
        estimate=estimate,
        lower_bound=estimate - _Z(1.0 - alpha) * se,
        alpha=alpha,
        lam=lam,
        n=n,
        n_total=f_all.size,
        judge_bias=float(np.mean(f_lab - y)),
        judge_only_estimate=float(f_all.mean()),
        standard_error=se,
        rectifier_variance=var_r,
        judge_variance=var_f,
        covariance=cov,
        human_variance=float(np.var(y)),
    )


def labels_needed(bound: PPIBound, threshold: float, power: float) -> int | None:
    """More human labels (at the same N) likely to lift the PPI++ bound above ``threshold``.

    Uses the standard error at the power-tuned optimum, se(m)^2 = [Var(y) − (1 − m/N)
    Cov(y, f)^2 / Var(f)] / m for m labels out of N (module docstring), which falls in m, and
    solves z × se(m) = estimate − threshold with z = z_{1−alpha} + z_{power} (the normal sample
    size rule of ``stats.power.additional_pairs_needed``):
    m = [Var(y) − Cov^2/Var(f)] / [(gap/z)^2 − Cov^2 / (Var(f) N)].

    Args:
        bound: a ``ppi_mean_bound`` result.
        threshold: the value the lower bound must clear (e.g. −margin_abs), metric units.
        power: the target power in (0, 1).

    Returns:
        max(0, m − n), or None when the estimate is not above the threshold, when even labelling
        all N examples would not suffice (more judged examples are needed), or when the count
        is not feasible (``stats.power.feasible_hint``).
    """
    gap = resolvable_gap(bound.estimate, threshold)
    if gap <= 0:
        return None
    z = _Z(1.0 - bound.alpha) + _Z(power)
    explained = bound.covariance**2 / bound.judge_variance if bound.judge_variance > 0 else 0.0
    residual = max(bound.human_variance - explained, 0.0)
    denominator = (gap / z) ** 2 - explained / bound.n_total
    if denominator <= 0:
        return None
    needed = math.ceil(residual / denominator)
    if needed > bound.n_total:
        return None
    return feasible_hint(max(0, needed - bound.n), gap, bound.n)
