"""Contract limits: counts past a limit refused at their key, raised by ``limits:`` up to a
ceiling; the seed within 64 bits."""

from __future__ import annotations

import pytest
import yaml

from ragwarrant.contract import load_contract
from ragwarrant.errors import ContractError
from ragwarrant.limits import CEILING_CANDIDATES, MAX_CANDIDATES, MAX_PROTECTED_SLICES
from tests.conftest import base_contract


def write(tmp_path, contract):
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return path


def refusal(tmp_path, contract) -> str:
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, contract))
    assert info.value.code == "contract-invalid"
    return info.value.message


def test_candidates_past_the_limit_are_refused_at_their_key(tmp_path):
    """One candidate more than the default limit is refused, naming the count and the limit."""
    contract = base_contract(MAX_CANDIDATES + 1)
    message = refusal(tmp_path, contract)
    assert f"candidates (line 7): {MAX_CANDIDATES + 1} candidates, past the limit of 64" in message
    contract["limits"] = {"candidates": MAX_CANDIDATES + 1}
    assert len(load_contract(write(tmp_path, contract)).candidates) == MAX_CANDIDATES + 1


def test_a_limit_is_raised_only_up_to_its_ceiling(tmp_path):
    """``limits.candidates`` above its hard ceiling is refused."""
    contract = base_contract()
    contract["limits"] = {"candidates": CEILING_CANDIDATES + 1}
    assert "limits.candidates" in refusal(tmp_path, contract)


def test_protected_slices_past_the_limit_are_refused(tmp_path):
    """One protected slice more than the limit is refused at ``protected_slices``."""
    contract = base_contract()
    contract["protected_slices"] = [{"value": f"s{i}"} for i in range(MAX_PROTECTED_SLICES + 1)]
    assert f"{MAX_PROTECTED_SLICES + 1} protected slices, past the limit" in refusal(
        tmp_path, contract
    )


@pytest.mark.parametrize(("seed", "ok"), [(2**64 - 1, True), (2**64, False), (2**64 + 1, False)])
def test_seed_is_an_unsigned_64_bit_integer(tmp_path, seed, ok):
    """The seed is refused at load past 2^64 - 1 (it crashed the run after deciding)."""
    contract = base_contract()
    contract["statistics"]["seed"] = seed
    if ok:
        assert load_contract(write(tmp_path, contract)).statistics.seed == seed
    else:
        assert "statistics.seed" in refusal(tmp_path, contract)


def test_control_characters_in_a_path_are_refused(tmp_path):
    """A NUL byte (or any control character) in an evidence path is refused at its key."""
    contract = base_contract()
    contract["evidence"][0]["path"] = "evidence/res\x00ults.csv"
    assert "evidence[0].path" in refusal(tmp_path, contract)
    assert "control characters" in refusal(tmp_path, contract)
