"""`ragwarrant init`: tool detection, metrics with directions, keys, and a draft without margins."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
import yaml

from ragwarrant import cli
from ragwarrant.commands import init as init_command
from ragwarrant.contract import load_contract
from ragwarrant.errors import ContractError, InputError, UsageError
from ragwarrant.pipeline import run_job
from ragwarrant.scaffold import MetricGuess, describe_export, draft_contract
from tests.conftest import REPO

EXPORTS = REPO / "tests" / "data" / "exports"
EXAMPLE = REPO / "examples" / "ragtruth-generators"


def _init(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    init_command.register(parser.add_subparsers())
    args = parser.parse_args(["init", *argv])
    return int(args.handler(args))


def test_ragas_export_is_detected_with_directions() -> None:
    """A Ragas CSV is detected as ragas; its named metrics are higher-is-better, paired by hash."""
    e = describe_export(EXPORTS / "ragas" / "ragas_evaluate_baseline.csv")
    assert e.adapter == "ragas"
    ids = {m.metric_id: m for m in e.metrics}
    assert ids["rouge_score_mode_fmeasure"].column == "rouge_score(mode=fmeasure)"
    assert {m.direction for m in e.metrics} == {"higher_is_better"}
    assert "user_input" not in ids and "response" not in ids
    assert (e.pairing, e.policies) == ("question-hash", [])


def test_otel_export_lists_the_adapters_operational_metrics() -> None:
    """An OTel parquet is detected as otel and offers cost, latency and calls (lower is better)."""
    e = describe_export(EXPORTS / "otel" / "otel_genai_telemetry.parquet")
    assert e.adapter == "otel" and e.kind == "telemetry"
    assert [(m.metric_id, m.direction) for m in e.metrics] == [
        ("cost_usd", "lower_is_better"),
        ("latency_ms", "lower_is_better"),
        ("api_calls", "lower_is_better"),
    ]
    assert e.policies == ["baseline", "candidate"]


def test_generic_table_gives_keys_slices_splits_and_unknown_directions() -> None:
    """A generic CSV gives its id, policy, slice and split columns; directions stay undeclared."""
    e = describe_export(EXAMPLE / "evidence" / "quality.csv")
    assert e.adapter == "generic"
    assert (e.id_column, e.policy_column, e.slice_column, e.split_column) == (
        "example_id",
        "policy_id",
        "task_type",
        "split",
    )
    assert e.slices == ["Data2txt", "QA", "Summary"]
    assert e.splits == ["confirmatory", "development"]
    assert {m.metric_id: m.direction for m in e.metrics} == {
        "no_hallucination": None,
        "hallucinated_spans": None,
    }


def test_draft_leaves_every_margin_undeclared(tmp_path: Path) -> None:
    """The draft has no margin: margin_abs is null everywhere and the contract does not validate."""
    exports = [
        describe_export(EXPORTS / "ragas" / f"ragas_evaluate_{p}.csv")
        for p in ("baseline", "candidate")
    ]
    text = draft_contract(exports)
    data = yaml.safe_load(text)
    assert [q["margin_abs"] for q in data["quality_metrics"]] == [None] * 10
    path = tmp_path / "contract.yaml"
    path.write_text(text)
    with pytest.raises(ContractError) as err:
        load_contract(path)
    assert "margin_abs" in err.value.message


def test_draft_asks_for_a_claim(tmp_path: Path) -> None:
    """The draft has a claims block whose items are left to declare, with an example."""
    exports = [
        describe_export(EXPORTS / "ragas" / f"ragas_evaluate_{p}.csv")
        for p in ("baseline", "candidate")
    ]
    text = draft_contract(exports)
    assert yaml.safe_load(text)["claims"] == {"join": "any", "items": None}
    assert "items: null  # DECLARE, e.g. [{kind: quality-improvement, metric: " in text


def test_init_then_declare_margins_then_run(tmp_path: Path) -> None:
    """init on the example's own evidence, margins declared, gives a contract the job decides on."""
    root = tmp_path / "in"
    shutil.copytree(EXAMPLE, root)
    (root / "contract.yaml").unlink()
    evidence = root / "evidence"
    code = _init(
        "--from",
        str(evidence / "quality.csv"),
        str(evidence / "telemetry.parquet"),
        "--output",
        str(root / "contract.yaml"),
    )
    assert code == 0
    data = yaml.safe_load((root / "contract.yaml").read_text())
    # what the user edits: margins, directions, evidence class, which policy is the baseline
    data["quality_metrics"] = [
        dict(q, direction="higher_is_better", margin_abs=0.05)
        for q in data["quality_metrics"]
        if q["id"] == "no_hallucination"
    ]
    data["evidence"][0]["metrics"] = {"no_hallucination": "no_hallucination"}
    data["protected_slices"] = [dict(s, margin_abs=0.10) for s in data["protected_slices"]]
    data["operational_metrics"] = [m for m in data["operational_metrics"] if m["id"] == "cost_usd"]
    data["evidence"][1]["reduce"] = {"cost_usd": {"column": "cost_usd", "how": "sum"}}
    data["claims"] = {"join": "any", "items": [{"kind": "cost-reduction", "metric": "cost_usd"}]}
    data["evidence_class"] = "human-annotated"
    policies = [data["baseline"], *data["candidates"]]
    data["baseline"] = next(p for p in policies if p["policy_id"] == "gpt-4-0613")
    data["candidates"] = [p for p in policies if p["policy_id"] != "gpt-4-0613"]
    (root / "contract.yaml").write_text(yaml.safe_dump(data))
    outcome = run_job(root, tmp_path / "out", on_stage=lambda event, **fields: None)
    assert outcome.decision.run_class.value == "PROMOTE"
    assert outcome.decision.selected_policy == "gpt-3.5-turbo-0613"


