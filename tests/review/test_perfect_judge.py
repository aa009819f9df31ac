"""Issue 32's perfect-judge case: a judge equal to the labels is never evaluator-unreliable."""

from __future__ import annotations

import csv
import io
import shutil

import orjson
import yaml

from ragwarrant.cli import main
from ragwarrant.gates.corroboration import DISAGREEMENT_GATE_ID
from ragwarrant.review.queue import ReviewQueue
from tests.conftest import REPO

DEMO = REPO / "examples" / "corroboration-demo"


def test_perfect_judge_on_the_corroboration_demo_is_not_capped(tmp_path):
    """The demo's detectors call its judge unreliable; labels equal to the judge's scores don't."""
    root = tmp_path / "in"
    shutil.copytree(DEMO, root)
    contract = yaml.safe_load((root / "contract.yaml").read_text())
    contract["quality_metrics"].append(
        {
            "id": "faithfulness",
            "scale": [0, 1],
            "margin_abs": 0.2,
            "on_missing": "exclude",
            "human_labels": {"file": "review/labels.csv", "queue": "review/queue.json"},
        }
    )
    contract.setdefault("statistics", {})["min_pairing_coverage"] = 0.5  # the judge abstains
    (root / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
    queue_path = root / "review" / "queue.json"
    argv = ["review", "sample", "--input", str(root), "--metric", "faithfulness", "--n", "60"]
    assert main([*argv, "--seed", "1", "--output", str(queue_path)]) == 0
    queue = ReviewQueue.model_validate_json(queue_path.read_bytes())
    with (root / "evidence" / "results.csv").open(newline="") as fh:
        judge = {(r["policy"], r["example_id"]): r["faithfulness"] for r in csv.DictReader(fh)}
    policy = {"candidate": queue.candidate, "baseline": queue.baseline}
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["item_id", "label_a", "label_b"])
    for item in queue.items:
        writer.writerow([item.item_id, *(judge[(policy[r], item.example_id)] for r in item.shown)])
    (root / "review" / "labels.csv").write_text(buf.getvalue())

    plain = tmp_path / "plain"
    assert main(["run", "--input", str(DEMO), "--output", str(plain)]) == 11
    before = orjson.loads((plain / "decision.json").read_bytes())["candidates"][0]
    out = tmp_path / "out"
    main(["run", "--input", str(root), "--output", str(out)])
    after = orjson.loads((out / "decision.json").read_bytes())["candidates"][0]
    gate = {g["id"]: g for g in before["gates"]}[DISAGREEMENT_GATE_ID]
    assert gate["status"] == "fail"
    gate = {g["id"]: g for g in after["gates"]}[DISAGREEMENT_GATE_ID]
    assert gate["status"] == "pass" and gate["estimate"] == 0.0
    assert gate["details"]["calibrated_on"] == "human labels"
    ni = {g["id"]: g for g in after["gates"]}["noninferiority:faithfulness"]
    assert ni["method"].startswith("ppi++") and ni["details"]["judge_bias"] == 0.0
