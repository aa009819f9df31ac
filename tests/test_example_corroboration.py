"""The corroboration demo: exit code, class, rates per policy and slice, no text in outputs."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import jsonschema
import orjson
import pytest

from ragwarrant import cli
from ragwarrant.audit.attestation import ATTESTATION_FILENAME
from ragwarrant.audit.writer import LOCK_FILE
from ragwarrant.outputs import OUTPUT_FILES
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "corroboration-demo"
CONTRACTS = REPO / "contracts"


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corroboration-demo")
    assert cli.main(["run", "--input", str(EXAMPLE), "--output", str(out)]) == 11
    return out


def rates(decision: dict) -> dict[tuple[str, str | None], dict]:
    return {(r["policy_id"], r["slice"]): r for r in decision["corroboration"]["rates"]}


def test_demo_is_inconclusive_because_the_judge_is_unreliable(out):
    """Exit 11, INCONCLUSIVE, evaluator-unreliable (both rates' upper bounds above their limits)."""
    d = orjson.loads((out / "decision.json").read_bytes())
    assert d["run_class"] == "INCONCLUSIVE" and d["exit_code"] == 11
    cand = d["candidates"][0]
    assert cand["class"] == "INCONCLUSIVE"
    assert [r.split(":")[0] for r in cand["reasons"]] == ["evaluator-unreliable"] * 2
    gates = {g["id"]: g["status"] for g in cand["gates"]}
    assert gates.pop("corroboration:evaluator-reliability:disagreement-rate") == "fail"
    # 2 of 60 abstain (0.033 < 0.10), but the upper 95 % bound is 0.101: not shown within limit.
    assert gates.pop("corroboration:evaluator-reliability:abstention-rate") == "fail"
    assert set(gates.values()) <= {"pass", "not-applicable"}


def test_abstaining_judge_scores_are_missing_per_arm(out):
    """Where the judge's samples disagree, its score is unmeasured, counted per policy."""
    report = orjson.loads((out / "validation_report.json").read_bytes())
    abstained = [r for r in report["missing_values"] if r["reason"] == "judge-abstained"]
    assert abstained == [
        {
            "policy_id": "baseline-large",
            "metric": "faithfulness",
            "reason": "judge-abstained",
            "count": 2,
        },
        {
            "policy_id": "candidate-small",
            "metric": "faithfulness",
            "reason": "judge-abstained",
            "count": 2,
        },
    ]


def test_demo_rates_per_policy_and_slice(out):
    """The planted disagreements and abstentions give the rates README.md states."""
    r = rates(orjson.loads((out / "decision.json").read_bytes()))
    expect = {  # (judged, disagreements, sampled, abstained)
        ("baseline-large", None): (58, 1, 60, 2),
        ("baseline-large", "orders"): (29, 0, 30, 1),
        ("baseline-large", "product"): (29, 1, 30, 1),
        ("candidate-small", None): (58, 7, 60, 2),
        ("candidate-small", "orders"): (28, 6, 30, 2),
        ("candidate-small", "product"): (30, 1, 30, 0),
    }
    assert set(r) == set(expect)
    for key, (judged, dis, sampled, abstained) in expect.items():
        row = r[key]
        assert (
            row["n_judged"],
            row["n_disagreements"],
            row["n_with_samples"],
            row["n_abstained"],
        ) == (judged, dis, sampled, abstained), key
        assert row["disagreement_rate"] == pytest.approx(dis / judged)
        assert row["abstention_rate"] == pytest.approx(abstained / sampled)
    c = r[("candidate-small", None)]
    assert (
        c["failed_retrieval"],
        c["failed_generation"],
        c["failed_answer"],
        c["fabricated_citations"],
    ) == (1, 7, 1, 1)
    assert (
        c["judge_supported_lexical_unsupported"],
        r[("baseline-large", None)]["judge_unsupported_lexical_supported"],
    ) == (7, 1)
    assert r[("baseline-large", None)]["honest_refusals"] == 1


def test_demo_report_shows_rates(out):
    """report.md carries the corroboration table with the slice above the limit in bold."""
    text = (out / "report.md").read_text()
    assert "## Evaluator corroboration" in text
    assert "| candidate-small | orders | 28 | 6 | **21.4%** |" in text
    assert "| candidate-small | all | 58 | 7 | 12.1% |" in text


def test_demo_outputs_validate(out):
    """Every JSON output validates against its committed schema."""
    for name in ("decision", "validation_report", "manifest"):
        doc = json.loads((out / f"{name}.json").read_text())
        jsonschema.validate(doc, json.loads((CONTRACTS / f"{name}.schema.json").read_text()))


def _texts() -> list[str]:
    found: list[str] = []
    with (EXAMPLE / "evidence" / "results.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            found += [row["question"], row["response"]]
            found += json.loads(row["contexts"])
            found += json.loads(row["cited_quotes"]) if row["cited_quotes"] else []
    return sorted(set(found))


def _runs(text: str, k: int = 8) -> set[str]:
    words = text.lower().split()
    return {" ".join(words[i : i + k]) for i in range(max(0, len(words) - k + 1))}


def test_no_text_in_any_output(out):
    """No question, response, passage or quote, nor an 8-word run of one, is in an output."""
    texts = _texts()
    assert len(texts) > 100
    files = [p for p in out.iterdir() if p.is_file() and p.name != LOCK_FILE]  # empty lock
    outputs = {p.name: p.read_text(encoding="utf-8").lower() for p in files}
    assert set(outputs) == {*OUTPUT_FILES, ATTESTATION_FILENAME}
    for name, content in outputs.items():
        flat = " ".join(content.split())
        for t in texts:
            assert t.lower() not in content, f"{name} contains an evidence text"
            for run in _runs(t):
                assert run not in flat, f"{name} contains the 8-word run {run!r}"


def test_generator_reproduces_the_evidence():
    """generate.py rebuilds evidence/results.csv byte for byte, with the planted findings."""
    spec = importlib.util.spec_from_file_location(
        "corroboration_demo_generate", EXAMPLE / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.build_rows()
    assert module.render_csv(rows) == (EXAMPLE / "evidence" / "results.csv").read_text(
        encoding="utf-8"
    )
    assert module.check_plantings(rows)["candidate-small:orders:unsupported"] == 6


def test_declared_corroboration_without_text_cannot_promote(make_input, tmp_path):
    """Corroboration asked for, but no text in the evidence: INCONCLUSIVE, not PROMOTE."""
    inp = make_input(
        mutate=lambda c: c.update({"corroboration": {"groundedness_metric": "correct"}})
    )
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 11
    cand = orjson.loads((out / "decision.json").read_bytes())["candidates"][0]
    assert cand["reasons"][0].startswith("evaluator-unreliable")
    assert "nothing to corroborate for cand" in cand["reasons"][0]


def test_no_corroboration_block_no_section(make_input, tmp_path):
    """Without a corroboration block, decision.json has none and report.md has no such section."""
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(make_input()), "--output", str(out)]) == 0
    assert orjson.loads((out / "decision.json").read_bytes())["corroboration"] is None
    assert "Evaluator corroboration" not in (out / "report.md").read_text()
