"""Corroboration per (policy, example) and the disagreement/abstention rates per slice."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ragwarrant.contract import Corroboration
from ragwarrant.corroborators.corroborate import TextRecord, corroborate, text_records
from ragwarrant.evidence.index import build_index
from ragwarrant.evidence.schema import EVIDENCE_SCHEMA, TEXT_SCHEMA, make_evidence_table

CTX = (
    "The Lumo kettle carries a two-year warranty that covers the heating element and the "
    "lid hinge.",
)
Q = "How long is the warranty on the Lumo kettle?"
GROUNDED = TextRecord(Q, "The Lumo kettle carries a two-year warranty.", CTX, ())
UNSUPPORTED = TextRecord(
    Q,
    "The kettle ships with a lifetime guarantee, free descaling tablets and a velvet travel pouch.",
    CTX,
    (),
)
NO_NUMBER = TextRecord(Q, "The Lumo kettle warranty covers the heating element.", CTX, ())


def table(
    values: dict[str, dict[str, list[float]]],
    slices: list[str | None] | None = None,
    splits: list[str | None] | None = None,
) -> pa.Table:
    cols: dict[str, list] = {f.name: [] for f in EVIDENCE_SCHEMA}
    for policy, metrics in values.items():
        for metric, arr in metrics.items():
            for i, v in enumerate(arr):
                cols["policy_id"].append(policy)
                cols["example_id"].append(f"ex{i}")
                cols["group_id"].append(None)
                cols["slice"].append(slices[i] if slices else None)
                cols["split"].append(splits[i] if splits else None)
                cols["metric"].append(metric)
                cols["value"].append(v)
                cols["missing_reason"].append(None)
                cols["source"].append("t:fixture@1")
                cols["source_sha256"].append("0" * 64)
                cols["source_row"].append(i + 1)
    return make_evidence_table(cols)


def config(**kw) -> Corroboration:
    base = {
        "groundedness_metric": "faith",
        "sample_metrics": ["s1", "s2", "s3"],
        "sample_disagreement_max": 0.5,
    }
    base.update(kw)
    return Corroboration.model_validate(base)


def row(outcome, policy, slice_=None):
    return next(r for r in outcome.summary.rates if r.policy_id == policy and r.slice == slice_)


def test_rates_per_policy_and_slice():
    """Disagreements and abstentions are counted per policy, overall and per slice."""
    slices = ["a"] * 5 + ["b"] * 5
    texts = [GROUNDED] * 10
    texts[0] = UNSUPPORTED  # judge says supported (0.9): judge+ / lexical-
    texts[1] = UNSUPPORTED
    faith = [0.9] * 10
    faith[6] = 0.1  # judge says unsupported on a grounded answer: judge- / lexical+
    s = [[0.9] * 10, [0.9] * 10, [0.9] * 10]
    s[1][8] = 0.0  # spread 0.9 > 0.5: example 8 abstains
    faith[8] = 0.9
    values = {p: {"faith": faith, "s1": s[0], "s2": s[1], "s3": s[2]} for p in ("base", "cand")}
    values["base"] = {"faith": [0.9] * 10, "s1": [0.9] * 10, "s2": [0.9] * 10, "s3": [0.9] * 10}
    idx = build_index(table(values, slices))
    tx = {("cand", f"ex{i}"): t for i, t in enumerate(texts)} | {
        ("base", f"ex{i}"): GROUNDED for i in range(10)
    }
    out = corroborate(tx, idx, config(), ["base", "cand"], np.ones(10, bool))

    cand = row(out, "cand")
    assert (cand.n_examples, cand.n_with_text, cand.n_judged) == (10, 10, 9)
    assert (cand.n_disagreements, cand.disagreement_rate) == (3, pytest.approx(3 / 9))
    assert (cand.judge_supported_lexical_unsupported, cand.judge_unsupported_lexical_supported) == (
        2,
        1,
    )
    assert (cand.n_with_samples, cand.n_abstained, cand.abstention_rate) == (
        10,
        1,
        pytest.approx(0.1),
    )
    assert cand.failed_generation == 2
    a, b = row(out, "cand", "a"), row(out, "cand", "b")
    assert (a.n_judged, a.n_disagreements, a.disagreement_rate) == (5, 2, pytest.approx(0.4))
    assert (b.n_judged, b.n_disagreements, b.n_abstained, b.abstention_rate) == (
        4,
        1,
        1,
        pytest.approx(0.2),
    )
    base = row(out, "base")
    assert (base.n_disagreements, base.disagreement_rate, base.abstention_rate) == (0, 0.0, 0.0)
    assert [(r.policy_id, r.slice) for r in out.summary.rates] == [
        ("base", None),
        ("base", "a"),
        ("base", "b"),
        ("cand", None),
        ("cand", "a"),
        ("cand", "b"),
    ]
    ex8 = out.examples[("cand", "ex8")]
    assert ex8.abstained and not ex8.judged and ex8.sample_spread == pytest.approx(0.9)


def test_lower_is_better_judge_direction():
    """With a hallucination-score judge (lower is better), a low value means supported."""
    idx = build_index(table({"cand": {"halluc": [0.1, 0.9]}}))
    tx = {("cand", "ex0"): GROUNDED, ("cand", "ex1"): GROUNDED}
    out = corroborate(
        tx,
        idx,
        config(
            groundedness_metric="halluc",
            groundedness_direction="lower_is_better",
            sample_metrics=[],
        ),
        ["cand"],
        np.ones(2, bool),
    )
    assert out.examples[("cand", "ex0")].judge_supported is True
    assert out.examples[("cand", "ex1")].judge_supported is False
    r = row(out, "cand")
    assert (r.n_disagreements, r.judge_unsupported_lexical_supported) == (1, 1)
    assert (r.n_with_samples, r.abstention_rate) == (0, None)


def test_sample_mean_stands_in_for_a_missing_judge_metric():
    """Without the groundedness metric, the samples' mean is the judge's value."""
    idx = build_index(table({"cand": {"s1": [0.2], "s2": [0.4], "s3": [0.3]}}))
    out = corroborate({("cand", "ex0"): GROUNDED}, idx, config(), ["cand"], np.ones(1, bool))
    ec = out.examples[("cand", "ex0")]
    assert ec.judge_value == pytest.approx(0.3) and ec.judge_supported is False
    assert not ec.abstained and ec.groundedness_disagreement


def test_answer_type_disagreement():
    """A judge rating a number-less answer to a how-long question relevant is a disagreement."""
    idx = build_index(table({"cand": {"faith": [0.9, 0.9], "rel": [0.9, 0.2]}}))
    tx = {("cand", "ex0"): NO_NUMBER, ("cand", "ex1"): NO_NUMBER}
    out = corroborate(
        tx,
        idx,
        config(answer_relevance_metric="rel", sample_metrics=[]),
        ["cand"],
        np.ones(2, bool),
    )
    assert out.examples[("cand", "ex0")].answer_disagreement
    assert not out.examples[("cand", "ex1")].answer_disagreement  # the judge agrees: not relevant
    r = row(out, "cand")
    assert (r.answer_type_disagreements, r.n_disagreements, r.failed_answer) == (1, 1, 2)


def test_only_decided_examples_count():
    """Examples outside the decision scope (e.g. the development split) are not corroborated."""
    idx = build_index(table({"cand": {"faith": [0.9, 0.9, 0.9]}}, splits=["conf", "conf", "dev"]))
    tx = {("cand", f"ex{i}"): UNSUPPORTED for i in range(3)}
    out = corroborate(tx, idx, config(sample_metrics=[]), ["cand"], idx.in_split("conf"))
    assert ("cand", "ex2") not in out.examples
    assert row(out, "cand").n_judged == 2


def test_without_text_nothing_is_judged():
    """Judge values without text give no deterministic verdict: nothing is judged."""
    idx = build_index(table({"cand": {"faith": [0.9, 0.1]}}))
    out = corroborate({}, idx, config(sample_metrics=[]), ["cand"], np.ones(2, bool))
    r = row(out, "cand")
    assert (r.n_examples, r.n_with_text, r.n_judged, r.disagreement_rate) == (2, 0, 0, None)


def test_text_records_collapse_long_layout_repeats():
    """Repeated text rows of one (policy, example) collapse; the first non-null value wins."""
    t = pa.Table.from_pylist(
        [
            {
                "policy_id": "p",
                "example_id": "e",
                "question": None,
                "response": "r1",
                "contexts": ["c"],
                "cited_quotes": None,
            },
            {
                "policy_id": "p",
                "example_id": "e",
                "question": "q",
                "response": "r2",
                "contexts": None,
                "cited_quotes": ["x"],
            },
        ],
        schema=TEXT_SCHEMA,
    )
    rec = text_records([t])[("p", "e")]
    assert rec == TextRecord(question="q", response="r1", contexts=("c",), cited_quotes=("x",))


def test_summary_records_calibration_and_limits():
    """The summary names the lexical gate, its calibrated threshold and version, and the limits."""
    idx = build_index(table({"cand": {"faith": [0.9]}}))
    out = corroborate(
        {("cand", "ex0"): GROUNDED},
        idx,
        config(lexical_gate="coverage", max_disagreement_rate=0.3),
        ["cand"],
        np.ones(1, bool),
    )
    s = out.summary
    assert (s.lexical_gate, s.lexical_threshold, s.calibration_version) == (
        "coverage",
        0.3203125,
        "lexical-v1",
    )
    assert len(s.calibration_sha256) == 64 and s.max_disagreement_rate == 0.3
    assert "kettle" not in s.model_dump_json().lower()


def _two_task_calibration():
    """A lexical-v1 calibration with per-task hybrid thresholds: QA strict, Summary lenient."""
    import dataclasses

    from ragwarrant.corroborators.calibration import load_calibration

    return dataclasses.replace(
        load_calibration(), task_thresholds={"QA": {"hybrid": 0.99}, "Summary": {"hybrid": 0.0}}
    )


def test_slice_naming_a_task_type_picks_its_threshold_and_unknown_slices_warn():
    """Slice qa uses the QA threshold, summary the Summary one; slice other falls back, warned."""
    idx = build_index(table({"cand": {"faith": [0.9, 0.9, 0.9]}}, ["qa", "summary", "other"]))
    tx = {("cand", f"ex{i}"): UNSUPPORTED for i in range(2)} | {("cand", "ex2"): GROUNDED}
    out = corroborate(
        tx, idx, config(sample_metrics=[]), ["cand"], np.ones(3, bool), _two_task_calibration()
    )
    checks = [out.examples[("cand", f"ex{i}")].checks for i in range(3)]
    assert [c.lexical_flagged for c in checks] == [False, True, False]
    assert out.summary.warnings == [
        "1 examples have no calibrated task type (slices other; calibrated: QA, Summary): judged "
        "at the pooled hybrid threshold of lexical-v1"
    ]


def test_per_task_calibration_without_unknown_slices_has_no_warning():
    """Every example's slice names a calibrated task type: no warning."""
    idx = build_index(table({"cand": {"faith": [0.9]}}, ["QA"]))
    out = corroborate(
        {("cand", "ex0"): GROUNDED},
        idx,
        config(sample_metrics=[]),
        ["cand"],
        np.ones(1, bool),
        _two_task_calibration(),
    )
    assert out.summary.warnings == []


