"""Tests of the DeepEval adapter on the real test runs, their other shapes and broken variants."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import orjson
import pyarrow.compute as pc
import pytest

from ragwarrant.adapters import deepeval
from ragwarrant.audit.hygiene import scan_outputs
from ragwarrant.errors import EvidenceError

BASELINE = "deepeval/baseline/test_run_20261129_205103.json"
CANDIDATE = "deepeval/candidate/test_run_20261129_205104.json"


def _run(exports: Path, rel: str = BASELINE) -> dict:
    return orjson.loads((exports / rel).read_bytes())


def _write(tmp_path: Path, data: object, name: str = "run.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _load(make_request, path: Path, **fields):
    fields.setdefault("adapter", "deepeval")
    return deepeval.load(make_request(path, **fields))


def _metric(result, metric: str):
    return result.evidence.filter(pc.equal(result.evidence["metric"], metric))


@pytest.mark.parametrize(("rel", "policy"), [(BASELINE, "baseline"), (CANDIDATE, "candidate")])
def test_real_runs(make_request, exports, rel, policy) -> None:
    """3 display-named metrics × 30 test cases, ids from the test case names, snake_case ids."""
    result = _load(make_request, exports / rel, policy=policy)
    ev = result.evidence
    assert ev.num_rows == 90
    assert set(ev["metric"].to_pylist()) == {
        "exact_match",
        "token_f1",
        "gold_context_reciprocal_rank",
    }
    assert (
        result.provenance.metric_names["Gold Context Reciprocal Rank"]
        == "gold_context_reciprocal_rank"
    )
    assert result.provenance.pairing_method == "id-column"
    assert ev["example_id"][0].as_py() == "q001"
    assert pc.sum(pc.is_null(ev["value"])).as_py() == 0
    # scores equal the run's own metricsScores summary, in order
    summary = {m["metric"]: m["scores"] for m in _run(exports, rel)["metricsScores"]}
    assert _metric(result, "token_f1")["value"].to_pylist() == summary["Token F1"]


def test_absent_retrieval_context_gives_no_contexts(make_request, exports) -> None:
    """Baseline q030's retrievalContext is absent: its texts have no contexts."""
    texts = _load(make_request, exports / BASELINE, policy="baseline").texts.to_pylist()
    assert texts[29]["example_id"] == "q030" and texts[29]["contexts"] is None
    assert len(texts[0]["contexts"]) == 3


def test_operational_fields_on_request(make_request, exports) -> None:
    """tokenCost and completionTime (s) become cost_usd and latency_ms only when asked."""
    plain = _load(make_request, exports / BASELINE, policy="baseline")
    assert "latency_ms" not in plain.evidence["metric"].to_pylist()
    result = _load(
        make_request, exports / BASELINE, policy="baseline", options={"include_operational": True}
    )
    case = _run(exports)["testCases"][0]
    assert math.isclose(
        _metric(result, "latency_ms")["value"][0].as_py(), case["completionTime"] * 1000
    )
    assert _metric(result, "cost_usd")["value"][0].as_py() == case["tokenCost"]


def test_latest_test_run_wrapper(make_request, exports, tmp_path) -> None:
    """.latest_test_run.json wraps the same TestRun in testRunData."""
    p = _write(tmp_path, {"testRunData": _run(exports)}, ".latest_test_run.json")
    result = _load(make_request, p, policy="baseline")
    assert result.evidence.num_rows == 90
    assert "testRunData" in result.provenance.notes[0]


def _to_snake(run: dict) -> dict:
    """EvaluationResult.model_dump(): snake_case test_results with metrics_data."""
    results = []
    for c in run["testCases"]:
        results.append(
            {
                "name": c["name"],
                "success": c["success"],
                "conversational": False,
                "input": c["input"],
                "actual_output": c["actualOutput"],
                "retrieval_context": c.get("retrievalContext"),
                "additional_metadata": c["metadata"],
                "metrics_data": [
                    {
                        "name": m["name"],
                        "threshold": m["threshold"],
                        "success": m["success"],
                        "score": m["score"],
                        "reason": m["reason"],
                        "strict_mode": False,
                        "evaluation_model": None,
                        "error": None,
                        "evaluation_cost": None,
                    }
                    for m in c["metricsData"]
                ],
            }
        )
    return {"test_results": results, "confident_link": None}


