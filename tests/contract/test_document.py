"""Located parsing: line maps for YAML and JSON, merge keys and aliases, syntax errors passed on."""

from __future__ import annotations

import os

import orjson
import pytest

from ragwarrant.contract import key_path, load_policy_config
from ragwarrant.contract._document import parse_document
from ragwarrant.errors import ContractError
from ragwarrant.limits import MAX_CONFIG_BYTES


def test_key_path_rendering():
    """Key paths read as dotted keys with list indices in brackets."""
    assert key_path(("evidence", 0, "columns", "metric")) == "evidence[0].columns.metric"
    assert key_path(()) == "(root)"


def test_json_lines_of_keys_and_items():
    """Every key and list item of a JSON text gets its line; a missing key its parent's."""
    text = b'{\n "a": [\n  {"b": 1},\n  {"b": 2,\n   "c": [3,\n 4]}\n ],\n "d": "x, y: {z}"\n}'
    doc = parse_document(text, "x.json", is_json=True)
    assert doc.data == orjson.loads(text)
    assert doc.line_of(("a",)) == 2 and doc.line_of(("a", 1)) == 4
    assert doc.line_of(("a", 1, "c")) == 5 and doc.line_of(("a", 1, "c", 1)) == 6
    assert doc.line_of(("d",)) == 8 and doc.line_of(("a", 0, "missing")) == 3


def test_yaml_merge_key_override_is_not_a_duplicate():
    """A key given beside a ``<<`` merge overrides it, as YAML intends; that is no duplicate."""
    text = b"base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  y: 3\n"
    doc = parse_document(text, "x.yaml", is_json=False)
    assert doc.data == {"base": {"x": 1, "y": 2}, "item": {"x": 1, "y": 3}}
    assert doc.line_of(("item", "y")) == 4


def test_yaml_aliases_walked_once():
    """Nested aliases are walked once and counted at their expanded size: a small expansion is
    read, a 'billion laughs' is refused with the limit and the count, before it is built."""
    lines = ["a0: &a0 [1, 2]"] + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 10)]
    doc = parse_document("\n".join(lines).encode(), "x.yaml", is_json=False)
    assert doc.line_of(("a9",)) == 10
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(10, 40)]
    with pytest.raises(ContractError) as info:
        parse_document("\n".join(lines).encode(), "x.yaml", is_json=False)
    assert info.value.code == "contract-limit"
    # a_i holds 2**(i + 2) - 1 nodes: a18 is the first past 10**6
    assert f"a18 (line 19) expands to {2**20 - 1:,} nodes; the limit is 1,000,000" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (b"seed: " + b"9" * 41, "seed (line 1) is an integer of 41 digits; the limit is 40"),
        (b"x: " + b"[" * 201 + b"]" * 201, "nests 201 levels deep; the limit is 200"),
        (b"x: " + b"[" * 5000 + b"]" * 5000, "nests deeper than the limit of 200 levels"),
    ],
)
def test_yaml_document_limits(text, found):
    """Integers past 40 digits and nesting past 200 levels are refused, naming the limit."""
    with pytest.raises(ContractError) as info:
        parse_document(text, "x.yaml", is_json=False)
    assert info.value.code == "contract-limit"
    assert found in info.value.message
    assert parse_document(b"seed: " + b"9" * 40, "x.yaml", is_json=False).data == {
        "seed": int("9" * 40)
    }


def test_duplicate_key_in_aliased_mapping_refused():
    """A duplicate inside an anchored mapping is found once, at its own line."""
    with pytest.raises(ContractError) as info:
        parse_document(b"a: &x\n  k: 1\n  k: 2\nb: *x\n", "p.yaml", is_json=False)
    assert "p.yaml: a.k (line 3)" in info.value.message


def test_policy_config_syntax_error_is_a_contract_error(tmp_path):
    """A policy config that does not parse is refused (exit 78), located: a config the job
    cannot compare must not pass as one without differences."""
    path = tmp_path / "p.yaml"
    path.write_text("model: [unclosed\n")
    with pytest.raises(ContractError) as info:
        load_policy_config(path, "policies/p.yaml")
    assert info.value.code == "contract-syntax"
    assert "policy config policies/p.yaml is not valid YAML at line 2" in info.value.message
    path.write_text("model: a\ntop_k: 5\n")
    assert load_policy_config(path, "policies/p.yaml") == {"model": "a", "top_k": 5}


def test_policy_config_past_its_size_limit_is_refused_unread(tmp_path):
    """A config past 1 MiB is refused with the limit and its size (a sparse file: not read)."""
    path = tmp_path / "p.json"
    with path.open("wb") as fh:
        fh.truncate(MAX_CONFIG_BYTES + 1)
    with pytest.raises(ContractError) as info:
        load_policy_config(path, "policies/p.json")
    assert info.value.code == "contract-limit"
    assert f"is {MAX_CONFIG_BYTES + 1:,} bytes; the limit is {MAX_CONFIG_BYTES:,}" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: 2e-2", 0.02),
        ("a: 1E3", 1000.0),
        ("a: -.5e+1", -5.0),
        ("a: 2.0e-2", 0.02),
        ("a: e5", "e5"),
        ("a: '2e-2'", "2e-2"),
    ],
)
def test_yaml_floats_without_a_dot_are_numbers(text, value):
    """YAML 1.2 / JSON exponent floats (``2e-2``) are numbers; quoted ones stay text."""
    assert parse_document(text.encode(), "c.yaml", is_json=False).data == {"a": value}


def test_policy_config_fifo_is_refused_not_waited_on(tmp_path):
    """A config that is a FIFO is refused as unreadable at once (``sidefiles.read_regular``)."""
    path = tmp_path / "p.yaml"
    os.mkfifo(path)
    with pytest.raises(ContractError) as info:
        load_policy_config(path, "policies/p.yaml")
    assert info.value.code == "contract-unreadable"
    assert "policies/p.yaml: it is a FIFO, not a regular file" in str(info.value)
