"""A refused contract key's hint names its key path, line, JSON pointer and allowed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ragwarrant.commands.schemas import render_schemas
from ragwarrant.contract import load_contract
from ragwarrant.contract._schema_hint import json_pointer
from ragwarrant.errors import ContractError
from tests.conftest import base_contract


def _refusal(tmp_path: Path, contract: dict) -> ContractError:
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    with pytest.raises(ContractError) as err:
        load_contract(path)
    return err.value


def _line_of(tmp_path: Path, key: str) -> int:
    lines = (tmp_path / "contract.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(f"{key}:"))


def _schema_node(pointer: str) -> dict:
    """The node at ``#/...`` in the committed-equivalent contract schema."""
    node = json.loads(render_schemas()["contract.schema.json"])
    for part in pointer.removeprefix("#/").split("/"):
        node = node[part]
    return node


def test_wrong_type_names_pointer_line_bounds_and_rule(tmp_path):
    """A string alpha: the hint gives its line, pointer, the schema's bounds and rule location."""
    contract = base_contract()
    contract["statistics"] = {"alpha": "high"}
    err = _refusal(tmp_path, contract)
    line = _line_of(tmp_path, "alpha")
    rule = "#/$defs/Statistics/properties/alpha"
    node = _schema_node(rule)
    assert err.hint.startswith(
        f"statistics.alpha (line {line}, JSON pointer contract.yaml#/statistics/alpha): "
    )
    assert f"a number >= {node['minimum']:g}, < {node['exclusiveMaximum']}" in err.hint
    assert err.hint.endswith(f"; rule: contracts/contract.schema.json{rule}")
    assert "see contracts/contract.schema.json" not in err.hint
    assert "high" not in err.hint  # the refused value is never repeated


def test_enumerated_values_are_listed(tmp_path):
    """A wrong evidence class: the hint lists every allowed class from the schema."""
    contract = base_contract()
    contract["evidence_class"] = "confirm"
    err = _refusal(tmp_path, contract)
    allowed = _schema_node("#/$defs/EvidenceClass")["enum"]
    assert "JSON pointer contract.yaml#/evidence_class" in err.hint
    listed = err.hint.split("allowed: one of ", 1)[1].split(";", 1)[0].split(", ")
    assert sorted(v.strip('"') for v in listed) == sorted(allowed)


def test_unknown_key_lists_the_keys_its_mapping_allows(tmp_path):
    """A misspelt key inside a list item: the hint lists the keys of that mapping."""
    contract = base_contract()
    contract["quality_metrics"][0]["margin"] = 0.05
    err = _refusal(tmp_path, contract)
    keys = list(_schema_node("#/$defs/QualityMetric")["properties"])
    assert "JSON pointer contract.yaml#/quality_metrics/0/margin)" in err.hint
    listed = err.hint.split("allowed keys: ", 1)[1].split(";", 1)[0].split(", ")
    assert sorted(listed) == sorted(keys)
    assert err.hint.endswith("rule: contracts/contract.schema.json#/$defs/QualityMetric")


def test_a_reduction_given_as_a_word_asks_for_a_mapping(tmp_path):
    """``reduce: {cost_usd: sum}`` (fresh-user trial): the hint says the value is a mapping
    with the keys column and how, not "no such key"."""
    contract = base_contract()
    source = contract["evidence"][0]
    source.update({"kind": "telemetry", "reduce": {"cost_usd": "sum"}})
    source["metrics"] = {"cost_usd": "cost_usd"}
    err = _refusal(tmp_path, contract)
    assert "JSON pointer contract.yaml#/evidence/0/reduce/cost_usd)" in err.hint
    keys = ", ".join(_schema_node("#/$defs/TelemetryReduction")["properties"])
    assert f"allowed: a mapping with the keys {keys};" in err.hint
    assert err.hint.endswith("rule: contracts/contract.schema.json#/$defs/TelemetryReduction")


def test_pointer_escapes_per_rfc_6901():
    """``~`` and ``/`` in a key are escaped as ``~0`` and ``~1``."""
    assert json_pointer(("prices", "a/b~c", 0)) == "/prices/a~1b~0c/0"
    assert json_pointer(()) == ""


def test_margin_in_exponent_form_is_a_number(tmp_path):
    """``margin_abs: 2e-2`` (YAML 1.2 / JSON float) loads as 0.02, not as a string."""
    path = tmp_path / "contract.yaml"
    text = yaml.safe_dump(base_contract(), sort_keys=False)
    path.write_text(text.replace("margin_abs: 0.05", "margin_abs: 2e-2", 1))
    assert load_contract(path).quality_metrics[0].margin_abs == 0.02


def _same_policy_id(c: dict) -> None:
    c["candidates"][0]["policy_id"] = c["baseline"]["policy_id"]


def _same_config(c: dict) -> None:
    c["candidates"][0]["config"] = c["baseline"]["config"]


def _path_with_newline(c: dict) -> None:
    c["evidence"][0]["path"] = "evidence/a\nb.csv"


@pytest.mark.parametrize(
    ("edit", "pointer", "rule"),
    [
        (_same_policy_id, "candidates/0/policy_id", "policy ids must be distinct"),
        (_same_config, "candidates/0/config", "has the same config file as the baseline"),
        (_path_with_newline, "evidence/0/path", "without control characters"),
    ],
)
def test_a_validator_refusal_hints_its_own_rule(tmp_path, edit, pointer, rule):
    """A rule the schema does not state: the hint names the place and that rule, not the type."""
    contract = base_contract()
    edit(contract)
    err = _refusal(tmp_path, contract)
    assert f"JSON pointer contract.yaml#/{pointer})" in err.hint
    assert rule in err.hint
    assert "allowed:" not in err.hint and "contract.schema.json" not in err.hint
