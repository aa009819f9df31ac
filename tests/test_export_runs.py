"""End to end on the handbook example's real exports, edited as a user's contract would be:
scale tolerance at a bound, evidence-layer "did you mean", the right hints, role warnings."""

from __future__ import annotations

import csv
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import yaml

from ragwarrant import cli
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "handbook-exports"
RAGAS = ("ragas-baseline", "ragas-candidate")
EXPORTS = REPO / "tests" / "data" / "exports"


def _input(tmp_path: Path, edit: Callable[[dict], None] | None = None) -> Path:
    """A copy of the handbook example with its contract edited by ``edit``."""
    inp = tmp_path / "in"
    shutil.copytree(EXAMPLE, inp)
    contract = yaml.safe_load((inp / "contract.yaml").read_text(encoding="utf-8"))
    if edit is not None:
        edit(contract)
    (inp / "contract.yaml").write_text(yaml.safe_dump(contract), encoding="utf-8")
    return inp


def _run(inp: Path, out: Path) -> tuple[int, dict]:
    code = cli.main(["run", "--input", str(inp), "--output", str(out)])
    return code, orjson.loads((out / "decision.json").read_bytes())


def _source(contract: dict, source_id: str) -> dict:
    return next(s for s in contract["evidence"] if s["id"] == source_id)


def _with_bleu(contract: dict) -> None:
    """Read Ragas' bleu_score (which holds 1.0000000000000004) as a [0, 1] quality metric."""
    for sid in RAGAS:
        _source(contract, sid)["metrics"]["bleu_score"] = "bleu_score"
    contract["quality_metrics"].append(
        {"id": "bleu_score", "direction": "higher_is_better", "scale": [0, 1], "margin_abs": 0.1}
    )


def _gates(decision: dict) -> dict[str, dict]:
    gates = {g["id"]: g for g in decision["run_gates"]}
    for cand in decision["candidates"]:
        gates.update({g["id"]: g for g in cand["gates"]})
    return gates


def test_bleu_rounded_above_one_is_on_the_scale(tmp_path: Path) -> None:
    """Ragas' bleu_score of 1.0000000000000004 lies on [0, 1] within the float tolerance."""
    csv = (EXAMPLE / "evidence" / "ragas" / "ragas_evaluate_candidate.csv").read_text("utf-8")
    assert "1.0000000000000004" in csv  # the real export holds it
    code, decision = _run(_input(tmp_path, _with_bleu), tmp_path / "out")
    gates = _gates(decision)
    assert gates["hard:value-range"]["status"] == "pass"
    assert "hard:contract-evidence:scales" not in gates  # a run gate only when it fails
    assert code == 11 and "noninferiority:bleu_score" in gates


def test_value_beyond_the_tolerance_is_refused_unrounded(tmp_path: Path) -> None:
    """1.0000001 is off [0, 1]; the reason prints it as written, not rounded to 1."""
    inp = _input(tmp_path, _with_bleu)
    path = inp / "evidence" / "ragas" / "ragas_evaluate_candidate.csv"
    text = path.read_text("utf-8")
    path.write_text(text.replace("1.0000000000000004", "1.0000001", 1), "utf-8")
    code, decision = _run(inp, tmp_path / "out")
    gate = _gates(decision)["hard:contract-evidence:scales"]
    assert code == 12 and gate["status"] == "fail"
    assert "[0.0, 1.0000001]" in gate["reason"] and "'bleu_score'" in gate["reason"]
    assert "ragas_evaluate_candidate.csv row" in gate["reason"]
    assert "(policy candidate: 1.0000001)" in gate["reason"]


def _readable_reason(decision: dict, source_id: str) -> str:
    gate = _gates(decision)[f"hard:evidence-readable:{source_id}"]
    assert gate["status"] == "fail"
    return str(gate["reason"])


