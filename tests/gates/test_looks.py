"""Tests of look recognition, the look-evidence gate, the claim ceiling and the replanned hint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from ragwarrant.contract import ReleaseContract, load_contract
from ragwarrant.errors import ContractError
from ragwarrant.evidence.looks import decode_fingerprint, encode_fingerprint, extension_problem
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.gates.ceiling import gate_claim_ceiling
from ragwarrant.gates.looks import EarlierLook, gate_look_evidence, replan_hints, resolve_look
from ragwarrant.outputs import GateResult, GateStatus
from tests.conftest import base_contract

PLAN = {"method": "alpha_spending", "spending": "pocock", "looks": 3, "max_units": 300}


def _contract(tmp_path: Path, sequential: dict | None = None) -> ReleaseContract:
    c = base_contract()
    if sequential is not None:
        c["sequential"] = sequential
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(c, sort_keys=False))
    return load_contract(path)


def _fp(ids: range, shift: int = 0) -> dict[str, np.ndarray]:
    ids_arr = np.array(list(ids), dtype=np.uint64)
    return {
        "ids": ids_arr,
        "keys": ids_arr + 10_000,
        "cells:cand/correct": ids_arr + 20_000 + shift,
    }


def _after(contract: ReleaseContract, fps: list[dict[str, np.ndarray]], units: list[int]):
    earlier: list[EarlierLook] = []
    looks = []
    for i, (fp, n) in enumerate(zip(fps, units, strict=True)):
        look = resolve_look(contract, earlier, fp, n, {"base": "a", "cand": "b"}, f"sha{i}")
        looks.append(look)
        earlier.append(EarlierLook(look.record, f"run{i}", fp))
    return looks


def test_extension_problem_names_what_changed():
    """Gone examples, changed pairing and changed values are told apart, with counts only."""
    earlier = _fp(range(10))
    assert extension_problem(earlier, _fp(range(20))) is None
    assert "3 of the earlier look's 10 examples are gone" in str(
        extension_problem(earlier, _fp(range(3, 20)))
    )
    moved = _fp(range(20))
    moved["keys"] = moved["keys"] + 1
    assert "changed their pairing" in str(extension_problem(earlier, moved))
    assert "values of cand/correct were changed" in str(
        extension_problem(earlier, _fp(range(20), shift=1))
    )


def test_fingerprint_round_trips():
    """Encoding for the ledger and decoding gives the same digest sets."""
    fp = _fp(range(5))
    back = decode_fingerprint(encode_fingerprint(fp))
    assert all(np.array_equal(back[k], fp[k]) for k in fp)


def test_levels_of_recognised_looks_sum_to_at_most_alpha(tmp_path):
    """Three growing looks under a Pocock plan: numbers 1..3, levels summing to alpha."""
    contract = _contract(tmp_path, PLAN)
    looks = _after(contract, [_fp(range(100)), _fp(range(200)), _fp(range(300))], [100, 200, 300])
    assert [lk.record.number for lk in looks] == [1, 2, 3]
    assert looks[2].record.earlier_run_ids == ["run0", "run1"]
    assert sum(lk.alpha for lk in looks) == pytest.approx(0.05)
    assert all(lk.record.confirmatory for lk in looks)


def test_a_fourth_look_beyond_the_plan_is_refused(tmp_path):
    """Once the plan's alpha is spent a further look cannot PROMOTE."""
    contract = _contract(tmp_path, PLAN)
    fps = [_fp(range(n)) for n in (100, 200, 300, 400)]
    looks = _after(contract, fps, [100, 200, 300, 400])
    assert looks[3].record.confirmatory is False and looks[3].record.alpha_this_look == 0.0


def test_without_a_plan_the_second_look_is_refused(tmp_path):
    """Look 2 without a plan keeps alpha for its tests but is not confirmatory."""
    contract = _contract(tmp_path)
    looks = _after(contract, [_fp(range(100)), _fp(range(200))], [100, 200])
    assert looks[0].record.confirmatory and looks[0].alpha == 0.05
    assert not looks[1].record.confirmatory
    ceiling = gate_claim_ceiling(
        EvidenceClass.CONFIRMATORY, EvidenceClass.CONFIRMATORY, looks[1].record.reason
    )
    assert ceiling.status is GateStatus.FAIL
    assert ceiling.details["evidence_class"] == "development"


