"""Every gate has a passing and a failing case."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ragwarrant.contract import MissingValuePolicy, ReleaseContract
from ragwarrant.decision import classify_candidate, run_class
from ragwarrant.evidence.index import build_index
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.gates.candidate import evaluate_candidate
from ragwarrant.gates.ceiling import gate_claim_ceiling
from ragwarrant.gates.paired import pair_metric
from ragwarrant.outputs import CandidateClass, GateStatus
from tests.conftest import base_contract
from tests.evidence.test_index import evidence_table


def contract(mutate=None) -> ReleaseContract:
    c = base_contract()
    if mutate:
        mutate(c)
    return ReleaseContract.model_validate(c)


def good_data(n=200, seed=0, delta=0.0, cost_ratio=0.5):
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.8).astype(float)
    cand = base.copy()
    if delta:
        flip = rng.random(n) < abs(delta) / 0.8
        cand[flip & (base == 1)] = 0.0
    cost = rng.gamma(4, 0.01, n)
    return {
        "base": {"correct": base, "cost_usd": cost},
        "cand": {"correct": cand, "cost_usd": cost * cost_ratio},
    }


def evaluate(data, c=None, table_edit=None):
    c = c or contract()
    t = evidence_table(data)
    if table_edit:
        t = table_edit(t)
    idx = build_index(t)
    ev = evaluate_candidate(
        idx, c, "cand", np.ones(idx.n_examples, bool), config_missing=[], scope_name="all"
    )
    return ev, classify_candidate(ev, c, [])


def gate(ev, gid):
    return next(g for g in ev.gates if g.id == gid)


def test_all_gates_pass_for_a_good_candidate():
    """A cheaper candidate with identical quality passes every gate and is promoted."""
    ev, verdict = evaluate(good_data())
    assert verdict.decision_class is CandidateClass.PROMOTE
    assert all(
        g.status is GateStatus.PASS for g in ev.gates if g.status is not GateStatus.NOT_APPLICABLE
    )


def test_required_metric_evidence_fails_when_candidate_lacks_metric():
    """A required metric with no evidence for the candidate BLOCKs."""
    d = good_data()
    del d["cand"]["correct"]
    ev, verdict = evaluate(d)
    assert gate(ev, "hard:required-metric-evidence").status is GateStatus.FAIL
    assert "cand/correct" in gate(ev, "hard:required-metric-evidence").reason
    assert verdict.decision_class is CandidateClass.BLOCK


def test_provenance_gate_fails_on_empty_source():
    """Rows without source or sha256 BLOCK (missing provenance)."""

    def strip(t: pa.Table) -> pa.Table:
        return t.set_column(
            t.schema.get_field_index("source_sha256"),
            "source_sha256",
            pa.array([""] * t.num_rows, pa.string()),
        )

    ev, verdict = evaluate(good_data(), table_edit=strip)
    assert gate(ev, "hard:provenance").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK


def test_provenance_gate_fails_on_unhashed_config():
    """A policy whose config could not be hashed BLOCKs."""
    idx = build_index(evidence_table(good_data()))
    ev = evaluate_candidate(
        idx,
        contract(),
        "cand",
        np.ones(idx.n_examples, bool),
        config_missing=["cand"],
        scope_name="all",
    )
    assert gate(ev, "hard:provenance").status is GateStatus.FAIL


def test_pairing_coverage_fails_below_floor():
    """Examples present for only one policy reduce coverage below the floor and BLOCK."""
    d = good_data()
    d["cand"] = {k: v[:180] for k, v in d["cand"].items()}
    ev, verdict = evaluate(d)
    g = gate(ev, "hard:pairing-coverage")
    assert g.status is GateStatus.FAIL and g.estimate == pytest.approx(0.9)
    assert verdict.decision_class is CandidateClass.BLOCK


def test_paired_n_minimum():
    """Fewer pairs than the minimum BLOCK; exactly the minimum passes."""
    ev, _ = evaluate(good_data(n=29))
    assert gate(ev, "hard:paired-n").status is GateStatus.FAIL
    ev, _ = evaluate(good_data(n=30, seed=4))
    assert gate(ev, "hard:paired-n").status is GateStatus.PASS


def test_constant_quality_signal_blocks():
    """A quality metric equal for every example of both policies BLOCKs."""
    d = good_data()
    d["base"]["correct"][:] = 1.0
    d["cand"]["correct"][:] = 1.0
    ev, verdict = evaluate(d)
    assert gate(ev, "hard:constant-quality-signal:correct").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK


def test_non_finite_values_block_by_default_and_exclude_when_declared():
    """NaN in a required metric BLOCKs under on_missing: fail; with exclude, coverage judges."""
    d = good_data()
    d["cand"]["correct"][0] = np.nan
    ev, verdict = evaluate(d)
    g = gate(ev, "hard:non-finite-values")
    assert g.status is GateStatus.FAIL and g.details["correct.missing.cand"] == 1
    assert verdict.decision_class is CandidateClass.BLOCK
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    ev, verdict = evaluate(d, excl)
    assert gate(ev, "hard:non-finite-values").status is GateStatus.PASS
    assert gate(ev, "hard:pairing-coverage").estimate == pytest.approx(199 / 200)


@pytest.mark.parametrize("on_missing", ["worst", "exclude"])
@pytest.mark.parametrize("blank", [("base", "cand"), ("cand",)])
def test_a_metric_without_any_observed_value_blocks(on_missing, blank):
    """Every value of a metric missing (one policy's, or both): BLOCK naming the metric,
    whatever on_missing says; under worst the imputation alone once made it a confirmed loss."""
    d = good_data()
    for policy in blank:
        d[policy]["correct"][:] = np.nan
    rule = contract(lambda c: c["quality_metrics"][0].update({"on_missing": on_missing}))
    ev, verdict = evaluate(d, rule)
    g = gate(ev, "hard:non-finite-values")
    assert g.status is GateStatus.FAIL and verdict.decision_class is CandidateClass.BLOCK
    assert "correct: no observed value for policy " in g.reason
    assert [p for p in ("base", "cand") if f"policy {p}: all 200 rows" in g.reason] == sorted(blank)


def test_infinite_values_counted_as_non_finite():
    """+inf in a metric is never averaged: it fails the non-finite gate."""
    d = good_data()
    d["cand"]["cost_usd"][5] = np.inf
    ev, _ = evaluate(d)
    assert gate(ev, "hard:non-finite-values").status is GateStatus.FAIL


def test_worst_imputation():
    """on_missing: worst replaces a missing value by the scale's worst end and counts it."""
    d = good_data()
    d["cand"]["correct"][:10] = np.nan
    c = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "worst"}))
    ev, _ = evaluate(d, c)
    ni = gate(ev, "noninferiority:correct")
    assert ni.n == 200
    expected = np.mean(
        np.where(np.isnan(d["cand"]["correct"]), 0.0, d["cand"]["correct"]) - d["base"]["correct"]
    )
    assert ni.estimate == pytest.approx(expected)