def test_wrong_metric_name_lists_the_metrics_and_the_closest(tmp_path: Path) -> None:
    """A misspelt Ragas metric is refused with the metrics the file holds and a "did you mean"."""

    def misspell(contract: dict) -> None:
        metrics = _source(contract, "ragas-baseline")["metrics"]
        metrics["non_llm_context_recal"] = metrics.pop("non_llm_context_recall")

    code, decision = _run(_input(tmp_path, misspell), tmp_path / "out")
    reason = _readable_reason(decision, "ragas-baseline")
    assert code == 12
    assert "has no metric 'non_llm_context_recal'; did you mean 'non_llm_context_recall'?" in (
        reason
    )
    assert "metrics found: non_llm_string_similarity, rouge_score(mode=fmeasure), bleu_score" in (
        reason
    )


def test_wrong_id_column_lists_the_columns_and_the_closest(tmp_path: Path) -> None:
    """A misspelt id column (id-column pairing) names the columns found and the closest one."""

    def misspell(contract: dict) -> None:
        src = _source(contract, "ragas-candidate")
        src["pairing"] = "id-column"
        src["columns"] = {"example_id": "user_inputs"}

    code, decision = _run(_input(tmp_path, misspell), tmp_path / "out")
    reason = _readable_reason(decision, "ragas-candidate")
    assert code == 12
    assert "has no column 'user_inputs'; did you mean 'user_input'? (columns found: " in reason


