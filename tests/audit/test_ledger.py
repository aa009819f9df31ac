"""Tests of the evidence ledger: chaining, tamper detection, concurrency, entries and history."""

from __future__ import annotations

import base64
import hashlib
import json
import multiprocessing
from pathlib import Path
from typing import Any

import orjson
import pytest

from ragwarrant.audit.ledger import (
    GENESIS_HASH,
    Ledger,
    append_entry,
    entry_hash,
    is_marker,
    read_entries,
    verify_chain,
)
from ragwarrant.audit.ledger_history import build_entry, drifting_slices, show_history
from ragwarrant.audit.looks import LookEntries, read_looks
from ragwarrant.errors import InputError, InternalError, OutputError

from .conftest import Run


def _entry(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "run_id": f"run-{i}",
        "time": f"2026-11-{i:02d}T00:00:00Z",
        "run_class": "PROMOTE",
        **extra,
    }


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _chain(tmp_path: Path, n: int) -> tuple[Path, list[bytes]]:
    """A ledger of ``n`` appended entries, and its lines."""
    ledger = tmp_path / "ledger.jsonl"
    for i in range(1, n + 1):
        append_entry(ledger, _entry(i))
    return ledger, _lines(ledger)


def test_append_chains_entries(tmp_path: Path) -> None:
    """Each entry links to the previous entry's hash and hashes to its own entry_hash."""
    ledger = tmp_path / "ledger.jsonl"
    written = [append_entry(ledger, _entry(i)) for i in range(1, 4)]
    assert [e["seq"] for e in written] == [1, 2, 3]
    assert written[0]["prev_hash"] == GENESIS_HASH
    assert written[1]["prev_hash"] == written[0]["entry_hash"]
    assert written[2]["prev_hash"] == written[1]["entry_hash"]
    on_disk = [json.loads(line) for line in _lines(ledger)]
    assert on_disk == written
    for e in on_disk:
        body = {k: v for k, v in e.items() if k != "entry_hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert hashlib.sha256(canonical.encode()).hexdigest() == e["entry_hash"]
    assert verify_chain(ledger) == []


def test_entry_hash_ignores_only_entry_hash() -> None:
    """entry_hash covers every field except itself."""
    e = {"a": 1, "prev_hash": GENESIS_HASH, "seq": 1}
    h = entry_hash(e)
    assert entry_hash({**e, "entry_hash": "x"}) == h
    assert entry_hash({**e, "a": 2}) != h


def test_edited_entry_is_named(tmp_path: Path) -> None:
    """Changing one entry's content is reported at that line, as an entry-hash break."""
    ledger, lines = _chain(tmp_path, 4)
    lines[1] = lines[1].replace(b'"PROMOTE"', b'"REJECT"')
    ledger.write_bytes(b"".join(lines))
    problems = verify_chain(ledger)
    assert [(p.line, p.kind) for p in problems] == [(2, "entry-hash")]


def test_rehashed_edit_breaks_the_next_link(tmp_path: Path) -> None:
    """An edit whose entry_hash is recomputed is caught by the next entry's prev_hash."""
    ledger, lines = _chain(tmp_path, 3)
    forged = orjson.loads(lines[1])
    forged["run_class"] = "REJECT"
    forged["entry_hash"] = entry_hash(forged)
    lines[1] = orjson.dumps(forged, option=orjson.OPT_SORT_KEYS) + b"\n"
    ledger.write_bytes(b"".join(lines))
    problems = verify_chain(ledger)
    assert [(p.line, p.kind) for p in problems] == [(3, "prev-hash")]


def test_deleted_and_reordered_entries_are_named(tmp_path: Path) -> None:
    """Deleting or swapping entries breaks the chain at the first affected line."""
    ledger, lines = _chain(tmp_path, 4)
    ledger.write_bytes(b"".join([lines[0], lines[2], lines[3]]))
    assert verify_chain(ledger)[0].line == 2
    assert verify_chain(ledger)[0].kind == "prev-hash"
    ledger.write_bytes(b"".join([lines[0], lines[2], lines[1], lines[3]]))
    assert verify_chain(ledger)[0].line == 2


def test_torn_tail_is_quarantined_and_the_append_succeeds(tmp_path: Path) -> None:
    """A half-written last line is kept in a marker entry; the new entry chains after it."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, _entry(1))
    torn = b'{"run_id": "half'
    with ledger.open("ab") as fh:
        fh.write(torn)
    assert [p.kind for p in verify_chain(ledger)][:1] == ["torn"]
    written = append_entry(ledger, _entry(2))
    assert verify_chain(ledger) == []
    assert [(q.line, q.marker_line, q.size_bytes) for q in Ledger.read(ledger).quarantined()] == [
        (2, 3, len(torn))
    ]
    entries = read_entries(ledger)
    marker = entries[1]
    assert is_marker(marker)
    assert base64.b64decode(marker["quarantined"]["base64"]) == torn
    assert (
        (entries[-1]["run_id"], entries[-1]["seq"])
        == ("run-2", 3)
        == (
            written["run_id"],
            written["seq"],
        )
    )
    append_entry(ledger, _entry(3))
    assert verify_chain(ledger) == []


def test_whole_entry_without_newline_is_completed_not_quarantined(tmp_path: Path) -> None:
    """A last entry missing only its newline gets the newline and stays in the chain."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, _entry(1))
    ledger.write_bytes(ledger.read_bytes().rstrip(b"\n"))
    append_entry(ledger, _entry(2))
    assert verify_chain(ledger) == []
    assert Ledger.read(ledger).quarantined() == []
    assert [e["run_id"] for e in read_entries(ledger)] == ["run-1", "run-2"]


def test_garbage_last_line_with_newline_is_quarantined(tmp_path: Path) -> None:
    """A complete but unparseable last line is quarantined too; two damaged lines are refused."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, _entry(1))
    with ledger.open("ab") as fh:
        fh.write(b"not json\n")
    append_entry(ledger, _entry(2))
    assert verify_chain(ledger) == []
    with ledger.open("ab") as fh:
        fh.write(b"bad\nworse\n")
    with pytest.raises(OutputError) as err:
        append_entry(ledger, _entry(3))
    assert err.value.code == "ledger-corrupt"


def test_edited_quarantined_bytes_break_the_chain(tmp_path: Path) -> None:
    """Changing the quarantined line afterwards is no longer covered by its marker."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, _entry(1))
    with ledger.open("ab") as fh:
        fh.write(b'{"run_id": "half')
    append_entry(ledger, _entry(2))
    ledger.write_bytes(ledger.read_bytes().replace(b'"half', b'"hal!'))
    assert [p.line for p in verify_chain(ledger)][:1] == [2]


def test_long_entries_chain(tmp_path: Path) -> None:
    """Entries of hundreds of kilobytes chain and read back like short ones."""
    ledger = tmp_path / "ledger.jsonl"
    big = "x" * 200_000
    for i in range(1, 4):
        append_entry(ledger, _entry(i, note=big))
    assert verify_chain(ledger) == []
    assert [e["seq"] for e in read_entries(ledger)] == [1, 2, 3]


def test_non_finite_value_is_refused(tmp_path: Path) -> None:
    """NaN never reaches the ledger (JSON would silently turn it into null)."""
    with pytest.raises(InternalError) as err:
        append_entry(tmp_path / "l.jsonl", _entry(1, bound=float("nan")))
    assert err.value.code == "ledger-non-finite"
    assert not (tmp_path / "l.jsonl").exists() or (tmp_path / "l.jsonl").read_bytes() == b""


def test_unreadable_ledger_is_an_input_error(tmp_path: Path) -> None:
    """Verifying a missing ledger raises a typed error naming the file."""
    with pytest.raises(InputError) as err:
        verify_chain(tmp_path / "missing.jsonl")
    assert err.value.code == "ledger-unreadable"


def _worker(args: tuple[str, int, int]) -> tuple[int, str | None]:
    path, worker, count = args
    for i in range(count):
        try:
            append_entry(Path(path), {"run_id": f"w{worker}-{i}", "worker": worker, "i": i})
        except OutputError as exc:  # report instead of raising: the pool cannot pickle it
            return i, f"{exc.code}: {exc.message}"
    return count, None


def test_concurrent_appends_never_interleave_or_lose(tmp_path: Path) -> None:
    """8 processes x 50 appends: the chain is intact and all 400 entries are present once."""
    ledger = tmp_path / "ledger.jsonl"
    workers, per_worker = 8, 50
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        done = pool.map(_worker, [(str(ledger), w, per_worker) for w in range(workers)])
    assert [error for _, error in done] == [None] * workers
    assert sum(n for n, _ in done) == workers * per_worker
    assert verify_chain(ledger) == []
    entries = read_entries(ledger)
    assert len(entries) == workers * per_worker
    assert [e["seq"] for e in entries] == list(range(1, workers * per_worker + 1))
    assert {(e["worker"], e["i"]) for e in entries} == {
        (w, i) for w in range(workers) for i in range(per_worker)
    }


def _decision(**overrides: Any) -> dict[str, Any]:
    gate_ni = {
        "id": "noninferiority:q",
        "kind": "noninferiority",
        "status": "pass",
        "metric": "q",
        "estimate": 0.01,
        "lower_bound": -0.02,
        "upper_bound": None,
        "threshold": -0.05,
        "reason": "ok",
    }
    gate_hard = {"id": "hard:duplicate-rows", "kind": "hard", "status": "fail", "reason": "dup"}
    base = {
        "run_id": "r1",
        "started_at": "2026-11-29T10:00:00Z",
        "finished_at": "2026-11-29T10:00:05Z",
        "contract": {"id": "c1", "version": "1", "path": "contract.yaml", "sha256": "a" * 64},
        "run_class": "BLOCK",
        "exit_code": 12,
        "evidence_class": "confirmatory",
        "selected_policy": None,
        "run_gates": [
            {"id": "hard:publication-hygiene", "kind": "hard", "status": "fail", "reason": "x"}
        ],
        "candidates": [
            {
                "policy_id": "cand",
                "class": "BLOCK",
                "reasons": ["blocked"],
                "tested_on": "test",
                "paired_n": 100,
                "gates": [gate_ni, gate_hard],
            },
            {
                "policy_id": "other",
                "class": "REJECT",
                "reasons": ["no-benefit"],
                "tested_on": "test",
                "paired_n": 100,
                "gates": [],
            },
        ],
    }
    base.update(overrides)
    return base


def test_build_entry_keeps_blocked_and_negative_outcomes() -> None:
    """The entry keeps each candidate's class, blockers and bounds, and run-level blockers."""
    entry = build_entry(_decision(), "m" * 64, "c" * 64)
    assert entry["run_id"] == "r1"
    assert entry["time"] == "2026-11-29T10:00:05Z"
    assert entry["contract"] == {"id": "c1", "version": "1", "sha256": "c" * 64}
    assert entry["manifest_sha256"] == "m" * 64
    assert entry["run_class"] == "BLOCK"
    assert entry["run_failed_gates"] == ["hard:publication-hygiene"]
    cand, other = entry["candidates"]
    assert (cand["policy_id"], cand["class"], cand["failed_gates"]) == (
        "cand",
        "BLOCK",
        ["hard:duplicate-rows"],
    )
    assert cand["bounds"] == [
        {
            "id": "noninferiority:q",
            "status": "pass",
            "metric": "q",
            "estimate": 0.01,
            "lower_bound": -0.02,
            "threshold": -0.05,
        }
    ]
    assert (other["class"], other["reasons"]) == ("REJECT", ["no-benefit"])
    assert entry["abstention"] is None


def test_build_entry_rejects_nan_bounds(tmp_path: Path) -> None:
    """A NaN bound in a decision is a bug, refused before it reaches the ledger."""
    d = _decision()
    d["candidates"][0]["gates"][0]["lower_bound"] = float("nan")
    ledger = tmp_path / "ledger.jsonl"
    with pytest.raises(InternalError, match=r"entry\.candidates\[0\]\.bounds\[0\]"):
        append_entry(ledger, build_entry(d, "m" * 64, "c" * 64))
    assert not ledger.exists()


def test_build_entry_takes_rates_from_the_decision() -> None:
    """corroboration.rates of the decision are kept (counts and rates only), sorted by policy
    and slice."""
    rates = [
        {"policy_id": "zeta", "slice": "QA", "abstention_rate": 0.2, "n_judged": 4},
        {
            "policy_id": "cand",
            "slice": None,
            "abstention_rate": 0.1,
            "disagreement_rate": 0.05,
            "n_abstained": 5,
            "n_with_samples": 50,
            "n_judged": 45,
            "failed_retrieval": 3,
        },
    ]
    entry = build_entry(_decision(corroboration={"rates": rates}), "m" * 64, "c" * 64)
    assert entry["abstention"] == [
        {
            "policy_id": "cand",
            "slice": None,
            "abstention_rate": 0.1,
            "disagreement_rate": 0.05,
            "n_abstained": 5,
            "n_with_samples": 50,
            "n_judged": 45,
        },
        {
            "policy_id": "zeta",
            "slice": "QA",
            "abstention_rate": 0.2,
            "disagreement_rate": None,
            "n_abstained": None,
            "n_with_samples": None,
            "n_judged": 4,
        },
    ]


def test_build_entry_from_a_real_run(real_run: Run) -> None:
    """An entry built from a real decision.json names every candidate with its class."""
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    manifest_sha = hashlib.sha256((real_run.output_dir / "manifest.json").read_bytes()).hexdigest()
    entry = build_entry(decision, manifest_sha, decision["contract"]["sha256"])
    assert [c["policy_id"] for c in entry["candidates"]] == [
        c["policy_id"] for c in decision["candidates"]
    ]
    assert [c["class"] for c in entry["candidates"]] == [c["class"] for c in decision["candidates"]]
    tested = [c for c in entry["candidates"] if c["tested_on"] == "confirmatory"]
    assert tested and all(c["bounds"] for c in tested)
    written = append_entry(real_run.output_dir.parent / "ledger.jsonl", entry)
    assert written["manifest_sha256"] == manifest_sha


def _history_entries(ledger: Path, qa: list[float], summary: list[float]) -> None:
    for i, (a, b) in enumerate(zip(qa, summary, strict=True), start=1):
        d = _decision(run_id=f"r{i}", finished_at=f"2026-11-{i:02d}T00:00:00Z")
        abst = [
            {
                "policy_id": "cand",
                "slice": "QA",
                "abstention_rate": a,
                "disagreement_rate": 0.0,
                "n_judged": 80,
            },
            {
                "policy_id": "cand",
                "slice": "Summary",
                "abstention_rate": b,
                "disagreement_rate": 0.0,
                "n_judged": 80,
            },
        ]
        d["corroboration"] = {"rates": abst}
        append_entry(ledger, build_entry(d, f"{i:064d}", "c" * 64))
    append_entry(
        ledger,
        build_entry(
            _decision(
                run_id="other-contract",
                contract={"id": "c2", "version": "1", "path": "c", "sha256": "d" * 64},
            ),
            "0" * 64,
            "d" * 64,
        ),
    )


def test_drift_flags_only_the_rising_slice(tmp_path: Path) -> None:
    """A slice whose abstention rate rose in each of the last 3 runs is flagged; noise is not."""
    ledger = tmp_path / "ledger.jsonl"
    _history_entries(
        ledger, qa=[0.05, 0.04, 0.06, 0.09, 0.15], summary=[0.05, 0.07, 0.06, 0.08, 0.07]
    )
    flags = drifting_slices(read_entries(ledger))
    assert [(f.contract_id, f.policy_id, f.slice) for f in flags] == [("c1", "cand", "QA")]
    assert flags[0].rates == (0.06, 0.09, 0.15)
    assert flags[0].rise == pytest.approx(0.09)
    assert drifting_slices(read_entries(ledger), min_rise=0.10) == []


def test_show_history_renders_classes_and_drift(tmp_path: Path) -> None:
    """History shows classes over time per contract and policy, and marks the drifting slice."""
    ledger = tmp_path / "ledger.jsonl"
    _history_entries(ledger, qa=[0.01, 0.02, 0.04], summary=[0.03, 0.03, 0.03])
    text = show_history(ledger)
    assert "contract c1 (3 runs)" in text
    assert "contract c2 (1 run)" in text
    assert "policy cand: BLOCK -> BLOCK -> BLOCK" in text
    assert "policy other: REJECT -> REJECT -> REJECT" in text
    qa_line = next(line for line in text.splitlines() if "cand / QA" in line)
    summary_line = next(line for line in text.splitlines() if "cand / Summary" in line)
    assert "0.010  0.020  0.040" in qa_line and "EARLY DRIFT" in qa_line
    assert "EARLY DRIFT" not in summary_line
    only = show_history(ledger, contract="c1", policy="other")
    assert "contract c2" not in only and "policy cand" not in only and "policy other" in only
    assert "WARNING" not in text


def test_show_history_warns_on_a_broken_chain(tmp_path: Path) -> None:
    """A broken chain is announced above the history."""
    ledger = tmp_path / "ledger.jsonl"
    _history_entries(ledger, qa=[0.01, 0.02], summary=[0.01, 0.02])
    lines = _lines(ledger)
    ledger.write_bytes(lines[0] + lines[2])
    assert show_history(ledger).startswith("WARNING: the ledger chain is broken (first: line 2")


def test_show_history_refuses_a_line_that_is_not_an_entry(tmp_path: Path) -> None:
    """A JSON object without the chain fields is not a ledger: a located InputError (66)."""
    ledger = tmp_path / "l.jsonl"
    ledger.write_text('{"a": 1}\n')
    with pytest.raises(InputError) as info:
        show_history(ledger)
    assert info.value.code == "ledger-not-an-entry" and "line 1" in info.value.message
    assert info.value.context["row"] == 1


def test_show_history_renders_a_chained_entry_without_a_class(tmp_path: Path) -> None:
    """A chained entry lacking run_class (or with other fields absent) is shown, not a crash."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, {"run_id": "r1"})
    assert "r1  None" in show_history(ledger)


def test_run_after_a_torn_ledger_line_keeps_its_decision(
    pristine_run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose ledger ends in a torn line decides as usual; ledger verify passes and says so."""
    from ragwarrant.cli import main

    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b'{"ledger_schema": 1, "run_id": "killed-mid-app')
    recorded = orjson.loads((pristine_run.output_dir / "decision.json").read_bytes())
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--input",
            str(pristine_run.input_dir),
            "--output",
            str(out),
            "--ledger",
            str(ledger),
        ]
    )
    assert code == recorded["exit_code"] != 73
    capsys.readouterr()
    assert main(["ledger", "verify", str(ledger)]) == 0
    assert "line 1: quarantined: " in capsys.readouterr().out
    assert [q.line for q in Ledger.read(ledger).quarantined()] == [1]
    assert read_entries(ledger)[-1]["run_class"] == recorded["run_class"]