def test_worst_imputation_never_helps_the_candidate():
    """A missing baseline value is imputed at the scale's best end, never its worst (third trial:
    a baseline with 20 % blank scores turned a 10-point loss into a PROMOTE)."""
    d = good_data()
    d["base"]["correct"][:40] = np.nan
    c = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "worst"}))
    ev, _ = evaluate(d, c)
    ni = gate(ev, "noninferiority:correct")
    base = np.where(np.isnan(d["base"]["correct"]), 1.0, d["base"]["correct"])
    assert ni.n == 200
    assert ni.estimate == pytest.approx(np.mean(d["cand"]["correct"] - base))


def test_values_missing_on_the_candidate_only_block():
    """8 of 200 candidate values missing, none of the baseline's, under exclude: coverage 0.96
    passes, but one-sided missingness can hide failures (third trial): BLOCK."""
    d = good_data()
    d["cand"]["correct"][:8] = np.nan
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    ev, verdict = evaluate(d, excl)
    g = gate(ev, "hard:missing-balance:correct")
    assert g.status is GateStatus.FAIL
    assert g.details["unpaired_candidate"] == 8 and g.details["unpaired_baseline"] == 0
    assert "the candidate lacks a value on 8 examples" in g.reason
    assert verdict.decision_class is CandidateClass.BLOCK


