"""The issue-10 noninferiority rule: methods, guard, canonical order, hint and validity smoke."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragwarrant.stats import noninferiority as ni
from ragwarrant.stats.onesided import expanded_level, mc_decision, oriented_bootstrap


def _test(cand, base, **kw):
    args = dict(kind="continuous", margin_abs=0.05, alpha=0.05, rng=np.random.default_rng(1))
    args.update(kw)
    return ni.test_noninferiority(np.asarray(cand, float), np.asarray(base, float), **args)


def test_min_units_closed_forms():
    """All-tied minimum n: z^2 (1 - m) / m for binary, ln(alpha) / ln(1 - m / W) otherwise."""
    assert ni.min_units_for_margin("binary", 0.05, 0.05) == 52
    assert ni.min_units_for_margin("continuous", 0.05, 0.05, 1.0) == 59
    assert ni.min_units_for_margin("ordinal", 0.25, 0.05, 4.0) == 47


def test_binary_all_tied_needs_the_minimum_n():
    """30 tied binary pairs never pass; 60 do (Tango's bound is honest on ties)."""
    small = _test(np.ones(30), np.ones(30), kind="binary")
    assert not small.rejects and small.method.startswith("Tango")
    assert small.degenerate_reason == "all pairs tied (no discordant pair)"
    assert small.more_units_needed is not None and small.more_units_needed >= 52 - 30
    assert _test(np.ones(60), np.ones(60), kind="binary").rejects


def test_all_tied_ordinal_uses_exact_bound():
    """All-tied pairs give a [0, 0] bootstrap; the exact bound decides, by the minimum n."""
    z30 = np.full(30, 3.0)
    res = _test(z30, z30, kind="ordinal", margin_abs=0.25, scale=(1, 5))
    assert not res.rejects
    assert res.lower_bound == pytest.approx(-4 * (1 - 0.05 ** (1 / 30)))
    assert res.degenerate_reason == "all 30 pairs tied"
    assert res.more_units_needed == 47 - 30
    z200 = np.full(200, 0.5)
    big = _test(z200, z200, scale=(0, 1))
    assert big.rejects and "exact bound from worse units" in big.method_steps
    no_scale = _test(z200, z200)
    assert not no_scale.rejects and "no scale width" in str(no_scale.degenerate_reason)


def test_rule_never_passes_with_p_above_alpha():
    """Across many samples, a pass always has p <= alpha and a lower bound above -margin."""
    rng = np.random.default_rng(3)
    for i in range(40):
        base = rng.integers(0, 2, 50).astype(float)
        cand = np.where(rng.uniform(size=50) < 0.1, 1 - base, base)
        for kind in ("binary", "ordinal"):
            r = _test(cand, base, kind=kind, scale=(0, 1), rng=np.random.default_rng(i))
            assert r.rejects == (r.p_value <= 0.05 and r.lower_bound > -0.05)


def test_row_order_never_changes_the_result():
    """Shuffled rows with the same example ids give the identical result."""
    rng = np.random.default_rng(4)
    base = rng.normal(0.7, 0.2, 80)
    cand = base + rng.normal(-0.01, 0.1, 80)
    ids = np.array([f"ex-{i:03d}" for i in range(80)])
    perm = rng.permutation(80)
    one = _test(cand, base, example_ids=ids, scale=(-5, 5))
    two = _test(cand[perm], base[perm], example_ids=ids[perm], scale=(-5, 5))
    assert one == two


def test_drawn_replicates_give_the_same_result_in_any_row_order():
    """With the replicates given (a joint resample), the rows are not sorted, and the result is
    the one of the sorted rows: the degenerate guard reads only counts of worse pairs."""
    from ragwarrant.stats.bootstrap import paired_bootstrap

    rng = np.random.default_rng(7)
    base = rng.integers(0, 5, 300).astype(float)
    cand = np.where(rng.uniform(size=300) < 0.05, base - 1, base)
    ids = np.arange(300)
    drawn = paired_bootstrap(
        cand[:, None], base[:, None], ["mean"], rng=np.random.default_rng(8), resamples=2000
    )
    perm = rng.permutation(300)
    kw = dict(kind="ordinal", scale=(0, 4), resampled=drawn, margin_abs=0.05)
    one = _test(cand, base, example_ids=ids, **kw)
    two = _test(cand[perm], base[perm], example_ids=ids[perm], **kw)
    assert (
        one == two and one.n_units == 300 and "exact bound from worse units" not in one.method_steps
    )
    assert one.degenerate_reason is None
    repeated = _test(cand, base, example_ids=ids // 2, **kw)  # repetitions: clusters, sorted
    assert repeated.unit_name == "clusters" and repeated.n_units == 150


def test_repetitions_are_resampled_by_example():
    """Repeated example ids become clusters: n_units counts examples, the unit is clusters."""
    rng = np.random.default_rng(5)
    ids = np.repeat(np.arange(40), 3)
    base = rng.normal(0.7, 0.2, 120)
    res = _test(base + 0.01, base, example_ids=ids, scale=(-5, 5))
    assert (res.n, res.n_units, res.unit_name) == (120, 40, "clusters")
    assert res.method == "guarded cluster bootstrap" and "small-cluster" not in res.method_steps[1]
    few = _test(base[:30] + 0.01, base[:30], groups=ids[:30], scale=(-5, 5))
    assert few.n_units == 10 and few.method_steps[1] == "small-cluster correction: 10 < 30 clusters"


def test_expanded_percentile_is_close_to_the_t_bound():
    """For normal deltas the expanded percentile bound is near the paired t bound (Hesterberg);
    60 pairs, above the small-sample skewness check (which lowers the bound by design)."""
    from scipy import stats

    rng = np.random.default_rng(6)
    d = rng.normal(0.0, 0.2, 60)
    res = _test(d, np.zeros(60), resamples=20000, scale=(-5, 5))
    t_lower = d.mean() - stats.t.ppf(0.95, 59) * d.std(ddof=1) / math.sqrt(60)
    assert res.lower_bound == pytest.approx(t_lower, abs=0.15 * d.std(ddof=1) / math.sqrt(60))


def test_lower_is_better_swaps_the_arms():
    """higher_is_better=False orients delta as baseline minus candidate."""
    res = _test([0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0], kind="binary", higher_is_better=False)
    assert res.estimate == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(cand=[0.5, 1.0], base=[1.0, 0.0], kind="binary"), "only 0 and 1"),
        (dict(cand=[1.0, 2.0], base=[1.0], kind="ordinal"), "shape"),
        (dict(cand=[1.0], base=[1.0], kind="ordinal"), "at least 2"),
        (dict(cand=[1.0, math.nan], base=[1.0, 1.0], kind="ordinal"), "finite"),
        (dict(cand=[1.0, 2.0], base=[1.0, 1.0], kind="likert"), "unknown metric kind"),
        (dict(cand=[1.0, 2.0], base=[1.0, 1.0], kind="ordinal", margin_abs=0.0), "margin_abs"),
        (dict(cand=[1.0, 2.0], base=[1.0, 1.0], kind="ordinal", alpha=0.7), "alpha"),
        (dict(cand=[1.0, 2.0], base=[1.0, 1.0], kind="ordinal", groups=np.zeros(3)), "groups"),
    ],
)
def test_invalid_arguments_raise(kwargs, message):
    """Bad arguments are refused before any computation, saying what is wrong."""
    cand, base = kwargs.pop("cand"), kwargs.pop("base")
    with pytest.raises(ValueError, match=message):
        _test(cand, base, **kwargs)


