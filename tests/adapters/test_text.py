"""Text columns of the generic adapter: question, response, contexts and cited quotes (private)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.adapters._text import parse_passages
from ragwarrant.adapters.generic import load
from ragwarrant.contract import ReleaseContract
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import TEXT_SCHEMA


def contract(fmt: str, path: str, **columns: str) -> ReleaseContract:
    return ReleaseContract.model_validate(
        {
            "id": "t",
            "version": "1",
            "baseline": {"policy_id": "base", "config": "b.json"},
            "candidates": [{"policy_id": "cand", "config": "c.json"}],
            "evidence": [
                {
                    "id": "src",
                    "path": path,
                    "format": fmt,
                    "metrics": {"score": "score"},
                    "columns": {"example_id": "id", "policy_id": "policy", **columns},
                }
            ],
            "quality_metrics": [{"id": "score", "margin_abs": 0.05}],
            "claims": {"items": [{"kind": "quality-improvement", "metric": "score"}]},
            "evidence_class": "development",
        }
    )


def read(path: Path, fmt: str, **columns: str):
    c = contract(fmt, path.name, **columns)
    return load(AdapterRequest(c.evidence[0], path, path.name, sha256_file(path), c))


TEXT_COLUMNS = {"question": "q", "response": "r", "contexts": "ctx", "cited_quotes": "quotes"}


def test_csv_contexts_as_json_python_repr_and_plain_string(tmp_path):
    """A CSV contexts cell may be a JSON array, a Python-repr list, or one plain passage."""
    p = tmp_path / "e.csv"
    rows = [
        ["id", "policy", "score", "q", "r", "ctx", "quotes"],
        ["e1", "base", "1", "Q one?", "A one.", json.dumps(["p1", "p2"]), ""],
        ["e2", "base", "0", "Q two?", "A two.", "['p3', \"it's p4\"]", json.dumps(["p3"])],
        ["e3", "base", "1", "Q three?", "A three.", "just one passage, with a comma", ""],
        ["e4", "base", "1", "", "", "", ""],
    ]
    with p.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    res = read(p, "csv", **TEXT_COLUMNS)
    assert res.texts is not None and res.texts.schema.equals(TEXT_SCHEMA, check_metadata=False)
    t = res.texts.to_pylist()
    assert [r["contexts"] for r in t] == [
        ["p1", "p2"],
        ["p3", "it's p4"],
        ["just one passage, with a comma"],
        None,
    ]
    assert [r["cited_quotes"] for r in t] == [None, ["p3"], None, None]
    assert [r["question"] for r in t] == ["Q one?", "Q two?", "Q three?", None]
    assert t[0]["policy_id"] == "base" and t[1]["example_id"] == "e2"


def test_parquet_list_column(tmp_path):
    """A native list<string> column is taken as is."""
    p = tmp_path / "e.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ["e1"],
                "policy": ["cand"],
                "score": [0.5],
                "q": ["Q?"],
                "r": ["A."],
                "ctx": pa.array([["a", "b"]], pa.list_(pa.string())),
            }
        ),
        p,
    )
    res = read(p, "parquet", question="q", response="r", contexts="ctx")
    assert res.texts is not None
    assert res.texts.to_pylist() == [
        {
            "policy_id": "cand",
            "example_id": "e1",
            "question": "Q?",
            "response": "A.",
            "contexts": ["a", "b"],
            "cited_quotes": None,
        }
    ]


def test_no_text_mapping_no_texts(tmp_path):
    """Without a mapped text column the adapter returns no text table."""
    p = tmp_path / "e.csv"
    p.write_text("id,policy,score\ne1,base,1\n")
    assert read(p, "csv").texts is None


def test_missing_text_column_is_an_evidence_error(tmp_path):
    """A mapped text column absent from the file names the column."""
    p = tmp_path / "e.csv"
    p.write_text("id,policy,score\ne1,base,1\n")
    with pytest.raises(EvidenceError) as exc:
        read(p, "csv", question="question_text")
    assert "question_text" in exc.value.message


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("one passage, with 'quotes' [1]", ["one passage, with 'quotes' [1]"]),
        ("null", ["null"]),
        ("  ", None),
        (None, None),
        ('["a\\/b", "c"]', ["a/b", "c"]),
        ("['a', \"it's\"]", ["a", "it's"]),
        (("a", "b"), ["a", "b"]),
    ],
)
def test_passage_cells_are_read(cell, expected):
    """A plain string is one passage, a JSON array is read as JSON (its escapes too), a Python
    list literal or an Arrow list as a list; a blank or null cell is no value."""
    assert parse_passages(cell, "e.csv", 1, "ctx") == expected


@pytest.mark.parametrize("cell", ["[not a list", "[1, 2]", "['a', 3]", "[__import__('os')]"])
def test_bad_list_cells_raise(cell):
    """A '['-cell that is not a list of strings raises, naming row and column (never eval)."""
    with pytest.raises(EvidenceError) as exc:
        parse_passages(cell, "e.csv", 7, "ctx")
    assert (
        exc.value.code == "evidence-wrong-type" and exc.value.row == 7 and exc.value.column == "ctx"
    )


def test_text_never_enters_the_evidence_table(tmp_path):
    """The canonical evidence rows carry ids and values only, not the text."""
    p = tmp_path / "e.csv"
    p.write_text(
        "id,policy,score,q,r,ctx\n"
        'e1,base,1,Secret question?,Secret answer.,"[""secret passage""]"\n'
    )
    res = read(p, "csv", question="q", response="r", contexts="ctx")
    flat = json.dumps(res.evidence.to_pylist(), default=str).lower()
    assert "secret" not in flat