def test_balanced_or_imputed_missing_values_pass_the_balance_gate():
    """4 missing on each policy is balanced; under worst, imputed values are paired."""
    d = good_data()
    d["cand"]["correct"][:4] = np.nan
    d["base"]["correct"][10:14] = np.nan
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    ev, _ = evaluate(d, excl)
    assert gate(ev, "hard:missing-balance:correct").status is GateStatus.PASS
    d["base"]["correct"][10:14] = d["cand"]["correct"][10:14]
    d["cand"]["correct"][:12] = np.nan
    worst = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "worst"}))
    ev, _ = evaluate(d, worst)
    assert gate(ev, "hard:missing-balance:correct").status is GateStatus.PASS


def _hidden_losses(worse: int, hide: int, n: int = 300):
    """Baseline 80 % correct; the candidate loses ``worse`` examples and wins 4; its value is
    missing on ``hide`` of its losses, the baseline's on 6 examples elsewhere."""
    base = np.ones(n)
    base[:60] = 0
    cand = base.copy()
    cand[60 : 60 + worse] = 0
    cand[:4] = 1
    cand[60 : 60 + hide] = np.nan
    base[200:206] = np.nan
    cost = np.full(n, 0.02)
    return {
        "base": {"correct": base, "cost_usd": cost},
        "cand": {"correct": cand, "cost_usd": cost / 2},
    }


def test_exclude_does_not_pass_when_missing_values_hide_losses():
    """Issue 33: the candidate is missing on 8 of its losses, the baseline on 6 elsewhere; the
    balance test (8 vs 6) passes and the complete pairs are noninferior, but with the 14 missing
    values imputed adversarially they are not: INCONCLUSIVE, naming the tipping point."""
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    ev, verdict = evaluate(_hidden_losses(worse=12, hide=8), excl)
    assert gate(ev, "hard:missing-balance:correct").status is GateStatus.PASS
    g = gate(ev, "noninferiority:correct")
    assert g.lower_bound > -0.05  # the complete pairs alone would pass
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.details["missing_sensitivity_imputed"] == 14
    assert g.details["missing_tipping_point"] == 8
    assert g.details["missing_sensitivity_lower_bound"] < -0.05
    assert "with 8 of the 14 values excluded as missing" in g.reason
    assert verdict.decision_class is not CandidateClass.PROMOTE


def test_exclude_compares_other_metrics_where_a_metric_is_missing():
    """Under exclude the missing-balance gate says how the other metrics differ on the rows
    where each side's value is missing (a diagnostic: it does not decide)."""
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    d = _hidden_losses(worse=12, hide=8)
    rng = np.random.default_rng(3)
    for side in ("base", "cand"):
        d[side]["relevancy"] = rng.uniform(0.6, 1.0, 300)
    d["cand"]["relevancy"][60:68] -= 0.5  # lower where the candidate's correct is missing
    ev, _ = evaluate(d, excl)
    g = gate(ev, "hard:missing-balance:correct")
    assert g.status is GateStatus.PASS
    text = g.details["missingness_candidate"]
    assert text.startswith("on the 8 rows where the candidate's correct is missing, its relevancy")
    assert " lower than on the other 292 " in text and text in g.reason
    assert g.details["missingness_candidate_p"] < 0.001
    assert g.details["missingness_baseline_p"] > 0.01  # the baseline's missing rows look alike
    ev_worst, _ = evaluate(
        d, contract(lambda c: c["quality_metrics"][0].update({"on_missing": "worst"}))
    )
    assert "missingness_candidate" not in gate(ev_worst, "hard:missing-balance:correct").details


