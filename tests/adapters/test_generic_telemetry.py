"""The generic adapter's telemetry reduction: sums, counts, missing values, located errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.adapters._tables import at_file_row
from ragwarrant.adapters.generic import load
from ragwarrant.contract import ReleaseContract
from ragwarrant.errors import EvidenceError
from tests.conftest import base_contract


def _request(path: Path, reduce: dict, **labels: str) -> AdapterRequest:
    c = base_contract()
    c["evidence"].append(
        {
            "id": "tel",
            "path": path.name,
            "format": "parquet",
            "kind": "telemetry",
            "columns": {"example_id": "ex", "policy_id": "pol", **labels},
            "reduce": reduce,
        }
    )
    contract = ReleaseContract.model_validate(c)
    return AdapterRequest(contract.evidence[1], path, path.name, "ab" * 32, contract)


def test_reduces_requests_per_example(tmp_path):
    """Per (policy, example): cost sums, calls count, latency is the max; a null cost is missing."""
    path = tmp_path / "tel.parquet"
    pq.write_table(
        pa.table(
            {
                "ex": ["e1", "e1", "e2", "e2", "e2"],
                "pol": ["a", "a", "a", "a", "b"],
                "cost": [0.1, 0.2, 0.3, None, 0.5],
                "ms": [10.0, 30.0, 5.0, 7.0, 1.0],
            }
        ),
        path,
    )
    res = load(
        _request(
            path,
            {
                "cost_usd": {"column": "cost", "how": "sum"},
                "api_calls": {"how": "count"},
                "latency_ms": {"column": "ms", "how": "max"},
            },
        )
    )
    rows = {
        (r["policy_id"], r["example_id"], r["metric"]): (r["value"], r["missing_reason"])
        for r in res.evidence.to_pylist()
    }
    assert rows[("a", "e1", "cost_usd")][0] == pytest.approx(0.3)
    assert rows[("a", "e2", "cost_usd")] == (None, "null")
    assert rows[("a", "e2", "api_calls")] == (2.0, None)
    assert rows[("a", "e1", "latency_ms")] == (30.0, None)
    assert res.provenance.rows_read == 5


def test_missing_column_names_file_and_column(tmp_path):
    """A telemetry file without the mapped column is refused, naming the column."""
    path = tmp_path / "tel.parquet"
    pq.write_table(pa.table({"ex": ["e1"], "pol": ["a"]}), path)
    with pytest.raises(EvidenceError) as err:
        load(_request(path, {"cost_usd": {"column": "cost", "how": "sum"}}))
    assert (err.value.code, err.value.column, err.value.file) == (
        "evidence-missing-column",
        "cost",
        "tel.parquet",
    )


def test_error_rows_count_from_the_start_of_the_file():
    """An error found in a later batch reports its row in the file, not in the batch."""
    exc = EvidenceError(
        "evidence-null-key",
        "t.parquet row 3: column 'ex' is empty",
        file="t.parquet",
        row=3,
        column="ex",
    )
    moved = at_file_row(exc, 1_048_576)
    assert moved.row == 1_048_579 and "row 1048579:" in moved.message and moved.column == "ex"


def test_parser_message_is_short_printable_and_relative(tmp_path):
    """A parser error keeps no host path, no binary bytes, and at most a short excerpt."""
    from ragwarrant.adapters._integrity import parser_message

    path = tmp_path / "evidence" / "x.csv"
    exc = ValueError(f"CSV parse error in {path}: row 3: \x00\x07PAR1" + "é" * 300)
    text = parser_message(exc, path, "evidence/x.csv")
    assert str(tmp_path) not in text and "evidence/x.csv" in text
    assert all(ch.isprintable() for ch in text) and len(text) <= 120


def test_requests_keep_their_group_slice_and_split(tmp_path):
    """The mapped group, slice and split columns are keys of the reduction and reach the rows."""
    path = tmp_path / "tel.parquet"
    pq.write_table(
        pa.table(
            {
                "ex": ["e1", "e1", "e2"],
                "pol": ["a", "a", "a"],
                "grp": ["g1", "g1", "g2"],
                "sl": ["short", "short", "long"],
                "sp": ["dev", "dev", "test"],
                "ms": [10.0, 30.0, 5.0],
            }
        ),
        path,
    )
    reduce = {"latency_ms": {"column": "ms", "how": "max"}}
    res = load(_request(path, reduce, group_id="grp", slice="sl", split="sp"))
    rows = sorted(
        (r["example_id"], r["group_id"], r["slice"], r["split"], r["value"])
        for r in res.evidence.to_pylist()
    )
    assert rows == [("e1", "g1", "short", "dev", 30.0), ("e2", "g2", "long", "test", 5.0)]
