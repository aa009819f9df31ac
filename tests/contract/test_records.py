"""Contract errors reach decision.json with their message intact (relative paths, not withheld)."""

from __future__ import annotations

import orjson

from ragwarrant import cli


def _error(out) -> dict:
    return orjson.loads((out / "decision.json").read_bytes())["error"]


def test_missing_contract_message_persisted(tmp_path):
    """A missing contract's persisted message is kept, not replaced by a withheld notice."""
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.mkdir()
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 78
    error = _error(out)
    assert error["code"] == "contract-missing"
    assert "withheld" not in error["message"] and "contract.yaml" in error["message"]


def test_duplicate_key_message_persisted(make_input, tmp_path):
    """A duplicate-key refusal exits 78 and keeps its located message in decision.json."""
    out = tmp_path / "out"
    inp = make_input()
    path = inp / "contract.yaml"
    path.write_text(path.read_text().replace("  seed: 7\n", "  seed: 7\n  seed: 8\n"))
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 78
    error = _error(out)
    assert error["code"] == "contract-duplicate-key"
    assert "statistics.seed (line" in error["message"] and "withheld" not in error["message"]


def test_policy_config_duplicate_key_exit_78(make_input, tmp_path):
    """A policy config with a duplicated key is refused (exit 78), naming the file and key."""
    out = tmp_path / "out"
    inp = make_input()
    (inp / "policies" / "cand.json").write_text('{"model": "a",\n "top_k": 5,\n "top_k": 8}')
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 78
    error = _error(out)
    assert error["code"] == "contract-duplicate-key"
    assert "policies/cand.json" in error["message"] and "top_k (line 3)" in error["message"]


def test_policy_config_non_finite_exit_78(make_input, tmp_path):
    """``.inf`` in a YAML policy config is refused (exit 78), not a crash."""
    out = tmp_path / "out"
    inp = make_input(mutate=lambda c: c["candidates"][0].update({"config": "policies/cand.yaml"}))
    (inp / "policies" / "cand.yaml").write_text("model: a\ntemperature: .inf\n")
    assert cli.main(["run", "--input", str(inp), "--output", str(out)]) == 78
    error = _error(out)
    assert error["code"] == "contract-non-finite" and "temperature (line 2)" in error["message"]
