"""Bad values that must never tip a decision: out-of-scale quality, negative cost, non-finite
contract numbers, unknown adapters, outputs inside the input, unassigned splits."""

from __future__ import annotations

import hashlib

import numpy as np
import orjson
import pytest
import yaml

from ragwarrant import cli
from ragwarrant.display import quoted
from tests.conftest import simulate


def run(args: list[str]) -> int:
    return cli.main(args)


def load(out, name="decision.json"):
    return orjson.loads((out / name).read_bytes())


def test_quality_value_outside_scale_blocks_naming_file_and_row(make_input, tmp_path):
    """A quality value of 3.0 on a [0, 1] scale BLOCKs the run, naming file, row and metric."""
    data = simulate(200)
    data["cand"]["correct"][7] = 3.0
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input(data=data)), "--output", str(out)]) == 12
    gate = next(g for g in load(out)["run_gates"] if g["id"] == "hard:contract-evidence:scales")
    assert gate["status"] == "fail"
    assert "evidence/results.csv row 208" in gate["reason"] and "correct" in gate["reason"]
    assert "3" in gate["reason"] and "[0, 1]" in gate["reason"]


def test_negative_cost_blocks(make_input, tmp_path):
    """Negative costs cannot fake a cost reduction: operational metrics are >= 0 by default."""
    data = simulate(200, cost_ratio=1.2)
    data["cand"]["cost_usd"][:30] = -0.05
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input(data=data)), "--output", str(out)]) == 12
    gate = next(g for g in load(out)["candidates"][0]["gates"] if g["id"] == "hard:value-range")
    assert gate["status"] == "fail"
    assert gate["reason"] == (
        "30 values outside their declared range; first: evidence/results.csv row 201: "
        "cost_usd = -0.05 for policy cand is outside the range [0, inf]"
    )


def test_values_within_range_pass_the_range_gate(make_input, tmp_path):
    """In-range values pass the range gate."""
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input()), "--output", str(out)]) == 0
    gate = next(g for g in load(out)["candidates"][0]["gates"] if g["id"] == "hard:value-range")
    assert gate["status"] == "pass"


def test_infinite_margin_is_an_invalid_contract(make_input, tmp_path):
    """margin_abs: .inf (or NaN anywhere in the contract) is a contract error (78), not a crash."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["quality_metrics"][0].update({"margin_abs": float("inf")}))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert "margin_abs" in load(out)["error"]["message"]
    inp = make_input(
        mutate=lambda c: c.update({"prices": {"m": {"input_usd_per_1m_tokens": float("nan")}}})
    )
    assert run(["run", "--input", str(inp), "--output", str(tmp_path / "o2")]) == 78


@pytest.mark.parametrize("on_missing", ["worst", "exclude"])
def test_operational_on_missing_without_bounds_is_an_invalid_contract(
    make_input, tmp_path, on_missing
):
    """A fresh-user trial: on_missing worst on a cost with no max_value imputed nothing, and 7
    blank candidate costs PROMOTEd a cost reduction. Without both bounds there is no least
    favourable value: a contract error (78) at the key and line; with them, a valid run."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["operational_metrics"][0].update(on_missing=on_missing))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    message = load(out)["error"]["message"]
    assert "operational_metrics[0].on_missing (line " in message and "max_value" in message
    bounded = make_input(
        mutate=lambda c: c["operational_metrics"][0].update(on_missing=on_missing, max_value=1.0)
    )
    assert run(["run", "--input", str(bounded), "--output", str(tmp_path / "o2")]) == 0


def test_negative_price_is_an_invalid_contract(make_input, tmp_path):
    """A negative list price is refused."""
    inp = make_input(
        mutate=lambda c: c.update({"prices": {"m": {"input_usd_per_1m_tokens": -1.0}}})
    )
    assert run(["run", "--input", str(inp), "--output", str(tmp_path / "o")]) == 78


