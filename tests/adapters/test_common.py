"""The shared steps of the tool adapters (``adapters._common``): dotted paths, metadata
policies and the table reader's pairing and policy rules, on a toy tool declared only as data."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ragwarrant.adapters._base import ToolFormat
from ragwarrant.adapters._common import dotted, metadata_policies
from ragwarrant.adapters._rows import question_hash
from ragwarrant.adapters._table_tool import TableSpec, ToolTable
from ragwarrant.errors import EvidenceError

TOY = ToolFormat("toy", "toy-eval", "Toy", "a toy table", lambda s: True)
SPEC = TableSpec(
    TOY,
    ("question", "q"),
    ("toy score", "toy scores", ""),
    no_span_join="toy tables cannot be span-joined",
    skipped_note="toy columns skipped",
    no_policy="toy tables carry no policy",
    hash_note="hashed {!r}",
)


def test_dotted_reads_nested_objects_and_top_level_aliases() -> None:
    """A dotted path walks nested objects (None past a missing step or a non-object); an alias
    is read only when the top level lacks the key itself."""
    obj = {"a": {"b": {"c": 1}}, "snake_x": {"y": 2}, "s": "text"}
    assert dotted(obj, "a.b.c") == 1
    assert dotted(obj, "a.z.c") is None
    assert dotted(obj, "s.t") is None
    assert dotted(obj, "camelX.y", {"camelX": "snake_x"}) == 2
    assert dotted({**obj, "camelX": {"y": 3}}, "camelX.y", {"camelX": "snake_x"}) == 3
    assert dotted(obj, "camelX.y") is None


def test_metadata_policies_prefer_the_key_then_policy_then_the_default() -> None:
    metas = [{"pipe": "p1", "policy": "x"}, {"policy": 7}, {}, "not an object", None]
    assert metadata_policies(metas, "pipe") == ["p1", "7", None, None, None]
    assert metadata_policies(metas, "pipe", "run") == ["p1", "7", "run", "run", "run"]


def _write(tmp_path, header: str, *rows: str):
    path = tmp_path / "toy.csv"
    path.write_text("\n".join((header, *rows)) + "\n", encoding="utf-8")
    return path


def test_auto_pairing_hashes_the_first_question_column_without_an_id(
    make_request, tmp_path
) -> None:
    path = _write(tmp_path, "q,score", "What?,1", "Why?,0")
    read = ToolTable.read(make_request(path, adapter="ragas", policy="baseline"), SPEC)
    assert (read.pairing, read.key) == ("question-hash", "q")
    assert read.keys.example.to_pylist() == [question_hash("What?"), question_hash("Why?")]
    values = (pa.array([1.0, 0.0]), pa.array([None, None], pa.string()))
    result = read.result({"score": "token_f1"}, lambda c: values, ["x"])
    assert result.provenance.notes[:2] == ["hashed 'q'", "toy columns skipped: x"]


def test_id_column_only_tools_never_fall_back_to_hashing(make_request, tmp_path) -> None:
    path = _write(tmp_path, "question,score", "What?,1")
    spec = TableSpec(**{**SPEC.__dict__, "id_column_only": True})
    with pytest.raises(EvidenceError) as err:
        ToolTable.read(make_request(path, adapter="ragas", policy="baseline"), spec)
    missing = ("evidence-missing-column", "example_id")
    assert (err.value.code, err.value.context["column"]) == missing


def test_meta_ids_answer_before_hashing(make_request, tmp_path) -> None:
    path = _write(tmp_path, "question,score", "What?,1")
    spec = TableSpec(**{**SPEC.__dict__, "meta_ids": lambda r, t: (["m1"], "id-column", "meta")})
    read = ToolTable.read(make_request(path, adapter="ragas", policy="baseline"), spec)
    assert (read.keys.example.to_pylist(), read.pairing, read.key) == (["m1"], "id-column", "meta")


def test_the_tools_own_policy_column_is_read_and_required(make_request, tmp_path) -> None:
    spec = TableSpec(**{**SPEC.__dict__, "policy_column": "app"})
    path = _write(tmp_path, "question,app,score", "What?,candidate,1", "What?,baseline,0")
    read = ToolTable.read(make_request(path, adapter="ragas"), spec)
    assert read.keys.policy.to_pylist() == ["candidate", "baseline"]
    path = _write(tmp_path, "question,score", "What?,1")
    with pytest.raises(EvidenceError) as err:
        ToolTable.read(make_request(path, adapter="ragas"), spec)
    assert (err.value.code, err.value.context["column"]) == ("evidence-missing-column", "app")


def test_a_table_naming_no_policy_gets_the_tools_words(make_request, tmp_path) -> None:
    path = _write(tmp_path, "question,score", "What?,1")
    with pytest.raises(EvidenceError) as err:
        ToolTable.read(make_request(path, adapter="ragas"), SPEC)
    assert err.value.message == "toy.csv: toy tables carry no policy and the source declares none"