def test_a_blocked_run_that_tested_a_candidate_is_an_earlier_look(tmp_path: Path) -> None:
    """A BLOCK whose entry holds a noninferiority bound saw the data: it counts as a look (a run
    BLOCKed by another candidate or by hygiene used to be skipped; fresh-user re-trial)."""

    def entry(run_id: str, run_class: str, bounds: list[dict], version: str = "1", **look: object):
        return {
            "run_id": run_id,
            "seq": 1,
            "contract": {"id": "c", "version": version},
            "run_class": run_class,
            "look": {"number": 1, **look},
            "candidates": [{"policy_id": "p", "bounds": bounds}],
        }

    tested = [{"id": "noninferiority:q", "lower_bound": -0.01}]
    appended = [
        entry("tested-block", "BLOCK", tested),
        entry("untested-block", "BLOCK", []),
        entry("error", "ERROR", tested),
        entry("refused", "INCONCLUSIVE", tested, blocked=True),
        entry("inconclusive", "INCONCLUSIVE", []),
        entry("other-version", "PROMOTE", tested, version="2"),
        {**entry("marker", "PROMOTE", tested), "kind": "quarantine"},
    ]
    looks = LookEntries(tmp_path / "ledger.jsonl", "c", "1", (), None, 0).after(appended)
    assert [e["run_id"] for e, _ in looks.earlier()] == ["tested-block", "inconclusive"]
    assert [e["run_id"] for e, _ in looks.others()] == ["other-version"]


