"""End to end: repeated looks through the CLI with --ledger (issue 17)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import orjson

from ragwarrant import cli
from ragwarrant.audit.ledger import read_entries, verify_chain
from ragwarrant.audit.looks import look_evidence_path
from tests.conftest import REPO, base_contract, simulate

PLAN = {"method": "alpha_spending", "spending": "obrien_fleming", "looks": 2, "max_units": 400}
FULL = simulate(400)


def _head(n: int, data: dict[str, dict[str, np.ndarray]] = FULL) -> dict[str, Any]:
    return {p: {k: v[:n] for k, v in cols.items()} for p, cols in data.items()}


def _run(
    make_input, tmp_path: Path, name: str, data, plan=None, *, configs=None, edit=None
) -> dict[str, Any]:
    def mutate(c: dict[str, Any]) -> None:
        if plan is not None:
            c["sequential"] = plan
        if edit is not None:
            edit(c)

    out = tmp_path / name
    inp = make_input(data=data, mutate=mutate, configs=configs)
    code = cli.main(
        [
            "run",
            "--input",
            str(inp),
            "--output",
            str(out),
            "--ledger",
            str(tmp_path / "ledger.jsonl"),
        ]
    )
    decision = orjson.loads((out / "decision.json").read_bytes())
    assert code == decision["exit_code"]
    schema = json.loads((REPO / "contracts" / "decision.schema.json").read_text())
    jsonschema.validate(decision, schema)
    return decision


def _ceiling(decision: dict[str, Any]) -> dict[str, Any]:
    gates = decision["candidates"][0]["gates"]
    return next(g for g in gates if g["id"] == "claim-ceiling")


def test_second_look_without_a_plan_cannot_promote(make_input, tmp_path):
    """A rerun on extended evidence is look 2; without a plan its ceiling drops to development."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    second = _run(make_input, tmp_path, "out2", _head(400))
    assert first["run_class"] == "PROMOTE" and first["look"]["number"] == 1
    assert second["look"]["number"] == 2
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["look"]["confirmatory"] is False
    assert second["run_class"] == "INCONCLUSIVE"
    assert _ceiling(second)["status"] == "fail"
    assert _ceiling(second)["details"]["evidence_class"] == "development"
    assert "without a sequential plan" in _ceiling(second)["reason"]


def test_two_looks_under_a_plan_spend_at_most_alpha(make_input, tmp_path):
    """Under an O'Brien-Fleming plan look 1 and look 2 test at levels that sum to alpha; the
    ledger and decision.json carry the look history and the ledger chain stays intact."""
    first = _run(make_input, tmp_path, "out1", _head(200), PLAN)
    second = _run(make_input, tmp_path, "out2", _head(400), PLAN)
    a1, a2 = first["look"]["alpha_this_look"], second["look"]["alpha_this_look"]
    assert 0 < a1 < a2 and a1 + a2 <= 0.05 + 1e-12
    assert second["look"]["alpha_spent"] == a1 + a2
    ni = [g for g in second["candidates"][0]["gates"] if g["kind"] == "noninferiority"]
    assert ni and all(g["alpha"] == a2 for g in ni)
    assert second["run_class"] == "PROMOTE"
    ledger = tmp_path / "ledger.jsonl"
    assert verify_chain(ledger) == []
    looks = [e["look"] for e in read_entries(ledger)]
    assert [lk["number"] for lk in looks] == [1, 2]
    assert look_evidence_path(ledger, second["run_id"]).is_file()
    assert "look 2" in (tmp_path / "out2" / "report.md").read_text()


def test_same_evidence_repeats_the_look(make_input, tmp_path):
    """Rerunning on exactly the same evidence is the same look at the same level, not a new one."""
    first = _run(make_input, tmp_path, "out1", _head(300))
    again = _run(make_input, tmp_path, "out2", _head(300))
    assert again["look"]["number"] == 1 and again["look"]["repeat_of"] == first["run_id"]
    assert again["run_class"] == first["run_class"] == "PROMOTE"


def test_shrinking_evidence_blocks(make_input, tmp_path):
    """A later look with fewer examples than the earlier one is a BLOCK with the reason."""
    _run(make_input, tmp_path, "out1", _head(300), PLAN)
    second = _run(make_input, tmp_path, "out2", _head(200), PLAN)
    assert second["run_class"] == "BLOCK"
    gate = next(g for g in second["run_gates"] if g["id"] == "hard:look-evidence")
    assert "100 of the earlier look's 300 examples are gone" in gate["reason"]
    assert "new contract version" in gate["reason"]


