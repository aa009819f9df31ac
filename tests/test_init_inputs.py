"""`ragwarrant init` on hostile or unusual exports: every split layout drafts, policy ids never
become paths outside ``policies/``, Phoenix SpanEvaluations without spans are marked."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import yaml

from ragwarrant import cli
from tests.conftest import REPO

EXPORTS = REPO / "tests" / "data" / "exports"
DECISIONS = {0, 10, 11}  # PROMOTE, REJECT, INCONCLUSIVE: not BLOCK, not an error


def _readme_evals(path: Path, splits: list[str], n: int = 40) -> Path:
    """README's minimal example: ``question_id,policy,task,split,faithfulness,cost``."""
    rng = random.Random(7)
    lines = ["question_id,policy,task,split,faithfulness,cost"]
    for i in range(n):
        split, task = splits[i % len(splits)], ("qa", "summary")[i % 2]
        base = rng.uniform(0.5, 0.9)
        lines.append(f"q{i},prod,{task},{split},{base:.3f},0.010")
        lines.append(f"q{i},topk3,{task},{split},{min(1.0, base + 0.05):.3f},0.006")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _init(root: Path, *files: Path) -> dict:
    code = cli.main(["init", "--from", *map(str, files), "--output", str(root / "contract.yaml")])
    assert code == 0
    return yaml.safe_load((root / "contract.yaml").read_text())


@pytest.mark.parametrize("split", ["holdout", "test"])
def test_one_split_value_drafts_and_decides(tmp_path: Path, split: str) -> None:
    """README's columns with one split value: init drafts (no template crash), the split is the
    confirmatory one, and the draft filled in the judgement fields reaches a decision."""
    root = tmp_path / "in"
    data = _init(root, _readme_evals(root / "evals.csv", [split]))
    assert data["splits"] == {"confirmatory": split}
    for q in data["quality_metrics"]:
        q["direction"], q["margin_abs"] = q["direction"] or "higher_is_better", 0.05
    data["claims"]["items"] = [{"kind": "quality-improvement", "metric": "faithfulness"}]
    data["evidence_class"] = "development"
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) in DECISIONS


def test_splits_without_a_development_value_are_named(tmp_path: Path) -> None:
    """Two decide-like splits (holdout, test): one is confirmatory, the other is named in a CHECK
    line as used by no role."""
    root = tmp_path / "in"
    data = _init(root, _readme_evals(root / "evals.csv", ["holdout", "test"]))
    assert data["splits"] == {"confirmatory": "holdout"}
    assert "# CHECK: no role takes the rows of split test" in (root / "contract.yaml").read_text()
