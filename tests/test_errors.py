"""Typed errors: records, exit codes, and pickling across processes."""

from __future__ import annotations

import pickle
from pathlib import PurePath

import pytest
from pydantic import BaseModel, ValidationError

from ragwarrant.errors import ContractError, EvidenceError, UsageError, first_invalid, shown_path
from ragwarrant.exit_codes import ExitCode


def test_evidence_error_survives_pickling():
    """An EvidenceError raised in a worker process arrives with its location intact."""
    err = EvidenceError(
        "evidence-wrong-type",
        "f.csv row 3: column 'x' is not a number",
        "hint",
        file="f.csv",
        row=3,
        column="x",
        expected="a number",
        found="'abc'",
    )
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is EvidenceError
    assert (back.code, back.message, back.hint, back.file, back.row, back.column, back.found) == (
        "evidence-wrong-type",
        "f.csv row 3: column 'x' is not a number",
        "hint",
        "f.csv",
        3,
        "x",
        "'abc'",
    )
    assert back.location() == "f.csv:3:x"


def test_record_carries_exit_code_and_fault():
    """to_record gives the ERROR decision's error object."""
    rec = pickle.loads(
        pickle.dumps(ContractError("contract-invalid", "bad", "see schema"))
    ).to_record()
    assert rec == {
        "type": "ContractError",
        "code": "contract-invalid",
        "message": "bad",
        "hint": "see schema",
        "fault": "user",
        "exit_code": int(ExitCode.CONFIG),
    }


def test_record_names_the_option_an_error_came_from():
    """An error raised for a command-line option's value names it in the record."""
    rec = UsageError("x", "bad", option="--ledger").to_record()
    assert rec["option"] == "--ledger"


class _Item(BaseModel):
    name: str


class _Doc(BaseModel):
    items: list[_Item]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"items": [{"name": "a"}, {}]}', "items.1.name: Field required"),
        (b"[]", "(root): Input should be an object"),
    ],
)
def test_first_invalid_names_the_key_path_and_rule(data, expected):
    """The first refused field is named by its dotted key path, the document itself as (root)."""
    with pytest.raises(ValidationError) as info:
        _Doc.model_validate_json(data)
    assert first_invalid(info.value) == expected


def test_a_path_is_shown_as_typed_under_a_mount_or_relative_else_by_its_last_component():
    """``shown_path``: relative and ``/in``, ``/out`` paths as typed; a host path by its name."""
    cases = {"in/x.yaml": "in/x.yaml", "/in": "/in", "/out/a/b": "/out/a/b", "/srv/d/x": "x"}
    assert {given: shown_path(PurePath(given)) for given in cases} == cases
    assert shown_path(PurePath("/inbox/x")) == "x"
