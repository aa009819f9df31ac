"""Located parsing: line maps for YAML and JSON, merge keys and aliases, syntax errors passed on."""

from __future__ import annotations

import orjson
import pytest
import yaml

from ragwarrant.contract import key_path, load_policy_config
from ragwarrant.contract._document import parse_document
from ragwarrant.errors import ContractError


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
    """Nested aliases (a 'billion laughs' shape) are walked once, not expanded."""
    lines = ["a0: &a0 [1, 2]"] + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 40)]
    doc = parse_document("\n".join(lines).encode(), "x.yaml", is_json=False)
    assert doc.line_of(("a39",)) == 40


def test_duplicate_key_in_aliased_mapping_refused():
    """A duplicate inside an anchored mapping is found once, at its own line."""
    with pytest.raises(ContractError) as info:
        parse_document(b"a: &x\n  k: 1\n  k: 2\nb: *x\n", "p.yaml", is_json=False)
    assert "p.yaml: a.k (line 3)" in info.value.message


def test_policy_config_syntax_error_passes_through(tmp_path):
    """A policy config syntax error stays the parser's own error (the job warns and goes on)."""
    path = tmp_path / "p.yaml"
    path.write_text("model: [unclosed\n")
    with pytest.raises(yaml.YAMLError):
        load_policy_config(path, "policies/p.yaml")
    path.write_text("model: a\ntop_k: 5\n")
    assert load_policy_config(path, "policies/p.yaml") == {"model": "a", "top_k": 5}