def _follow_hint(cand, base, kind, sims, **kw):
    """Share of fresh samples of n + hint units (drawn from the sample: true delta = estimate)
    on which the test rejects."""
    first = _test(cand, base, kind=kind, **kw)
    assert not first.rejects and first.more_units_needed
    total = cand.size + first.more_units_needed
    rng = np.random.default_rng(11)
    hits = 0
    for s in range(sims):
        idx = rng.integers(0, cand.size, total)
        hits += _test(cand[idx], base[idx], kind=kind, rng=np.random.default_rng(s), **kw).rejects
    return hits / sims


def test_hint_is_calibrated_binary():
    """Following the "more pairs" hint of Tango's test resolves about 80 % of cases."""
    base = np.array([1.0] * 30 + [0.0] * 20 + [1.0] * 6 + [0.0] * 4)
    cand = np.array([1.0] * 30 + [0.0] * 20 + [0.0] * 6 + [1.0] * 4)
    rate = _follow_hint(cand, base, "binary", 300)
    assert 0.72 <= rate <= 0.88, rate


def test_hint_is_calibrated_continuous():
    """Following the bootstrap's "more pairs" hint resolves about 80 % of cases."""
    rng = np.random.default_rng(12)
    base = rng.normal(0.7, 0.2, 60)
    cand = base + rng.normal(-0.02, 0.12, 60)
    cand = cand - (cand - base).mean() - 0.035
    rate = _follow_hint(cand, base, "continuous", 150, resamples=500, scale=(-5, 5))
    assert 0.68 <= rate <= 0.90, rate