def test_changed_earlier_values_block(make_input, tmp_path):
    """Extending the evidence while changing an earlier example's value is a BLOCK."""
    _run(make_input, tmp_path, "out1", _head(200), PLAN)
    changed = copy.deepcopy(_head(400))
    changed["cand"]["correct"][5] = 1.0 - changed["cand"]["correct"][5]
    second = _run(make_input, tmp_path, "out2", changed, PLAN)
    gate = next(g for g in second["run_gates"] if g["id"] == "hard:look-evidence")
    assert "1 of the earlier look's 200 values of cand/correct were changed" in gate["reason"]


def test_changed_pairing_blocks(make_input, tmp_path):
    """Moving an earlier example to another cluster changes its pairing: a BLOCK."""
    _run(make_input, tmp_path, "out1", _head(200), PLAN)
    changed = copy.deepcopy(_head(400))
    for p in changed:
        changed[p]["doc"] = changed[p]["doc"].astype(object)
        changed[p]["doc"][0] = "moved"
    second = _run(make_input, tmp_path, "out2", changed, PLAN)
    gate = next(g for g in second["run_gates"] if g["id"] == "hard:look-evidence")
    assert "changed their pairing" in gate["reason"]


def _run_other(
    make_input, tmp_path: Path, name: str, mutate, *, configs=None, new_ids: bool = False
) -> dict[str, Any]:
    """Run on 400 examples under a mutated contract (another version or id) on the ledger."""
    out = tmp_path / name
    inp = make_input(data=_head(400), mutate=mutate, configs=configs)
    if new_ids:
        csv = inp / "evidence" / "results.csv"
        csv.write_text(csv.read_text().replace("\nex", "\nnew"))
    cli.main(
        [
            "run",
            "--input",
            str(inp),
            "--output",
            str(out),
            "--ledger",
            str(tmp_path / "ledger.jsonl"),
        ]
    )
    return orjson.loads((out / "decision.json").read_bytes())


def _bump(c: dict[str, Any]) -> None:
    c["version"] = "1.0.1"


def _rename(c: dict[str, Any]) -> None:
    c["id"] = c["id"] + "-renamed"


def test_a_new_contract_version_on_new_examples_starts_over(make_input, tmp_path):
    """Another contract version (and config) decided on examples no earlier look saw is a new
    study: look 1 at full alpha, linked to nothing."""
    _run(make_input, tmp_path, "out1", _head(200))
    configs = {"cand": {"model": "cand", "top_k": 8}}
    second = _run_other(make_input, tmp_path, "out2", _bump, configs=configs, new_ids=True)
    assert second["look"]["number"] == 1 and second["look"]["confirmatory"] is True
    assert second["look"]["earlier_run_ids"] == []
    assert second["run_class"] == "PROMOTE"


def test_a_new_contract_version_on_seen_evidence_cannot_promote(make_input, tmp_path):
    """A patch bump rerun on the earlier look's examples plus more is not a fresh full-alpha
    look (third trial: it PROMOTEd as look 1): its ceiling drops to development."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    second = _run_other(make_input, tmp_path, "out2", _bump)
    assert second["look"]["number"] == 2 and second["look"]["confirmatory"] is False
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["run_class"] == "INCONCLUSIVE"
    assert "already looked at" in _ceiling(second)["reason"]


def test_a_renamed_contract_on_seen_evidence_cannot_promote(make_input, tmp_path):
    """Renaming the contract id does not make the same comparison on seen evidence look 1."""
    _run(make_input, tmp_path, "out1", _head(200))
    second = _run_other(make_input, tmp_path, "out2", _rename)
    assert second["look"]["confirmatory"] is False and second["run_class"] == "INCONCLUSIVE"


def test_a_re_configured_candidate_on_seen_examples_is_a_later_look(make_input, tmp_path):
    """Another config in a behavioural key for the same candidate name, on the same examples,
    is still a look at that data under that name: a later look that cannot PROMOTE (it used to
    be look 1 at full alpha)."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    configs = {"cand": {"model": "cand", "top_k": 8}}
    second = _run_other(make_input, tmp_path, "out2", _bump, configs=configs)
    assert second["look"]["number"] == 2 and second["look"]["confirmatory"] is False
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["run_class"] == "INCONCLUSIVE"


