"""evaluate_candidate wires the issue-10 noninferiority rule: method, kind, degenerate data."""

from __future__ import annotations

import random

import numpy as np
import orjson
import pytest

from ragwarrant.outputs import CandidateClass, GateStatus
from ragwarrant.pipeline import run_job
from ragwarrant.stats.noninferiority import test_noninferiority
from ragwarrant.stats.seeding import make_rng
from tests.conftest import simulate
from tests.gates.test_gates import contract, evaluate, gate, good_data


def _small_n(c):
    c["statistics"]["min_paired_n"] = 2


def _tied(n: int):
    values = (np.arange(n) % 2 == 0).astype(float)  # varies, so not a constant signal
    cost = np.full(n, 0.04)
    return {
        "base": {"correct": values, "cost_usd": cost},
        "cand": {"correct": values.copy(), "cost_usd": cost / 2},
    }


def test_gate_records_the_method_and_the_detected_kind():
    """A 0/1 metric with metric_kind null is detected binary and tested by Tango's score test."""
    ev, _ = evaluate(good_data())
    g = gate(ev, "noninferiority:correct")
    assert g.method == "Tango score test for paired proportions"
    assert g.details["metric_kind"] == "binary"
    assert g.details["metric_kind_source"] == "detected"
    assert g.details["units"] == "pairs"


def test_declared_kind_is_used_over_detection():
    """A 0/1 metric declared continuous is bootstrapped, not tested by Tango's score test."""

    def continuous(c):
        c["quality_metrics"][0]["metric_kind"] = "continuous"

    ev, _ = evaluate(good_data(), contract(continuous))
    g = gate(ev, "noninferiority:correct")
    assert g.method == "guarded paired bootstrap"
    assert g.method_steps[0] == "paired bootstrap, expanded percentile (B=2000)"
    assert g.details["metric_kind_source"] == "declared"


@pytest.mark.parametrize("n", [8, 2, 30])
def test_all_tied_pairs_never_promote(n):
    """n all-tied pairs (a [0, 0] interval) are INCONCLUSIVE, with the reason and pairs needed."""
    ev, verdict = evaluate(_tied(n), contract(_small_n))
    g = gate(ev, "noninferiority:correct")
    assert verdict.decision_class is not CandidateClass.PROMOTE
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.details["degenerate_reason"] == "all pairs tied (no discordant pair)"
    assert g.more_paired_n is not None and g.more_paired_n > 0
    assert f"about {g.more_paired_n} more paired examples" in g.reason


def test_a_pass_always_rejects_at_alpha():
    """Over seeded samples at the margin, every passing gate has p <= alpha and LCB > -margin."""
    for seed in range(40):
        ev, _ = evaluate(good_data(n=60, seed=seed, delta=0.05))
        g = gate(ev, "noninferiority:correct")
        if g.status is GateStatus.PASS:
            assert g.p_value is not None and g.p_value <= 0.05
            assert g.lower_bound is not None and g.lower_bound > -0.05


def test_gate_agrees_with_the_stats_function():
    """The gate's bound, p-value and verdict are test_noninferiority's on the same pairs."""
    for seed in range(5):
        data = good_data(n=80, seed=seed, delta=0.04)
        ev, _ = evaluate(data)
        g = gate(ev, "noninferiority:correct")
        t = test_noninferiority(
            data["cand"]["correct"],
            data["base"]["correct"],
            kind="binary",
            margin_abs=0.05,
            alpha=0.05,
            rng=make_rng(7, "unused"),
            scale=(0.0, 1.0),
        )
        assert (g.lower_bound, g.p_value) == (t.lower_bound, t.p_value)
        assert (g.status is GateStatus.PASS) == t.rejects


def _slice_data():
    data = simulate(200, slices=("b",))
    for arm in data.values():
        arm["task"][:6] = "a"
    data["cand"]["correct"][:6] = data["base"]["correct"][:6] = [1, 0, 1, 1, 0, 1]
    return data


def test_small_all_tied_protected_slice_does_not_promote(make_input, tmp_path):
    """A 6-pair all-tied protected slice is INCONCLUSIVE with its reason, so no PROMOTE."""

    def protect(c):
        c["protected_slices"] = [{"value": "a", "min_paired_n": 2}]
        del c["evidence"][0]["columns"]["group_id"]

    root = make_input(mutate=protect, data=_slice_data())
    run_job(root, tmp_path / "out", on_stage=lambda e, **kw: None)
    decision = orjson.loads((tmp_path / "out" / "decision.json").read_bytes())
    [cand] = decision["candidates"]
    assert cand["class"] != "PROMOTE"
    g = next(g for g in cand["gates"] if g["id"] == "noninferiority:correct@a")
    assert g["status"] == "inconclusive"
    assert g["details"]["degenerate_reason"] == "all pairs tied (no discordant pair)"
    assert g["more_paired_n"] > 0


def _decision_without_run(out) -> dict:
    d = orjson.loads((out / "decision.json").read_bytes())
    for key in ("run_id", "started_at", "finished_at", "created_at", "inputs_sha256"):
        d.pop(key, None)
    for source in d["sources"]:
        source.pop("sha256")  # the shuffled file's own hash
    return d


def test_shuffled_evidence_rows_give_the_same_decision(make_input, tmp_path):
    """Shuffling the evidence rows leaves decision.json unchanged (minus run id and times)."""
    root = make_input(data=simulate(120, quality_delta=-0.02, seed=3))
    run_job(root, tmp_path / "out1", on_stage=lambda e, **kw: None)
    csv = root / "evidence" / "results.csv"
    header, *rows = csv.read_text().splitlines()
    random.Random(1).shuffle(rows)
    csv.write_text("\n".join([header, *rows]) + "\n")
    run_job(root, tmp_path / "out2", on_stage=lambda e, **kw: None)
    assert _decision_without_run(tmp_path / "out1") == _decision_without_run(tmp_path / "out2")


@pytest.mark.parametrize("doc", [lambda i: "d1", lambda i: "d0" if i < 2 else "d1"])
def test_one_cluster_is_inconclusive_not_a_crash(make_input, tmp_path, doc):
    """Every pair in one cluster (or two clusters of 2 and 58 pairs, the small one a protected
    slice) gives an INCONCLUSIVE gate naming "too few clusters (1)", never a ZeroDivisionError
    (exit 70)."""
    data = simulate(60, slices=("a",))
    data["cand"]["correct"] = data["base"]["correct"].copy()
    for arm in data.values():
        arm["doc"] = np.array([doc(i) for i in range(60)])
        arm["task"][:2] = "b"

    def protect(c):
        c["protected_slices"] = [{"value": "b", "min_paired_n": 2}]

    root = make_input(mutate=protect, data=data)
    run_job(root, tmp_path / "out", on_stage=lambda e, **kw: None)
    [cand] = orjson.loads((tmp_path / "out" / "decision.json").read_bytes())["candidates"]
    assert cand["class"] == "INCONCLUSIVE"
    ids = ["noninferiority:correct@b"] + (["noninferiority:correct"] if doc(0) == "d1" else [])
    for gid in ids:
        g = next(g for g in cand["gates"] if g["id"] == gid)
        assert g["status"] == "inconclusive"
        assert "too few clusters (1)" in g["reason"]