def _binary_at_margin(rng, n):
    cells = rng.choice(4, size=n, p=[0.75, 0.01, 0.06, 0.18])
    return np.isin(cells, (0, 1)).astype(float), np.isin(cells, (0, 2)).astype(float)


def _repetitions_at_margin(rng, examples=40, runs=3):
    ids = np.repeat(np.arange(examples), runs)
    base = rng.normal(0.7, 0.2, examples)[ids]
    d = -0.05 + rng.normal(0, 0.15, examples)[ids] + rng.normal(0, 0.05, ids.size)
    return base + d, base, ids


def _legacy_pass(cand, base, rng):
    (boot,) = oriented_bootstrap(cand[:, None], base[:, None], ["mean"], [1], None, 1000, rng)
    return boot.percentile_test(-0.05, 0.05, power=0.8, inclusive=True).rejects


@pytest.mark.parametrize("case", ["binary-n30", "repetitions-undeclared"])
def test_false_promote_smoke_at_the_margin(case):
    """At true delta = -margin the rule passes < 9 % of 200 runs; the first landing's did not."""
    rng = np.random.default_rng(2026)
    new = old = 0
    for s in range(200):
        if case == "binary-n30":
            cand, base = _binary_at_margin(rng, 30)
            ids, kind = None, "binary"
        else:
            cand, base, ids = _repetitions_at_margin(rng)
            kind = "continuous"
        r = _test(cand, base, kind=kind, example_ids=ids, resamples=1000, scale=(-5, 5))
        new += r.rejects
        old += _legacy_pass(cand, base, np.random.default_rng(s))
    assert new / 200 < 0.09
    assert old / 200 > 0.09  # the percentile rule with LCB >= -margin fails this bound


@pytest.mark.parametrize(
    ("values", "scale", "expected"),
    [
        ([0.0, 1.0, 1.0], (0.0, 1.0), "binary"),
        ([1.0, 3.0, 5.0], (1.0, 5.0), "ordinal"),
        ([0.0, 7.0, 10.0], (0.0, 10.0), "ordinal"),
        ([1.0, 3.0, 12.0], (0.0, 12.0), "continuous"),  # 13 levels
        ([0.0, 0.5, 1.0], (0.0, 1.0), "continuous"),
    ],
)
def test_detect_metric_kind(values, scale, expected):
    """0/1 is binary, integers on a scale of at most 11 levels ordinal, anything else continuous."""
    assert ni.detect_metric_kind(np.asarray(values), scale) == expected


@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_no_count_when_the_estimate_is_past_the_margin(kind):
    """Just past -margin the hint gives no count (it used to ask for millions of pairs)."""
    base = np.array([1.0] * 50 + [0.0] * 40 + [1.0] * 7 + [0.0] * 3)
    cand = np.array([1.0] * 50 + [0.0] * 40 + [0.0] * 7 + [1.0] * 3)  # estimate -0.04
    if kind == "continuous":
        cand = cand - 0.0101  # estimate -0.0501, margin 0.05
    res = _test(cand, base, kind=kind, margin_abs=0.05 if kind == "continuous" else 0.04)
    assert not res.rejects and res.estimate <= res.threshold
    assert res.more_units_needed is None


def test_no_count_when_no_feasible_sample_resolves_it():
    """An estimate a hair inside the margin would need > 100x the units: no count is printed."""
    base = np.array([1.0] * 50 + [0.0] * 40 + [1.0] * 7 + [0.0] * 3)
    cand = np.array([1.0] * 50 + [0.0] * 40 + [0.0] * 7 + [1.0] * 3)  # estimate -0.04
    res = _test(cand, base, kind="binary", margin_abs=0.0401)
    assert not res.rejects and res.estimate > res.threshold
    assert res.more_units_needed is None
    wide = _test(cand, base, kind="binary", margin_abs=0.08)
    assert wide.more_units_needed is not None  # a feasible hint is still given