def test_exclude_keeps_a_decision_that_survives_the_missing_values():
    """Balanced missing values that cannot overturn the bound leave the gate passing, with the
    sensitivity analysis recorded (no tipping point)."""
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    d = _hidden_losses(worse=4, hide=0)
    d["cand"]["correct"][100:104] = np.nan  # 4 missing on ties, 6 baseline's elsewhere
    ev, _ = evaluate(d, excl)
    g = gate(ev, "noninferiority:correct")
    assert g.status is GateStatus.PASS
    assert g.details["missing_sensitivity_imputed"] == 10
    assert g.details["missing_tipping_point"] is None
    assert "still noninferior with all 10 values excluded as missing" in g.reason


def test_exclude_imputes_examples_missing_on_both_policies():
    """A fresh-user trial: 12 of 300 examples blank for both policies, exactly where the
    candidate fails; coverage 0.96 passes and the other 288 pairs tie, but an example missing
    on both sides is left out too: imputed on both sides (candidate 0, baseline 1) the bound
    falls below the margin: not PROMOTE."""
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    d = good_data(n=300)
    for side in ("base", "cand"):
        d[side]["correct"][:12] = np.nan
    ev, verdict = evaluate(d, excl)
    assert gate(ev, "hard:pairing-coverage").status is GateStatus.PASS
    g = gate(ev, "noninferiority:correct")
    assert g.details["missing_sensitivity_imputed"] == 12
    assert g.details["missing_sensitivity_lower_bound"] < -0.05
    assert g.status is GateStatus.INCONCLUSIVE
    assert verdict.decision_class is not CandidateClass.PROMOTE


@pytest.mark.parametrize("on_missing", ["worst", "exclude"])
def test_missing_operational_values_are_imputed_at_the_least_favourable_bound(on_missing):
    """A fresh-user trial: 7 of the candidate's 300 costs blank (really 0.05, 5x the rest);
    the cost claim held on the others. Under worst or exclude they enter the claim at
    max_value, as they would if supplied: not PROMOTE, like the run with them filled in."""
    rng = np.random.default_rng(5)
    d = good_data(n=300)
    d["base"]["cost_usd"] = rng.uniform(0.0100, 0.0104, 300)
    d["cand"]["cost_usd"] = rng.uniform(0.0095, 0.0101, 300)
    d["cand"]["cost_usd"][:7] = np.nan

    def bounded(c):  # type: ignore[no-untyped-def]
        c["operational_metrics"][0].update(on_missing=on_missing, max_value=0.05)

    _, verdict = evaluate(d, contract(bounded))
    assert verdict.decision_class is CandidateClass.INCONCLUSIVE
    d["cand"]["cost_usd"][:7] = 0.05
    _, filled = evaluate(d, contract())
    assert filled.decision_class is CandidateClass.INCONCLUSIVE


