"""Signed ledger entries: a forged or rewritten chain fails `ledger verify --public-key`."""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path
from typing import Any

import orjson
import pytest

from ragwarrant.audit.attestation import key_id, load_private_key, load_public_key
from ragwarrant.audit.ledger import append_entry, entry_hash, read_entries, verify_chain
from ragwarrant.commands import ledger as ledger_command
from ragwarrant.errors import InputError, OutputError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.pipeline import run_job

from .conftest import write_keypair


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ragwarrant")
    sub = parser.add_subparsers(dest="command", required=True)
    ledger_command.register(sub)
    args = parser.parse_args(argv)
    return int(args.handler(args))


def _signed_ledger(tmp_path: Path, n: int = 3) -> tuple[Path, Path, Path]:
    """A ledger of ``n`` signed entries; returns (ledger, private key, public key)."""
    private, public = write_keypair(tmp_path, "k")
    key = load_private_key(private)
    ledger = tmp_path / "ledger.jsonl"
    for i in range(1, n + 1):
        append_entry(ledger, {"run_id": f"run-{i}", "run_class": "REJECT"}, key)
    return ledger, private, public


def _rechain(entries: list[dict[str, Any]]) -> bytes:
    """Recompute seq, prev_hash and entry_hash of every entry, as a forger without the key can."""
    prev, out = "0" * 64, b""
    for seq, e in enumerate(entries, start=1):
        e = {k: v for k, v in e.items() if k not in ("signature", "entry_hash")}
        e.update(seq=seq, prev_hash=prev)
        e["entry_hash"] = prev = entry_hash(e)
        out += orjson.dumps(e, option=orjson.OPT_SORT_KEYS) + b"\n"
    return out


def test_signed_entries_verify_with_the_public_key(tmp_path: Path) -> None:
    """Each signed entry carries the key id (inside entry_hash) and a signature that verifies."""
    ledger, _, public = _signed_ledger(tmp_path)
    entries = read_entries(ledger)
    assert {e["keyid"] for e in entries} == {key_id(load_public_key(public))}
    assert all(e["entry_hash"] == entry_hash(e) for e in entries)
    assert verify_chain(ledger, load_public_key(public)) == []
    assert verify_chain(ledger) == []  # the signature is outside entry_hash; old readers agree


def test_appended_forgery_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An extra entry with a recomputed chain passes the chain check but not the signatures."""
    ledger, _, public = _signed_ledger(tmp_path)
    entries = read_entries(ledger)
    forged = {"run_id": "fake-run", "run_class": "PROMOTE", "manifest_sha256": "0" * 64}
    ledger.write_bytes(ledger.read_bytes() + _rechain([*entries, forged]).splitlines(True)[-1])
    assert verify_chain(ledger) == []  # an unkeyed chain cannot tell
    assert _cli(["ledger", "verify", str(ledger)]) == 0
    assert "accidental edits only" in capsys.readouterr().out
    assert _cli(["ledger", "verify", str(ledger), "--public-key", str(public)]) == (
        ExitCode.VERIFY_MISMATCH
    )
    assert capsys.readouterr().out.startswith(
        "LEDGER BROKEN: first broken entry at line 4: unsigned"
    )


def test_rewritten_history_is_named_at_the_first_rewritten_line(tmp_path: Path) -> None:
    """Rewriting entry 2 and re-chaining (keeping the old signatures) fails from line 2 on."""
    ledger, _, public = _signed_ledger(tmp_path)
    entries = read_entries(ledger)
    entries[1]["run_class"] = "PROMOTE"
    rechained = [orjson.loads(line) for line in _rechain(entries).splitlines()]
    for e, old in zip(rechained, read_entries(ledger), strict=True):
        e["signature"] = old["signature"]
    ledger.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in rechained))
    assert verify_chain(ledger) == []
    problems = verify_chain(ledger, load_public_key(public))
    assert [(p.line, p.kind) for p in problems] == [(2, "signature"), (3, "signature")]


def test_another_key_fails_every_entry(tmp_path: Path) -> None:
    """Entries signed with another key are signature problems on every line."""
    ledger, _, _ = _signed_ledger(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _, other_public = write_keypair(other, "k")
    problems = verify_chain(ledger, load_public_key(other_public))
    assert [(p.line, p.kind) for p in problems] == [
        (1, "signature"),
        (2, "signature"),
        (3, "signature"),
    ]


def test_unsigned_ledger_with_a_key_is_a_mismatch(tmp_path: Path) -> None:
    """A ledger written without a key fails --public-key on its first line."""
    ledger = tmp_path / "ledger.jsonl"
    append_entry(ledger, {"run_id": "r"})
    _, public = write_keypair(tmp_path, "k")
    assert [(p.line, p.kind) for p in verify_chain(ledger, load_public_key(public))] == [
        (1, "unsigned")
    ]


def test_bad_public_key_is_an_input_error(tmp_path: Path) -> None:
    """A public key that cannot be read is exit 66, not a mismatch."""
    ledger, private, _ = _signed_ledger(tmp_path, 1)
    with pytest.raises(InputError):
        _cli(["ledger", "verify", str(ledger), "--public-key", str(private)])


def test_a_signed_run_signs_its_ledger_entry(make_input, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """run_job with --signing-key and --ledger writes a signed entry."""
    private, public = write_keypair(tmp_path, "k")
    ledger = tmp_path / "ledger.jsonl"
    run_job(
        make_input(),
        tmp_path / "out",
        ledger=ledger,
        signing_key=private,
        on_stage=lambda event, **fields: None,
    )
    assert verify_chain(ledger, load_public_key(public)) == []
    assert "signature" in read_entries(ledger)[0]


def _signed_worker(args: tuple[str, str, int, int]) -> tuple[int, str | None]:
    path, key_path, worker, count = args
    key = load_private_key(Path(key_path))
    for i in range(count):
        try:
            append_entry(Path(path), {"run_id": f"w{worker}-{i}", "worker": worker, "i": i}, key)
        except OutputError as exc:  # report instead of raising: the pool cannot pickle it
            return i, f"{exc.code}: {exc.message}"
    return count, None


def test_concurrent_signed_appends_stay_intact(tmp_path: Path) -> None:
    """4 processes x 25 signed appends: chain and every signature verify."""
    private, public = write_keypair(tmp_path, "k")
    ledger = tmp_path / "ledger.jsonl"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        done = pool.map(_signed_worker, [(str(ledger), str(private), w, 25) for w in range(4)])
    assert [error for _, error in done] == [None] * 4
    assert len(read_entries(ledger)) == 100
    assert verify_chain(ledger, load_public_key(public)) == []