def _attempt(k: int) -> dict[str, dict[str, Any]]:
    """The fixture's candidate config with a note "attempt k" (cosmetic)."""
    return {"cand": {"model": "cand", "top_k": 5, "note": f"attempt {k}"}}


def test_new_versions_with_a_new_note_on_seen_examples_are_linked(make_input, tmp_path):
    """Each retry under a new contract version and a new note in the candidate's config, on
    the old examples plus more, is the study's next look, linked to every earlier run (it used
    to be a fresh look 1 at full alpha each time: issue 33)."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    second = _run(make_input, tmp_path, "out2", _head(300), configs=_attempt(2), edit=_bump)
    third = _run(
        make_input, tmp_path, "out3", _head(400), configs=_attempt(3),
        edit=lambda c: c.update(version="1.0.2"),
    )  # fmt: skip
    assert first["look"]["number"] == 1 and first["run_class"] == "PROMOTE"
    assert second["look"]["number"] == 2 and third["look"]["number"] == 3
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert third["look"]["earlier_run_ids"] == [first["run_id"], second["run_id"]]
    assert [d["run_class"] for d in (second, third)] == ["INCONCLUSIVE", "INCONCLUSIVE"]


def test_a_renamed_candidate_with_a_new_note_is_linked_by_its_config(make_input, tmp_path):
    """Renaming the candidate and changing only its note keeps its behavioural config: on the
    same examples under a new version it is a later look of the study."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    data = {("cand2" if p == "cand" else p): cols for p, cols in _head(400).items()}
    configs = {"cand2": {"model": "cand", "top_k": 5, "note": "renamed"}}

    def rename(c: dict[str, Any]) -> None:
        _bump(c)
        c["candidates"][0]["policy_id"] = "cand2"

    second = _run(make_input, tmp_path, "out2", data, configs=configs, edit=rename)
    assert second["look"]["number"] == 2
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["run_class"] == "INCONCLUSIVE"


def test_a_cosmetic_config_change_is_the_plans_next_look(make_input, tmp_path):
    """Under one contract version and plan, a candidate config that differs only by its note
    and a key the contract declares non-behavioural is the same config: look 2 at the plan's
    look-2 level, linked to look 1 (not a BLOCK, not a fresh look 1)."""

    def declare(c: dict[str, Any]) -> None:
        c["non_behavioural_config_keys"] = ["meta.owner"]

    def owned(owner: str, **more: str) -> dict[str, dict[str, Any]]:
        return {"cand": {"model": "cand", "top_k": 5, "meta": {"owner": owner}, **more}}

    first = _run(make_input, tmp_path, "out1", _head(200), PLAN, configs=owned("a"), edit=declare)
    cosmetic = owned("b", note="attempt 2")
    second = _run(make_input, tmp_path, "out2", _head(400), PLAN, configs=cosmetic, edit=declare)
    ref = tmp_path / "ref"
    ref.mkdir()
    reference = _run(make_input, ref, "out", _head(200), PLAN, configs=owned("a"), edit=declare)
    plain = _run(make_input, ref, "out2", _head(400), PLAN, configs=owned("a"), edit=declare)
    assert second["look"]["number"] == 2
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["look"]["alpha_this_look"] == plain["look"]["alpha_this_look"]
    assert first["look"]["alpha_this_look"] == reference["look"]["alpha_this_look"]
    assert second["look"]["alpha_spent"] <= 0.05 + 1e-12
    assert second["look"]["confirmatory"] is True and second["run_class"] == "PROMOTE"


def test_a_missing_fingerprint_blocks(make_input, tmp_path):
    """Without the earlier look's fingerprint the extension cannot be proved: a BLOCK."""
    first = _run(make_input, tmp_path, "out1", _head(200), PLAN)
    look_evidence_path(tmp_path / "ledger.jsonl", first["run_id"]).unlink()
    second = _run(make_input, tmp_path, "out2", _head(400), PLAN)
    assert second["run_class"] == "BLOCK"