def test_duplicates_gate():
    """A duplicated (policy, example, metric) BLOCKs."""
    ev, verdict = evaluate(good_data(), table_edit=lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    assert gate(ev, "hard:duplicate-rows").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK


def test_example_id_variants_block():
    """Rows whose example id differs from another only by case or white space BLOCK (third trial:
    'ex0 ' and 'EX0' beside 'ex0' tripled every example and narrowed the bounds)."""

    def variants(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("example_id")
        ids = pa.array([x + " " for x in t.column(i).to_pylist()], pa.string())
        return pa.concat_tables([t, t.set_column(i, t.schema.field(i), ids)])

    ev, verdict = evaluate(good_data(), table_edit=variants)
    g = gate(ev, "hard:duplicate-rows")
    assert g.status is GateStatus.FAIL and g.details["id_variants"] == 200
    assert "<U+0020>" in g.reason and "ignoring case, white space" in g.reason
    assert verdict.decision_class is CandidateClass.BLOCK


def test_leakage_gate():
    """An example id in both the development and confirmatory splits BLOCKs."""
    c = contract(lambda c: c.update({"splits": {"development": "dev", "confirmatory": "conf"}}))
    d = good_data()
    t = pa.concat_tables(
        [
            evidence_table(d, split="conf"),
            evidence_table({"base": {"correct": d["base"]["correct"][:1]}}, split="dev"),
        ]
    )
    t = t.combine_chunks()
    idx = build_index(
        pa.concat_tables(
            [
                t.filter(pa.compute.not_equal(t["split"], "dev")),
                t.filter(pa.compute.equal(t["split"], "dev")),
            ]
        )
    )
    scope = idx.in_split("conf")
    ev = evaluate_candidate(idx, c, "cand", scope, config_missing=[], scope_name="conf")
    assert gate(ev, "hard:split-leakage").status is GateStatus.FAIL
    clean = build_index(evidence_table(d, split="conf"))
    ev = evaluate_candidate(
        clean, c, "cand", np.ones(clean.n_examples, bool), config_missing=[], scope_name="conf"
    )
    assert gate(ev, "hard:split-leakage").status is GateStatus.PASS


def test_hard_disqualifier():
    """A security failure count above its limit BLOCKs whatever the cost; within it passes."""
    d = good_data()
    d["base"]["security_failures"] = np.zeros(200)
    d["cand"]["security_failures"] = np.zeros(200)
    c = contract(
        lambda c: c.update(
            {
                "hard_disqualifiers": [
                    {"metric": "security_failures", "statistic": "sum", "max_value": 0}
                ]
            }
        )
    )
    ev, verdict = evaluate(d, c)
    assert gate(ev, "hard:disqualifier:security_failures").status is GateStatus.PASS
    d["cand"]["security_failures"][7] = 1
    ev, verdict = evaluate(d, c)
    assert gate(ev, "hard:disqualifier:security_failures").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK


def test_noninferiority_confirmed_loss_rejects():
    """A cheaper candidate losing 20 points on a 5-point margin is REJECTed (non-compensatory)."""
    ev, verdict = evaluate(good_data(n=500, delta=-0.2, cost_ratio=0.1))
    g = gate(ev, "noninferiority:correct")
    assert g.status is GateStatus.FAIL and g.upper_bound < -0.05
    assert verdict.decision_class is CandidateClass.REJECT


def test_protected_slice_loss_rejects_while_aggregate_improves():
    """A loss confined to one protected slice REJECTs even though the aggregate improves."""
    rng = np.random.default_rng(1)
    n = 600
    base = (rng.random(n) < 0.7).astype(float)
    cand = base.copy()
    sl = np.array(["a", "b", "c"] * 200)
    cand[(sl != "a")] = 1.0  # big gain on b and c
    cand[(sl == "a") & (rng.random(n) < 0.5)] = 0.0  # big loss on a
    cost = rng.gamma(4, 0.01, n)
    t = evidence_table(
        {
            "base": {"correct": base, "cost_usd": cost},
            "cand": {"correct": cand, "cost_usd": cost * 0.5},
        }
    )
    t = t.set_column(3, "slice", pa.array(np.tile(sl, 4).tolist(), pa.string()))
    c = contract(
        lambda c: c.update(
            {"protected_slices": [{"value": "a", "margin_abs": 0.1, "min_paired_n": 30}]}
        )
    )
    idx = build_index(t)
    ev = evaluate_candidate(
        idx, c, "cand", np.ones(idx.n_examples, bool), config_missing=[], scope_name="all"
    )
    assert gate(ev, "noninferiority:correct").status is GateStatus.PASS
    assert gate(ev, "noninferiority:correct@a").status is GateStatus.FAIL
    assert classify_candidate(ev, c, []).decision_class is CandidateClass.REJECT


def test_small_protected_slice_is_inconclusive_not_blocked():
    """A slice with fewer pairs than its min_paired_n is not tested: INCONCLUSIVE, with counts."""
    data = good_data(n=600, cost_ratio=0.5)
    sl = np.array(["a"] * 20 + ["b"] * 580)

    def with_slices(t):
        return t.set_column(3, "slice", pa.array(np.tile(sl, 4).tolist(), pa.string()))

    c = contract(lambda c: c.update({"protected_slices": [{"value": "a", "min_paired_n": 30}]}))
    ev, verdict = evaluate(data, c, table_edit=with_slices)
    g = gate(ev, "noninferiority:correct@a")
    assert (g.status, g.n, g.more_paired_n) == (GateStatus.INCONCLUSIVE, 20, 10)
    assert (g.details["paired_n"], g.details["min_paired_n"]) == (20, 30)
    assert gate(ev, "hard:slice-paired-n:correct@a").status is GateStatus.PASS
    assert gate(ev, "noninferiority:correct").status is GateStatus.PASS
    assert verdict.decision_class is CandidateClass.INCONCLUSIVE
    c20 = contract(lambda c: c.update({"protected_slices": [{"value": "a", "min_paired_n": 20}]}))
    ev20, _ = evaluate(data, c20, table_edit=with_slices)
    assert gate(ev20, "noninferiority:correct@a").lower_bound is not None  # tested at 20


def test_slice_paired_n_blocks_when_slice_absent():
    """A protected slice with no examples BLOCKs (it cannot be tested)."""
    c = contract(lambda c: c.update({"protected_slices": [{"value": "zzz", "min_paired_n": 30}]}))
    ev, verdict = evaluate(good_data(), c)
    assert gate(ev, "hard:slice-paired-n:correct@zzz").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK


def test_claim_any_with_holm_passes_on_one_claim():
    """Claims joined by any: one established claim suffices; Holm levels are reported."""
    d = good_data()
    d["base"]["latency_ms"] = np.full(200, 100.0) + np.random.default_rng(0).normal(0, 5, 200)
    d["cand"]["latency_ms"] = d["base"]["latency_ms"] + 1.0

    def m(c):
        c["operational_metrics"].append({"id": "latency_ms", "unit": "ms", "statistic": "p95"})
        c["claims"]["items"].append({"kind": "latency-reduction", "metric": "latency_ms"})

    ev, verdict = evaluate(d, contract(m))
    assert gate(ev, "claim:cost-reduction:cost_usd").status is GateStatus.PASS
    assert gate(ev, "claim:cost-reduction:cost_usd").alpha == pytest.approx(0.025)
    assert gate(ev, "claim:latency-reduction:latency_ms").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.PROMOTE


def test_claim_all_fails_when_one_claim_absent():
    """Claims joined by all: one clearly absent claim is REJECT no-benefit."""
    d = good_data()
    d["base"]["latency_ms"] = np.full(200, 100.0) + np.random.default_rng(0).normal(0, 5, 200)
    d["cand"]["latency_ms"] = d["base"]["latency_ms"] + 1.0

    def m(c):
        c["operational_metrics"].append({"id": "latency_ms", "unit": "ms", "statistic": "p95"})
        c["claims"] = {
            "join": "all",
            "items": [
                {"kind": "cost-reduction", "metric": "cost_usd"},
                {"kind": "latency-reduction", "metric": "latency_ms"},
            ],
        }

    _, verdict = evaluate(d, contract(m))
    assert verdict.decision_class is CandidateClass.REJECT and verdict.reasons[0].startswith(
        "no-benefit"
    )


def test_quality_improvement_claim_unresolved_is_inconclusive():
    """A quality-improvement claim with no detectable gain (nor a clear absence) is INCONCLUSIVE."""
    rng = np.random.default_rng(3)
    base = (rng.random(100) < 0.5).astype(float)
    cand = base.copy()
    cand[:6] = 1.0
    cost = rng.gamma(4, 0.01, 100)
    c = contract(
        lambda c: c.update(
            {
                "claims": {
                    "join": "any",
                    "items": [{"kind": "quality-improvement", "metric": "correct"}],
                }
            }
        )
    )
    ev, verdict = evaluate(
        {"base": {"correct": base, "cost_usd": cost}, "cand": {"correct": cand, "cost_usd": cost}},
        c,
    )
    g = gate(ev, "claim:quality-improvement:correct")
    assert (
        g.status is GateStatus.INCONCLUSIVE and g.more_paired_n is not None and g.more_paired_n > 0
    )
    assert verdict.decision_class is CandidateClass.INCONCLUSIVE


def test_claim_ceiling():
    """Evidence below the promotion class caps PROMOTE at INCONCLUSIVE with reason claim-ceiling."""
    g = gate_claim_ceiling(EvidenceClass.DEVELOPMENT, EvidenceClass.CONFIRMATORY)
    assert g.status is GateStatus.FAIL
    assert (
        gate_claim_ceiling(EvidenceClass.DEPLOYMENT, EvidenceClass.CONFIRMATORY).status
        is GateStatus.PASS
    )
    ev, _ = evaluate(good_data())
    verdict = classify_candidate(ev, contract(), [g])
    assert verdict.decision_class is CandidateClass.INCONCLUSIVE and verdict.reasons[0].startswith(
        "claim-ceiling"
    )


def test_run_class_precedence():
    """PROMOTE if any promoted; else BLOCK if any blocked; else INCONCLUSIVE; else REJECT."""
    P, R, INC, B, N = (
        CandidateClass.PROMOTE,
        CandidateClass.REJECT,
        CandidateClass.INCONCLUSIVE,
        CandidateClass.BLOCK,
        CandidateClass.NOT_SELECTED,
    )
    assert run_class([R, B, P]) is DecisionClass.PROMOTE
    assert run_class([R, INC, B]) is DecisionClass.BLOCK
    assert run_class([R, INC, N]) is DecisionClass.INCONCLUSIVE
    assert run_class([R, N]) is DecisionClass.REJECT


def test_an_example_in_the_confirmatory_split_and_an_undeclared_one_blocks():
    """A candidate row labelled 'train' beside its baseline row in the confirmatory split: the
    row is not confirmatory evidence, yet its value was paired and decided (trial-int)."""
    c = contract(lambda c: c.update({"splits": {"confirmatory": "conf"}}))
    t = evidence_table(good_data(), split="conf")
    row = t["policy_id"].to_pylist().index("cand")
    splits = t["split"].to_pylist()
    splits[row] = "train"
    t = t.set_column(t.schema.get_field_index("split"), "split", pa.array(splits, t["split"].type))
    idx = build_index(t)
    ev = evaluate_candidate(
        idx, c, "cand", idx.in_split("conf"), config_missing=[], scope_name="conf"
    )
    leak = gate(ev, "hard:split-leakage")
    assert leak.status is GateStatus.FAIL
    assert "in the 'conf' split and in another split value" in leak.reason
    clean = build_index(evidence_table(good_data(), split="conf"))
    ev = evaluate_candidate(
        clean, c, "cand", clean.in_split("conf"), config_missing=[], scope_name="conf"
    )
    assert gate(ev, "hard:split-leakage").status is GateStatus.NOT_APPLICABLE


def test_excluded_pairs_keep_their_example_codes_in_a_narrow_scope():
    """The dropped pairs of a protected slice (a narrow scope, paired on its own positions) are
    named by their example codes, the missing side at its least favourable end."""
    d = good_data()
    d["cand"]["correct"][3] = np.nan
    d["base"]["correct"][7] = np.nan
    excl = contract(lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    idx = build_index(evidence_table(d))
    ids = [str(x) for x in idx.example_ids]
    code_3, code_7 = ids.index("ex3"), ids.index("ex7")
    scope = np.zeros(idx.n_examples, bool)
    scope[[code_3, code_7, ids.index("ex11")]] = True
    pm = pair_metric(
        idx, "correct", "base", "cand", scope, excl.quality_metrics[0], MissingValuePolicy.EXCLUDE
    )
    codes, cand, base = pm.excluded
    got = dict(zip(codes.tolist(), zip(cand.tolist(), base.tolist(), strict=True), strict=True))
    assert got == {code_3: (0.0, d["base"]["correct"][3]), code_7: (d["cand"]["correct"][7], 1.0)}
    assert pm.n == 1


def _cost_rows_absent(absent_cand: slice, absent_base: slice, n: int = 300):
    """Equal quality; the candidate's cost 0.0049 against 0.005, with the cost_usd rows of
    ``absent_cand`` (candidate) and ``absent_base`` (baseline) examples left out entirely."""
    correct = (np.arange(n) % 5 != 0).astype(float)
    d = {
        "base": {"correct": correct, "cost_usd": np.full(n, 0.005)},
        "cand": {"correct": correct.copy(), "cost_usd": np.full(n, 0.0049)},
    }
    drop = {("cand", f"ex{i}") for i in range(n)[absent_cand]}
    drop |= {("base", f"ex{i}") for i in range(n)[absent_base]}

    def edit(t: pa.Table) -> pa.Table:
        rows = zip(t["policy_id"].to_pylist(), t["example_id"].to_pylist(), strict=True)
        keep = [
            not (m == "cost_usd" and (p, e) in drop)
            for (p, e), m in zip(rows, t["metric"].to_pylist(), strict=True)
        ]
        return t.filter(pa.array(keep))

    return d, edit


def test_claim_metric_rows_absent_on_the_candidate_only_block():
    """A trial: the candidate left out its cost rows on 14 of 300 examples (coverage 0.953
    passes) and the cost claim was decided on the other 286: PROMOTE. The claim metric gets
    its own missing-balance gate, counting absent rows: BLOCK naming the metric."""
    d, edit = _cost_rows_absent(slice(0, 14), slice(0, 0))
    ev, verdict = evaluate(d, table_edit=edit)
    g = gate(ev, "hard:missing-balance:cost_usd")
    assert g.status is GateStatus.FAIL
    assert g.details["unpaired_candidate"] == 14 and g.details["unpaired_baseline"] == 0
    assert "cost_usd: the candidate lacks a value on 14 examples" in g.reason
    assert "never a row that is absent" in g.reason  # worst would not help: rows are absent
    assert verdict.decision_class is CandidateClass.BLOCK


def test_claim_metric_rows_absent_on_both_policies_alike_still_promote():
    """7 cost rows absent on each policy, on different examples: balanced, PROMOTE."""
    d, edit = _cost_rows_absent(slice(0, 7), slice(100, 107))
    ev, verdict = evaluate(d, table_edit=edit)
    assert gate(ev, "hard:missing-balance:cost_usd").status is GateStatus.PASS
    assert verdict.decision_class is CandidateClass.PROMOTE


def test_absent_claim_rows_are_not_imputed_under_worst():
    """Under on_missing: worst with a declared [min_value, max_value], blank cost cells are
    imputed, but absent rows are not: they stay unpaired and still BLOCK when one-sided."""
    d, edit = _cost_rows_absent(slice(0, 14), slice(0, 0))
    bounds = {"on_missing": "worst", "min_value": 0.0, "max_value": 1.0}
    worst = contract(lambda c: c["operational_metrics"][0].update(bounds))
    ev, verdict = evaluate(d, worst, table_edit=edit)
    assert gate(ev, "hard:missing-balance:cost_usd").status is GateStatus.FAIL
    assert verdict.decision_class is CandidateClass.BLOCK
    d["cand"]["cost_usd"][:14] = np.nan  # blank cells instead: imputed at 1.0, paired
    ev, verdict = evaluate(d, worst)
    assert gate(ev, "hard:missing-balance:cost_usd").status is GateStatus.PASS
    assert verdict.decision_class is not CandidateClass.PROMOTE
