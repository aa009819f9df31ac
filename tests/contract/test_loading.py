"""The contract loader refuses duplicate keys, loose types and non-finite numbers, located."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from ragwarrant.contract import find_contract, load_contract
from ragwarrant.errors import ContractError
from ragwarrant.exit_codes import ExitCode
from tests.conftest import base_contract

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"


def _write_yaml(tmp_path: Path, contract: dict[str, Any]) -> Path:
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return path


def _refusal(path: Path) -> ContractError:
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert info.value.exit_code == ExitCode.CONFIG
    return info.value


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_yaml_duplicate_key_refused_with_key_and_line(tmp_path):
    """A duplicated ``alpha`` in YAML is refused, naming the key path and both lines."""
    path = _write_yaml(tmp_path, base_contract())
    text = path.read_text().replace("  alpha: 0.05\n", "  alpha: 0.05\n  alpha: 0.2\n")
    path.write_text(text)
    err = _refusal(path)
    assert err.code == "contract-duplicate-key"
    first = _line_of(path, "alpha: 0.05")
    assert f"statistics.alpha (line {first + 1})" in err.message
    assert f"line {first}" in err.message


def test_json_duplicate_key_refused_with_key_and_line(tmp_path):
    """A duplicated key in a JSON contract is refused, naming the key path and its line."""
    c = base_contract()
    text = orjson.dumps(c, option=orjson.OPT_INDENT_2).decode()
    text = text.replace('"seed": 7,', '"seed": 7,\n    "seed": 8,')
    path = tmp_path / "contract.json"
    path.write_text(text)
    err = _refusal(path)
    assert err.code == "contract-duplicate-key"
    line = _line_of(path, '"seed": 8')
    assert f"statistics.seed (line {line})" in err.message


def test_yaml_duplicate_key_in_list_item_refused(tmp_path):
    """A key repeated inside a list item is located by its index."""
    path = _write_yaml(tmp_path, base_contract())
    path.write_text(
        path.read_text().replace("  margin_abs: 0.05\n", "  margin_abs: 0.05\n  margin_abs: 0.5\n")
    )
    err = _refusal(path)
    assert "quality_metrics[0].margin_abs" in err.message


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("statistics", "seed", "7", "integer"),
        ("statistics", "resamples", True, "integer"),
        ("statistics", "alpha", "0.05", "number"),
        ("statistics", "alpha", False, "number"),
        ("statistics", "resamples", 2000.5, "integer"),
    ],
)
def test_loose_types_refused(tmp_path, section, key, value, expected):
    """A string or boolean where a number belongs is refused, naming the expected type."""
    c = base_contract()
    c[section][key] = value
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    assert err.code == "contract-invalid"
    assert f"{section}.{key} (line {_line_of(path, f'{key}:')})" in err.message
    assert expected in err.message


def test_scale_items_strict_but_list_accepted(tmp_path):
    """The scale is read from a YAML list, but its bounds must be numbers, not strings."""
    c = base_contract()
    c["quality_metrics"][0]["scale"] = ["0", 1]
    err = _refusal(_write_yaml(tmp_path, c))
    assert "quality_metrics[0].scale[0]" in err.message and "number" in err.message


def test_bool_field_refuses_string(tmp_path):
    """``required: "yes"`` is not read as a boolean."""
    c = base_contract()
    c["quality_metrics"][0]["required"] = "yes"
    err = _refusal(_write_yaml(tmp_path, c))
    assert "quality_metrics[0].required" in err.message and "boolean" in err.message


@pytest.mark.parametrize("literal", [".inf", "-.inf", ".nan", ".NaN"])
def test_yaml_non_finite_numbers_refused(tmp_path, literal):
    """``.inf`` or ``.nan`` anywhere in the contract is refused with its key path and line."""
    path = _write_yaml(tmp_path, base_contract())
    path.write_text(path.read_text().replace("margin_abs: 0.05", f"margin_abs: {literal}"))
    err = _refusal(path)
    assert err.code == "contract-non-finite"
    assert f"quality_metrics[0].margin_abs (line {_line_of(path, 'margin_abs')})" in err.message


def test_json_overflowing_number_refused(tmp_path):
    """A JSON number too large for a double is refused rather than read as infinity."""
    text = orjson.dumps(base_contract()).decode().replace('"alpha":0.05', '"alpha":1e400')
    path = tmp_path / "contract.json"
    path.write_text(text)
    assert _refusal(path).code in {"contract-syntax", "contract-non-finite"}


def test_refused_value_is_never_echoed(tmp_path):
    """A private key pasted into a field is not copied into the message; the key and line are."""
    c = base_contract()
    c["evidence"][0]["format"] = PEM
    c["statistics"]["seed"] = PEM
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    assert "PRIVATE KEY" not in err.message and "MIIE" not in err.message
    assert "evidence[0].format" in err.message and "statistics.seed" in err.message
    assert "found a string" in err.message


def test_invalid_path_value_not_echoed(tmp_path):
    """An absolute evidence path is refused without repeating the path."""
    c = base_contract()
    c["evidence"][0]["path"] = "/home/alice/secret/results.csv"
    err = _refusal(_write_yaml(tmp_path, c))
    assert "evidence[0].path" in err.message and "alice" not in err.message


def test_missing_field_located_at_parent(tmp_path):
    """A missing required field is named with the line of the mapping that lacks it."""
    c = base_contract()
    del c["quality_metrics"][0]["margin_abs"]
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    assert f"quality_metrics[0].margin_abs (line {_line_of(path, '- id: correct')})" in err.message
    assert "required" in err.message


def test_unknown_key_located(tmp_path):
    """An unknown key is named with its own line."""
    c = base_contract()
    c["statistics"]["alhpa"] = 0.05
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    assert f"statistics.alhpa (line {_line_of(path, 'alhpa')})" in err.message


def test_valid_contract_unchanged(tmp_path):
    """A valid contract loads to the same model from YAML and JSON."""
    c = base_contract()
    from_yaml = load_contract(_write_yaml(tmp_path, c))
    json_path = tmp_path / "j" / "contract.json"
    json_path.parent.mkdir()
    json_path.write_bytes(orjson.dumps(copy.deepcopy(c)))
    assert from_yaml == load_contract(json_path)
    assert from_yaml.statistics.seed == 7


def test_missing_contract_message_has_no_absolute_path(tmp_path):
    """The missing-contract message names the expected files, not the host path."""
    with pytest.raises(ContractError) as info:
        find_contract(tmp_path)
    assert str(tmp_path) not in info.value.message
    assert "contract.yaml" in info.value.message


def test_unknown_key_did_you_mean(tmp_path):
    """A misspelt key is answered with the closest known field name."""
    c = base_contract()
    c["statistics"]["alhpa"] = 0.05
    del c["statistics"]["alpha"]
    assert "did you mean 'alpha'?" in _refusal(_write_yaml(tmp_path, c)).message


def test_a_key_misplaced_from_another_mapping_is_not_suggested_as_itself(tmp_path):
    """``description`` under ``baseline`` is a known key of the contract, not of a policy: the
    message says so instead of "did you mean 'description'?" (trial-int)."""
    c = base_contract()
    c["baseline"]["description"] = "the production policy"
    message = _refusal(_write_yaml(tmp_path, c)).message
    assert "baseline.description" in message
    assert "did you mean 'description'" not in message
    assert "'description' is a key of another mapping of the contract, not of this one" in message


def test_misspelt_choice_did_you_mean(tmp_path):
    """A misspelt choice (adapter ``ragsa``) is answered with the closest allowed value."""
    c = base_contract()
    c["evidence"][0]["adapter"] = "ragsa"
    err = _refusal(_write_yaml(tmp_path, c))
    assert "evidence[0].adapter" in err.message and "did you mean 'ragas'?" in err.message


def test_unknown_document_reducer_refused_with_key_and_line(tmp_path):
    """``options.document_reducer: Mean`` is refused at its key and line, listing the choices."""
    c = base_contract()
    c["evidence"][0]["options"] = {"document_reducer": "Mean"}
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    where = f"evidence[0].options.document_reducer (line {_line_of(path, 'document_reducer')})"
    assert where in err.message
    assert "expected one of mean, max, any; did you mean 'mean'?" in err.message


def test_known_document_reducer_accepted(tmp_path):
    """Each documented reducer loads."""
    for how in ("mean", "max", "any"):
        c = base_contract()
        c["evidence"][0]["options"] = {"document_reducer": how}
        assert (
            load_contract(_write_yaml(tmp_path, c)).evidence[0].options["document_reducer"] == how
        )


def test_id_with_trailing_space_says_so(tmp_path):
    """``id: "correct "`` is refused at its key and line, naming the white space, not the value."""
    c = base_contract()
    c["quality_metrics"][0]["id"] = "correct "
    path = _write_yaml(tmp_path, c)
    err = _refusal(path)
    assert "quality_metrics[0].id (line " in err.message
    assert "it starts or ends with white space (ids are compared exactly): remove it" in err.message


def test_contract_symlink_outside_input_refused(tmp_path):
    """contract.yaml linked to a file outside the input is refused, as evidence and configs are."""
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(yaml.safe_dump(base_contract()))
    input_dir = tmp_path / "in"
    input_dir.mkdir()
    (input_dir / "contract.yaml").symlink_to(outside)
    with pytest.raises(ContractError) as info:
        find_contract(input_dir)
    assert info.value.code == "path-escapes-input"


def test_contract_symlink_inside_input_accepted(tmp_path):
    """A link that stays inside the input (a Kubernetes ConfigMap's ``..data``) is accepted."""
    data = tmp_path / "in" / "..data"
    data.mkdir(parents=True)
    (data / "contract.yaml").write_text(yaml.safe_dump(base_contract()))
    (tmp_path / "in" / "contract.yaml").symlink_to("..data/contract.yaml")
    assert find_contract(tmp_path / "in") == tmp_path / "in" / "contract.yaml"


def test_contract_fifo_is_a_special_file_not_missing(tmp_path):
    """A FIFO named contract.yaml exists: it is refused as a special file, never read."""
    os.mkfifo(tmp_path / "contract.yaml")
    with pytest.raises(ContractError) as info:
        find_contract(tmp_path)
    assert info.value.code == "path-special-file"
