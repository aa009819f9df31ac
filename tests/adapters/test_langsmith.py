"""Tests of the LangSmith adapter: to_pandas tables (CSV, Parquet) and raw JSONL rows."""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import langsmith
from ragwarrant.audit.hygiene import scan_outputs
from ragwarrant.errors import EvidenceError
from tests.adapters.conftest import read_csv_rows, without_column, write_csv_rows

CSV = "langsmith/langsmith_experiment_{p}.csv"
RAW = "langsmith/langsmith_experiment_{p}_rows_raw.jsonl"


def _load(make_request, path: Path, **fields):
    fields.setdefault("adapter", "langsmith")
    return langsmith.load(make_request(path, **fields))


def _by_example(result, metric: str) -> dict[str, float | None]:
    e = result.evidence.filter(pc.equal(result.evidence["metric"], metric))
    return dict(zip(e["example_id"].to_pylist(), e["value"].to_pylist(), strict=True))


def test_csv_table(make_request, exports) -> None:
    """feedback.* numbers and booleans are metrics; the string category is skipped and named."""
    result = _load(make_request, exports / CSV.format(p="baseline"), policy="baseline")
    assert result.provenance.metric_names == {
        "feedback.exact_match": "exact_match",
        "feedback.token_f1": "token_f1",
        "feedback.context_recall@3": "context_recall_at_3",
    }
    assert any("feedback.answer_category" in n for n in result.provenance.notes)
    em = _by_example(result, "exact_match")
    assert len(em) == 30 and set(em.values()) <= {0.0, 1.0}
    assert result.texts.to_pylist()[0]["contexts"][0].startswith("Vacation policy")


def test_csv_and_raw_rows_agree(make_request, exports) -> None:
    """The to_pandas CSV and the raw rows give the same feedback per dataset example id."""
    for p in ("baseline", "candidate"):
        a = _load(make_request, exports / CSV.format(p=p), policy=p)
        b = _load(make_request, exports / RAW.format(p=p), policy=p)
        for m in ("exact_match", "token_f1", "context_recall_at_3"):
            assert _by_example(a, m) == _by_example(b, m)


def test_example_ids_are_shared_across_experiments(make_request, exports) -> None:
    """Both experiments ran on one dataset: example_id pairs them."""
    a = _load(make_request, exports / CSV.format(p="baseline"), policy="baseline")
    b = _load(make_request, exports / CSV.format(p="candidate"), policy="candidate")
    assert set(_by_example(a, "token_f1")) == set(_by_example(b, "token_f1"))


def test_raw_rows_policy_and_question_id(make_request, exports) -> None:
    """Raw rows carry the policy in run.extra.metadata and ids at a dotted path."""
    result = _load(
        make_request,
        exports / RAW.format(p="candidate"),
        policy="candidate",
        columns={"example_id": "example.metadata.question_id"},
    )
    assert sorted(_by_example(result, "token_f1"))[:2] == ["q001", "q002"]
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / RAW.format(p="candidate"), policy="baseline")
    assert err.value.code == "evidence-policy-missing"


def test_parquet_with_uuid_extension_columns(make_request, exports, tmp_path) -> None:
    """UUID columns stored as Arrow uuid extension types read back as canonical UUID strings."""
    t = pacsv.read_csv(exports / CSV.format(p="baseline"))
    ids = t["example_id"].to_pylist()
    storage = pa.array([uuid.UUID(x).bytes for x in ids], pa.binary(16))
    t = t.set_column(
        t.schema.get_field_index("example_id"),
        "example_id",
        pa.ExtensionArray.from_storage(pa.uuid(), storage),
    )
    p = tmp_path / "exp.parquet"
    pq.write_table(t, p)
    result = _load(make_request, p, policy="baseline")
    assert set(_by_example(result, "token_f1")) == set(ids)


def test_execution_time_on_request(make_request, exports) -> None:
    """execution_time (s) becomes latency_ms only with include_operational."""
    result = _load(
        make_request,
        exports / CSV.format(p="baseline"),
        policy="baseline",
        options={"include_operational": True},
    )
    row = next(csv.DictReader((exports / CSV.format(p="baseline")).open()))
    assert _by_example(result, "latency_ms")[row["example_id"]] == pytest.approx(
        float(row["execution_time"]) * 1000
    )


# --- broken variants ---------------------------------------------------------------------------


