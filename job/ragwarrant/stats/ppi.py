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
(``ppi_mean_ci``, ``_calc_lhat_glm``): population (1/n) variances, Var(f) over labelled and
unlabelled with ddof = 1.

Two changes to the reference's normal (CLT) interval make the one-sided bound hold its level at
n = 100–300 labels with binary or skewed deltas (``bench/validity_ppi.py``: the CLT bound
false-PROMOTEd in 5.1–7.3 % of runs at alpha 0.05, about as often as a normal bound on the
human labels alone):

- cross-fitted lambda (Zrnic & Candès 2024, "Cross-prediction-powered inference", PNAS
  121(15), 2024): the labels are split in two folds (even and odd positions); fold k's
  rectifiers y − lambda_k f use the lambda tuned on the other fold, the unlabelled mean is
  weighted by their size-weighted mean. Tuning lambda on the labels it weights makes lambda
  correlate with the rectifier mean (with a near-perfect judge that alone cost 1–1.5 points).
- a score bound instead of the Wald bound: theta0 is rejected when (theta_hat − theta0) /
  se(theta0) > z_{1−alpha}, se(theta0) computed from both means' variances under the
  empirical-likelihood reweighting that moves each mean to its share of theta0 (Owen 2001,
  "Empirical Likelihood", §2.9; the shift split in proportion to the parts' variance shares,
  the first-order two-sample EL solution). The variance is the null's, not the estimate's:
  what Tango's score bound does for a paired proportion (the Wald bound's variance shrinks
  with the estimated loss, so it is liberal exactly where a loss is underestimated). The lower
  bound is the smallest theta0 not rejected (Brent's root), the upper bound its mirror.

Sign convention: deltas are oriented (positive = candidate better), the units the metric's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from ragwarrant.stats.bootstrap import as_pairs
from ragwarrant.stats.power import feasible_hint, resolvable_gap
from ragwarrant.stats.roots import bisect

_N = NormalDist()
_Z = _N.inv_cdf
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PPIBound:
    """One-sided PPI++ bounds on the mean human-scale paired delta.

    Attributes:
        estimate: theta_hat, the judge-corrected mean delta (metric units, oriented).
        lower_bound: the one-sided score lower bound at level ``alpha`` (module docstring).
        upper_bound: the one-sided score upper bound at level ``alpha``.
        p_value: the score p-value of "mean <= threshold" when a threshold was given, else None.
        alpha: the one-sided level.
        lam: the cross-fitted power-tuned lambda in [0, 1], the mean of the two folds'
            (0: human labels only; 1: plain PPI).
        n: labelled examples; n_total: judged examples N (the labelled ones included).
        judge_bias: mean(f − y) on the labelled examples (positive: the judge favours the
            candidate more than the reviewers do).
        standard_error: the plug-in (CLT) standard error of ``estimate``.
        judge_variance, covariance, human_variance: the plug-in moments Var_{L+U}(f),
            Cov_L(y, f) and Var_L(y) that ``labels_needed`` reads.
    """

    estimate: float
    lower_bound: float
    upper_bound: float
    p_value: float | None
    alpha: float
    lam: float
    n: int
    n_total: int
    judge_bias: float
    standard_error: float
    judge_variance: float
    covariance: float
    human_variance: float


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


def _covariance(y: FloatArray, f: FloatArray) -> float:
    return float(np.mean((y - y.mean()) * (f - f.mean()))) if y.size else 0.0


def _el_variance(values: FloatArray, counts: FloatArray, target: float) -> float:
    """Variance about ``target`` of the distinct ``values`` (with ``counts``) under the
    empirical-likelihood weights whose mean is ``target`` (Owen 2001, "Empirical Likelihood",
    §2.9): w ∝ counts / (1 + eta (values − target)); 0 when target is not inside the range."""
    d = values - target
    if d.size == 0 or d.max() <= 0.0 or d.min() >= 0.0:
        return 0.0
    low, high = -1.0 / d.max(), -1.0 / d.min()
    pad = (high - low) * 1e-12
    eta = bisect(lambda e: float(counts @ (d / (1.0 + e * d))), low + pad, high - pad, xtol=1e-14)
    w = counts / (1.0 + eta * d)
    return float(w @ (d * d) / w.sum())


@dataclass(frozen=True)
class _Parts:
    """The two independent means of the estimate: the labelled rectifiers r and the unlabelled
    judge deltas f_U (distinct values and counts, so an EL tilt is cheap), their means m and
    the variances of their means a (a_u includes lambda^2)."""

    rect: tuple[FloatArray, FloatArray]
    unl: tuple[FloatArray, FloatArray]
    lam: float
    m_r: float
    a_r: float
    m_u: float
    a_u: float

    @property
    def estimate(self) -> float:
        return self.m_r + self.lam * self.m_u

    @property
    def share(self) -> float:
        """The labelled part's share of the variance (and of a null shift)."""
        return self.a_r / (self.a_r + self.a_u)

    @classmethod
    def of(cls, rect: FloatArray, f_unl: FloatArray, lam: float) -> _Parts:
        """The parts of rectifiers ``rect`` (n >= 2) and unlabelled judge deltas (maybe none)."""
        m_u, a_u = 0.0, 0.0
        if f_unl.size:
            m_u, a_u = float(f_unl.mean()), lam * lam * float(np.var(f_unl)) / f_unl.size
        a_r = float(np.var(rect)) / rect.size
        (r, r_n), (u, u_n) = (np.unique(v, return_counts=True) for v in (rect, f_unl))
        return cls(
            (r, r_n.astype(float)), (u, u_n.astype(float)), lam, float(rect.mean()), a_r, m_u, a_u
        )

    def score_z(self, theta0: float) -> float:
        """Score statistic (theta_hat − theta0) / se(theta0), se from both parts' EL-tilted
        variances; the shift theta0 − theta_hat is split between the parts in proportion to their
        variance shares (the first-order two-sample empirical-likelihood allocation)."""
        gap = self.estimate - theta0
        var = 0.0
        if self.a_r > 0:
            n = float(self.rect[1].sum())
            var += _el_variance(*self.rect, self.m_r - self.share * gap) / n
        if self.a_u > 0:
            n_unl = float(self.unl[1].sum())
            tilted = _el_variance(*self.unl, self.m_u - (1 - self.share) * gap / self.lam)
            var += self.lam**2 * tilted / n_unl
        if var <= 0.0:
            return math.copysign(math.inf, gap) if gap != 0 else 0.0
        return gap / math.sqrt(var)

    def score_lower(self, z: float) -> float:
        """The smallest theta0 with score statistic <= z (the inverted one-sided score test)."""
        if self.a_r + self.a_u <= 0.0:
            return self.estimate
        # theta0 below ``floor`` would move a part's mean outside its values' range
        floor = -math.inf
        share = self.share
        if share > 0.0:
            floor = max(floor, self.estimate + (float(self.rect[0].min()) - self.m_r) / share)
        if share < 1.0:
            floor = max(
                floor,
                self.estimate + self.lam * (float(self.unl[0].min()) - self.m_u) / (1 - share),
            )
        start = floor + 1e-9 * (self.estimate - floor)
        if self.score_z(start) <= z:
            return start
        return bisect(lambda t: self.score_z(t) - z, start, self.estimate, xtol=1e-12)


def ppi_mean_bound(
    judge_all: npt.ArrayLike,
    judge_labelled: npt.ArrayLike,
    human: npt.ArrayLike,
    alpha: float,
    *,
    unlabelled_mask: npt.ArrayLike | None = None,
    threshold: float | None = None,
) -> PPIBound:
    """Cross-fitted PPI++ score bounds on the mean human paired delta.

    Args:
        judge_all: judge deltas f on all N examples, shape (N,), the labelled ones included,
            oriented (positive = candidate better), metric units.
        judge_labelled: judge deltas on the n labelled examples, shape (n,), in the order of
            ``human``; these are entries of ``judge_all`` (a uniform random subset of it).
        human: human deltas y on the same examples, shape (n,), same units and orientation.
        alpha: one-sided level in (0, 0.5).
        unlabelled_mask: shape (N,) booleans, True for the N − n unlabelled examples; when
            omitted the unlabelled deltas are ``judge_all`` less ``judge_labelled`` as a multiset
            (the same thing: only their values matter).
        threshold: when given, ``p_value`` is the one-sided score p-value of mean <= threshold.

    Returns:
        PPIBound (module docstring: estimator, lambda, score bounds); with n = N (every example
        labelled) lambda is 0 and the bounds are the human-only score bounds.

    Raises:
        ValueError: non-finite or mis-shaped arrays, n < 2, N < n, or alpha outside (0, 0.5).
    """
    f_lab, y = as_pairs(
        judge_labelled,
        human,
        names=("judge_labelled", "human"),
        what="labelled examples",
        alpha=alpha,
    )
    f_all = np.asarray(judge_all, dtype=np.float64)
    if f_all.ndim != 1 or not np.all(np.isfinite(f_all)):
        raise ValueError(f"judge_all must be finite and one-dimensional, got shape {f_all.shape}")
    n, n_unl = y.size, f_all.size - y.size
    if n_unl < 0:
        raise ValueError(f"judge_all (N={f_all.size}) must include the labelled examples (n={n})")
    if unlabelled_mask is None:  # the multiset difference of f_all and f_lab
        values, counts = np.unique(f_all, return_counts=True)
        taken = np.bincount(np.searchsorted(values, f_lab), minlength=values.size)
        f_unl = np.repeat(values, counts - taken)
    else:
        chosen = np.asarray(unlabelled_mask, dtype=bool)
        if chosen.shape != f_all.shape or int(chosen.sum()) != n_unl:
            raise ValueError("unlabelled_mask must mark N - n of the N judged examples")
        f_unl = f_all[chosen]
    var_f = float(np.var(f_all, ddof=1))
    # rectifiers r_i = y_i − lambda_k f_i, lambda_k tuned on the other fold's labels (folds:
    # even and odd positions); lam is the labelled-size-weighted mean of the two
    rect = np.empty(n)
    lam = 0.0
    for k in range(2):
        own, other = slice(k, None, 2), slice(1 - k, None, 2)
        lam_k = power_tuned_lambda(_covariance(y[other], f_lab[other]), var_f, n, n_unl)
        rect[own] = y[own] - lam_k * f_lab[own]
        lam += lam_k * y[own].size / n
    parts = _Parts.of(rect, f_unl, lam)
    z = _Z(1.0 - alpha)
    p_value = None if threshold is None else _N.cdf(-parts.score_z(threshold))
    return PPIBound(
        estimate=parts.estimate,
        lower_bound=parts.score_lower(z),
        upper_bound=-_Parts.of(-rect, -f_unl, lam).score_lower(z),
        p_value=p_value,
        alpha=alpha,
        lam=lam,
        n=n,
        n_total=f_all.size,
        judge_bias=float(np.mean(f_lab - y)),
        standard_error=math.sqrt(parts.a_r + parts.a_u),
        judge_variance=var_f,
        covariance=_covariance(y, f_lab),
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