def test_declared_task_type_overrides_the_slice():
    """task_type summary judges every example at the Summary threshold, whatever its slice."""
    idx = build_index(table({"cand": {"faith": [0.9, 0.9]}}, ["qa", "other"]))
    tx = {("cand", "ex0"): UNSUPPORTED, ("cand", "ex1"): UNSUPPORTED}
    cfg = config(sample_metrics=[], calibration="lexical-v2", task_type="summary")
    out = corroborate(tx, idx, cfg, ["cand"], np.ones(2, bool), _two_task_calibration())
    checks = [out.examples[("cand", f"ex{i}")].checks for i in range(2)]
    assert [c.lexical_flagged for c in checks] == [True, True]
    assert out.summary.warnings == []


def test_declared_unknown_task_type_uses_the_pooled_threshold_and_warns_in_the_summary():
    """task_type unknown ignores a slice naming a task type, and the warning reaches the summary."""
    idx = build_index(table({"cand": {"faith": [0.9]}}, ["summary"]))
    cfg = config(sample_metrics=[], calibration="lexical-v2", task_type="unknown")
    cal = _two_task_calibration()
    out = corroborate({("cand", "ex0"): GROUNDED}, idx, cfg, ["cand"], np.ones(1, bool), cal)
    check = out.examples[("cand", "ex0")].checks
    assert check is not None and check.lexical_flagged is False  # Summary's 0.0 would flag
    assert out.summary.warnings == [
        "1 examples judged at the pooled hybrid threshold of lexical-v1: the contract's task_type "
        "is 'unknown', which has no per-task calibration (calibrated: QA, Summary)"
    ]