def _table(exports: Path) -> tuple[list[str], list[list[str]]]:
    return read_csv_rows(exports / CSV.format(p="baseline"))


def test_empty_files(make_request, tmp_path) -> None:
    """Empty CSV and empty JSONL are evidence-empty."""
    for name in ("e.csv", "e.jsonl"):
        p = tmp_path / name
        p.write_bytes(b"")
        with pytest.raises(EvidenceError) as err:
            _load(make_request, p, policy="baseline")
        assert err.value.code == "evidence-empty"


def test_missing_id_column(make_request, exports, tmp_path) -> None:
    """Without example_id the table cannot be paired."""
    header, rows = without_column(*_table(exports), "example_id")
    p = write_csv_rows(tmp_path / "x.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.column) == ("evidence-missing-column", "example_id")


def test_wrong_type_feedback(make_request, exports, tmp_path) -> None:
    """A text cell in a numeric feedback column is located."""
    header, rows = _table(exports)
    rows[8][header.index("feedback.token_f1")] = "0.5x"
    p = write_csv_rows(tmp_path / "x.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        9,
        "feedback.token_f1",
    )


def test_duplicated_example(make_request, exports, tmp_path) -> None:
    """The same dataset example twice in one experiment is rejected."""
    header, rows = _table(exports)
    i = header.index("example_id")
    rows[5][i] = rows[0][i]
    p = write_csv_rows(tmp_path / "x.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", 6)


def test_mixed_policies_in_raw_rows(make_request, exports, tmp_path) -> None:
    """A raw row whose run metadata names another policy is located."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[10])
    obj["run"]["extra"]["metadata"]["policy"] = "candidate"
    lines[10] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-mixed-policies", 11)


def test_raw_row_whose_run_is_not_an_object(make_request, exports, tmp_path) -> None:
    """An experiment row whose run is a list is located by line and JSON pointer."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[3])
    obj["run"] = [obj["run"]]
    lines[3] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        4,
        "raw.jsonl#/run",
    )


def test_raw_row_whose_results_are_not_a_list(make_request, exports, tmp_path) -> None:
    """Evaluation results that are not a list of feedback objects are located, by a JSON pointer
    the publication-hygiene scan does not take for a host path."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[6])
    obj["evaluation_results"]["results"] = {"key": "token_f1", "score": 1.0}
    lines[6] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    expected = ("evidence-wrong-type", 7, "raw.jsonl#/evaluation_results/results")
    assert (err.value.code, err.value.row, err.value.column) == expected
    assert scan_outputs({"report.md": f"{err.value.message}\n".encode()}) == []


def test_raw_row_without_question_refused_for_question_hash(make_request, exports, tmp_path):
    """Pairing by question hash, a raw row whose run has no question input is located."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[4])
    obj["run"]["inputs"] = {"question_id": "q005"}
    lines[4] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline", pairing="question-hash")
    e = err.value
    assert (e.code, e.row, e.column, e.found) == ("evidence-null-key", 5, "run.inputs", "None")
    assert e.message == "raw.jsonl line 5: 'run.inputs' is missing or empty"


def test_table_needs_a_policy(make_request, exports) -> None:
    """to_pandas tables carry no policy: the source must declare it."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / CSV.format(p="baseline"))
    assert err.value.code == "evidence-policy-unknown"


def test_raw_null_score_counted(make_request, exports, tmp_path) -> None:
    """A null score with no value is a missing metric (reason null), not dropped."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[0])
    obj["evaluation_results"]["results"][1]["score"] = None
    lines[0] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    result = _load(make_request, p, policy="baseline")
    e = result.evidence.filter(pc.is_null(result.evidence["value"]))
    assert e["metric"].to_pylist() == ["token_f1"] and e["missing_reason"].to_pylist() == ["null"]