def test_unknown_adapter_is_an_invalid_contract(make_input, tmp_path):
    """An adapter name the job does not know is a contract error (78) listing the known ones."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["evidence"][0].update({"adapter": "ragsa"}))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert "ragas" in load(out)["error"]["message"]


def test_adapter_names_match_the_registry():
    """The contract's adapter names are exactly the registry's."""
    from typing import get_args

    from ragwarrant.adapters.registry import ADAPTERS
    from ragwarrant.contract import AdapterName

    assert set(get_args(AdapterName)) == set(ADAPTERS)


def test_output_inside_input_is_refused(make_input):
    """The job never writes into the input directory, even when asked to (usage error 64)."""
    inp = make_input()
    before = sorted(p.name for p in inp.rglob("*"))
    assert run(["run", "--input", str(inp), "--output", str(inp / "out")]) == 64
    assert run(["run", "--input", str(inp), "--output", str(inp)]) == 64
    assert sorted(p.name for p in inp.rglob("*")) == before


def test_rows_outside_declared_splits_are_reported(make_input, tmp_path):
    """Examples in no declared split are counted in the validation report, not dropped silently."""
    out = tmp_path / "out"

    def mutate(c):
        c["evidence"][0]["columns"]["split"] = "task"  # slices a/b double as split labels here
        c["splits"] = {"confirmatory": "a"}

    assert run(["run", "--input", str(make_input(mutate=mutate)), "--output", str(out)]) in (0, 11)
    check = next(
        c for c in load(out, "validation_report.json")["checks"] if c["id"] == "split-unassigned"
    )
    assert (
        check["status"] == "warn"
        and "100 examples" in check["message"]
        and "'b'" in check["message"]
    )


def _split_by_task(make_input, labels: tuple[str, ...], out):
    """A run on 600 examples whose task column (cycling through ``labels``) is the split column,
    declared ``confirmatory: holdout``; the candidate scores 0 on every example not labelled
    exactly ``holdout``. Returns (exit code, decision)."""
    data = simulate(600, slices=labels)
    data["cand"]["correct"][data["cand"]["task"] != "holdout"] = 0.0

    def mutate(c):
        c["evidence"][0]["columns"]["split"] = "task"
        c["evidence"][0]["columns"].pop("slice")
        c["splits"] = {"confirmatory": "holdout"}

    inp = make_input(data=data, mutate=mutate)
    return run(["run", "--input", str(inp), "--output", str(out)]), load(out)


def test_a_split_label_differing_only_by_case_blocks(make_input, tmp_path):
    """Every third example labelled 'Holdout' (candidate scored 0) next to the declared
    'holdout' BLOCKs naming the label and its 200 examples, instead of being dropped (trial 7)."""
    code, decision = _split_by_task(make_input, ("holdout", "holdout", "Holdout"), tmp_path / "out")
    assert (code, decision["run_class"]) == (12, "BLOCK")
    gate = next(
        g for g in decision["run_gates"] if g["id"] == "hard:contract-evidence:split-labels"
    )
    assert "'Holdout' (200 examples)" in gate["reason"] and "splits.confirmatory" in gate["reason"]


def test_a_distinct_undeclared_split_label_only_notes(make_input, tmp_path):
    """A 'train' split the contract leaves out is dropped with a note, not a BLOCK."""
    code, decision = _split_by_task(make_input, ("holdout", "holdout", "train"), tmp_path / "out")
    assert decision["run_class"] != "BLOCK" and code != 12
    assert all("split-labels" not in g["id"] for g in decision["run_gates"])


@pytest.mark.parametrize(
    "label", ["ho\u200bldout", "hold\u043eut", "hold\u2010out", "hoIdout", "ho1dout", "h0ldout"]
)
def test_a_split_label_with_invisible_lookalike_or_dash_blocks(make_input, tmp_path, label):
    """A zero-width space, a Cyrillic 'о', a Unicode hyphen (trial 2, 4), a capital 'I' or a
    digit '1' for 'l' or a digit '0' for 'o' (fresh-user trial) in 'holdout' BLOCKs."""
    code, decision = _split_by_task(make_input, ("holdout", "holdout", label), tmp_path / "out")
    assert (code, decision["run_class"]) == (12, "BLOCK")
    gate = next(
        g for g in decision["run_gates"] if g["id"] == "hard:contract-evidence:split-labels"
    )
    assert f"{quoted(label)} (200 examples)" in gate["reason"]


def _slice_by_task(make_input, labels: tuple[str, ...], out):
    """A run on 600 examples cycling through task ``labels`` with protected slice ``summ``; the
    candidate scores 0 on every example whose task is the third label. Returns (exit, decision)."""
    data = simulate(600, slices=labels)
    data["cand"]["correct"][data["cand"]["task"] == labels[2]] = 0.0

    def mutate(c):
        c["protected_slices"] = [{"value": "summ", "margin_abs": 0.05}]

    inp = make_input(data=data, mutate=mutate)
    return run(["run", "--input", str(inp), "--output", str(out)]), load(out)


@pytest.mark.parametrize("label", ["Summ", "s\u00fcmm", "summ\u200b"])
def test_a_protected_slice_label_that_folds_to_the_declared_one_blocks(make_input, tmp_path, label):
    """Every third example labelled 'Summ' (candidate scored 0) beside protected 'summ' BLOCKs
    instead of leaving the slice test without them (trial 2, defect 1)."""
    code, decision = _slice_by_task(make_input, ("summ", "qa", label), tmp_path / "out")
    assert (code, decision["run_class"]) == (12, "BLOCK")
    gate = next(
        g for g in decision["run_gates"] if g["id"] == "hard:contract-evidence:slice-labels"
    )
    assert f"{quoted(label)} (200 examples)" in gate["reason"]
    assert "protected_slices[0].value" in gate["reason"]


def test_a_distinct_slice_label_only_notes(make_input, tmp_path):
    """A 'summary' task beside protected 'summ' is another slice: no slice-labels gate."""
    code, decision = _slice_by_task(make_input, ("summ", "qa", "summary"), tmp_path / "out")
    assert code != 12 and all("slice-labels" not in g["id"] for g in decision["run_gates"])


def _relabel_candidate(inp, label: str) -> None:
    """Rewrite every third candidate row of the results CSV as policy ``label``, scored 0."""
    path = inp / "evidence" / "results.csv"
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines[1:], start=1):
        cells = line.split(",")
        if cells[1] == "cand" and int(cells[0][2:]) % 3 == 0:
            cells[1], cells[4] = label, "0.0"
            lines[i] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("label", ["CAND", "c\u0430nd"])
def test_a_policy_label_that_folds_to_a_contract_policy_blocks(make_input, tmp_path, label):
    """Candidate rows labelled 'CAND' or with a Cyrillic 'а', scored 0, BLOCK instead of being
    dropped as an undeclared policy (trial 2, defect 3)."""
    inp = make_input(data=simulate(600))
    _relabel_candidate(inp, label)
    out = tmp_path / "out"
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    gate = next(
        g for g in load(out)["run_gates"] if g["id"] == "hard:contract-evidence:policy-labels"
    )
    assert f"{quoted(label)} (200 examples)" in gate["reason"]


def _metric_labelled(tmp_path, label: str, *, wide: bool = False):
    """A trial's input: 100 questions, the candidate 0.3 worse on the 30 whose faithfulness rows
    are labelled ``label`` and slightly better on the rest; cost 0.010 → 0.007. Long layout (one
    file, a metric column), or wide (the 30 in a second file whose mapping names ``label``)."""
    root = tmp_path / "in"
    (root / "policies").mkdir(parents=True)
    for policy, k in (("prod", 5), ("topk3", 3)):
        (root / "policies" / f"{policy}.json").write_text(f'{{"top_k": {k}}}')
    rows: list[tuple[str, str, str, float]] = []  # the trial's order: q0 prod faithfulness first
    for i in range(100):
        b, name = 0.5 + 0.4 * ((i * 37) % 100) / 100, label if i < 30 else "faithfulness"
        c = b - 0.3 if i < 30 else b + 0.03 + ((i * 53) % 7 - 3) / 50
        rows += [(f"q{i}", "prod", name, b), (f"q{i}", "topk3", name, c)]
        rows += [(f"q{i}", "prod", "cost_usd", 0.010), (f"q{i}", "topk3", "cost_usd", 0.007)]
    files = {"evals": rows}
    if wide:  # the 30 questions in a second file (rows of one question are adjacent)
        files = {"evals": rows[120:], "batch2": rows[:120]}
    sources = []
    for name, part in files.items():
        source = {"id": name, "path": f"{name}.csv", "format": "csv"}
        if wide:
            metric = label if name == "batch2" else "faithfulness"
            cells: dict[tuple[str, str], dict[str, float]] = {(q, p): {} for q, p, _, _ in part}
            for q, p, m, v in part:
                cells[(q, p)]["cost" if m == "cost_usd" else "faith"] = v
            lines = [f"{q},{p},{v['faith']:.4f},{v['cost']:.3f}" for (q, p), v in cells.items()]
            text = "qid,policy,faith,cost\n" + "\n".join(lines)
            source |= {"columns": {"example_id": "qid", "policy_id": "policy"}}
            source |= {"metrics": {"faith": metric, "cost": "cost_usd"}}
        else:
            text = "qid,policy,metric,value\n" + "\n".join(
                f"{q},{p},{m},{v:.4f}" for q, p, m, v in part
            )
            source |= {"layout": "long", "columns": {"example_id": "qid", "policy_id": "policy"}}
            source["columns"] |= {"metric": "metric", "value": "value"}
        (root / f"{name}.csv").write_text(text + "\n")
        sources.append(source)
    contract = {
        "id": "long",
        "version": "1",
        "baseline": {"policy_id": "prod", "config": "policies/prod.json"},
        "candidates": [{"policy_id": "topk3", "config": "policies/topk3.json"}],
        "evidence": sources,
        "quality_metrics": [{"id": "faithfulness", "margin_abs": 0.02}],
        "operational_metrics": [{"id": "cost_usd", "unit": "usd"}],
        "claims": {"join": "any", "items": [{"kind": "cost-reduction", "metric": "cost_usd"}]},
        "evidence_class": "confirmatory",
    }
    (root / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
    return root


@pytest.mark.parametrize(
    ("label", "wide"),
    [
        ("Faithfulness", False),
        ("faith\u200bfulness", False),
        ("Faithfulness", True),
        ("faithfuIness", False),
        ("faithfu1ness", False),
        ("fa\u0131thfulness", False),
        ("faithfuIness", True),
    ],
)
def test_a_metric_label_that_folds_to_a_declared_metric_blocks(tmp_path, label, wide):
    """The candidate's worst 30 questions labelled 'Faithfulness' (or with a zero-width space, a
    capital 'I' or digit '1' for 'l', a dotless 'ı') beside declared 'faithfulness' BLOCK naming
    the contract key, the label (escaped), its count and a row, instead of PROMOTEing on the
    other 70 with a note (trial, metric labels)."""
    out = tmp_path / "out"
    assert (
        run(
            ["run", "--input", str(_metric_labelled(tmp_path, label, wide=wide))]
            + ["--output", str(out)]
        )
        == 12
    )
    gate = next(
        g for g in load(out)["run_gates"] if g["id"] == "hard:contract-evidence:metric-labels"
    )
    where = "batch2.csv row 1" if wide else "evals.csv row 1"
    assert gate["reason"].startswith(
        "the contract contradicts the evidence: contract.yaml: quality_metrics[0].id (line "
    )
    assert (
        f"metric 'faithfulness' is declared, but the evidence also labels "
        f"{quoted(label)} (30 examples, e.g. {where})" in gate["reason"]
    )


def test_a_distinct_metric_label_only_notes(tmp_path):
    """Rows of a metric 'faithfulness_v2' do not fold to 'faithfulness': no metric-labels gate,
    only the undeclared-metrics note (the declared metric is tested on the other 70)."""
    out = tmp_path / "out"
    run(
        ["run", "--input", str(_metric_labelled(tmp_path, "faithfulness_v2")), "--output", str(out)]
    )
    assert all("metric-labels" not in g["id"] for g in load(out)["run_gates"])
    checks = load(out, "validation_report.json")["checks"]
    assert any(
        c["id"] == "undeclared-metrics" and "faithfulness_v2" in c["message"] for c in checks
    )


def test_a_distinct_policy_label_only_notes(make_input, tmp_path):
    """Rows of a third policy 'other' are noted as undeclared, not a policy-labels BLOCK (the
    candidate's missing rows still fail its pairing coverage)."""
    inp = make_input(data=simulate(600))
    _relabel_candidate(inp, "other")
    out = tmp_path / "out"
    run(["run", "--input", str(inp), "--output", str(out)])
    assert all("policy-labels" not in g["id"] for g in load(out)["run_gates"])
    checks = load(out, "validation_report.json")["checks"]
    assert any(c["id"] == "undeclared-policies" and "other" in c["message"] for c in checks)


def test_infinite_values_counted_in_validation_report(make_input, tmp_path):
    """Infinite values appear in missing_values (reason inf) like NaN and nulls."""
    data = simulate(200)
    data["cand"]["correct"][3] = np.inf
    out = tmp_path / "out"
    inp = make_input(
        data=data, mutate=lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"})
    )
    run(["run", "--input", str(inp), "--output", str(out)])
    mv = load(out, "validation_report.json")["missing_values"]
    assert {"policy_id": "cand", "metric": "correct", "reason": "inf", "count": 1} in mv


def test_non_finite_gate_names_first_file_and_row(make_input, tmp_path):
    """The non-finite-values gate names where the first missing value is."""
    data = simulate(200)
    data["cand"]["correct"][4] = np.nan
    out = tmp_path / "out"
    assert run(["run", "--input", str(make_input(data=data)), "--output", str(out)]) == 12
    gate = next(
        g for g in load(out)["candidates"][0]["gates"] if g["id"] == "hard:non-finite-values"
    )
    assert "evidence/results.csv row 205" in gate["reason"]


def test_report_lists_source_notes(make_input, tmp_path):
    """report.md lists how each evidence source was read (adapter, rows, pairing)."""
    out = tmp_path / "out"
    run(["run", "--input", str(make_input()), "--output", str(out)])
    text = (out / "report.md").read_text()
    assert (
        "## Evidence sources" in text and "`evidence/results.csv`" in text and "id-column" in text
    )


def test_summary_refuses_tampered_decision(make_input, tmp_path):
    """summary validates decision.json and refuses an exit code that contradicts the class."""
    out = tmp_path / "out"
    run(["run", "--input", str(make_input()), "--output", str(out)])
    d = load(out)
    d["exit_code"] = 999
    (out / "decision.json").write_bytes(orjson.dumps(d))
    assert run(["summary", str(out)]) == 65
    (out / "decision.json").write_bytes(b"[]")
    assert run(["summary", str(out)]) == 65


def test_summary_checks_decision_against_the_manifest(make_input, tmp_path, capsys):
    """A consistent-looking but edited decision.json differs from manifest.json's sha256: 65."""
    out = tmp_path / "out"
    run(["run", "--input", str(make_input()), "--output", str(out)])
    capsys.readouterr()
    d = load(out)
    d["summary"] = d["summary"] + " (edited)"
    (out / "decision.json").write_bytes(orjson.dumps(d))
    assert run(["summary", str(out)]) == 65
    err = capsys.readouterr().err
    assert "manifest.json records" in err and "ragwarrant verify" in err
    manifest = (out / "manifest.json").read_bytes()
    (out / "manifest.json").unlink()  # without a manifest the directory is not a result
    assert run(["summary", str(out)]) == 66
    assert "is not a completed run" in capsys.readouterr().err
    d.update(run_class="PROMOTE", exit_code=0)  # the candidates' classes do not give PROMOTE
    d["candidates"] = [{**c, "class": "REJECT"} for c in d["candidates"]]
    edited = orjson.dumps(d)
    (out / "decision.json").write_bytes(edited)
    m = orjson.loads(manifest)
    for f in m["outputs"]:
        if f["path"] == "decision.json":
            f.update(sha256=hashlib.sha256(edited).hexdigest(), bytes=len(edited))
    (out / "manifest.json").write_bytes(orjson.dumps(m))
    assert run(["summary", str(out)]) == 65
    assert "contradicts the candidates' classes" in capsys.readouterr().err


def test_schemas_write_to_missing_directory_is_usage_error(tmp_path):
    """schemas --write into a directory that does not exist is a usage error, not a crash."""
    assert run(["schemas", "--write", str(tmp_path / "nope")]) == 64


def test_report_shows_missing_value_counts(make_input, tmp_path):
    """NaN and null scores are counted per metric and policy in report.md, not only in JSON."""
    data = simulate(200)
    data["cand"]["correct"][:3] = np.nan
    out = tmp_path / "out"
    inp = make_input(
        data=data, mutate=lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"})
    )
    run(["run", "--input", str(inp), "--output", str(out)])
    assert "| cand | correct | null | 3 |" in (out / "report.md").read_text()
    assert {"policy_id": "cand", "metric": "correct", "reason": "null", "count": 3} in load(out)[
        "missing_values"
    ]


def test_validation_report_records_output_checks(make_input, tmp_path):
    """Checks on the outputs (schemas, publication hygiene) are recorded with their result."""
    out = tmp_path / "out"
    run(["run", "--input", str(make_input()), "--output", str(out)])
    checks = {c["id"]: c["status"] for c in load(out, "validation_report.json")["checks"]}
    assert checks["output-schemas"] == "pass" and checks["publication-hygiene"] == "pass"
    assert checks["engine-selftest"] == "pass" and checks["contract-schema"] == "pass"


def test_promotion_class_cannot_be_below_frozen_observation(make_input, tmp_path):
    """fixture or development evidence supports no release decision: it cannot PROMOTE."""
    out = tmp_path / "out"
    inp = make_input(
        mutate=lambda c: c.update({"evidence_class": "fixture", "promotion_min_class": "fixture"})
    )
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 78
    assert "promotion_min_class" in load(out)["error"]["message"]


def test_error_termination_message_and_log_pass_publication_hygiene(make_input, tmp_path, capsys):
    """A secret inside an error message stays out of the termination message and the log event."""
    secret = "AKIAABCDEFGHIJKLMNOP"
    inp = make_input(mutate=lambda c: c["evidence"][0].update({"path": f"../{secret}.csv"}))
    msg = tmp_path / "termination-log"
    out = tmp_path / "out"
    code = run(
        ["run", "--input", str(inp), "--output", str(out), "--termination-message-path", str(msg)]
    )
    assert code == 78
    assert secret not in msg.read_text() and msg.read_text().startswith("ERROR")
    logged = [line for line in capsys.readouterr().err.splitlines() if '"run_failed"' in line]
    assert logged and secret not in logged[0]
    for name in ("decision.json", "validation_report.json", "report.md"):
        assert secret not in (out / name).read_text()


def test_report_shows_validation_notes(make_input, tmp_path):
    """Caveats found while validating (unused split rows) appear in report.md, not only in JSON."""
    out = tmp_path / "out"

    def mutate(c):
        c["evidence"][0]["columns"]["split"] = "task"
        c["splits"] = {"confirmatory": "a"}

    run(["run", "--input", str(make_input(mutate=mutate)), "--output", str(out)])
    report = (out / "report.md").read_text()
    assert (
        "## Notes from validation" in report
        and "100 examples are in no declared split role" in report
    )


def test_secret_named_config_value_not_in_report(make_input, tmp_path):
    """A secret-named policy config field never shows its value in report.md."""
    out = tmp_path / "out"
    cfg = {
        "base": {"model": "m", "db_password": "hunter2xyz-one"},
        "cand": {"model": "m", "db_password": "hunter2xyz-two"},
    }
    run(["run", "--input", str(make_input(configs=cfg)), "--output", str(out)])
    for name in ("report.md", "decision.json", "validation_report.json"):
        assert "hunter2xyz" not in (out / name).read_text()
    assert "`db_password`: values not shown" in (out / "report.md").read_text()


def test_absent_protected_slice_lists_the_slices_present(make_input, tmp_path):
    """A protected slice missing from the evidence names the slices that exist (e.g. a typo)."""
    out = tmp_path / "out"
    inp = make_input(
        mutate=lambda c: c.update({"protected_slices": [{"value": "c", "min_paired_n": 30}]})
    )
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    gate = next(
        g for g in load(out)["candidates"][0]["gates"] if g["id"] == "hard:slice-paired-n:correct@c"
    )
    assert "its slices: 'a', 'b'" in gate["reason"]


def test_small_protected_slice_is_inconclusive_with_the_pairs_needed(make_input, tmp_path):
    """A protected slice below its min_paired_n: exit 11 (INCONCLUSIVE), not 12 (BLOCK), and
    the report says how many more pairs the slice needs."""
    out = tmp_path / "out"
    inp = make_input(
        mutate=lambda c: c.update({"protected_slices": [{"value": "a", "min_paired_n": 5000}]})
    )
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 11
    gate = next(
        g for g in load(out)["candidates"][0]["gates"] if g["id"] == "noninferiority:correct@a"
    )
    assert gate["status"] == "inconclusive" and gate["details"]["min_paired_n"] == 5000
    assert gate["more_paired_n"] == 5000 - gate["n"]
    assert f"{5000 - gate['n']} more paired examples" in (out / "report.md").read_text()


def test_claim_ceiling_says_what_would_change_it(make_input, tmp_path):
    """An INCONCLUSIVE from the claim ceiling says which evidence class would change it."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c.update({"evidence_class": "development"}))
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 11
    assert "evidence of class confirmatory or higher" in (out / "report.md").read_text()


def test_p_values_are_never_zero(make_input, tmp_path):
    """A bootstrap p-value is at least 1 / (B + 1), never 0."""
    out = tmp_path / "out"
    run(["run", "--input", str(make_input()), "--output", str(out)])
    ps = [g["p_value"] for g in load(out)["candidates"][0]["gates"] if g.get("p_value") is not None]
    assert ps and min(ps) >= 1 / 2001


def test_example_ids_with_white_space_are_reported(make_input, tmp_path):
    """An id with a leading space is kept as it is (never trimmed) and reported."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["quality_metrics"][0].update({"on_missing": "exclude"}))
    csv = inp / "evidence" / "results.csv"
    lines = csv.read_text().splitlines()
    lines[250] = '" ' + lines[250].split(",", 1)[0] + '",' + lines[250].split(",", 1)[1]
    csv.write_text("\n".join(lines) + "\n")
    run(["run", "--input", str(inp), "--output", str(out)])
    notes = load(out)["notes"]
    assert any("1 example ids start or end with white space" in n for n in notes)


def test_costs_too_large_to_aggregate_block_without_a_warning(make_input, tmp_path, capsys):
    """Costs of 1e300 BLOCK on hard:value-range naming file, row and metric, with no numpy
    overflow warning (they gave one, and an INCONCLUSIVE whose bounds contradicted it)."""
    import json
    import warnings

    from ragwarrant.cli import main

    data = simulate(200)
    for cols in data.values():
        cols["cost_usd"] = cols["cost_usd"] * 1e302
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code = main(["run", "--input", str(make_input(data=data)), "--output", str(out)])
    assert code == 12
    decision = json.loads((out / "decision.json").read_text())
    gate = next(g for g in decision["candidates"][0]["gates"] if g["id"] == "hard:value-range")
    assert gate["status"] == "fail"
    assert gate["reason"].startswith("400 values too large to aggregate over 200 examples")
    from ragwarrant.stats.magnitude import max_safe_magnitude

    first = repr(float(data["base"]["cost_usd"][0]))  # unrounded
    limit = f"{max_safe_magnitude(200):.3g}"
    assert gate["reason"].endswith(
        f"first: evidence/results.csv row 1: cost_usd = {first} for policy base exceeds {limit} "
        "in magnitude"
    )
    assert gate["details"] == {"cost_usd.too_large.base": 200, "cost_usd.too_large.cand": 200}


def test_a_lookalike_slice_name_reads_differently_in_the_reason(make_input, tmp_path):
    """A protected slice written with a Cyrillic 'а' (looks like the evidence's 'a') BLOCKs the
    run as a near miss, the declared value named with its escape so the two do not read alike."""
    out = tmp_path / "out"
    inp = make_input(
        mutate=lambda c: c.update({"protected_slices": [{"value": "\u0430", "min_paired_n": 30}]})
    )
    assert run(["run", "--input", str(inp), "--output", str(out)]) == 12
    gate = next(
        g for g in load(out)["run_gates"] if g["id"] == "hard:contract-evidence:slice-labels"
    )
    assert (
        "slice '\\u0430' is declared" in gate["reason"] and "'a' (100 examples)" in gate["reason"]
    )