def test_shrinking_evidence_fails_the_look_gate(tmp_path):
    """A look whose evidence lost earlier examples fails hard:look-evidence."""
    contract = _contract(tmp_path, PLAN)
    looks = _after(contract, [_fp(range(200)), _fp(range(150))], [200, 150])
    gate = gate_look_evidence(looks[1])
    assert gate is not None and gate.status is GateStatus.FAIL and gate.kind == "hard"
    assert gate_look_evidence(looks[0]) is None


def test_hint_counts_units_at_the_next_looks_level(tmp_path):
    """Under a plan the inconclusive gate's hint is recomputed at the next look's level."""
    contract = _contract(tmp_path, PLAN)
    look = _after(contract, [_fp(range(100))], [100])[0]
    gate = GateResult(
        id="noninferiority:correct",
        kind="noninferiority",
        status=GateStatus.INCONCLUSIVE,
        estimate=0.0,
        lower_bound=-0.06,
        upper_bound=0.06,
        threshold=-0.05,
        alpha=look.alpha,
        n=100,
        more_paired_n=40,
        reason="correct: the interval straddles; about 40 more paired examples would likely "
        "resolve it",
        details={"resampled_units": 100, "units": "pairs", "degenerate_reason": None},
    )
    [new] = replan_hints([gate], look, 0.8)
    assert new.more_paired_n is not None and new.more_paired_n != 40
    assert f"about {new.more_paired_n} more paired examples" in new.reason
    assert "at look 2" in new.reason


def test_contract_sequential_block_is_validated_with_its_key(tmp_path):
    """alpha_spending without max_units, or open with looks, is refused naming the key."""
    with pytest.raises(ContractError, match="max_units"):
        _contract(tmp_path, {"method": "alpha_spending", "looks": 3})
    with pytest.raises(ContractError, match="sequential.looks"):
        _contract(tmp_path, {"method": "open", "looks": 3})
    assert _contract(tmp_path, {"method": "open"}).sequential is not None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("no-fingerprint", "look 2: the evidence fingerprint of look 1 (run run0) is missing"),
        ("shrunk", "look 2: the evidence does not extend look 1's: 3 of the earlier look's"),
        ("contract", "look 2: the contract file differs from the one look 1 (run run0) read"),
        ("ledger", "the ledger's hash chain is broken at line 2 (prev-hash): an earlier look"),
        ("configs", "look 2: the policies or their configs differ from look 1's under the same"),
    ],
)
def test_a_blocked_look_is_the_next_number_and_spends_nothing(tmp_path, kind, expected):
    """Every BLOCK of a repeated look: the next number, level 0, the problem as its reason."""
    contract = _contract(tmp_path)
    (first,) = _after(contract, [_fp(range(10))], [10])
    earlier = [
        EarlierLook(
            first.record, "run0", None if kind == "no-fingerprint" else _fp(range(10)), "c0"
        )
    ]
    look = resolve_look(
        contract,
        earlier,
        _fp(range(3, 20)) if kind == "shrunk" else _fp(range(20)),
        20,
        {"base": "a", "cand": "c" if kind == "configs" else "b"},
        "sha1",
        "c1" if kind == "contract" else "c0",
        ledger_break="line 2 (prev-hash)" if kind == "ledger" else None,
    )
    assert look.problem == look.record.reason
    assert look.record.reason.startswith(expected)
    assert (look.record.number, look.record.alpha_this_look) == (2, 0.0)
    assert look.record.blocked and not look.record.confirmatory
    assert look.record.earlier_run_ids == ["run0"]
    if kind != "ledger":
        assert look.record.reason.endswith("is the honest way to start over")


@pytest.mark.parametrize(
    ("configs", "count"),
    [
        ({"base": "a", "cand": "c"}, "1 policy"),  # one re-configured
        ({"cand": "c", "new": "d"}, "3 policies"),  # one removed, one added, one re-configured
    ],
)
def test_changed_configs_count_every_added_removed_or_changed_policy(tmp_path, configs, count):
    """The BLOCK for changed configs counts the policies added, removed or re-configured."""
    contract = _contract(tmp_path)
    (first,) = _after(contract, [_fp(range(10))], [10])
    earlier = [EarlierLook(first.record, "run0", _fp(range(10)), "c0")]
    look = resolve_look(contract, earlier, _fp(range(20)), 20, configs, "sha1", "c0")
    assert f"({count} added, removed or changed in a behavioural key)" in look.record.reason