def test_append_hands_the_check_the_entries_since_the_read_and_a_refusal_writes_nothing(
    tmp_path,
):
    """``append_entry`` passes its check the entries after ``since_seq`` under the lock; when
    the check raises, the ledger is left byte for byte as it was."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, {"kind": "a"})
    read = read_looks(ledger, "c", "1")
    append_entry(ledger, {"kind": "b"})
    seen: list[list[str]] = []
    append_entry(
        ledger,
        {"kind": "c"},
        since_seq=read.tip_seq,
        check=lambda new: seen.append([e["kind"] for e in new]),
    )
    assert read.tip_seq == 1 and seen == [["b"]]
    before = ledger.read_bytes()

    def refuse(new):
        raise OutputError("ledger-look-stale", "stale")

    with pytest.raises(OutputError):
        append_entry(ledger, {"kind": "d"}, since_seq=read.tip_seq, check=refuse)
    assert ledger.read_bytes() == before


@pytest.mark.parametrize("verb", ["verify", "show"])
def test_ledger_commands_read_the_ledger_once(
    verb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ledger verify and ledger show check and render the bytes of one reading of the file."""
    import ragwarrant.audit.ledger as ledger_module
    from ragwarrant.cli import main

    ledger = tmp_path / "ledger.jsonl"
    for i in (1, 2):
        append_entry(ledger, _entry(i))
    reads: list[Path] = []
    read = ledger_module.read_regular

    def counted(path: Path, **kwargs: Any) -> bytes:
        reads.append(path)
        return read(path, **kwargs)

    monkeypatch.setattr(ledger_module, "read_regular", counted)
    assert main(["ledger", verb, str(ledger)]) == 0
    assert {"verify": "ledger intact: 2 entries", "show": "run-2"}[verb] in capsys.readouterr().out
    assert reads == [ledger]
