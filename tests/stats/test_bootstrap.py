"""The paired/cluster bootstrap against scipy.stats.bootstrap, closed forms and itself."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragwarrant.stats import _scale
from ragwarrant.stats import bootstrap as bs
from ragwarrant.stats.bootstrap import MULTINOMIAL_MAX_UNITS, Column, paired_bootstrap
from ragwarrant.stats.onesided import oriented_bootstrap


def test_mean_bounds_agree_with_scipy_paired_percentile():
    """One-sided percentile bounds match scipy.stats.bootstrap(paired=True) within MC error."""
    rng = np.random.default_rng(11)
    n = 400
    base = rng.normal(0.0, 1.0, n)
    cand = base + rng.normal(0.1, 0.5, n)
    (ours,) = oriented_bootstrap(
        cand[:, None], base[:, None], ["mean"], [1], None, 20000, np.random.default_rng(1)
    )
    ref = stats.bootstrap(
        (cand, base),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20000,
        method="percentile",
        confidence_level=0.95,
        alternative="greater",
        rng=np.random.default_rng(2),
    )
    se = np.std(cand - base, ddof=1) / np.sqrt(n)
    # Monte Carlo error of a 5 % quantile from 20000 resamples is about 0.01 SE; allow 0.05 SE.
    assert abs(ours.lower(0.05) - ref.confidence_interval.low) < 0.05 * se
    assert ours.estimate == pytest.approx(np.mean(cand - base))


def test_quantile_difference_agrees_with_scipy():
    """p95 differences on paired resamples agree with scipy's percentile bootstrap."""
    rng = np.random.default_rng(5)
    n = 1000
    base = rng.lognormal(5, 0.4, n)
    cand = base * rng.lognormal(-0.1, 0.1, n)
    (ours,) = oriented_bootstrap(
        cand[:, None], base[:, None], ["p95"], [1], None, 10000, np.random.default_rng(3)
    )

    def p95_diff(x, y, axis):
        return np.quantile(x, 0.95, axis=axis, method="inverted_cdf") - np.quantile(
            y, 0.95, axis=axis, method="inverted_cdf"
        )

    ref = stats.bootstrap(
        (cand, base),
        p95_diff,
        paired=True,
        vectorized=True,
        n_resamples=10000,
        method="percentile",
        confidence_level=0.95,
        alternative="less",
        rng=np.random.default_rng(4),
    )
    sd = np.std(ours.replicates)
    assert abs(ours.upper(0.05) - ref.confidence_interval.high) < 0.1 * sd
    assert ours.estimate == pytest.approx(p95_diff(cand, base, None))


def test_cluster_bootstrap_wider_than_naive_for_correlated_clusters():
    """With strongly clustered deltas, resampling clusters widens the interval (as it must)."""
    rng = np.random.default_rng(2)
    groups = np.repeat(np.arange(50), 20)
    cluster_effect = rng.normal(0, 1, 50)[groups]
    delta = cluster_effect + rng.normal(0, 0.1, groups.size)
    base = np.zeros((groups.size, 1))
    (naive,) = oriented_bootstrap(
        delta[:, None], base, ["mean"], [1], None, 2000, np.random.default_rng(1)
    )
    (clustered,) = oriented_bootstrap(
        delta[:, None], base, ["mean"], [1], groups, 2000, np.random.default_rng(1)
    )
    assert clustered.standard_error() > 3 * naive.standard_error()
    assert clustered.method.startswith("cluster") and naive.method.startswith("paired")
    # Closed form: SE of a mean of 50 cluster means with sd ~1 is about 1/sqrt(50).
    assert clustered.standard_error() == pytest.approx(
        np.std(cluster_effect[::20], ddof=1) / np.sqrt(50), rel=0.15
    )


def test_result_independent_of_thread_count_and_chunking():
    """Replicates depend on the seed only, not on workers or chunk size."""
    rng = np.random.default_rng(9)
    c, b = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    kw = dict(resamples=2000, groups=None)
    one = paired_bootstrap(
        c, b, ["mean", "p50"], rng=np.random.default_rng(1), max_workers=1, chunk_cells=3000, **kw
    )
    two = paired_bootstrap(
        c, b, ["mean", "p50"], rng=np.random.default_rng(1), max_workers=2, chunk_cells=3000, **kw
    )
    assert np.array_equal(one.replicates, two.replicates)
    other_seed = paired_bootstrap(c, b, ["mean", "p50"], rng=np.random.default_rng(2), **kw)
    assert not np.array_equal(one.replicates, other_seed.replicates)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(candidate=np.zeros((5, 1)), baseline=np.zeros((4, 1)), statistics=["mean"]), "shape"),
        (
            dict(candidate=np.zeros((1, 1)), baseline=np.zeros((1, 1)), statistics=["mean"]),
            "at least 2",
        ),
        (
            dict(candidate=np.full((5, 1), np.nan), baseline=np.zeros((5, 1)), statistics=["mean"]),
            "finite",
        ),
        (
            dict(candidate=np.zeros((5, 1)), baseline=np.zeros((5, 1)), statistics=["p99"]),
            "unknown statistics",
        ),
        (
            dict(candidate=np.zeros((5, 2)), baseline=np.zeros((5, 2)), statistics=["mean"]),
            "one statistic per column",
        ),
    ],
)
def test_invalid_arguments_raise(kwargs, message):
    """Bad arguments are refused before any computation, with a message saying what is wrong."""
    with pytest.raises(ValueError, match=message):
        paired_bootstrap(rng=np.random.default_rng(0), **kwargs)