def test_a_fingerprint_replaced_by_a_directory_is_a_typed_error_naming_it(make_input, tmp_path):
    """A kept fingerprint that is no longer a regular file stops the next run with
    ``ledger-unreadable`` (exit 66) naming that file, instead of counting it as missing."""
    first = _run(make_input, tmp_path, "out1", _head(200), PLAN)
    kept = look_evidence_path(tmp_path / "ledger.jsonl", first["run_id"])
    kept.unlink()
    kept.mkdir()
    second = _run(make_input, tmp_path, "out2", _head(400), PLAN)
    assert (second["exit_code"], second["error"]["code"]) == (66, "ledger-unreadable")
    assert f"evidence fingerprint ledger.jsonl.looks/{kept.name} " in second["error"]["message"]
    assert "not a regular file" in second["error"]["message"]


def test_verify_replays_a_second_look_at_its_level(make_input, tmp_path):
    """verify --input replays look 2 at its recorded level (a replay has no ledger) and matches."""
    _run(make_input, tmp_path, "out1", _head(200), PLAN)
    second = _run(make_input, tmp_path, "out2", _head(400), PLAN)
    assert second["look"]["number"] == 2
    inp = sorted(tmp_path.glob("in*"))[-1]
    assert cli.main(["verify", str(tmp_path / "out2"), "--input", str(inp)]) == 0


def _run_dir(inp: Path, tmp_path: Path, name: str) -> dict[str, Any]:
    out = tmp_path / name
    ledger = tmp_path / "ledger.jsonl"
    code = cli.main(["run", "--input", str(inp), "--output", str(out), "--ledger", str(ledger)])
    decision = orjson.loads((out / "decision.json").read_bytes())
    assert code == decision["exit_code"]
    return decision


def test_a_changed_contract_under_the_same_version_blocks(make_input, tmp_path):
    """A wider margin (or a dropped slice) under the same id and version is no repeat of look 1:
    the run BLOCKs (it used to PROMOTE as "look 1 repeated at its level"; fresh-user trial)."""
    first = _run_dir(make_input(data=_head(200)), tmp_path, "out1")
    assert first["look"]["number"] == 1

    def wider(c: dict[str, Any]) -> None:
        c["quality_metrics"][0]["margin_abs"] = 0.09

    second = _run_dir(make_input(data=_head(200), mutate=wider), tmp_path, "out2")
    assert second["run_class"] == "BLOCK"
    gate = next(g for g in second["run_gates"] if g["id"] == "hard:look-evidence")
    assert gate["status"] == "fail" and "contract file differs" in gate["reason"]


def test_a_reformatted_config_is_the_same_config(make_input, tmp_path):
    """Re-indenting a policy config does not make a run a first look (it used to)."""
    first = _run_dir(make_input(data=_head(200)), tmp_path, "out1")
    inp = make_input(data=_head(400))
    for cfg in (inp / "policies").iterdir():
        cfg.write_bytes(orjson.dumps(orjson.loads(cfg.read_bytes()), option=orjson.OPT_INDENT_2))
    second = _run_dir(inp, tmp_path, "out2")
    assert second["look"]["number"] == 2
    assert second["look"]["earlier_run_ids"] == [first["run_id"]]
    assert second["run_class"] != "PROMOTE"  # no plan: a repeated look cannot PROMOTE


def test_a_changed_config_under_the_same_version_blocks(make_input, tmp_path):
    """Adding a behavioural key to a config (or renaming, adding a policy) under the same
    contract id and version BLOCKs; it used to start a fresh look 1 at full alpha (fresh-user
    re-trial)."""
    first = _run_dir(make_input(data=_head(200)), tmp_path, "out1")
    inp = make_input(data=_head(400))
    cfg = next(iter(sorted((inp / "policies").iterdir())))
    cfg.write_bytes(orjson.dumps({**orjson.loads(cfg.read_bytes()), "retriever": "bm25"}))
    second = _run_dir(inp, tmp_path, "out2")
    assert first["look"]["number"] == 1
    assert second["run_class"] == "BLOCK"
    gate = next(g for g in second["run_gates"] if g["id"] == "hard:look-evidence")
    assert "configs differ" in gate["reason"]


def _run_together(inputs: list[Path], tmp_path: Path) -> list[dict[str, Any]]:
    """Start one ``ragwarrant run`` process per input on one ledger at once; their decisions."""
    import subprocess
    import sys

    ledger = tmp_path / "ledger.jsonl"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragwarrant",
                "run",
                "--input",
                str(inp),
                "--output",
                str(tmp_path / f"o{i}"),
                "--ledger",
                str(ledger),
            ],  # fmt: skip
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i, inp in enumerate(inputs)
    ]
    for proc in procs:
        proc.wait(timeout=300)
    return [
        orjson.loads((tmp_path / f"o{i}" / "decision.json").read_bytes())
        for i in range(len(inputs))
    ]


