"""Tests of the Ragas adapter on the real exports and broken variants of them."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.compute as pc
import pytest

from ragwarrant.adapters import ragas
from ragwarrant.errors import EvidenceError
from tests.adapters.conftest import read_csv_rows, without_column, write_csv_rows

RAGAS_METRICS = 10


def _load(make_request, path: Path, **fields):
    fields.setdefault("adapter", "ragas")
    return ragas.load(make_request(path, **fields))


def _values(result, metric: str) -> dict[str, float | None]:
    e = result.evidence.filter(pc.equal(result.evidence["metric"], metric))
    return dict(zip(e["example_id"].to_pylist(), e["value"].to_pylist(), strict=True))


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_real_export_reads_every_metric_and_counts_missing(make_request, exports, suffix) -> None:
    """30 rows × 10 metrics; baseline q030's two failed metrics are missing, not dropped."""
    result = _load(
        make_request, exports / f"ragas/ragas_evaluate_baseline.{suffix}", policy="baseline"
    )
    ev = result.evidence
    assert ev.num_rows == 30 * RAGAS_METRICS
    assert set(ev["policy_id"].to_pylist()) == {"baseline"}
    missing = ev.filter(pc.is_null(ev["value"]))
    assert sorted(missing["metric"].to_pylist()) == [
        "id_based_context_precision",
        "non_llm_context_recall",
    ]
    assert missing["missing_reason"].to_pylist() == ["null", "null"]
    assert missing["source_row"].to_pylist() == [30, 30]
    prov = result.provenance
    assert prov.metric_names["rouge_score(mode=fmeasure)"] == "rouge_score_mode_fmeasure"
    assert prov.pairing_method == "question-hash"
    assert prov.tool == "ragas" and prov.rows_read == 30


def test_csv_and_jsonl_agree(make_request, exports) -> None:
    """The CSV and JSONL exports of the same result give the same values per example."""
    a = _load(make_request, exports / "ragas/ragas_evaluate_candidate.csv", policy="candidate")
    b = _load(make_request, exports / "ragas/ragas_evaluate_candidate.jsonl", policy="candidate")
    va, vb = _values(a, "chrf_score"), _values(b, "chrf_score")
    assert va.keys() == vb.keys()
    assert all(math.isclose(va[k], vb[k], abs_tol=1e-9) for k in va)


def test_question_hash_pairs_the_two_policies(make_request, exports) -> None:
    """Both policies answered the same questions, so the hashed ids coincide."""
    base = _load(make_request, exports / "ragas/ragas_evaluate_baseline.csv", policy="baseline")
    cand = _load(make_request, exports / "ragas/ragas_evaluate_candidate.csv", policy="candidate")
    ids_b = set(base.evidence["example_id"].to_pylist())
    assert len(ids_b) == 30 and ids_b == set(cand.evidence["example_id"].to_pylist())


def test_texts_parse_python_repr_lists(make_request, exports) -> None:
    """Context cells (Python reprs in CSV) become lists; q030 baseline retrieved nothing."""
    result = _load(make_request, exports / "ragas/ragas_evaluate_baseline.csv", policy="baseline")
    texts = result.texts.to_pylist()
    assert texts[0]["contexts"][0].startswith("Vacation policy: full-time")
    assert len(texts[0]["contexts"]) == 3
    assert texts[29]["contexts"] == [] and texts[29]["question"].startswith(
        "Who should be contacted"
    )


def test_metrics_mapping_selects_and_renames(make_request, exports) -> None:
    """The contract's metrics pick columns by original name or snake id and rename them."""
    result = _load(
        make_request,
        exports / "ragas/ragas_evaluate_baseline.csv",
        policy="baseline",
        metrics={"rouge_score(mode=fmeasure)": "rouge_l", "chrf_score": "chrf"},
    )
    assert set(result.evidence["metric"].to_pylist()) == {"rouge_l", "chrf"}


# --- broken variants ---------------------------------------------------------------------------


def _rows(exports: Path) -> tuple[list[str], list[list[str]]]:
    return read_csv_rows(exports / "ragas/ragas_evaluate_baseline.csv")


def test_empty_file(make_request, tmp_path) -> None:
    """An empty file is evidence-empty."""
    p = tmp_path / "r.csv"
    p.write_bytes(b"")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert err.value.code == "evidence-empty"


