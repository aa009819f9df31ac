"""Tests of the TruLens adapter on the real records-and-feedback table and broken variants."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.compute as pc
import pytest

from ragwarrant.adapters import trulens
from ragwarrant.errors import EvidenceError
from tests.adapters.conftest import read_csv_rows, without_column, write_csv_rows

TABLE = "trulens/trulens_records_and_feedback.csv"


def _load(make_request, path: Path, **fields):
    fields.setdefault("adapter", "trulens")
    return trulens.load(make_request(path, **fields))


def _rows(exports: Path) -> tuple[list[str], list[list[str]]]:
    return read_csv_rows(exports / TABLE)


def test_real_table_both_policies(make_request, exports) -> None:
    """60 records, policy from app_version, feedback names with spaces → snake_case ids."""
    result = _load(make_request, exports / TABLE)
    ev = result.evidence
    assert result.provenance.metric_names == {
        "Token F1": "token_f1",
        "Exact Match": "exact_match",
        "feedback cost in USD": "judge_cost_usd",
    }
    assert result.provenance.pairing_method == "question-hash"
    tf1 = ev.filter(pc.equal(ev["metric"], "token_f1"))
    assert tf1.num_rows == 60
    assert sorted(set(tf1["policy_id"].to_pylist())) == ["baseline", "candidate"]


def test_feedback_that_did_not_run_is_counted(make_request, exports) -> None:
    """Candidate q030 has no feedback: missing (null) in each metric, counted per policy."""
    result = _load(make_request, exports / TABLE, columns={"example_id": "question_id"})
    ev = result.evidence
    missing = ev.filter(pc.is_null(ev["value"]))
    got = sorted(
        zip(
            missing["policy_id"].to_pylist(),
            missing["example_id"].to_pylist(),
            missing["metric"].to_pylist(),
            missing["missing_reason"].to_pylist(),
            strict=True,
        )
    )
    assert got == [
        ("candidate", "q030", "exact_match", "null"),
        ("candidate", "q030", "judge_cost_usd", "null"),
        ("candidate", "q030", "token_f1", "null"),
    ]
    assert result.provenance.pairing_method == "id-column"


def test_question_hash_and_meta_id_pair_the_same_rows(make_request, exports) -> None:
    """Pairing by input hash and by record_json meta.question_id gives the same pairs."""
    a = _load(make_request, exports / TABLE)
    b = _load(make_request, exports / TABLE, columns={"example_id": "question_id"})
    ea, eb = a.evidence, b.evidence
    assert ea["value"].to_pylist() == eb["value"].to_pylist()
    mapping = dict(zip(ea["example_id"].to_pylist(), eb["example_id"].to_pylist(), strict=True))
    assert len(set(mapping.values())) == len(mapping) == 30


def test_operational_latency_zero_is_missing(make_request, exports, tmp_path) -> None:
    """latency (s) → latency_ms; a latency of 0 means not measured (reason absent)."""
    header, rows = _rows(exports)
    rows[3][header.index("latency")] = "0.0"
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    result = _load(make_request, p, options={"include_operational": True})
    lat = result.evidence.filter(pc.equal(result.evidence["metric"], "latency_ms"))
    assert lat["missing_reason"][3].as_py() == "absent" and lat["value"][3].as_py() is None
    assert math.isclose(lat["value"][0].as_py(), float(rows[0][header.index("latency")]) * 1000)
    assert any("latency 0" in n for n in result.provenance.notes)


def test_judge_cost_sums_feedback_costs(make_request, exports, tmp_path) -> None:
    """judge_cost_usd is the sum of the '<name> feedback cost in USD' columns."""
    header, rows = _rows(exports)
    rows[2][header.index("Token F1 feedback cost in USD")] = "0.001"
    rows[2][header.index("Exact Match feedback cost in USD")] = "0.0005"
    result = _load(make_request, write_csv_rows(tmp_path / "t.csv", header, rows))
    jc = result.evidence.filter(pc.equal(result.evidence["metric"], "judge_cost_usd"))
    assert math.isclose(jc["value"][2].as_py(), 0.0015)
    assert "cost_usd" not in result.evidence["metric"].to_pylist()


# --- broken variants ---------------------------------------------------------------------------


def test_empty(make_request, tmp_path) -> None:
    """A header-only table is evidence-empty."""
    p = tmp_path / "t.csv"
    p.write_text("app_version,input,Token F1\n")
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-empty"


def test_missing_app_version(make_request, exports, tmp_path) -> None:
    """Without app_version (or a policy column) the policy is unknown."""
    header, rows = without_column(*_rows(exports), "app_version")
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.column) == ("evidence-missing-column", "app_version")


def test_wrong_type_feedback(make_request, exports, tmp_path) -> None:
    """A text cell in a feedback column is located."""
    header, rows = _rows(exports)
    rows[11][header.index("Token F1")] = "good"
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        12,
        "Token F1",
    )


def test_duplicated_input_within_a_policy(make_request, exports, tmp_path) -> None:
    """Two records of one policy with the same question are a duplicated id."""
    header, rows = _rows(exports)
    i = header.index("input")
    rows[4][i] = rows[1][i]
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", 5)


def test_policy_missing_from_file(make_request, exports, tmp_path) -> None:
    """Dropping every candidate record leaves a contract policy without rows."""
    header, rows = _rows(exports)
    i = header.index("app_version")
    p = write_csv_rows(tmp_path / "t.csv", header, [r for r in rows if r[i] == "baseline"])
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-policy-missing" and "candidate" in str(err.value)


def test_mixed_policies_with_declared_policy(make_request, exports) -> None:
    """Declaring one policy for this two-policy table is located at the first other row."""
    with pytest.raises(EvidenceError) as err:
        _load(make_request, exports / TABLE, policy="baseline")
    assert (err.value.code, err.value.row) == ("evidence-mixed-policies", 1)


def test_unknown_app_version(make_request, exports, tmp_path) -> None:
    """An app_version that is no contract policy is named."""
    header, rows = _rows(exports)
    rows[0][header.index("app_version")] = "v2-experimental"
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p)
    assert err.value.code == "evidence-policy-unknown" and "v2-experimental" in str(err.value)


def test_record_json_not_a_literal(make_request, exports, tmp_path) -> None:
    """A record_json cell that is neither JSON nor a Python literal is located."""
    header, rows = _rows(exports)
    rows[6][header.index("record_json")] = "{'meta': oops}"
    p = write_csv_rows(tmp_path / "t.csv", header, rows)
    with pytest.raises(EvidenceError) as err:
        _load(make_request, p, columns={"example_id": "question_id"})
    assert (err.value.code, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        7,
        "record_json",
    )