def test_columns_share_one_resample_and_a_slice_uses_its_units_weights():
    """A slice's column is the weighted ratio over the slice under the same resample weights."""
    rng = np.random.default_rng(4)
    n = 600
    c, b = rng.normal(size=(n, 1)), rng.normal(size=(n, 1))
    in_slice = np.arange(n) % 3 == 0
    both = paired_bootstrap(
        np.hstack([c, c]),
        np.hstack([b, b]),
        ["mean", "mean"],
        rng=np.random.default_rng(1),
        resamples=300,
        present=np.column_stack([np.ones(n, bool), in_slice]),
    )
    alone = paired_bootstrap(c, b, ["mean"], rng=np.random.default_rng(1), resamples=300)
    assert np.allclose(both.replicates[:, 0], alone.replicates[:, 0])  # same weights
    assert both.estimate[1] == pytest.approx(np.mean((c - b)[in_slice]))
    # joint: the slice's replicates move with the overall ones (positive correlation)
    assert np.corrcoef(both.replicates.T)[0, 1] > 0.3
    assert list(both.column_n) == [n, int(in_slice.sum())]


def test_discrete_deltas_use_exact_counts_over_bins():
    """Likert deltas: counts over the distinct deltas, with the multinomial bootstrap's variance."""
    rng = np.random.default_rng(6)
    n = 2000
    base = rng.integers(1, 6, n).astype(float)
    cand = np.clip(base + rng.integers(-1, 2, n), 1, 5)
    res = paired_bootstrap(
        cand[:, None], base[:, None], ["mean"], rng=np.random.default_rng(1), resamples=4000
    )
    d = cand - base
    assert res.method.startswith("multinomial, counts over")
    # the multinomial bootstrap's SD of a mean is sd(d, ddof=0)/sqrt(n); MC error ~1.1 % at B=4000
    assert np.std(res.replicates[:, 0]) == pytest.approx(np.std(d) / np.sqrt(n), rel=0.05)


def test_half_sampling_above_the_threshold_matches_the_bootstrap_se():
    """Above MULTINOMIAL_MAX_UNITS the 0/2 weights give the same SE of a mean and of a p95."""
    rng = np.random.default_rng(8)
    n = MULTINOMIAL_MAX_UNITS + 5000
    base = rng.lognormal(0, 0.5, n)
    cand = base + rng.normal(0.01, 0.2, n)
    res = paired_bootstrap(
        np.column_stack([cand, cand]),
        np.column_stack([base, base]),
        ["mean", "p95"],
        rng=np.random.default_rng(1),
        resamples=1000,
    )
    assert res.method == "half-sampling 0/2 weights"
    d = cand - base
    assert np.std(res.replicates[:, 0]) == pytest.approx(np.std(d) / np.sqrt(n), rel=0.08)
    assert res.estimate[1] == pytest.approx(
        np.quantile(cand, 0.95, method="inverted_cdf")
        - np.quantile(base, 0.95, method="inverted_cdf")
    )


def test_half_sampling_replicates_do_not_depend_on_the_thread_count():
    """Above the threshold, slices' columns included, one worker and two give equal bits."""
    rng = np.random.default_rng(6)
    n = MULTINOMIAL_MAX_UNITS + 3001
    c, b = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    present = np.column_stack([np.ones(n, dtype=bool), np.arange(n) % 3 == 0])
    runs = [
        paired_bootstrap(
            c,
            b,
            ["mean", "p95"],
            rng=np.random.default_rng(1),
            resamples=300,
            present=present,
            max_workers=workers,
        )
        for workers in (1, 2)
    ]
    assert runs[0].method == "half-sampling 0/2 weights"
    assert np.array_equal(runs[0].replicates, runs[1].replicates)


