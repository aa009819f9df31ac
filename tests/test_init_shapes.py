"""`ragwarrant init` on six real export shapes: the draft, filled only in the user's judgement
(directions, margins, the claim's items, the evidence class), reaches a decision, with the
exports inside --output's directory and, as README shows it, outside (copied by init)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from ragwarrant import cli
from tests.conftest import REPO

EXPORTS = REPO / "tests" / "data" / "exports"
DECISIONS = {0, 10, 11}  # PROMOTE, REJECT, INCONCLUSIVE: not BLOCK, not an error

#: shape → the export files a user hands to ``init --from`` (paths under tests/data/exports).
SHAPES = {
    "ragas-evaluate": ["ragas/ragas_evaluate_baseline.csv", "ragas/ragas_evaluate_candidate.csv"],
    "ragas-both-policies": ["ragas/ragas_evaluate_both_policies.csv"],
    "ragas-experiment-otel": [
        "ragas/experiments/handbook-baseline.csv",
        "ragas/experiments/handbook-candidate.csv",
        "otel/otel_genai_telemetry.parquet",
    ],
    "deepeval-folders": [
        "deepeval/baseline/test_run_20261129_205103.json",
        "deepeval/candidate/test_run_20261129_205104.json",
    ],
    "trulens-classic": ["trulens/trulens_records_and_feedback.csv"],
    "phoenix-evals-spans": [
        "phoenix/baseline/phoenix_evaluate_dataframe_baseline.parquet",
        "phoenix/baseline/phoenix_spans_baseline.parquet",
        "phoenix/candidate/phoenix_evaluate_dataframe_candidate.parquet",
        "phoenix/candidate/phoenix_spans_candidate.parquet",
    ],
}


def _draft(tmp_path: Path, shape: str | list[str], outside: bool = False) -> tuple[Path, dict]:
    """Run ``init`` on the shape's exports (or these paths): copied under <in>/evidence/ first,
    or (``outside``) given where they lie, outside <in>, as README's flow does."""
    root = tmp_path / "in"
    files = []
    for rel in SHAPES[shape] if isinstance(shape, str) else shape:
        target = root / "evidence" / rel
        if not outside:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(EXPORTS / rel, target)
        files.append(str(EXPORTS / rel if outside else target))
    assert cli.main(["init", "--from", *files, "--output", str(root / "contract.yaml")]) == 0
    return root, yaml.safe_load((root / "contract.yaml").read_text())


def _seen(data: dict) -> tuple:
    """What init read, paths aside: policies, each source's adapter, kind, policy, pairing,
    columns, metrics, spans file name, and the quality and operational metrics."""
    sources = [
        (s["adapter"], s.get("kind"), s.get("policy"), s["pairing"], s.get("columns"))
        + (s.get("metrics"), Path(s.get("options", {}).get("spans", "")).name)
        for s in data["evidence"]
    ]
    policies = [data["baseline"]["policy_id"], *(c["policy_id"] for c in data["candidates"])]
    return policies, sources, data["quality_metrics"], data.get("operational_metrics")


def _fill(data: dict) -> dict:
    """What the user decides, and nothing else: directions, margins, one claim, evidence class."""
    for q in data["quality_metrics"]:
        q["direction"] = q["direction"] or "higher_is_better"
        q["margin_abs"] = 0.1
    data["claims"]["items"] = [
        {"kind": "quality-improvement", "metric": data["quality_metrics"][0]["id"]}
    ]
    data["evidence_class"] = "development"
    return data