def test_model_dump_shape(make_request, exports, tmp_path) -> None:
    """The snake_case model_dump() shape gives the same values as the camelCase file."""
    camel = _load(make_request, exports / BASELINE, policy="baseline")
    snake = _load(make_request, _write(tmp_path, _to_snake(_run(exports))), policy="baseline")
    assert snake.evidence["value"].to_pylist() == camel.evidence["value"].to_pylist()
    assert snake.evidence["example_id"].to_pylist() == camel.evidence["example_id"].to_pylist()


def test_error_absent_nan_and_judge_cost(make_request, exports, tmp_path) -> None:
    """Errored → 'error', missing → 'absent', NaN → 'nan'; evaluationCost is judge cost."""
    run = _run(exports)
    cases = run["testCases"]
    cases[0]["metricsData"][1].update(score=None, error="judge timed out")
    del cases[1]["metricsData"][2]
    cases[2]["metricsData"][0]["score"] = float("nan")
    for m in cases[3]["metricsData"]:
        m["evaluationCost"] = 0.0025
    p = _write(tmp_path, run)  # json.dumps writes NaN as a bare NaN token, as DeepEval would
    result = _load(make_request, p, policy="baseline")
    ev = result.evidence
    reasons = ev.filter(pc.is_valid(ev["missing_reason"]))
    got = sorted(
        zip(
            reasons["example_id"].to_pylist(),
            reasons["metric"].to_pylist(),
            reasons["missing_reason"].to_pylist(),
            strict=True,
        )
    )
    judge_missing = [(f"q{i:03d}", "judge_cost_usd", "absent") for i in range(1, 31) if i != 4]
    assert got == sorted(
        [
            ("q001", "token_f1", "error"),
            ("q002", "gold_context_reciprocal_rank", "absent"),
            ("q003", "exact_match", "nan"),
            *judge_missing,
        ]
    )
    judge = _metric(result, "judge_cost_usd").filter(
        pc.equal(_metric(result, "judge_cost_usd")["example_id"], "q004")
    )
    assert math.isclose(judge["value"][0].as_py(), 0.0075)
    assert any("error" in n for n in result.provenance.notes)


def test_positional_names_fall_back_to_question_hash(make_request, exports, tmp_path) -> None:
    """DeepEval's default names test_case_<n> are positions, not ids: pair by question hash."""
    run = _run(exports)
    for i, c in enumerate(run["testCases"]):
        c["name"] = f"test_case_{i}"
        del c["metadata"]["question_id"]
    result = _load(make_request, _write(tmp_path, run), policy="baseline")
    assert result.provenance.pairing_method == "question-hash"
    assert result.evidence["example_id"][0].as_py().startswith("qh:")


def test_explicit_id_path(make_request, exports) -> None:
    """columns.example_id may point into the metadata."""
    result = _load(
        make_request,
        exports / BASELINE,
        policy="baseline",
        columns={"example_id": "metadata.question_id"},
    )
    assert result.evidence["example_id"][0].as_py() == "q001"


# --- broken variants ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"", "evidence-empty"),
        (b"{not json", "evidence-unparseable"),
        (b'{"identifier": "x"}', "evidence-missing-column"),
        (b'{"testCases": []}', "evidence-empty"),
        (b'{"testCases": [1, 2]}', "evidence-wrong-type"),
        (b"[1, 2]", "evidence-wrong-type"),
    ],
)
def test_malformed_files(make_request, tmp_path, content, code) -> None:
    """Empty, non-JSON and wrongly shaped files each get their own error code."""
    p = tmp_path / "run.json"
    p.write_bytes(content)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert err.value.code == code


def test_wrong_type_score(make_request, exports, tmp_path) -> None:
    """A text score is located by test case and the JSON pointer of the value, glued to the file
    name so the publication-hygiene scan does not withhold it as a host path."""
    run = _run(exports)
    run["testCases"][5]["metricsData"][1]["score"] = "high"
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-wrong-type", 6)
    assert err.value.column == "run.json#/testCases/5/metricsData/1/score"
    text = f"{err.value.message}\n{err.value.column}\n".encode()
    assert scan_outputs({"report.md": text}) == []