def test_run_lines_with_tokens_and_cost(make_request, exports, tmp_path) -> None:
    """Plain run JSONL (list_runs): feedback list, and with include_operational the run's
    total_cost, token counts and end − start latency."""
    lines = []
    for i, raw in enumerate((exports / RAW.format(p="baseline")).read_text().splitlines()):
        row = json.loads(raw)
        run = row["run"]
        run.update(
            run_type="chain",
            prompt_tokens=300 + i,
            completion_tokens=20,
            total_cost=1e-4 * (i + 1),
            feedback=row["evaluation_results"]["results"],
        )
        lines.append(json.dumps(run))
    p = tmp_path / "runs.jsonl"
    p.write_text("\n".join(lines) + "\n")
    result = _load(make_request, p, policy="baseline", options={"include_operational": True})
    assert "shape: runs" in result.provenance.notes[0]
    csv_result = _load(make_request, exports / CSV.format(p="baseline"), policy="baseline")
    assert _by_example(result, "token_f1") == _by_example(csv_result, "token_f1")
    first = json.loads(lines[0])
    ex = first["reference_example_id"]
    assert _by_example(result, "cost_usd")[ex] == pytest.approx(1e-4)
    assert _by_example(result, "input_tokens")[ex] == 300.0
    assert _by_example(result, "latency_ms")[ex] == pytest.approx(0.436, abs=1e-3)


REPS = "langsmith/langsmith_repetitions_{p}.csv"


def test_repetitions_are_runs_of_one_example_in_one_cluster(make_request, exports) -> None:
    """num_repetitions=3 (three rows per example_id, distinct run ids): run k of example e is
    example e#r<k> in cluster e; they BLOCKed as duplicate ids."""
    path = exports / REPS.format(p="baseline")
    header, rows = read_csv_rows(path)
    result = _load(make_request, path, policy="baseline")
    e = result.evidence
    assert e.num_rows == len(rows) == 90
    examples, groups = e["example_id"].to_pylist(), e["group_id"].to_pylist()
    assert examples[:3] == [f"{g}#r1" for g in groups[:3]]
    runs = {g: sorted(x for x, h in zip(examples, groups, strict=True) if h == g) for g in groups}
    assert len(runs) == 30 and all(v == [f"{g}#r{k}" for k in (1, 2, 3)] for g, v in runs.items())
    first = dict(zip(header, rows[0], strict=True))
    scores = _by_example(result, "token_f1")
    assert scores[f"{first['example_id']}#r1"] == float(first["feedback.token_f1"])
    assert any(n.startswith("repetitions: 90 runs of 30 examples") for n in result.provenance.notes)


def test_a_run_given_twice_is_still_a_duplicate(make_request, exports, tmp_path) -> None:
    """The same run (same run id) twice is a duplicated row, not a repetition."""
    header, rows = read_csv_rows(exports / REPS.format(p="baseline"))
    p = write_csv_rows(tmp_path / "x.csv", header, [*rows, rows[4]])
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", 91)


def _raw_with(exports: Path, tmp_path: Path, line: int, change) -> Path:
    """The baseline raw rows with ``change`` applied to line ``line`` (0-based)."""
    lines = (exports / RAW.format(p="baseline")).read_text().splitlines()
    obj = json.loads(lines[line])
    change(obj)
    lines[line] = json.dumps(obj)
    p = tmp_path / "raw.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_raw_feedback_key_given_twice_is_refused(make_request, exports, tmp_path, score) -> None:
    """Two scored results of one key on a run: which holds cannot be told (the last one used to
    win silently, lowering or raising the arm); refused at the second result's pointer."""

    def twice(obj: dict) -> None:
        results = obj["evaluation_results"]["results"]
        first = next(j for j, r in enumerate(results) if r["key"] == "token_f1")
        results.append(dict(results[first], score=score))
        obj["_first"] = first

    p = _raw_with(exports, tmp_path, 3, twice)
    first = json.loads(p.read_text().splitlines()[3])["_first"]
    n = len(json.loads(p.read_text().splitlines()[3])["evaluation_results"]["results"])
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    e = err.value
    assert (e.code, e.row, e.column) == (
        "evidence-duplicate-metric",
        4,
        f"{p.name}#/evaluation_results/results/{n - 1}",
    )
    assert f"#/evaluation_results/results/{first} and" in e.message and "'token_f1'" in e.message
    assert scan_outputs({"report.md": f"{e.message}\n{e.found}\n".encode()}) == []


def test_raw_run_errors_are_noted(make_request, exports, tmp_path) -> None:
    """A raw row whose run has an error is counted in the notes, as the table shape does."""

    def failed(obj: dict) -> None:
        obj["run"]["error"] = "TimeoutError"

    result = _load(make_request, _raw_with(exports, tmp_path, 2, failed), policy="baseline")
    notes = result.provenance.notes
    assert "1 run(s) have an error; their feedback is read as the file gives it" in notes
    clean = _load(make_request, exports / RAW.format(p="baseline"), policy="baseline")
    assert not any("have an error" in n for n in clean.provenance.notes)