def _two_policy_ragas(inp: Path) -> None:
    """Both real Ragas CSVs in one file, a ``pipeline`` column naming each row's policy (the
    user-augmented shape), in place of the two per-policy sources."""
    folder = inp / "evidence" / "ragas"
    rows: list[list[str]] = []
    header: list[str] = []
    for policy in ("baseline", "candidate"):
        with (folder / f"ragas_evaluate_{policy}.csv").open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = [*next(reader), "pipeline"]
            rows += [[*r, policy] for r in reader]
    with (folder / "ragas_both.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])


def _one_ragas_source(contract: dict, **fields: object) -> None:
    first = _source(contract, "ragas-baseline")
    contract["evidence"] = [s for s in contract["evidence"] if s["id"] not in RAGAS]
    both = {k: v for k, v in first.items() if k != "policy"}
    both.update(id="ragas", path="evidence/ragas/ragas_both.csv", **fields)
    contract["evidence"].insert(0, both)


def test_two_policy_ragas_file_is_told_to_map_its_policy_column(tmp_path: Path) -> None:
    """The hint names the column holding the policies, and following it decides."""
    inp = _input(tmp_path, _one_ragas_source)
    _two_policy_ragas(inp)
    code, decision = _run(inp, tmp_path / "out")
    gate = _gates(decision)["hard:evidence-readable:ragas"]
    assert code == 12 and "one Ragas file per policy" not in gate["reason"]
    assert "column 'pipeline' names the contract's policies: map it with " in gate["reason"]
    assert "'columns: {policy_id: pipeline}'" in gate["reason"]

    fixed = _input(
        tmp_path / "fixed", lambda c: _one_ragas_source(c, columns={"policy_id": "pipeline"})
    )
    _two_policy_ragas(fixed)
    code, decision = _run(fixed, tmp_path / "fixed" / "out")
    assert code == 11 and decision["candidates"][0]["class"] == "INCONCLUSIVE"


def test_policy_id_from_a_file_name_is_told_to_match_the_telemetry(tmp_path: Path) -> None:
    """Telemetry naming baseline and candidate, and a third contract policy named after a
    file: the hint asks for the telemetry's ids, not for 'policy:' (the file holds both arms)."""

    def add(contract: dict) -> None:
        contract["candidates"].append(
            {"policy_id": "ragas_evaluate_baseline", "config": "policies/third.yaml"}
        )

    inp = _input(tmp_path, add)
    config = (inp / "policies" / "candidate.yaml").read_text("utf-8")
    (inp / "policies" / "third.yaml").write_text(config + "note: third\n", "utf-8")
    code, decision = _run(inp, tmp_path / "out")
    reason = _readable_reason(decision, "telemetry")
    assert code == 12 and "declares it with 'policy:'" not in reason
    assert "no row of policy 'ragas_evaluate_baseline'" in reason
    assert "the file names policies 'baseline', 'candidate': give the contract's " in reason
    assert "'ragas_evaluate_baseline' the id the file uses for that policy" in reason


def _warnings(out: Path) -> dict[str, list[str]]:
    """Validation-report warnings by check id."""
    report = orjson.loads((out / "validation_report.json").read_bytes())
    found: dict[str, list[str]] = {}
    for check in report["checks"]:
        if check["status"] == "warn":
            found.setdefault(check["id"], []).append(check["message"])
    return found


ROLE_WARNINGS = ("contract-direction-implausible", "contract-role-name", "evidence-roles-swapped")


def test_the_example_as_written_draws_no_role_warning(tmp_path: Path) -> None:
    """Right directions and roles: none of the three warnings."""
    code, _ = _run(EXAMPLE, tmp_path / "out")
    assert code == 11
    assert not set(_warnings(tmp_path / "out")) & set(ROLE_WARNINGS)


def test_token_f1_declared_lower_is_better_is_warned(tmp_path: Path) -> None:
    """An F1 declared lower_is_better is a warning (and a note), not a BLOCK."""

    def flip(contract: dict) -> None:
        next(m for m in contract["quality_metrics"] if m["id"] == "token_f1")["direction"] = (
            "lower_is_better"
        )

    code, decision = _run(_input(tmp_path, flip), tmp_path / "out")
    [message] = _warnings(tmp_path / "out")["contract-direction-implausible"]
    assert code in (10, 11)  # decided: the warning does not block
    assert message.startswith("quality_metrics[2].direction: 'token_f1' is declared lower_is_")
    assert "did you mean direction: higher_is_better?" in message
    assert message in decision["notes"]


def test_roles_swapped_are_warned_by_name_and_by_evidence(tmp_path: Path, capsys) -> None:
    """The new policy listed as the baseline: both names and the evidence say so, in the
    validation report, the decision's notes and the log."""

    def swap(contract: dict) -> None:
        contract["baseline"], contract["candidates"] = (
            contract["candidates"][0],
            [contract["baseline"]],
        )

    code, decision = _run(_input(tmp_path, swap), tmp_path / "out")
    warnings = _warnings(tmp_path / "out")
    assert code == 10
    assert sorted(warnings["contract-role-name"]) == [
        "baseline.policy_id: policy 'candidate' is the baseline but its name says candidate "
        "(candidate): if it is the candidate, swap the roles, or every 'keep the baseline' / "
        "'promote' reads backwards",
        "candidates[0].policy_id: policy 'baseline' is a candidate but its name says baseline "
        "(baseline): if it is the baseline, swap the roles, or every 'keep the baseline' / "
        "'promote' reads backwards",
    ]
    [swapped] = warnings["evidence-roles-swapped"]
    assert swapped.startswith(
        "the baseline 'candidate' beats candidate 'baseline' on every quality metric, most by "
        "more than the margin (gold_context_reciprocal_rank +0.422, id_based_context_recall +0.267"
    )
    assert swapped in decision["notes"]
    events = [
        orjson.loads(line) for line in capsys.readouterr().err.splitlines() if line[:1] == "{"
    ]
    logged = [e for e in events if e.get("event") == "contract_warning"]
    assert {e["check"] for e in logged} == {"contract-role-name", "evidence-roles-swapped"}
    assert swapped in {e["message"] for e in logged}


def test_an_all_empty_csv_column_is_named_empty_not_absent(tmp_path: Path) -> None:
    """A Ragas metric that raised on every row (an all-empty CSV column, as JSON lines write
    null) is read as a metric whose every value is missing, and the source's notes name it."""
    inp = _input(tmp_path)
    path = inp / "evidence" / "ragas" / "ragas_evaluate_baseline.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("non_llm_context_recall")
    for row in rows[1:]:
        row[col] = ""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    code, decision = _run(inp, tmp_path / "out")
    assert code == 12
    assert "hard:evidence-readable:ragas-baseline" not in _gates(decision)  # no "has no metric"
    [source] = [s for s in decision["sources"] if s["source_id"] == "ragas-baseline"]
    assert (
        "column 'non_llm_context_recall' is empty in every row: metric 'non_llm_context_recall' "
        "has no value (30 rows, all missing)"
    ) in source["notes"]
    assert _gates(decision)["hard:pairing-coverage"]["status"] == "fail"


def _langsmith_repetitions(contract: dict) -> None:
    """Quality from two LangSmith experiments run with num_repetitions=3 (token_f1 only)."""
    contract["evidence"] = [
        {
            "id": f"langsmith-{p}",
            "path": f"evidence/langsmith/langsmith_repetitions_{p}.csv",
            "format": "csv",
            "adapter": "langsmith",
            "policy": p,
            "metrics": {"feedback.token_f1": "token_f1"},
        }
        for p in ("baseline", "candidate")
    ]
    contract["quality_metrics"] = [m for m in contract["quality_metrics"] if m["id"] == "token_f1"]
    contract["claims"]["items"] = [{"kind": "quality-improvement", "metric": "token_f1"}]
    for key in ("operational_metrics", "hard_disqualifiers", "prices"):
        contract.pop(key, None)


def test_langsmith_repetitions_decide_on_whole_examples(tmp_path: Path) -> None:
    """Three runs per example pair run by run and resample as 30 clusters, not 90 pairs."""
    inp = _input(tmp_path, _langsmith_repetitions)
    (inp / "evidence" / "langsmith").mkdir()
    for p in ("baseline", "candidate"):
        name = f"langsmith_repetitions_{p}.csv"
        shutil.copy(EXPORTS / "langsmith" / name, inp / "evidence" / "langsmith" / name)
    code, decision = _run(inp, tmp_path / "out")
    gate = _gates(decision)["noninferiority:token_f1"]
    assert code in (0, 10, 11), decision.get("error")
    assert "hard:duplicate-rows" not in {
        g for g, r in _gates(decision).items() if r["status"] == "fail"
    }
    assert gate["n"] == 90
    assert (gate["details"]["units"], gate["details"]["resampled_units"]) == ("clusters", 30)
    assert "cluster bootstrap" in gate["method"]


def test_otlp_json_lines_with_a_trace_per_request_decide(tmp_path: Path) -> None:
    """Issue 30's tracker case: the example's telemetry as OTLP JSON lines, each request its own
    trace (a root span with the ids, an LLM child), decides with finite bounds (it ended in exit
    70 with NaN bounds)."""
    from tests.adapters.test_otel import _otlp_lines

    inp = _input(tmp_path)
    parquet = inp / "evidence" / "otel" / "otel_genai_telemetry.parquet"
    rows = pq.read_table(parquet).to_pylist()
    assert len({r["trace_id"] for r in rows}) == len(rows)  # one trace per request
    (inp / "evidence" / "otel" / "spans.jsonl").write_bytes(_otlp_lines(rows))
    parquet.unlink()
    contract = yaml.safe_load((inp / "contract.yaml").read_text(encoding="utf-8"))
    source = _source(contract, "telemetry")
    source.update(path="evidence/otel/spans.jsonl", format="jsonl", adapter="otel")
    source.pop("columns", None)  # OTLP: the ids are span attributes, not columns
    (inp / "contract.yaml").write_text(yaml.safe_dump(contract), encoding="utf-8")
    code, decision = _run(inp, tmp_path / "out")
    assert code in (0, 10, 11), decision.get("error")
    bounds = [
        g[k]
        for g in _gates(decision).values()
        for k in ("lower_bound", "upper_bound")
        if g.get(k) is not None
    ]
    assert bounds and all(math.isfinite(b) for b in bounds)
    assert any(g.startswith("operational:cost_usd") for g in _gates(decision))
