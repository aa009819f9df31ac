"""The paired/cluster bootstrap against scipy.stats.bootstrap, closed forms and itself."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragwarrant.stats.bootstrap import (
    MULTINOMIAL_MAX_UNITS,
    _Weights,
    _WindowedQuantile,
    paired_bootstrap,
    weighted_lower_quantile,
)
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


def test_windowed_quantile_equals_full_computation():
    """The windowed quantile equals the all-positions inverted-CDF quantile, including fallbacks."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=5000)
    win = _WindowedQuantile(values, 0.95, np.arange(5000), 5000)
    weights = rng.multinomial(5000, np.full(5000, 1 / 5000), size=50).astype(float)
    weights[0] = 0
    weights[0, :10] = 500  # a resample whose quantile lies far outside the window
    full = weighted_lower_quantile(np.sort(values), weights[:, win.order], 0.95)
    w = _Weights.from_dense(weights)
    assert np.array_equal(win.finish(weights @ win.linear(), w), full)


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


def test_half_sampling_weights_are_zero_or_two_with_mean_one():
    """Packed bits unpack to weights 0/2; gathered and full rows agree with the tiled product."""
    w = _Weights(np.random.default_rng(0), 64, 70_001, True)
    full = w.rows(np.arange(64))
    assert set(np.unique(full)) == {0.0, 2.0}
    assert full.mean() == pytest.approx(1.0, abs=0.01)
    units = np.array([0, 7, 8, 70_000])
    assert np.array_equal(w.take(units), full[:, units])
    lin = np.random.default_rng(1).normal(size=(70_001, 2))
    assert np.allclose(w.dot(lin, lin.astype(np.float32)), full @ lin, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("n", [0, 1, 3, 8, 13, 4001])
def test_random_bytes_are_the_generators_bytes(n):
    """_random_bytes returns rng.bytes(n) and leaves the generator in the same state."""
    from ragwarrant.stats.bootstrap import _random_bytes

    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert _random_bytes(a, n).tobytes() == b.bytes(n)
    assert a.integers(0, 2**62) == b.integers(0, 2**62)


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def test_pinned_blas_limits_numpy_blas_to_one_thread_and_restores_it() -> None:
    """Inside ``_pinned_blas`` BLAS runs one thread; on exit the pool it found is back."""
    from threadpoolctl import threadpool_limits

    from ragwarrant.stats.bootstrap import _blas_controller, _pinned_blas

    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == [2]
        with _pinned_blas():
            assert _blas_threads() == [1]
        assert _blas_threads() == [2]
    assert _blas_controller() is _blas_controller()  # one library scan per process


def test_layout_order_is_the_lexsort_of_the_packed_key():
    """The tile layout's radix order equals the lexsort of the packed key bytes, ties by unit,
    for one digit of 16 key columns or several (the replicates depend on this order bit for
    bit)."""
    from types import SimpleNamespace

    from ragwarrant.stats.bootstrap import _layout_key, _layout_order

    rng = np.random.default_rng(5)
    for n_keys in (1, 7, 8, 9, 16, 17, 24, 29, 33, 48):  # 29 at 10^6 pairs, 5 slices
        g, c = 3000, 5
        nonzero = np.asfortranarray(rng.random((g, c)) < 0.5)
        keys = [
            int(rng.integers(c)) if rng.random() < 0.6 else rng.random(g) < 0.2
            for _ in range(n_keys)
        ]
        plan = SimpleNamespace(key=keys)
        packed = np.packbits(_layout_key(plan, nonzero), axis=1)  # type: ignore[arg-type]
        expected = np.lexsort([np.arange(g), *packed.T[::-1]])
        assert np.array_equal(_layout_order(plan, nonzero), expected)  # type: ignore[arg-type]


def test_blocked_tile_product_equals_the_full_product():
    """Row blocks of a tile, a last partial block and tile, and per-tile active columns give the
    weights' product (float32 rounding apart), zero outside each tile's active columns."""
    from ragwarrant.stats.bootstrap import _TILE_UNITS, _TileBlocks

    g, b = 2 * _TILE_UNITS + 999, 70  # 70 resamples: two blocks of 32 and one of 6
    w = _Weights(np.random.default_rng(2), b, g, True)
    lin = np.random.default_rng(3).normal(size=(g, 4))
    lin[:_TILE_UNITS, 3] = 0.0  # column 3 is inactive on the first tile
    active = [np.array([0, 1, 2]), np.arange(4), np.array([1, 3])]
    for t, cols in enumerate(active):  # what is inactive on a tile is zero there
        inactive = np.setdiff1d(np.arange(4), cols)
        lin[t * _TILE_UNITS : (t + 1) * _TILE_UNITS, inactive] = 0.0
    blocks = _TileBlocks(lin.astype(np.float32), active)
    expected = w.rows(np.arange(b)) @ lin
    assert np.allclose(w.dot(lin, blocks, active), expected, rtol=1e-5, atol=1e-2)
    assert np.allclose(w.dot(lin, lin.astype(np.float32), active), expected, rtol=1e-5, atol=1e-2)


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


def test_layout_set_up_on_two_threads_equals_one_thread(monkeypatch):
    """From _PARALLEL_SORT_ROWS units the pattern, matrix and per-tile columns are filled on two
    threads: slices' sparse columns and a p95 give the replicates of the one-thread set-up."""
    import ragwarrant.stats.bootstrap as bs

    rng = np.random.default_rng(7)
    n = bs._PARALLEL_SORT_ROWS + 4001
    c, b = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    present = np.column_stack(
        [np.ones(n, dtype=bool), np.arange(n) % 3 == 0, np.arange(n) % 5 == 1]
    )
    calls: list[int] = []
    real = bs._each_column

    def counted(cols, g, fill):  # type: ignore[no-untyped-def]
        calls.append(g)
        real(cols, g, fill)

    def run() -> np.ndarray:
        res = paired_bootstrap(
            c,
            b,
            ["mean", "mean", "p95"],
            rng=np.random.default_rng(1),
            resamples=64,
            present=present,
        )
        assert res.method == "half-sampling 0/2 weights"
        return res.replicates

    monkeypatch.setattr(bs, "_each_column", counted)
    two = run()
    assert calls and min(calls) >= bs._PARALLEL_SORT_ROWS  # the threaded branch ran
    monkeypatch.setattr(bs, "_PARALLEL_SORT_ROWS", 10**9)  # every fill on the calling thread
    assert np.array_equal(run(), two)