def test_init_never_overwrites(tmp_path: Path) -> None:
    """An existing --output is kept unless --force is given."""
    out = tmp_path / "contract.yaml"
    out.write_text("mine\n")
    src = str(EXPORTS / "ragas" / "ragas_evaluate_baseline.csv")
    with pytest.raises(UsageError) as err:
        _init("--from", src, "--output", str(out))
    assert err.value.code == "init-exists" and out.read_text() == "mine\n"
    assert _init("--from", src, "--output", str(out), "--force") == 0
    assert "margin_abs: null" in out.read_text()


def test_init_rejects_an_unknown_suffix(tmp_path: Path) -> None:
    """A file whose suffix names no supported format is an input error naming the suffix."""
    odd = tmp_path / "scores.xlsx"
    odd.write_bytes(b"x")
    with pytest.raises(InputError) as err:
        _init("--from", str(odd), "--output", str(tmp_path / "contract.yaml"))
    assert err.value.code == "init-format" and "'.xlsx'" in err.value.message


def test_counts_times_and_costs_are_never_quality() -> None:
    """LangSmith's execution_time (seconds) is read as operational, its feedback as quality."""
    e = describe_export(EXPORTS / "langsmith" / "langsmith_experiment_baseline.csv")
    kinds = {m.metric_id: m.kind for m in e.metrics}
    assert kinds["execution_time"] == "operational"
    assert kinds["token_f1"] == "quality"


def test_scale_is_the_unit_interval_or_the_observed_range() -> None:
    """[0, 1] holds values within 1e-9 of it (BLEU's 1.0000000000000004); a 1..5 rubric does not."""
    bleu = MetricGuess("b", "bleu", "quality", None, "", low=0.0, high=1.0000000000000004)
    rubric = MetricGuess("r", "rubric", "quality", None, "", low=1.0, high=4.5)
    assert (bleu.scale, rubric.scale) == ((0.0, 1.0), (1.0, 5.0))


def test_an_export_outside_the_input_directory_is_copied_beside_the_contract(
    tmp_path: Path,
) -> None:
    """`init --from /elsewhere/ragas/x.csv --output in/contract.yaml` as README shows it, `in/`
    absent: init creates it, copies the export byte for byte under its folder's name and names
    it relatively; run then finds it (a contract names only files of its input directory)."""
    src = EXPORTS / "ragas" / "ragas_evaluate_baseline.csv"
    other = EXPORTS / "ragas" / "ragas_evaluate_candidate.csv"
    out = tmp_path / "in" / "contract.yaml"
    assert _init("--from", str(src), str(other), "--output", str(out)) == 0
    copy = tmp_path / "in" / "ragas" / src.name
    assert copy.read_bytes() == src.read_bytes()
    data = yaml.safe_load(out.read_text())
    assert [e["path"] for e in data["evidence"]] == [f"ragas/{src.name}", f"ragas/{other.name}"]
    assert "# note: copied beside the contract" in out.read_text()
    for q in data["quality_metrics"]:
        q["margin_abs"] = 0.1
    data["claims"]["items"] = [{"kind": "quality-improvement", "metric": "bleu_score"}]
    data["evidence_class"] = "development"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    code = cli.main(["run", "--input", str(out.parent), "--output", str(tmp_path / "out")])
    assert code in (0, 10, 11)
    # run again: the identical copies are reused; a different file of the same name is refused
    assert _init("--from", str(src), str(other), "--output", str(out), "--force") == 0
    copy.write_text("mine\n")
    with pytest.raises(UsageError) as err:
        _init("--from", str(src), str(other), "--output", str(out), "--force")
    assert err.value.code == "init-copy-exists" and "holds another file" in err.value.message
    assert copy.read_text() == "mine\n"


def test_a_link_in_the_input_directory_to_a_file_outside_is_refused_as_a_link(
    tmp_path: Path,
) -> None:
    """An export given through a symlink in --output's directory, pointing outside: refused
    as a link (run would refuse it), not as "another file" of its name."""
    link = tmp_path / "in" / "evals.csv"
    link.parent.mkdir()
    link.symlink_to(EXPORTS / "ragas" / "ragas_evaluate_baseline.csv")
    with pytest.raises(UsageError) as err:
        _init("--from", str(link), "--output", str(tmp_path / "in" / "contract.yaml"))
    assert err.value.code == "init-export-link"
    assert "is a link to a file outside --output's directory" in err.value.message
    assert sorted(p.name for p in link.parent.iterdir()) == ["evals.csv"]


def test_a_generic_score_column_keeps_its_name(tmp_path: Path) -> None:
    """Only a Phoenix frame's lone ``score`` column is named after its evaluation: a generic
    table's ``score`` stays ``score``, without a CHECK note."""
    path = tmp_path / "faithfulness_eval.csv"
    path.write_text("example_id,policy_id,score\ne1,baseline,0.5\ne1,candidate,0.7\n")
    e = describe_export(path)
    assert e.adapter == "generic"
    assert ([m.metric_id for m in e.metrics], e.notes) == (["score"], [])