def test_task_type_without_a_threshold_for_the_gate_uses_the_pooled_one_and_warns():
    """A task type calibrated for another gate only judges at the pooled threshold, warned."""
    import dataclasses

    idx = build_index(table({"cand": {"faith": [0.9]}}, ["qa"]))
    cal = dataclasses.replace(_two_task_calibration(), task_thresholds={"QA": {"coverage": 0.0}})
    out = corroborate(
        {("cand", "ex0"): GROUNDED}, idx, config(sample_metrics=[]), ["cand"], np.ones(1, bool), cal
    )
    assert out.examples[("cand", "ex0")].checks.lexical_flagged is False
    assert out.summary.lexical_task_thresholds == {}
    assert len(out.summary.warnings) == 1 and "slices qa" in out.summary.warnings[0]


def test_warnings_reach_report_md_and_report_html():
    """The summary's warnings are listed in report.md and report.html, without example text."""
    from ragwarrant.audit.report import render_report
    from ragwarrant.audit.report_html import render_report_html

    idx = build_index(table({"cand": {"faith": [0.9]}}, ["other"]))
    out = corroborate(
        {("cand", "ex0"): UNSUPPORTED},
        idx,
        config(sample_metrics=[]),
        ["cand"],
        np.ones(1, bool),
        _two_task_calibration(),
    )
    decision = _decision(out.summary)
    (warning,) = out.summary.warnings
    assert f"\nCorroboration warnings:\n\n- {warning}\n" in render_report(decision)
    html = render_report_html(decision)
    assert 'id="corroboration-warnings"' in html and "slices other" in html
    assert "kettle" not in html.lower()