@pytest.mark.parametrize("outside", [False, True], ids=["inside", "readme-flow"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_draft_filled_in_the_judgement_calls_decides(
    tmp_path: Path, shape: str, outside: bool
) -> None:
    """init → fill direction, margin_abs, claim items, evidence_class → run exits 0, 10 or 11;
    the exports inside --output's directory, or outside it (README's flow: init copies them)."""
    root, data = _draft(tmp_path, shape, outside)
    (root / "contract.yaml").write_text(yaml.safe_dump(_fill(data), sort_keys=False))
    code = cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")])
    assert code in DECISIONS


@pytest.mark.parametrize("shape", list(SHAPES))
def test_exports_outside_are_read_as_the_same_files_inside(tmp_path: Path, shape: str) -> None:
    """init reads the copies of exports given from outside --output's directory exactly as it
    reads them copied inside first: same policies (from folders), sources, spans, metrics."""
    _, inside = _draft(tmp_path / "a", shape)
    _, outside = _draft(tmp_path / "b", shape, outside=True)
    assert _seen(outside) == _seen(inside)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_draft_leaves_null_only_the_judgement_calls(tmp_path: Path, shape: str) -> None:
    """Every null in the draft is a direction, a margin, the claim's items or the evidence class."""
    _, data = _draft(tmp_path, shape)
    nulls = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")
        elif node is None:
            nulls.append(where.rsplit(".", 1)[-1])

    walk(data, "")
    assert set(nulls) <= {"direction", "margin_abs", "items", "evidence_class"}
    assert data["quality_metrics"], "every shape holds scores"


def test_ragas_both_policies_maps_id_and_policy_columns(tmp_path: Path) -> None:
    """One Ragas file with question_id and policy columns: both mapped, paired on the id."""
    _, data = _draft(tmp_path, "ragas-both-policies")
    (source,) = data["evidence"]
    assert source["columns"] == {"example_id": "question_id", "policy_id": "policy"}
    assert (source["pairing"], "policy" in source) == ("id-column", False)
    assert [data["baseline"]["policy_id"], *(c["policy_id"] for c in data["candidates"])] == [
        "baseline",
        "candidate",
    ]


def test_file_names_give_baseline_and_candidate(tmp_path: Path) -> None:
    """@experiment CSVs named handbook-<policy> beside telemetry: exactly baseline and candidate."""
    _, data = _draft(tmp_path, "ragas-experiment-otel")
    assert data["baseline"]["policy_id"] == "baseline"
    assert [c["policy_id"] for c in data["candidates"]] == ["candidate"]
    assert [s.get("policy") for s in data["evidence"]] == ["baseline", "candidate", None]
    assert data["evidence"][0]["columns"] == {"example_id": "question_id"}
    assert {m["id"] for m in data["operational_metrics"]} == {"cost_usd", "latency_ms", "api_calls"}


def test_trulens_pairs_on_the_question_not_the_record_uuid(tmp_path: Path) -> None:
    """TruLens' record_id is one UUID per record: the draft pairs by question hash."""
    _, data = _draft(tmp_path, "trulens-classic")
    (source,) = data["evidence"]
    assert source["pairing"] == "question-hash"
    assert source["columns"] == {"policy_id": "app_version"}


def test_phoenix_evaluations_are_linked_to_their_spans(tmp_path: Path) -> None:
    """Each evaluate_dataframe file names the spans file given with it; token counts are not
    quality; the Score's own direction (refusal: minimize) is proposed."""
    _, data = _draft(tmp_path, "phoenix-evals-spans")
    evals = [s for s in data["evidence"] if s.get("kind") != "telemetry"]
    assert [s["options"]["spans"] for s in evals] == [
        "evidence/phoenix/baseline/phoenix_spans_baseline.parquet",
        "evidence/phoenix/candidate/phoenix_spans_candidate.parquet",
    ]
    quality = {q["id"]: q["direction"] for q in data["quality_metrics"]}
    assert quality == {
        "exact_match": "higher_is_better",
        "refusal": "lower_is_better",
        "retrieval_recall": "higher_is_better",
        "token_f1": "higher_is_better",
    }


def test_deepeval_lists_every_metric_and_policies_from_folders(tmp_path: Path, capsys) -> None:
    """DeepEval results folders: the run's three metrics, policies from the folder names."""
    _, data = _draft(tmp_path, "deepeval-folders")
    assert (
        "evidence/deepeval/baseline/test_run_20261129_205103.json: deepeval, pairing id-column; "
        "exact_match, gold_context_reciprocal_rank, token_f1\n"
    ) in capsys.readouterr().out
    assert [q["id"] for q in data["quality_metrics"]] == [
        "exact_match",
        "gold_context_reciprocal_rank",
        "token_f1",
    ]
    assert [s["policy"] for s in data["evidence"]] == ["baseline", "candidate"]
    assert data["evidence"][0]["columns"] == {"example_id": "metadata.question_id"}


def test_missing_values_get_a_conservative_on_missing_naming_the_rows(tmp_path: Path) -> None:
    """Baseline q030 has no context recall: on_missing worst, and a comment naming file and row."""
    root, data = _draft(tmp_path, "ragas-evaluate")
    by_id = {q["id"]: q for q in data["quality_metrics"]}
    assert by_id["non_llm_context_recall"]["on_missing"] == "worst"
    assert "on_missing" not in by_id["bleu_score"]
    text = (root / "contract.yaml").read_text()
    assert "# no value in evidence/ragas/ragas_evaluate_baseline.csv row 30:" in text


def test_langsmith_execution_time_is_not_a_quality_metric(tmp_path: Path) -> None:
    """LangSmith's execution_time (seconds) and TruLens' cost columns are never quality."""
    root = tmp_path / "in"
    (root / "e").mkdir(parents=True)
    for p in ("baseline", "candidate"):
        shutil.copy(EXPORTS / "langsmith" / f"langsmith_experiment_{p}.csv", root / "e")
    files = [str(f) for f in sorted((root / "e").iterdir())]
    assert cli.main(["init", "--from", *files, "--output", str(root / "contract.yaml")]) == 0
    data = yaml.safe_load((root / "contract.yaml").read_text())
    ids = {q["id"] for q in data["quality_metrics"]}
    assert "execution_time" not in ids and "token_f1" in ids
    assert data["evidence"][0]["columns"] == {"example_id": "inputs.question_id"}


@pytest.mark.parametrize("shape", ["ragas-experiment-otel", "phoenix-evals-spans"])
def test_policy_stubs_hold_the_models_the_exports_name(tmp_path: Path, shape: str) -> None:
    """Each policy's stub config carries the model its telemetry or spans name, so the configs
    differ by what the exports show, not by the policy id alone."""
    root, _ = _draft(tmp_path, shape)
    stubs = {
        p: yaml.safe_load((root / "policies" / f"{p}.yaml").read_text())
        for p in ("baseline", "candidate")
    }
    assert {p: s["seen_in_exports"]["model"] for p, s in stubs.items()} == {
        "baseline": ["llama-3.1-8b-instruct"],
        "candidate": ["llama-3.1-70b-instruct"],
    }


def test_ragas_by_question_hash_beside_otel_by_id_warns_and_blocks(tmp_path: Path, capsys) -> None:
    """Fresh-user trial: Ragas ``evaluate`` rows pair by question hash, the OTel telemetry by
    ``q001``…; init says the two will not overlap, and the filled draft BLOCKs instead of
    deciding quality and cost on 60 disjoint examples."""
    ragas = ["ragas/ragas_evaluate_baseline.jsonl", "ragas/ragas_evaluate_candidate.jsonl"]
    root, data = _draft(tmp_path, [*ragas, "otel/otel_genai_telemetry.parquet"])
    assert "WARNING: the quality exports and the telemetry are paired by different keys" in (
        capsys.readouterr().out
    )
    data = _fill(data)
    data["claims"]["items"] = [{"kind": "cost-reduction", "metric": "cost_usd"}]
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) == 12
    decision = yaml.safe_load((tmp_path / "out" / "decision.json").read_text())
    [gate] = [g for g in decision["run_gates"] if g["id"] == "hard:evidence-overlap"]
    assert gate["status"] == "fail" and gate["n"] == 0
    assert "only in cost_usd: 'q001', 'q002', 'q003'" in gate["reason"]


def test_ragas_experiments_beside_otel_share_ids_and_do_not_warn(tmp_path: Path, capsys) -> None:
    root, data = _draft(tmp_path, "ragas-experiment-otel")
    assert "WARNING" not in capsys.readouterr().out
    data = _fill(data)
    data["claims"]["items"] = [{"kind": "cost-reduction", "metric": "cost_usd"}]
    (root / "contract.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--input", str(root), "--output", str(tmp_path / "out")]) in DECISIONS
    decision = yaml.safe_load((tmp_path / "out" / "decision.json").read_text())
    [gate] = [g for g in decision["run_gates"] if g["id"] == "hard:evidence-overlap"]
    assert gate["status"] == "pass" and gate["estimate"] == 1.0
