"""The review CSV and page show hostile texts inertly: no formula, no terminal or bidi control."""

from __future__ import annotations

import csv
import io
import json

from ragwarrant.cli import main

_CONTRACT = """id: hostile
version: "1"
baseline: {policy_id: prod, config: prod.json}
candidates: [{policy_id: topk3, config: topk3.json}]
evidence:
  - id: evals
    path: evals.csv
    format: csv
    layout: wide
    columns: {example_id: qid, policy_id: policy, split: split, question: question,
              response: response, contexts: contexts}
    metrics: {faithfulness: faithfulness, cost: cost_usd}
quality_metrics: [{id: faithfulness, margin_abs: 0.02}]
operational_metrics: [{id: cost_usd, unit: usd}]
claims: {join: any, items: [{kind: cost-reduction, metric: cost_usd}]}
splits: {confirmatory: holdout}
evidence_class: confirmatory
"""
_HOSTILE = '=HYPERLINK("http://x")\x1b[31m\u202eRLO\u2066iso\u2069\nline two'


def _input(root):
    root.mkdir()
    (root / "contract.yaml").write_text(_CONTRACT)
    for p in ("prod", "topk3"):
        (root / f"{p}.json").write_text(json.dumps({"model": p}))
    with (root / "evals.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["qid", "policy", "split", "faithfulness", "cost", "question", "response", "contexts"]
        )
        for i in range(20):
            for p, lead in (("prod", "-1 "), ("topk3", "@SUM(A1) ")):
                ctx = json.dumps(["+cmd " + _HOSTILE])
                w.writerow([f"q{i}", p, "holdout", 0.8, 0.01, _HOSTILE, lead + _HOSTILE, ctx])


def test_review_csv_and_page_show_hostile_texts_inertly(tmp_path):
    """Formula cells get a leading ', ESC and bidi characters are escapes, line feeds stay."""
    root = tmp_path / "in"
    _input(root)
    out = tmp_path / "q" / "queue.json"
    argv = ["review", "sample", "--input", str(root), "--metric", "faithfulness"]
    assert main([*argv, "--n", "5", "--seed", "3", "--output", str(out)]) == 0
    text = out.with_suffix(".csv").read_text()
    page = out.with_suffix(".html").read_text()
    for raw in ("\x1b", "\u202e", "\u2066", "\u2069"):
        assert raw not in text and raw not in page
    assert "\\x1b[31m\\u202eRLO\\u2066iso\\u2069\nline two" in text
    assert "\\u202eRLO" in page
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 5
    for row in rows:
        assert row["question"].startswith("'=HYPERLINK(")
        assert row["contexts"].startswith("'+cmd ")
        assert {row["output_a"][:2], row["output_b"][:2]} == {"'-", "'@"}
        assert row["label_a"] == row["label_b"] == ""