def test_report_names_the_per_task_thresholds_applied():
    """Slices qa and summary are judged at QA's and Summary's thresholds: the summary records
    them and report.md names them (the pooled one only for the other examples)."""
    from ragwarrant.audit.report import render_report

    idx = build_index(table({"cand": {"faith": [0.9, 0.9, 0.9]}}, ["qa", "summary", "other"]))
    tx = {("cand", f"ex{i}"): GROUNDED for i in range(3)}
    cal = _two_task_calibration()
    out = corroborate(tx, idx, config(sample_metrics=[]), ["cand"], np.ones(3, bool), cal)
    assert out.summary.lexical_task_thresholds == {"QA": 0.99, "Summary": 0.0}
    decision = _decision(out.summary)
    pooled = f"{out.summary.lexical_threshold:.4g}"
    text = render_report(decision)
    assert f"flag at >= QA 0.99, Summary 0 (per task; pooled {pooled} for other examples)" in text
    # without per-task calibration only the pooled threshold is named
    plain = corroborate(tx, idx, config(sample_metrics=[]), ["cand"], np.ones(3, bool))
    assert plain.summary.lexical_task_thresholds == {}
    text = render_report(decision.model_copy(update={"corroboration": plain.summary}))
    assert f"flag at >= {plain.summary.lexical_threshold:.4g}," in text


def test_record_conflict_makes_the_example_unsupported_and_a_disagreement():
    """A judge-supported answer claiming outdoor seating that the JSON record denies disagrees."""
    record = '{"name": "Cafe Lumo", "attributes": {"OutdoorSeating": false}}'
    text = TextRecord(None, "Cafe Lumo offers outdoor seating.", (record,), ())
    idx = build_index(table({"cand": {"faith": [0.9]}}))
    out = corroborate(
        {("cand", "ex0"): text}, idx, config(sample_metrics=[]), ["cand"], np.ones(1, bool)
    )
    ex = out.examples[("cand", "ex0")]
    assert ex.checks is not None and ex.checks.lexical_flagged is False
    assert (ex.checks.record, ex.checks.record_conflicts, ex.checks.supported) == ("fail", 1, False)
    assert ex.groundedness_disagreement


def _decision(summary):
    """A minimal INCONCLUSIVE decision record carrying ``summary`` as its corroboration."""
    from ragwarrant.exit_codes import DecisionClass
    from ragwarrant.outputs import Decision

    return Decision(
        run_id="r",
        started_at="t0",
        finished_at="t1",
        contract=None,
        run_class=DecisionClass.INCONCLUSIVE,
        exit_code=0,
        summary="s",
        corroboration=summary,
    )