@pytest.mark.parametrize("groups", [10, 60, 300])
def test_monte_carlo_guard_bound_and_p_decide_alike(groups):
    """For every count k of B replicates at or below -margin: p <= alpha iff bound > -margin,
    and the guard rejects on fewer counts than the plain percentile rule (k / B <= alpha')."""
    b, thr = 2000, -0.05
    level, _ = expanded_level(groups, 0.05)
    base = np.linspace(0.001, 1.0, b)
    plain, guarded = 0, 0
    for k in range(0, 140, 3):
        reps = np.concatenate([np.full(k, thr - 0.01), base[k:]])
        mc = mc_decision(reps, thr, groups, 0.05)
        assert (mc.p_value <= 0.05) == (mc.lower > thr), k
        plain += (k + 1) / (b + 1) <= level
        guarded += mc.p_value <= 0.05
    assert 0 < guarded < plain


def test_monte_carlo_guard_refuses_a_pass_within_resampling_noise():
    """A sample the plain expanded-percentile rule passes by a hair is INCONCLUSIVE under the
    guard, and its method says so; a clear pass still passes."""
    rng = np.random.default_rng(21)
    d = rng.normal(0.0, 1.0, 60)
    d = (d - d.mean()) / d.std(ddof=1) * 0.12
    level, s = expanded_level(60, 0.05)
    for shift, passes in ((0.001, False), (0.04, True)):
        cand = d - 0.05 + shift + 0.12 * 1.70 / math.sqrt(60)  # t-bound just above -margin
        res = _test(cand, np.zeros(60), scale=(-5, 5), rng=np.random.default_rng(3))
        raw = ni.paired_bootstrap(
            np.sort(cand)[:, None],
            np.zeros((60, 1)),
            ["mean"],
            rng=np.random.default_rng(3),
            resamples=2000,
        )
        plain_p = (np.sum(raw.replicates[:, 0] <= -0.05) + 1) / 2001  # same canonical order
        assert res.method_steps[1].startswith("Monte Carlo guard")
        assert res.rejects is passes
        if not passes:
            assert plain_p <= level  # the unguarded rule would have passed this sample
            assert res.p_value > 0.05 and res.lower_bound <= -0.05


def test_few_units_get_more_resamples():
    """Below BOOSTED_UNITS units the bootstrap runs B = 10,000 (the guard costs less there)."""
    rng = np.random.default_rng(3)
    base = rng.normal(0.7, 0.2, 20)
    cand = base + rng.normal(0.0, 0.1, 20)
    few = _test(cand, base, resamples=2000, scale=(-5, 5))
    assert "B=10000" in few.method_steps[0]
    many = _test(np.tile(cand, 3), np.tile(base, 3), resamples=2000, scale=(-5, 5))
    assert "B=2000" in many.method_steps[0]
    assert ni.resamples_for_units(49, 2000) == 10_000 and ni.resamples_for_units(50, 2000) == 2000


def test_a_small_level_gets_enough_resamples_to_be_reachable():
    """An early sequential look (alpha 0.00069) draws B >= 20 / alpha, so a clear win passes
    (with B = 2,000 the guard's p-value could not go below ~0.0036; fresh-user trial)."""
    assert ni.resamples_for_units(300, 2000, 0.00069) == 28_986
    assert ni.resamples_for_units(300, 2000, 1e-7) == ni.MAX_RESAMPLES
    rng = np.random.default_rng(5)
    base = rng.normal(0.7, 0.1, 300)
    res = _test(base + rng.normal(0.1, 0.1, 300), base, alpha=0.00069, scale=(-5, 5))
    assert res.rejects and "B=28986" in res.method_steps[0]