def test_missing_question_column(make_request, exports, tmp_path) -> None:
    """Without user_input (or question) there is nothing to pair by."""
    header, rows = without_column(*_rows(exports), "user_input")
    p = write_csv_rows(tmp_path / "r.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert err.value.code == "evidence-missing-column" and err.value.column == "user_input"


def test_wanted_metric_missing(make_request, exports) -> None:
    """A metric the contract wants but the file lacks is named."""
    with pytest.raises(EvidenceError) as err:
        _load(
            make_request,
            exports / "ragas/ragas_evaluate_baseline.csv",
            policy="baseline",
            metrics={"faithfulness": "faithfulness"},
        )
    assert err.value.code == "evidence-missing-column" and err.value.column == "faithfulness"


def test_wrong_type_metric_cell(make_request, exports, tmp_path) -> None:
    """A text cell in a metric column is located by row and column."""
    header, rows = _rows(exports)
    rows[4][header.index("bleu_score")] = "n/a-ish"
    p = write_csv_rows(tmp_path / "r.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        5,
        "bleu_score",
    )


def test_context_cell_not_a_list(make_request, exports, tmp_path) -> None:
    """A context cell holding a dict literal is rejected, not coerced."""
    header, rows = _rows(exports)
    rows[2][header.index("retrieved_contexts")] = "{'kb-001': 'text'}"
    p = write_csv_rows(tmp_path / "r.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        3,
        "retrieved_contexts",
    )


def test_duplicated_question(make_request, exports, tmp_path) -> None:
    """The same question twice (after normalization) is a duplicated id, naming both rows."""
    header, rows = _rows(exports)
    rows[9][0] = "  " + rows[2][0].upper() + " "
    p = write_csv_rows(tmp_path / "r.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert err.value.code == "evidence-duplicate-id" and err.value.row == 10
    assert "row 3" in str(err.value)


def test_no_policy_declared(make_request, exports) -> None:
    """Ragas files carry no policy: the source must declare one."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / "ragas/ragas_evaluate_baseline.csv")
    assert err.value.code == "evidence-policy-unknown"


def test_policy_missing_from_file(make_request, exports, tmp_path) -> None:
    """A policy column that never names the declared policy is evidence-policy-missing."""
    header, rows = _rows(exports)
    p = write_csv_rows(tmp_path / "r.csv", header + ["policy_id"], [r + ["baseline"] for r in rows])
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="candidate")
    assert err.value.code == "evidence-policy-missing"


def test_mixed_policies(make_request, exports, tmp_path) -> None:
    """One row of another policy in a one-policy file is located."""
    header, rows = _rows(exports)
    pols = ["baseline"] * len(rows)
    pols[6] = "candidate"
    p = write_csv_rows(
        tmp_path / "r.csv",
        header + ["policy_id"],
        [r + [x] for r, x in zip(rows, pols, strict=True)],
    )
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-mixed-policies", 7)


def test_id_column_pairing_when_present(make_request, exports, tmp_path) -> None:
    """A file with the mapped id column pairs by it and says so."""
    header, rows = _rows(exports)
    p = write_csv_rows(
        tmp_path / "r.csv",
        header + ["example_id"],
        [r + [f"q{i + 1:03d}"] for i, r in enumerate(rows)],
    )
    result = _load(make_request, p, policy="baseline")
    assert result.provenance.pairing_method == "id-column"
    assert result.evidence["example_id"][0].as_py() == "q001"


def test_parquet_with_list_columns(make_request, exports, tmp_path) -> None:
    """A Parquet save (native list columns) reads like the JSONL it came from."""
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    p = tmp_path / "r.parquet"
    pq.write_table(pajson.read_json(exports / "ragas/ragas_evaluate_baseline.jsonl"), p)
    a = _load(make_request, p, policy="baseline")
    b = _load(make_request, exports / "ragas/ragas_evaluate_baseline.jsonl", policy="baseline")
    assert a.evidence["value"].to_pylist() == b.evidence["value"].to_pylist()
    assert a.texts.to_pylist() == b.texts.to_pylist()


def test_legacy_column_names(make_request, exports, tmp_path) -> None:
    """Older Ragas names (question, contexts, answer, ground_truth) read the same way."""
    header, rows = _rows(exports)
    legacy = {
        "user_input": "question",
        "retrieved_contexts": "contexts",
        "response": "answer",
        "reference": "ground_truth",
    }
    p = write_csv_rows(tmp_path / "r.csv", [legacy.get(h, h) for h in header], rows)
    old = _load(make_request, p, policy="baseline")
    new = _load(make_request, exports / "ragas/ragas_evaluate_baseline.csv", policy="baseline")
    assert old.evidence["example_id"].to_pylist() == new.evidence["example_id"].to_pylist()
    assert old.evidence["value"].to_pylist() == new.evidence["value"].to_pylist()
    assert old.texts.to_pylist() == new.texts.to_pylist()