def test_duplicated_ids(make_request, exports, tmp_path) -> None:
    """Two test cases with the same name are rejected."""
    run = _run(exports)
    run["testCases"][7]["name"] = run["testCases"][1]["name"]
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", 8)


def test_missing_id(make_request, exports, tmp_path) -> None:
    """An explicit id path that one test case lacks is a null key."""
    run = _run(exports)
    del run["testCases"][3]["metadata"]["question_id"]
    with pytest.raises(EvidenceError) as err:
        _load(
            make_request,
            _write(tmp_path, run),
            policy="baseline",
            columns={"example_id": "metadata.question_id"},
        )
    assert (err.value.code, err.value.row) == ("evidence-null-key", 4)


def test_policy_missing_from_file(make_request, exports) -> None:
    """Declaring the candidate for the baseline's run is caught from metadata.policy."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / BASELINE, policy="candidate")
    assert err.value.code == "evidence-policy-missing"


def test_mixed_policies(make_request, exports, tmp_path) -> None:
    """One test case of another policy is located."""
    run = copy.deepcopy(_run(exports))
    run["testCases"][12]["metadata"]["policy"] = "candidate"
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-mixed-policies", 13)


def test_run_policy_from_hyperparameters(make_request, exports, tmp_path) -> None:
    """A test case without metadata.policy takes the run's hyperparameters.policy."""
    run = copy.deepcopy(_run(exports))
    for case in run["testCases"]:
        del case["metadata"]["policy"]
    run["hyperparameters"] = {"policy": "candidate"}
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    assert (err.value.code, err.value.column) == ("evidence-policy-missing", "metadata.policy_id")


def test_one_policy_file_without_declaration(make_request, exports) -> None:
    """Without 'policy', a file must hold every contract policy; this one holds only baseline."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / BASELINE)
    assert err.value.code == "evidence-policy-missing" and "candidate" in str(err.value)


# --- one value given twice (third s29 fresh-user trial) ----------------------------------------


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_metric_result_given_twice_is_refused(make_request, exports, tmp_path, score) -> None:
    """A second 'Token F1' entry in one case's metricsData used to win silently (lowering or
    raising the arm); refused, naming the case and the JSON pointers of both entries."""
    run = _run(exports)
    mlist = run["testCases"][4]["metricsData"]
    first = next(j for j, m in enumerate(mlist) if m["name"] == "Token F1")
    mlist.append(dict(mlist[first], score=score))
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    e = err.value
    second = f"run.json#/testCases/4/metricsData/{len(mlist) - 1}"
    assert (e.code, e.row, e.column) == ("evidence-duplicate-metric", 5, second)
    assert f"run.json#/testCases/4/metricsData/{first} and {second}" in e.message
    text = f"{e.message}\n{e.column}\n{e.found}\n".encode()
    assert scan_outputs({"report.md": text}) == []  # trial B: the message was withheld


def test_metrics_data_in_both_spellings_is_refused(make_request, exports, tmp_path) -> None:
    """A case holding metricsData and metrics_data: which one holds cannot be told."""
    run = _run(exports)
    case = run["testCases"][2]
    case["metrics_data"] = [dict(m, score=0.0) for m in case["metricsData"]]
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, run), policy="baseline")
    e = err.value
    assert (e.code, e.row, e.column) == (
        "evidence-duplicate-metric",
        3,
        "run.json#/testCases/2/metrics_data",
    )
    text = f"{e.message}\n{e.column}\n{e.found}\n".encode()
    assert scan_outputs({"report.md": text}) == []  # trial B: the message was withheld


@pytest.mark.parametrize(
    ("second", "wrap"), [("test_cases", False), ("test_results", False), ("test_cases", True)]
)
def test_two_test_case_lists_are_refused(make_request, exports, tmp_path, second, wrap) -> None:
    """testCases beside test_cases or test_results in one object is refused, not resolved."""
    run = _run(exports)
    run[second] = run["testCases"][:1]
    data = {"testRunData": run} if wrap else run
    with pytest.raises(EvidenceError) as err:
        _load(make_request, _write(tmp_path, data), policy="baseline")
    at = "/testRunData" if wrap else ""
    column = f"run.json#{at}/{second}"
    assert (err.value.code, err.value.column) == ("evidence-duplicate-metric", column)