def _overlapping_pairs(decisions: list[dict[str, Any]]) -> int:
    """Pairs of decided runs whose [started_at, finished_at] intervals overlap."""
    spans = [(d["started_at"], d["finished_at"]) for d in decisions if d["contract"]]
    return sum(
        1 for i, (s1, f1) in enumerate(spans) for s2, f2 in spans[i + 1 :] if s1 < f2 and s2 < f1
    )


def test_concurrent_runs_of_four_contracts_share_one_ledger_in_parallel(make_input, tmp_path):
    """Four contracts (each of its own candidate) run at once on one ledger overlap (no lock
    held across a run; under the old run lock 0 of 6 pairs overlapped), each is a first look,
    and the chain verifies with exactly one entry per run."""
    candidate = base_contract()["candidates"][0]["policy_id"]

    def contract(i: int) -> Path:
        def mutate(c: dict[str, Any]) -> None:
            c["id"] = f"fanout-{i}"
            c["candidates"][0]["policy_id"] = f"{candidate}{i}"

        data = {(f"{p}{i}" if p == candidate else p): v for p, v in _head(400).items()}
        return make_input(data=data, mutate=mutate)

    decisions = _run_together([contract(i) for i in range(4)], tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    assert [d["run_class"] for d in decisions] == ["PROMOTE"] * 4
    assert all(d["look"]["number"] == 1 and d["look"]["confirmatory"] for d in decisions)
    assert verify_chain(ledger) == []
    entries = read_entries(ledger)
    assert sorted(e["run_id"] for e in entries) == sorted(d["run_id"] for d in decisions)
    assert [e["seq"] for e in entries] == [1, 2, 3, 4]
    assert _overlapping_pairs(decisions) >= 1
    assert not ledger.with_name("ledger.jsonl.lock").exists()


def test_concurrent_looks_of_one_contract_are_counted_or_refused(make_input, tmp_path):
    """Four runs of one contract on growing evidence, started at once on one ledger: every
    entry counts exactly the looks appended before it, none is lost or duplicated, and a run
    whose look went stale while it decided is refused (``ledger-look-stale``), never recorded
    as a fresh full-alpha look."""
    decisions = _run_together([make_input(data=_head(n)) for n in (100, 200, 300, 400)], tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    refused = [d for d in decisions if d["run_class"] == "ERROR"]
    decided = [d for d in decisions if d["run_class"] != "ERROR"]
    assert decided and all(d["error"]["code"] == "ledger-look-stale" for d in refused)
    assert verify_chain(ledger) == []
    entries = read_entries(ledger)
    assert sorted(e["run_id"] for e in entries) == sorted(d["run_id"] for d in decisions)
    looks = [e for e in entries if e["run_class"] != "ERROR"]  # the cli records a refusal too
    assert len(looks) == len(decided)
    counted: list[str] = []
    for e in looks:
        assert e["look"]["earlier_run_ids"] == counted, e["look"]
        if not e["look"]["blocked"]:
            assert e["look"]["number"] == len(counted) + 1
            counted.append(e["run_id"])
    firsts = [e for e in looks if e["look"]["number"] == 1 and not e["look"]["blocked"]]
    assert len(firsts) == 1


def test_a_plan_without_a_ledger_is_refused_with_an_error_record(make_input, tmp_path):
    """A sequential plan run without --ledger exits 64 and records why, deciding nothing."""

    def mutate(c: dict[str, Any]) -> None:
        c["sequential"] = PLAN

    out = tmp_path / "out"
    code = cli.main(
        ["run", "--input", str(make_input(data=_head(200), mutate=mutate)), "--output", str(out)]
    )
    decision = orjson.loads((out / "decision.json").read_bytes())
    assert (code, decision["run_class"]) == (64, "ERROR")
    assert decision["error"]["code"] == "sequential-plan-needs-ledger"
    assert decision["candidates"] == []


def test_a_broken_ledger_chain_blocks_instead_of_resetting_the_looks(make_input, tmp_path):
    """Deleting an earlier look's ledger line (the chain shows the gap) must not make the next
    run look 1 at full alpha: the run BLOCKs naming the broken line (trial-int)."""
    first = _run(make_input, tmp_path, "out1", _head(200))
    other = make_input(data=_head(200), mutate=lambda c: c.update(version="2"))
    ledger_arg = ["--ledger", str(tmp_path / "ledger.jsonl")]
    cli.main(["run", "--input", str(other), "--output", str(tmp_path / "v2"), *ledger_arg])
    ledger = tmp_path / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(lines[1:]))  # the forger drops look 1
    third = _run(make_input, tmp_path, "out3", _head(400))
    assert first["run_class"] == "PROMOTE"
    assert third["run_class"] == "BLOCK"
    gate = next(g for g in third["run_gates"] if g["id"] == "hard:look-evidence")
    assert "ledger's hash chain is broken at line 1 (prev-hash)" in gate["reason"]
    assert third["look"]["confirmatory"] is False


def test_a_torn_last_ledger_line_costs_no_look(make_input, tmp_path):
    """A torn last line (a run killed while appending) is quarantined, not a broken chain."""
    _run(make_input, tmp_path, "out1", _head(200))
    ledger = tmp_path / "ledger.jsonl"
    with ledger.open("ab") as fh:
        fh.write(b'{"seq": 2, "prev')
    second = _run(make_input, tmp_path, "out2", _head(200))
    assert second["run_class"] == "PROMOTE"
    assert second["look"]["number"] == 1


def test_a_look_made_stale_by_another_run_is_refused_at_append(make_input, tmp_path, monkeypatch):
    """A run that read the ledger before another run of its contract appended a look is refused
    at its append (``ledger-look-stale``, exit 73), leaving the ledger as the other run left it,
    and never recorded as a second look 1."""
    from ragwarrant.audit import looks as audit_looks

    ledger = tmp_path / "ledger.jsonl"
    before = audit_looks.read_looks(ledger, "fixture", "1")  # what a slower run read
    first = _run(make_input, tmp_path, "out1", _head(200))
    monkeypatch.setattr(audit_looks, "read_looks", lambda *a: before)
    written = ledger.read_bytes()
    code = cli.main(
        [
            "run",
            "--input",
            str(make_input(data=_head(400))),
            "--output",
            str(tmp_path / "out2"),
            "--ledger",
            str(ledger),
        ]  # fmt: skip
    )
    decision = orjson.loads((tmp_path / "out2" / "decision.json").read_bytes())
    assert (code, decision["error"]["code"]) == (73, "ledger-look-stale")
    assert "decided as look 1; counted now it is look 2," in decision["error"]["message"]
    entries = read_entries(ledger)
    assert ledger.read_bytes().startswith(written) and len(entries) == 2
    assert [e["run_class"] for e in entries] == [first["run_class"], "ERROR"]
    assert verify_chain(ledger) == []


def test_a_concurrent_run_on_identical_evidence_is_a_repeat_not_stale(
    make_input, tmp_path, monkeypatch
):
    """A run that read the ledger before another run of its contract appended a look on the
    very same evidence recounts as a repeat of that look at the same level: its decision stands
    and is appended (trial: "decided as look 1; counted now it is look 1" was refused)."""
    from ragwarrant.audit import looks as audit_looks

    ledger = tmp_path / "ledger.jsonl"
    before = audit_looks.read_looks(ledger, "fixture", "1")  # what a slower run read
    first = _run(make_input, tmp_path, "out1", _head(200))
    monkeypatch.setattr(audit_looks, "read_looks", lambda *a: before)
    second = _run(make_input, tmp_path, "out2", _head(200))
    assert first["run_class"] == second["run_class"] == "PROMOTE"
    assert second["look"]["number"] == 1
    entries = read_entries(ledger)
    assert [e["run_id"] for e in entries] == [first["run_id"], second["run_id"]]
    assert verify_chain(ledger) == []


def test_six_concurrent_runs_on_identical_evidence_all_decide(make_input, tmp_path):
    """Six processes on one input and one ledger at once: every run decides (PROMOTE, look 1),
    none is refused as stale, and the chain holds one entry per run."""
    inp = make_input(data=_head(200))
    decisions = _run_together([inp] * 6, tmp_path)
    assert [d["run_class"] for d in decisions] == ["PROMOTE"] * 6
    assert all(d["look"]["number"] == 1 for d in decisions)
    ledger = tmp_path / "ledger.jsonl"
    assert verify_chain(ledger) == []
    entries = read_entries(ledger)
    assert sorted(e["run_id"] for e in entries) == sorted(d["run_id"] for d in decisions)
