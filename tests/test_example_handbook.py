"""End to end on examples/handbook-exports: real Ragas, DeepEval and OTel exports, via the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import orjson
import yaml

from ragwarrant import cli
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "handbook-exports"
CONTRACTS = REPO / "contracts"


def _run(inp: Path, out: Path) -> int:
    return cli.main(["run", "--input", str(inp), "--output", str(out)])


def _load(out: Path, name: str) -> dict:
    return orjson.loads((out / name).read_bytes())


def test_handbook_example_is_inconclusive_by_class_and_thin_evidence(
    tmp_path: Path,
) -> None:
    """Exit 11: development evidence cannot promote, and 30 pairs with 1 worse are too few."""
    out = tmp_path / "out"
    assert _run(EXAMPLE, out) == 11
    decision = _load(out, "decision.json")
    assert decision["run_class"] == "INCONCLUSIVE"
    [cand] = decision["candidates"]
    assert (cand["policy_id"], cand["class"]) == ("candidate", "INCONCLUSIVE")
    failed = {g["id"] for g in cand["gates"] if g["status"] not in ("pass", "not-applicable")}
    assert failed == {"claim-ceiling", "noninferiority:gold_context_reciprocal_rank"}
    gates = {g["id"]: g for g in cand["gates"]}
    rank = gates["noninferiority:gold_context_reciprocal_rank"]
    assert rank["status"] == "inconclusive"
    assert rank["details"]["degenerate_reason"] == "only 1 of 30 pairs worse (< 2)"
    assert rank["more_paired_n"] == 29
    assert gates["noninferiority:id_based_context_recall"]["method"] == (
        "Tango score test for paired proportions"
    )
    assert gates["claim:quality-improvement:gold_context_reciprocal_rank"]["status"] == "pass"
    for metric in (
        "gold_context_reciprocal_rank",
        "id_based_context_recall",
        "token_f1",
        "rouge_l_f1",
    ):
        assert gates[f"noninferiority:{metric}"]["n"] == 30
    assert gates["noninferiority:non_llm_context_recall"]["n"] == 29  # baseline q030 NaN, excluded
    for name, schema in (
        ("decision.json", "decision.schema.json"),
        ("validation_report.json", "validation_report.schema.json"),
        ("manifest.json", "manifest.schema.json"),
    ):
        jsonschema.validate(
            json.loads((out / name).read_text()), json.loads((CONTRACTS / schema).read_text())
        )


def test_handbook_example_records_provenance_and_missing_values(tmp_path: Path) -> None:
    """The report names each source's pairing method, the auto detection and the Ragas NaN."""
    out = tmp_path / "out"
    _run(EXAMPLE, out)
    report = _load(out, "validation_report.json")
    sources = {s["source_id"]: s for s in report["sources"]}
    assert sources["ragas-baseline"]["pairing_method"] == "question-hash"
    assert sources["deepeval-candidate"]["pairing_method"] == "id-column"
    assert sources["telemetry"]["adapter"] == "otel"
    assert sources["telemetry"]["detected"].startswith("otel: ")
    assert sources["ragas-baseline"]["metric_names"]["rouge_score(mode=fmeasure)"] == "rouge_l_f1"
    assert report["missing_values"] == [
        {"policy_id": "baseline", "metric": "non_llm_context_recall", "reason": "null", "count": 1}
    ]


def test_same_evidence_as_confirmatory_is_still_inconclusive(tmp_path: Path) -> None:
    """Declared confirmatory, 30 pairs with 1 worse still cannot rule out a 5-point loss."""
    inp = tmp_path / "in"
    shutil.copytree(EXAMPLE, inp)
    contract = inp / "contract.yaml"
    text = contract.read_text()
    assert "evidence_class: development" in text
    contract.write_text(text.replace("evidence_class: development", "evidence_class: confirmatory"))
    out = tmp_path / "out"
    assert _run(inp, out) == 11
    [cand] = _load(out, "decision.json")["candidates"]
    assert cand["class"] == "INCONCLUSIVE"
    assert {g["id"] for g in cand["gates"] if g["status"] == "inconclusive"} == {
        "noninferiority:gold_context_reciprocal_rank"
    }


def _cost_claim(inp: Path, *, drop_ragas: bool) -> None:
    """The example's contract with a cost-reduction claim on confirmatory evidence; without
    the Ragas sources and their metrics when ``drop_ragas``."""
    shutil.copytree(EXAMPLE, inp)
    contract = yaml.safe_load((inp / "contract.yaml").read_text())
    contract["claims"]["items"] = [{"kind": "cost-reduction", "metric": "cost_usd"}]
    contract["evidence_class"] = "confirmatory"
    if drop_ragas:
        ragas = [s for s in contract["evidence"] if s.get("adapter") == "ragas"]
        dropped = {m for s in ragas for m in s["metrics"].values()}
        contract["evidence"] = [s for s in contract["evidence"] if s not in ragas]
        contract["quality_metrics"] = [
            m for m in contract["quality_metrics"] if m["id"] not in dropped
        ]
    (inp / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))


def test_cost_claim_beside_ragas_keyed_by_question_hash_blocks(tmp_path: Path) -> None:
    """Ragas keeps no question id (its rows pair by question hash), the telemetry is keyed
    q001..q030: a cost claim would be decided on other examples than the Ragas quality."""
    _cost_claim(tmp_path / "in", drop_ragas=False)
    assert _run(tmp_path / "in", tmp_path / "out") == 12
    decision = _load(tmp_path / "out", "decision.json")
    [gate] = [g for g in decision["run_gates"] if g["id"] == "hard:evidence-overlap"]
    assert gate["status"] == "fail" and (gate["n"], gate["estimate"]) == (30, 0.5)
    assert "has 30 examples" in gate["reason"] and "only in quality: 'qh:" in gate["reason"]


def test_cost_reduction_claim_is_rejected_by_the_telemetry(tmp_path: Path) -> None:
    """The telemetry shows the candidate costs more: a cost-reduction claim on the DeepEval
    quality (keyed like the telemetry) is REJECT (exit 10)."""
    inp = tmp_path / "in"
    _cost_claim(inp, drop_ragas=True)
    out = tmp_path / "out"
    assert _run(inp, out) == 10
    [cand] = _load(out, "decision.json")["candidates"]
    assert cand["class"] == "REJECT"
    gate = next(g for g in cand["gates"] if g["id"] == "claim:cost-reduction:cost_usd")
    assert gate["status"] == "fail" and gate["upper_bound"] < 0
    # one sign convention in the reason, stated: the gain and its bound are both negative
    assert "mean gain -$" in gate["reason"] and "positive = candidate better" in gate["reason"]
    assert f"upper bound at alpha 0.05 {gate['upper_bound']:+.4g} <= 0" in gate["reason"]
