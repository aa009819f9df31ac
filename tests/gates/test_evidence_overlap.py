"""``hard:evidence-overlap``: quality and telemetry evidence must describe the same examples.

Fresh-user trial: a wide quality file keyed ``q0..q299`` (candidate as good as the baseline)
beside a telemetry file keyed ``OTHER-0..OTHER-299`` (candidate cheaper) PROMOTEd on 600
examples, quality decided on one half and cost on the other.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml

from ragwarrant.api import decide
from tests.conftest import base_contract

N = 300


def _write(root: Path, quality_ids: list[str], telemetry_ids: list[str]) -> Path:
    """Contract, policy configs, ``evals.csv`` (equal quality) and ``tele.csv`` (the candidate
    costs half) under ``root``."""
    contract = base_contract()
    contract["evidence"] = [
        {
            "id": "evals",
            "path": "evals.csv",
            "format": "csv",
            "layout": "wide",
            "columns": {"example_id": "example_id", "policy_id": "policy"},
            "metrics": {"correct": "correct"},
            "evaluator": "fixture",
            "evaluator_version": "1",
        },
        {
            "id": "tele",
            "path": "tele.csv",
            "format": "csv",
            "adapter": "generic",
            "kind": "telemetry",
            "columns": {"example_id": "example_id", "policy_id": "policy"},
            "reduce": {"cost_usd": {"column": "cost", "how": "sum"}},
            "evaluator": "fixture",
            "evaluator_version": "1",
        },
    ]
    contract["quality_metrics"][0]["required"] = True
    (root / "policies").mkdir(parents=True)
    for policy in ("base", "cand"):
        (root / "policies" / f"{policy}.json").write_text(json.dumps({"model": policy}))
    (root / "contract.yaml").write_text(yaml.safe_dump(contract))
    with (root / "evals.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["example_id", "policy", "correct"])
        for i, ex in enumerate(quality_ids):
            w.writerows([[ex, p, int(i % 5 != 0)] for p in ("base", "cand")])
    with (root / "tele.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["request_id", "example_id", "policy", "cost"])
        for i, ex in enumerate(telemetry_ids):
            cost = 0.01 + 0.001 * (i % 7)
            w.writerows([[f"{p}-{i}", ex, p, cost * (1.0 if p == "base" else 0.5)]
                         for p in ("base", "cand")])  # fmt: skip
    return root


def _run(tmp_path: Path, quality_ids: list[str], telemetry_ids: list[str]) -> dict:
    root = _write(tmp_path / "in", quality_ids, telemetry_ids)
    decide(root, tmp_path / "out")
    return json.loads((tmp_path / "out" / "decision.json").read_text())


def _gate(decision: dict) -> dict:
    [gate] = [g for g in decision["run_gates"] if g["id"] == "hard:evidence-overlap"]
    return gate


Q = [f"q{i}" for i in range(N)]


def test_disjoint_quality_and_telemetry_ids_block(tmp_path: Path) -> None:
    decision = _run(tmp_path, Q, [f"OTHER-{i}" for i in range(N)])
    gate = _gate(decision)
    assert decision["run_class"] == "BLOCK" and decision["exit_code"] != 0
    assert gate["status"] == "fail" and gate["estimate"] == 0.0 and gate["n"] == 0
    reason = gate["reason"]
    assert "cost_usd from tele (tele.csv) has 300 examples" in reason
    assert "quality metrics from evals (evals.csv) 300, 0 in both" in reason
    assert "only in cost_usd: 'OTHER-0', 'OTHER-1', 'OTHER-10'" in reason
    assert "only in quality: 'q0', 'q1', 'q10'" in reason and "hint:" in reason
    assert all(c["class"] == "BLOCK" for c in decision["candidates"])


def test_coverage_at_the_floor_passes_and_just_below_blocks(tmp_path: Path) -> None:
    """285 / 300 shared is the 0.95 floor; 284 / 300 is below it."""
    at_floor = _run(tmp_path / "a", Q, Q[:285] + [f"x{i}" for i in range(15)])
    gate = _gate(at_floor)
    assert gate["status"] == "pass" and gate["estimate"] == 0.95 and gate["n"] == 285
    assert at_floor["run_class"] == "PROMOTE"
    below = _run(tmp_path / "b", Q, Q[:284] + [f"x{i}" for i in range(16)])
    assert _gate(below)["status"] == "fail" and below["run_class"] == "BLOCK"
    assert "only in cost_usd: 'x0', 'x1', 'x10'" in _gate(below)["reason"]


def test_telemetry_on_more_examples_than_quality_blocks(tmp_path: Path) -> None:
    """Vice versa: quality on a subset of the telemetry's examples (300 of 320) blocks."""
    decision = _run(tmp_path, Q, Q + [f"q{i}" for i in range(N, N + 20)])
    gate = _gate(decision)
    assert gate["status"] == "fail" and gate["estimate"] == 300 / 320
    assert "only in quality: none" in gate["reason"]


def test_ids_are_escaped_in_the_reason(tmp_path: Path) -> None:
    decision = _run(tmp_path, Q, [f"OTHER\u200b{i}" for i in range(N)])
    assert "'OTHER\\u200b0'" in _gate(decision)["reason"]