def _large_columns(clustered: bool) -> tuple[list[Column], int, np.ndarray | None]:
    """Columns just above MULTINOMIAL_MAX_UNITS units: a mean, a slice's mean, a p95, a p50."""
    rng = np.random.default_rng(12)
    n = MULTINOMIAL_MAX_UNITS + 3001 if not clustered else 3 * (MULTINOMIAL_MAX_UNITS + 3001)
    base = rng.lognormal(0, 0.5, n)
    cand = base + rng.normal(0.01, 0.2, n)
    everyone, in_slice = np.arange(n), np.flatnonzero(np.arange(n) % 3 == 0)
    columns = [
        Column(everyone, cand, base, "mean"),
        Column(in_slice, cand[in_slice], base[in_slice], "mean"),
        Column(everyone, cand, base, "p95"),
        Column(in_slice, cand[in_slice], base[in_slice], "p50"),
    ]
    groups = rng.permutation(np.repeat(np.arange(n // 3), 3)) if clustered else None
    return columns, n, groups


@pytest.mark.parametrize("clustered", [False, True])
def test_fast_engine_equals_the_reference(clustered, monkeypatch):
    """Above MULTINOMIAL_MAX_UNITS, same seed, same replicates: quantiles exactly, means within
    float32 rounding of the products (under 1e-5 of their bootstrap SE), 300 resamples (a full
    chunk of 256 and a partial one, row blocks of 32 and a partial one)."""
    columns, n, groups = _large_columns(clustered)
    kw = dict(seed=3, args=dict(resamples=300, groups=groups))
    fast = _run(columns, n, kw, fast=True, monkeypatch=monkeypatch)
    slow = _run(columns, n, kw, fast=False, monkeypatch=monkeypatch)
    assert fast.method == slow.method == "half-sampling 0/2 weights"
    assert np.array_equal(fast.estimate, slow.estimate)
    assert np.array_equal(fast.replicates[:, 2:], slow.replicates[:, 2:])
    se = slow.replicates[:, :2].std(axis=0)
    assert np.all(np.abs(fast.replicates[:, :2] - slow.replicates[:, :2]) <= 1e-5 * se)
    assert list(fast.column_units) == list(slow.column_units)


def _run(columns, n, kw, *, fast, monkeypatch):  # type: ignore[no-untyped-def]
    """joint_bootstrap with its fast engine, or with the reference computation in its place."""
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(_scale, "replicates", bs.replicates)
        return bs.joint_bootstrap(columns, n, rng=np.random.default_rng(kw["seed"]), **kw["args"])


def test_fast_quantile_outside_its_window_equals_the_reference(monkeypatch):
    """With the quantile window narrowed to 16 positions most resamples fall outside it and are
    recomputed over all positions: the p95 replicates still equal the reference's."""
    monkeypatch.setattr(_scale, "WINDOW_SDS", 0.0)
    columns, n, _ = _large_columns(False)
    kw = dict(seed=4, args=dict(resamples=40))
    fast = _run(columns[2:], n, kw, fast=True, monkeypatch=monkeypatch)
    slow = _run(columns[2:], n, kw, fast=False, monkeypatch=monkeypatch)
    assert np.array_equal(fast.replicates, slow.replicates)


def test_engine_is_chosen_by_the_number_of_units():
    """Up to MULTINOMIAL_MAX_UNITS units the reference's multinomial runs, above it half-sampling
    (the unit count, not the row count: 3 rows per cluster stay multinomial)."""
    rng = np.random.default_rng(2)
    n = MULTINOMIAL_MAX_UNITS + 1
    c, b = rng.normal(size=(n, 1)), rng.normal(size=(n, 1))
    kw = dict(rng=np.random.default_rng(1), resamples=4)
    assert paired_bootstrap(c, b, ["mean"], **kw).method == "half-sampling 0/2 weights"
    groups = np.arange(n) // 3
    assert paired_bootstrap(c, b, ["mean"], groups=groups, **kw).method == "multinomial"


@pytest.mark.parametrize(
    ("first", "second", "kwargs", "message"),
    [
        (np.zeros((2, 2)), np.zeros(2), {}, "candidate must be one-dimensional"),
        (np.zeros(3), np.zeros(2), {"names": ("f", "y")}, "f and y must have the same shape"),
        (np.zeros(1), np.zeros(1), {"what": "labelled examples"}, "at least 2 labelled examples"),
        (np.array([0.0, np.inf]), np.zeros(2), {}, "values must be finite"),
        (np.zeros(2), np.zeros(2), {"alpha": 0.5}, r"alpha must be in \(0, 0.5\)"),
    ],
)
def test_as_pairs_names_what_is_wrong(first, second, kwargs, message):
    """The one pair check of the bootstrap, the noninferiority test and PPI names the argument."""
    with pytest.raises(ValueError, match=message):
        bs.as_pairs(first, second, **kwargs)


def test_as_pairs_returns_float_arms():
    """Valid arms come back as float64 arrays, unchanged."""
    cand, base = bs.as_pairs([1, 2], [0, 1], alpha=0.05)
    assert cand.dtype == base.dtype == np.float64
    assert cand.tolist() == [1.0, 2.0] and base.tolist() == [0.0, 1.0]