def test_the_monte_carlo_guard_table_is_the_guard_bound_of_each_count():
    """The cached table holds mc_upper(k) for every k = 0..B, the same float, read-only."""
    from ragwarrant.stats.onesided import _mc_upper_table
    from ragwarrant.stats.onesided import mc_upper as _mc_upper

    for resamples, alpha in ((20, 0.05), (2000, 0.05), (2000, 0.0125), (10_000, 0.025)):
        table = _mc_upper_table(resamples, alpha)
        assert table.shape == (resamples + 1,) and not table.flags.writeable
        full = _mc_upper(np.arange(resamples), resamples, alpha)
        assert np.array_equal(table[:resamples], full) and table[resamples] == 1.0
        for k in (0, 1, resamples // 2, resamples - 1, resamples):
            assert table[k] == float(_mc_upper(k, resamples, alpha))


def test_every_delta_at_the_margin_gives_no_more_units_hint() -> None:
    """Deltas equal to -margin up to float rounding are at the margin: no count resolves them.

    The baselines are those v for which (v - 0.05) - v rounds above -0.05, so the estimate is
    -0.04999999999999999: before, the hint read "about 2248 more paired examples".
    """
    values = [v / 100 for v in range(5, 100) if (v / 100 - 0.05) - v / 100 > -0.05]
    baseline = np.random.default_rng(1).choice(values, 400)
    res = ni.test_noninferiority(
        baseline - 0.05,
        baseline,
        kind="continuous",
        margin_abs=0.05,
        alpha=0.05,
        rng=np.random.default_rng(0),
        scale=(0.0, 1.0),
    )
    assert res.estimate > -0.05
    assert not res.rejects
    assert res.more_units_needed is None


def test_resolvable_gap_drops_rounding_noise_only() -> None:
    """A gap of a few ulps is 0; a gap of 1e-9 on a margin of 0.05 is kept."""
    from ragwarrant.stats.power import resolvable_gap

    assert resolvable_gap(-0.049999999999999996, -0.05) == 0.0
    assert resolvable_gap(-0.05 + 1e-9, -0.05) == pytest.approx(1e-9)


def test_rules_table_per_metric_kind():
    """Binary pairs take Tango's test; everything else, and binary clusters, the guarded
    bootstrap; only binary metrics take 1 as the exact guard's scale width."""
    table = {k: (r.pairs.__name__, r.clusters.__name__, r.unit_width) for k, r in ni.RULES.items()}
    assert table == {
        "binary": ("tango", "guarded_bootstrap", True),
        "ordinal": ("guarded_bootstrap", "guarded_bootstrap", False),
        "continuous": ("guarded_bootstrap", "guarded_bootstrap", False),
    }


@pytest.mark.parametrize(
    ("kind", "clustered", "method"),
    [
        ("binary", False, "Tango score test for paired proportions"),
        ("binary", True, "guarded cluster bootstrap"),
        ("ordinal", False, "guarded paired bootstrap"),
        ("continuous", True, "guarded cluster bootstrap"),
    ],
)
def test_the_table_decides_the_procedure(kind, clustered, method):
    """test_noninferiority runs the procedure its kind's rule names for pairs or clusters."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2, 120).astype(float)
    cand = np.where(rng.random(120) < 0.1, 1 - base, base)
    groups = np.arange(120) // 4 if clustered else None
    assert _test(cand, base, kind=kind, groups=groups, scale=(0, 1)).method == method


def test_a_changed_rule_changes_the_test(monkeypatch):
    """Replacing the binary rule's pair procedure in RULES is all it takes to change the test."""
    cand, base = np.ones(80), np.ones(80)
    monkeypatch.setitem(
        ni.RULES, "binary", ni.Rule(ni.RULES["ordinal"].pairs, ni._Question.tango, True)
    )
    assert _test(cand, base, kind="binary").method == "guarded paired bootstrap"


def test_guarded_bootstrap_records_its_steps_in_order():
    """The guarded bootstrap's method_steps: bound, Monte Carlo guard, tilted score check,
    resampling scheme; the exact guard joins only when too few units are worse."""
    rng = np.random.default_rng(8)
    base = rng.normal(0.5, 0.1, 200)
    res = _test(base + rng.normal(0.02, 0.05, 200), base)
    assert res.method_steps == (
        "paired bootstrap, expanded percentile (B=2000)",
        "Monte Carlo guard: Clopper-Pearson upper bound of the p-value over B",
        "tilted score check (least favourable null variance)",
        "multinomial resampling",
    )
    tied = _test(np.full(200, 0.5), np.full(200, 0.5), scale=(0, 1))
    assert tied.method_steps[2] == "exact bound from worse units"
