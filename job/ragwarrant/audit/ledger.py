"""The evidence ledger: an append-only, hash-chained JSON Lines file, one entry per run.

Each line is one JSON object. ``entry_hash`` is the sha256 (hex) of the entry's canonical JSON
without ``entry_hash`` (orjson, keys sorted, no whitespace); ``prev_hash`` is the previous
line's ``entry_hash`` (64 zeros on the first line); ``seq`` counts lines from 1. Editing,
deleting, inserting or reordering any entry breaks the chain at that line; removing entries from
the *end* is not detectable from the file alone (compare with the latest run's manifest sha256,
or keep the ledger's last ``entry_hash`` elsewhere).

The chain has no key: it proves integrity against accidental edits only, since anyone who can
write the file can rewrite it and recompute every hash. When the run has a signing key,
``append_entry`` also stores ``keyid`` (covered by ``entry_hash``) and ``signature``: base64 of
the Ed25519 signature over ``SIGNED_PREFIX + entry_hash`` (ASCII hex), so ``verify_chain`` with the
public key proves each entry came from a holder of the key. Deleting entries from the end still
needs an external copy of the last ``entry_hash`` to be seen.

Appends are serialised by an exclusive ``flock`` held on the ledger's own file descriptor while
the tail is read and the new line is written (``O_APPEND``, one ``write``, ``fsync``), so
concurrent runs on the same volume never interleave, lose or fork entries. No lock is held
across a run: a run reads the looks it counts under a short lock (``read_looks``), decides
without it, and its append re-reads the tip under the lock and refuses (``check``) when another
run's entry made its look stale. ``flock`` works across hosts on Linux NFS (emulated with POSIX
locks; see docs/ledger.md for the file systems whose locks hold across nodes); on file systems
without locking the append fails loudly.
"""

from __future__ import annotations

import base64
import binascii
import errno
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ragwarrant.audit.writer import LockErrors, held_lock, write_atomic
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, InternalError, OutputError
from ragwarrant.sidefiles import read_regular

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

LEDGER_SCHEMA_VERSION = 1
GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first entry."""

QUARANTINE_KIND = "quarantine"
"""``kind`` of the marker entry that keeps the bytes of a damaged last line."""

SIGNED_PREFIX = b"ragwarrant-ledger-entry-v1 "
"""What an entry's Ed25519 ``signature`` covers: this prefix, then ``entry_hash`` in ASCII hex
(the prefix keeps a ledger signature from being valid in any other protocol)."""

_TAIL_CHUNK = 64 * 1024


def _canonical(entry: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)


def entry_hash(entry: Mapping[str, Any]) -> str:
    """Return the sha256 hex of the entry's canonical JSON without ``entry_hash`` and ``signature``.

    Canonical JSON: ``orjson.dumps(entry, option=OPT_SORT_KEYS)`` (UTF-8, no whitespace, keys
    sorted at every level, floats in shortest round-trip form).
    """
    return sha256_bytes(_canonical(entry))


def _check_finite(node: Any, path: str = "entry") -> None:
    if isinstance(node, float) and not math.isfinite(node):
        raise InternalError(
            "ledger-non-finite",
            f"ledger entry field {path} is {node!r}; JSON cannot hold it without changing it",
            hint="report this bug: decisions must not carry NaN or Infinity",
        )
    if isinstance(node, dict):
        for k, v in node.items():
            _check_finite(v, f"{path}.{k}")
    elif isinstance(node, list | tuple):
        for i, v in enumerate(node):
            _check_finite(v, f"{path}[{i}]")


# ---------------------------------------------------------------------------------------------
# Building an entry from a decision.

_BOUND_FIELDS = (
    "metric",
    "slice",
    "statistic",
    "estimate",
    "lower_bound",
    "upper_bound",
    "threshold",
)


def _gate_bounds(gates: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for g in gates:
        if g.get("lower_bound") is None and g.get("upper_bound") is None:
            continue
        row = {"id": g.get("id"), "status": g.get("status")}
        row.update({k: g.get(k) for k in _BOUND_FIELDS if g.get(k) is not None})
        out.append(row)
    return out


def _failed(gates: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(g.get("id")) for g in gates if g.get("status") == "fail"]


def _abstention_records(abstention: Any) -> list[dict[str, Any]]:
    """Flatten the accepted shapes (see ``_normalise_abstention``) into records."""
    if isinstance(abstention, Mapping) and "by_slice" in abstention:
        abstention = abstention["by_slice"]
    if isinstance(abstention, Mapping):
        return [
            {"policy_id": policy, "slice": slice_, **dict(rates)}
            for policy, slices in abstention.items()
            for slice_, rates in (slices or {}).items()
        ]
    records = []
    for r in abstention:
        rec = dict(r)
        if "policy_id" not in rec and "policy" in rec:
            rec["policy_id"] = rec.pop("policy")
        records.append(rec)
    return records


_ABSTENTION_FIELDS = (
    "policy_id",
    "slice",
    "abstention_rate",
    "disagreement_rate",
    "n_abstained",
    "n_with_samples",
)


def _normalise_abstention(abstention: Any) -> list[dict[str, Any]] | None:
    """Return abstention records sorted by (policy_id, slice).

    Accepts a list of records shaped like ``decision.json``'s ``corroboration.rates``
    (``policy_id``, ``slice`` — null means every example of the policy —, ``abstention_rate``,
    ``disagreement_rate``, ``n_abstained``, ``n_with_samples``, ``n_judged``; ``policy`` is
    accepted for ``policy_id`` and ``n`` for ``n_judged``), or a mapping ``policy_id → slice →
    {rates}``, or ``{"by_slice": [records]}``. Missing fields become null.
    """
    if abstention is None:
        return None
    cleaned = [
        {**{k: r.get(k) for k in _ABSTENTION_FIELDS}, "n_judged": r.get("n_judged", r.get("n"))}
        for r in _abstention_records(abstention)
    ]
    return sorted(cleaned, key=lambda r: (str(r["policy_id"]), str(r["slice"])))


def _candidate_entry(c: Mapping[str, Any]) -> dict[str, Any]:
    gates = c.get("gates") or []
    return {
        "policy_id": c.get("policy_id"),
        "class": c.get("class", c.get("decision_class")),
        "reasons": list(c.get("reasons") or []),
        "tested_on": c.get("tested_on"),
        "paired_n": c.get("paired_n"),
        "failed_gates": _failed(gates),
        "bounds": _gate_bounds(gates),
    }


def build_entry(
    decision: Mapping[str, Any],
    manifest_sha256: str,
    contract_sha256: str,
    abstention: Any = None,
) -> dict[str, Any]:
    """Select what the ledger keeps of one run (without ``seq``/``prev_hash``/``entry_hash``).

    Args:
        decision: ``decision.json`` as a dict (``Decision.model_dump(mode="json", by_alias=True)``;
            a candidate's class under ``class``, or ``decision_class``).
        manifest_sha256: sha256 hex of the bytes of ``manifest.json`` as written.
        contract_sha256: sha256 hex of the contract file.
        abstention: abstention and disagreement rates per policy and slice (see
            ``_normalise_abstention`` for the accepted shapes); None takes them from the
            decision's ``corroboration.rates`` when present.

    Returns:
        The entry: run id, time (the decision's ``finished_at``), contract id/version/sha256,
        evidence class, run class and exit code, selected policy, per candidate its class,
        reasons, paired n, failed gate ids (blockers) and every gate with a confidence bound,
        run-level failed gates, the error code of an ERROR run, the abstention records, and the
        manifest's sha256.
    """
    contract = decision.get("contract") or {}
    if abstention is None:
        abstention = (decision.get("corroboration") or {}).get("rates")
    candidates = [_candidate_entry(c) for c in decision.get("candidates") or []]
    error = decision.get("error")
    entry: dict[str, Any] = {
        "ledger_schema": LEDGER_SCHEMA_VERSION,
        "run_id": decision.get("run_id"),
        "time": decision.get("finished_at") or decision.get("started_at"),
        "contract": {
            "id": contract.get("id"),
            "version": contract.get("version"),
            "sha256": contract_sha256,
        },
        "evidence_class": decision.get("evidence_class"),
        "run_class": decision.get("run_class"),
        "exit_code": decision.get("exit_code"),
        "selected_policy": decision.get("selected_policy"),
        "candidates": candidates,
        "run_failed_gates": _failed(decision.get("run_gates") or []),
        "error": {"type": error.get("type"), "code": error.get("code")} if error else None,
        "abstention": _normalise_abstention(abstention),
        "manifest_sha256": manifest_sha256,
    }
    if decision.get("look") is not None:
        entry["look"] = decision["look"]
    _check_finite(entry)
    return entry


# ---------------------------------------------------------------------------------------------
# Appending under a lock.


def _sign(entry_hash_hex: str, private_key: Ed25519PrivateKey) -> str:
    return base64.b64encode(private_key.sign(SIGNED_PREFIX + entry_hash_hex.encode())).decode()


_LEDGER_LOCK_ERRORS = LockErrors(
    open_code="ledger-unwritable",
    open_message="cannot open the ledger {name} for appending: {reason}",
    open_hint="mount a writable volume for --ledger (its directory must exist)",
    lock_code="ledger-lock",
    lock_message="cannot lock the ledger {name}: {reason}",
    lock_hint="put the ledger on a file system that supports flock (local disk, NFSv4)",
)


def _write_line(fd: int, line: bytes, name: str) -> None:
    """Write one line with one ``write`` and ``fsync`` it.

    Raises:
        OutputError: the write fails or is short.
    """
    try:
        n = os.write(fd, line)
        if n != len(line):
            raise OSError(errno.EIO, f"short write ({n} of {len(line)} bytes)")
        os.fsync(fd)
    except OSError as exc:
        raise OutputError(
            "ledger-write",
            f"cannot append to the ledger {name}: {exc.strerror}",
            hint="check free space and permissions on the ledger volume",
        ) from exc


def _fsync_dir(path: Path) -> None:
    dir_fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _entry_body(entry: Mapping[str, Any], private_key: Ed25519PrivateKey | None) -> dict[str, Any]:
    """The entry without chain fields, with ``keyid`` when signing; checked for NaN."""
    body = {k: v for k, v in entry.items() if k not in _CHAIN_FIELDS}
    if private_key is not None:
        from ragwarrant.audit.attestation import key_id

        body["keyid"] = key_id(private_key.public_key())
    _check_finite(body)
    return body


_CHAIN_FIELDS = frozenset({"seq", "prev_hash", "entry_hash", "keyid", "signature"})


def _chained(
    body: Mapping[str, Any],
    prev_hash: str,
    seq: int,
    private_key: Ed25519PrivateKey | None,
) -> dict[str, Any]:
    written = {**body, "seq": seq, "prev_hash": prev_hash}
    written["entry_hash"] = entry_hash(written)
    if private_key is not None:
        written["signature"] = _sign(written["entry_hash"], private_key)
    return written


def _last_line(fd: int, size: int) -> bytes:
    """Return the last line (without its newline) of a non-empty file ending with a newline."""
    buf = b""
    pos = size - 1  # the final newline is not part of the line
    while pos > 0:
        start = max(0, pos - _TAIL_CHUNK)
        buf = os.pread(fd, pos - start, start) + buf
        pos = start
        nl = buf.rfind(b"\n")
        if nl != -1:
            return buf[nl + 1 :]
    return buf


def _as_entry(raw: bytes) -> dict[str, Any] | None:
    """The line as a chained entry (an object with a string ``entry_hash`` and an int ``seq``)."""
    entry = _parse_line(raw)
    if entry is None:
        return None
    if not isinstance(entry.get("entry_hash"), str) or type(entry.get("seq")) is not int:
        return None
    return entry


def _link_after(entry: Mapping[str, Any] | None) -> tuple[str, int]:
    """(``prev_hash``, ``seq``) of the entry that follows ``entry`` (None: the first entry)."""
    if entry is None:
        return GENESIS_HASH, 1
    return str(entry["entry_hash"]), int(entry["seq"]) + 1


def quarantine_marker(line: int, raw: bytes) -> dict[str, Any]:
    """Return the body of the entry that quarantines a damaged last line (before chaining).

    The damaged bytes are kept whole (base64) with their length and sha256, so nothing a
    killed run half-wrote is lost, and ``verify_chain`` can skip exactly that line.
    """
    return {
        "ledger_schema": LEDGER_SCHEMA_VERSION,
        "kind": QUARANTINE_KIND,
        "time": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "quarantined": {
            "line": line,
            "bytes": len(raw),
            "sha256": sha256_bytes(raw),
            "base64": base64.b64encode(raw).decode("ascii"),
        },
    }


def _repair_tail(
    fd: int, size: int, name: str, private_key: Ed25519PrivateKey | None
) -> tuple[str, int]:
    """Quarantine a damaged last line (torn by a kill, or not an entry); return the next link.

    A last line that is a whole entry missing only its newline gets the newline. Otherwise the
    line is ended with a newline and a marker entry holding its bytes is chained after the
    last good entry, so the chain stays intact and the run's own entry follows the marker.

    Raises:
        OutputError: the line before the damaged one is not an entry either.
    """
    data = os.pread(fd, size, 0)
    ends_with_newline = data.endswith(b"\n")
    lines = data.split(b"\n")[:-1] if ends_with_newline else data.split(b"\n")
    tail, before = lines[-1], lines[:-1]
    whole = _as_entry(tail)
    if not ends_with_newline and whole is not None and entry_hash(whole) == whole["entry_hash"]:
        _write_line(fd, b"\n", name)
        return _link_after(whole)
    previous = _as_entry(before[-1]) if before else None
    if before and previous is None:
        raise OutputError(
            "ledger-corrupt",
            f"the last two lines of the ledger {name} are not ledger entries",
            hint="run `ragwarrant ledger verify FILE` to find the damage",
        )
    if not ends_with_newline:
        _write_line(fd, b"\n", name)
    prev_hash, seq = _link_after(previous)
    marker = _chained(
        _entry_body(quarantine_marker(len(before) + 1, tail), private_key),
        prev_hash,
        seq,
        private_key,
    )
    _write_line(fd, orjson.dumps(marker, option=orjson.OPT_SORT_KEYS) + b"\n", name)
    return _link_after(marker)


def _chain_link(fd: int, name: str, private_key: Ed25519PrivateKey | None) -> tuple[str, int]:
    """Return (``prev_hash``, ``seq``) for the next entry, quarantining a damaged last line.

    Raises:
        OutputError: the ledger's tail is damaged beyond its last line.
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return GENESIS_HASH, 1
    if os.pread(fd, 1, size - 1) == b"\n":
        last = _as_entry(_last_line(fd, size))
        if last is not None:
            return _link_after(last)
    return _repair_tail(fd, size, name, private_key)


def append_entry(
    ledger_path: Path,
    entry: Mapping[str, Any],
    private_key: Ed25519PrivateKey | None = None,
    *,
    since_seq: int = 0,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Append one entry to the ledger, chaining it to the previous one.

    Under an exclusive ``flock`` on the ledger file: reads the last line, sets ``seq`` (previous
    + 1), ``prev_hash`` (the previous ``entry_hash``, or ``GENESIS_HASH``) and ``entry_hash``, then
    writes the line with one ``write`` on an ``O_APPEND`` descriptor and ``fsync``s it. The
    parent directory is fsynced when the file is created.

    A damaged last line (torn by a run killed mid-append, or not an entry) does not stop the
    append: it is ended with a newline and quarantined by a marker entry
    (``quarantine_marker``: its bytes, length and sha256) chained before this entry, so the
    current run's entry is never lost and ``verify_chain`` stays intact (``quarantined_lines``
    lists what was set aside).

    Args:
        ledger_path: the ledger file; created (mode 0644) when absent; its directory must exist.
        entry: the entry (``build_entry``); ``seq``, ``prev_hash`` and ``entry_hash`` are set here.
        private_key: the run's signing key: the entry then also carries ``keyid`` and
            ``signature`` (see the module docstring).
        since_seq: the ``seq`` of the last entry the run read (``read_looks``; 0: none).
        check: called under the lock, before anything is written, with the entries appended
            since ``since_seq`` (another run's, oldest first); it raises to refuse the append
            (a run whose look those entries made stale).

    Returns:
        The entry as written, with ``seq``, ``prev_hash`` and ``entry_hash``.

    Raises:
        OutputError: the ledger cannot be opened, locked or written, or its last two lines are
            both damaged.
        RagwarrantError: whatever ``check`` raises (the ledger is left as it was).
        InternalError: the entry holds NaN or Infinity.
    """
    body = _entry_body(entry, private_key)
    existed = ledger_path.exists()
    with held_lock(ledger_path, _LEDGER_LOCK_ERRORS, append=True) as fd:
        if check is not None:
            check(_entries_after(fd, since_seq))  # may refuse: nothing is written then
        prev_hash, seq = _chain_link(fd, ledger_path.name, private_key)
        written = _chained(body, prev_hash, seq, private_key)
        _write_line(
            fd, orjson.dumps(written, option=orjson.OPT_SORT_KEYS) + b"\n", ledger_path.name
        )
    if not existed:
        _fsync_dir(ledger_path.parent)
    return written


def _entries_after(fd: int, since_seq: int) -> list[dict[str, Any]]:
    """The chained entries of the open ledger whose ``seq`` is above ``since_seq``."""
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    entries = (_as_entry(raw) for raw in data.split(b"\n") if raw)
    return [e for e in entries if e is not None and e["seq"] > since_seq]


# ---------------------------------------------------------------------------------------------
# Reading and verifying.


@dataclass(frozen=True)
class LedgerProblem:
    """One break in the ledger.

    Attributes:
        line: 1-based line number.
        kind: ``unparseable``, ``missing-field``, ``entry-hash`` (the entry does not hash to its
            ``entry_hash``: its content was changed), ``prev-hash`` (the link to the previous line
            is broken: an entry was deleted, inserted or reordered before it), ``seq``, ``torn``,
            and with a public key ``unsigned`` or ``signature`` (the entry was not signed by
            the key's holder).
        message: what was expected and found.
    """

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind}: {self.message}"


def _read_bytes(path: Path) -> bytes:
    """The whole ledger; a FIFO or device is refused, never waited on or read without end."""
    try:
        return read_regular(path, limit=sys.maxsize)
    except OSError as exc:
        raise InputError(
            "ledger-unreadable",
            f"cannot read the ledger {path}: {exc.strerror}",
            hint="pass the ledger file given to `ragwarrant run --ledger`",
        ) from exc


def _signature_problem(
    entry: Mapping[str, Any], public_key: Ed25519PublicKey, keyid: str
) -> str | None:
    from cryptography.exceptions import InvalidSignature

    sig = entry.get("signature")
    if not isinstance(sig, str):
        return "unsigned"
    try:
        raw = base64.b64decode(sig, validate=True)
        public_key.verify(raw, SIGNED_PREFIX + str(entry["entry_hash"]).encode())
    except (binascii.Error, ValueError, InvalidSignature):
        return "signature"
    if entry.get("keyid") != keyid:
        return "signature"
    return None


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None


def _link_problems(
    number: int, entry: Mapping[str, Any], prev_recorded: str, prev_seq: int
) -> Iterator[LedgerProblem]:
    """Problems of one complete entry's own hash, its link to the previous line and its seq."""
    recomputed = entry_hash(entry)
    if recomputed != entry["entry_hash"]:
        yield LedgerProblem(
            number,
            "entry-hash",
            f"entry_hash is {str(entry['entry_hash'])[:12]}..., the entry hashes to "
            f"{recomputed[:12]}...: the entry was changed after it was written",
        )
    if entry["prev_hash"] != prev_recorded:
        yield LedgerProblem(
            number,
            "prev-hash",
            f"prev_hash is {str(entry['prev_hash'])[:12]}..., the previous entry's "
            f"entry_hash is {prev_recorded[:12] or '(none)'}...: an entry before this one "
            "was deleted, inserted or reordered",
        )
    if entry["seq"] != prev_seq + 1:
        yield LedgerProblem(number, "seq", f"seq is {entry['seq']}, expected {prev_seq + 1}")


_SIGNATURE_MESSAGES = {
    "unsigned": "the entry has no signature",
    "signature": "the signature does not verify with the given public key (the entry was "
    "rewritten, or signed with another key)",
}


def _public_key_id(public_key: Ed25519PublicKey | None) -> str:
    if public_key is None:
        return ""
    from ragwarrant.audit.attestation import key_id

    return key_id(public_key)


@dataclass(frozen=True)
class QuarantinedLine:
    """A damaged line set aside by the marker entry on the line after it.

    Attributes:
        line: 1-based line number of the damaged bytes.
        marker_line: line of the marker entry that holds them.
        size_bytes: length of the damaged line.
        sha256: its sha256 (hex); the marker's ``quarantined.base64`` holds the bytes.
    """

    line: int
    marker_line: int
    size_bytes: int
    sha256: str

    def __str__(self) -> str:
        return (
            f"line {self.line}: quarantined: {self.size_bytes} bytes of an incomplete entry "
            f"(a run killed while appending?), kept in the marker entry on line "
            f"{self.marker_line} (sha256 {self.sha256[:12]}...)"
        )


def is_marker(entry: Mapping[str, Any]) -> bool:
    """Whether a ledger entry is a quarantine marker rather than a run's entry."""
    return entry.get("kind") == QUARANTINE_KIND


def _quarantined(lines: Sequence[bytes]) -> dict[int, QuarantinedLine]:
    """Damaged lines each followed by a marker that holds exactly their bytes, by line number."""
    out: dict[int, QuarantinedLine] = {}
    for number, raw in enumerate(lines[1:], start=2):
        entry = _parse_line(raw)
        info = entry.get("quarantined") if entry is not None and is_marker(entry) else None
        if not isinstance(info, dict) or info.get("line") != number - 1:
            continue
        damaged = lines[number - 2]
        if info.get("sha256") == sha256_bytes(damaged):
            out[number - 1] = QuarantinedLine(number - 1, number, len(damaged), info["sha256"])
    return out


def quarantined_lines(path: Path) -> list[QuarantinedLine]:
    """Return the damaged lines that a marker entry set aside, in line order.

    Raises:
        InputError: the file cannot be read.
    """
    return sorted(_quarantined(_read_bytes(path).splitlines()).values(), key=lambda q: q.line)


def verify_chain(path: Path, public_key: Ed25519PublicKey | None = None) -> list[LedgerProblem]:
    """Check every line's ``entry_hash``, ``prev_hash`` link and ``seq`` (and signature).

    Without ``public_key`` this proves integrity against accidental edits only: anyone who can
    write the file can rewrite it and recompute the chain. With it, every entry must carry a
    ``signature`` by that key over its ``entry_hash``, and a rewritten entry cannot.

    Returns:
        Problems in line order; the first one names the first broken entry. Empty when intact.
        The link check compares ``prev_hash`` with the previous line's *recorded* ``entry_hash``,
        so an edited entry is reported once (as ``entry-hash``) and a deleted one once (as
        ``prev-hash`` on the line after the gap). A damaged line followed by the marker entry
        that quarantines it (see ``append_entry``) is not a problem: the marker chains to the
        entry before it; ``quarantined_lines`` lists such lines.

    Raises:
        InputError: the file cannot be read.
    """
    data = _read_bytes(path)
    keyid = _public_key_id(public_key)
    problems: list[LedgerProblem] = []
    if data and not data.endswith(b"\n"):
        problems.append(
            LedgerProblem(
                data.count(b"\n") + 1,
                "torn",
                "the last line has no trailing newline (a run killed while appending?); the "
                "next append quarantines it",
            )
        )
    prev_recorded = GENESIS_HASH
    prev_seq = 0
    lines = data.splitlines()
    quarantined = _quarantined(lines)
    for number, raw in enumerate(lines, start=1):
        if number in quarantined:
            continue
        entry = _parse_line(raw)
        if entry is None:
            problems.append(LedgerProblem(number, "unparseable", "not a JSON object"))
            prev_recorded, prev_seq = "", prev_seq + 1
            continue
        missing = [k for k in ("seq", "prev_hash", "entry_hash") if k not in entry]
        if missing:
            problems.append(LedgerProblem(number, "missing-field", f"missing {', '.join(missing)}"))
            prev_recorded, prev_seq = str(entry.get("entry_hash", "")), prev_seq + 1
            continue
        problems.extend(_link_problems(number, entry, prev_recorded, prev_seq))
        if public_key is not None:
            kind = _signature_problem(entry, public_key, keyid)
            if kind is not None:
                problems.append(LedgerProblem(number, kind, _SIGNATURE_MESSAGES[kind]))
        prev_recorded = str(entry["entry_hash"])
        prev_seq = entry["seq"] if isinstance(entry["seq"], int) else prev_seq + 1
    return problems


def chain_break(path: Path) -> LedgerProblem | None:
    """The first break of the ledger's chain that earlier looks cannot be counted across.

    A deleted, reordered, inserted or edited entry may have been an earlier look of the
    contract version a run is about to test, so ``gates.looks`` BLOCKs instead of counting
    looks from what is left. A torn last line is not a break: the run's own append quarantines
    it (``append_entry``). A missing ledger has none.

    Raises:
        InputError: the ledger exists but cannot be read.
    """
    if not path.is_file():
        return None
    problems = verify_chain(path)
    torn = {p.line for p in problems if p.kind == "torn"}
    return next((p for p in problems if p.line not in torn), None)


def read_entries(path: Path) -> list[dict[str, Any]]:
    """Return the ledger's parseable entries in file order (unparseable lines are skipped).

    Raises:
        InputError: the file cannot be read.
    """
    entries = []
    for raw in _read_bytes(path).splitlines():
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


# ---------------------------------------------------------------------------------------------
# History.


@dataclass(frozen=True)
class DriftFlag:
    """A slice whose abstention rate rose over the last ``window`` runs.

    Attributes:
        contract_id, policy_id, slice: where.
        rates: the last ``window`` abstention rates, oldest first (fractions in [0, 1]).
        rise: last − first of ``rates``.
    """

    contract_id: str
    policy_id: str
    slice: str
    rates: tuple[float, ...]
    rise: float


def _abstention_series(
    entries: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, str, str], list[tuple[str, str, float]]]:
    """(contract, policy, slice) → [(time, run_id, abstention_rate)] in ledger order."""
    series: dict[tuple[str, str, str], list[tuple[str, str, float]]] = {}
    for e in entries:
        cid = str((e.get("contract") or {}).get("id"))
        for r in e.get("abstention") or []:
            rate = r.get("abstention_rate")
            if rate is None:
                continue
            key = (
                cid,
                str(r.get("policy_id")),
                str(r.get("slice") if r.get("slice") is not None else "(all)"),
            )
            series.setdefault(key, []).append(
                (str(e.get("time")), str(e.get("run_id")), float(rate))
            )
    return series


def drifting_slices(
    entries: Sequence[Mapping[str, Any]], *, window: int = 3, min_rise: float = 0.02
) -> list[DriftFlag]:
    """Flag slices whose abstention rate rose at every one of the last ``window`` runs.

    A slice is flagged when its last ``window`` recorded rates are strictly increasing and the
    last exceeds the first by at least ``min_rise`` (absolute, as a fraction): a rising abstention
    rate in one slice is early drift, visible before aggregate quality scores move.

    Args:
        entries: ledger entries in ledger (time) order.
        window: number of most recent runs that must each rise; at least 2.
        min_rise: smallest total rise (fraction) worth a flag.
    """
    flags = []
    for (cid, pid, slice_), points in sorted(_abstention_series(entries).items()):
        if len(points) < window:
            continue
        rates = tuple(p[2] for p in points[-window:])
        if (
            all(b > a for a, b in zip(rates, rates[1:], strict=False))
            and rates[-1] - rates[0] >= min_rise
        ):
            flags.append(DriftFlag(cid, pid, slice_, rates, rates[-1] - rates[0]))
    return flags


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:+.4g}"
    return str(x)


def _run_line(e: Mapping[str, Any]) -> str:
    c = e.get("contract") or {}
    blockers = e.get("run_failed_gates")
    return (
        f"    {e.get('time')}  {e.get('run_id')}  {e.get('run_class'):<12} "
        f"evidence={e.get('evidence_class') or '-'}  "
        f"contract={c.get('version')}@{str(c.get('sha256'))[:12]}"
        + (f"  run-blockers={','.join(blockers)}" if blockers else "")
        + (f"  error={e['error'].get('code')}" if e.get("error") else "")
    )


def _candidate_detail(cand: Mapping[str, Any]) -> str:
    """Blockers, or the tightest noninferiority bound (smallest margin over its threshold)."""
    if cand.get("failed_gates"):
        return "blockers/failed: " + ",".join(cand["failed_gates"])
    ni = [b for b in cand.get("bounds") or [] if b.get("lower_bound") is not None]
    if not ni:
        return ""
    tight = min(ni, key=lambda b: b["lower_bound"] - (b.get("threshold") or 0.0))
    return (
        f"tightest {tight.get('id')}: LCB {_fmt(tight.get('lower_bound'))} "
        f"vs {_fmt(tight.get('threshold'))}"
    )


def _policy_lines(runs: Sequence[Mapping[str, Any]], policy: str | None) -> list[str]:
    policies: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for e in runs:
        for cand in e.get("candidates") or []:
            pid = str(cand.get("policy_id"))
            if policy is None or pid == policy:
                policies.setdefault(pid, []).append((e, cand))
    lines = []
    for pid, rows in policies.items():
        classes = " -> ".join(str(cand.get("class")) for _, cand in rows)
        lines.append(f"  policy {pid}: {classes}")
        for e, cand in rows:
            n = cand.get("paired_n")
            lines.append(
                f"    {e.get('time')}  {e.get('run_id')}  {str(cand.get('class')):<12} "
                f"n={n if n is not None else '-'}  {_candidate_detail(cand)}".rstrip()
            )
    return lines


def _abstention_lines(
    cid: str,
    runs: Sequence[Mapping[str, Any]],
    policy: str | None,
    flags: Sequence[DriftFlag],
    window: int,
) -> list[str]:
    series = {k: v for k, v in _abstention_series(runs).items() if policy is None or k[1] == policy}
    if not series:
        return []
    flagged = {(f.contract_id, f.policy_id, f.slice): f for f in reversed(flags)}
    lines = ["  abstention rate by slice (oldest -> newest):"]
    for (_, pid, slice_), points in sorted(series.items()):
        rates = "  ".join(f"{p[2]:.3f}" for p in points)
        flag = flagged.get((cid, pid, slice_))
        mark = (
            f"  <- EARLY DRIFT: rose in each of the last {window} runs (+{flag.rise:.3f})"
            if flag
            else ""
        )
        lines.append(f"    {pid} / {slice_}: {rates}{mark}")
    return lines


def show_history(
    path: Path,
    contract: str | None = None,
    policy: str | None = None,
    *,
    window: int = 3,
    min_rise: float = 0.02,
) -> str:
    """Render the ledger's history as text.

    Per contract: each run's class, then per candidate policy its class over time with its
    blockers or tightest noninferiority bound; then the abstention rate by policy and slice over
    time, with slices rising over the last ``window`` runs flagged as early drift.

    Args:
        path: the ledger file.
        contract: show only this contract id.
        policy: show only this policy id (candidates and abstention rows).

    Raises:
        InputError: the file cannot be read.
    """
    problems = verify_chain(path)
    entries = [
        e
        for e in read_entries(path)
        if not is_marker(e)
        and (contract is None or (e.get("contract") or {}).get("id") == contract)
    ]
    lines: list[str] = []
    if problems:
        lines.append(
            f"WARNING: the ledger chain is broken (first: {problems[0]}); history may be incomplete"
        )
    if not entries:
        lines.append("no ledger entries" + (f" for contract {contract}" if contract else ""))
        return "\n".join(lines) + "\n"
    by_contract: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        by_contract.setdefault(str((e.get("contract") or {}).get("id")), []).append(e)
    flags = drifting_slices(entries, window=window, min_rise=min_rise)
    for cid, runs in by_contract.items():
        lines.append(f"contract {cid} ({len(runs)} run{'s' if len(runs) != 1 else ''})")
        lines.append("  runs:")
        lines += [_run_line(e) for e in runs]
        lines += _policy_lines(runs, policy)
        lines += _abstention_lines(cid, runs, policy, flags, window)
    return "\n".join(lines) + "\n"


def record_run(
    ledger_path: Path,
    output_dir: Path,
    abstention: Any = None,
    private_key: Ed25519PrivateKey | None = None,
    look_evidence: bytes | None = None,
    *,
    since_seq: int = 0,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Append the ledger entry of a completed run; return the entry as written.

    Reads ``decision.json`` and ``manifest.json`` back from ``output_dir`` (so the entry hashes
    exactly what was published). Call after the manifest is written.

    Args:
        ledger_path: the ledger file (``--ledger FILE``).
        output_dir: the run's output directory.
        abstention: per-policy, per-slice abstention and disagreement rates, when computed.
        private_key: the run's signing key; the entry is then signed (``append_entry``).
        look_evidence: the run's encoded evidence fingerprint (``evidence.looks``), kept next to
            the ledger (``look_evidence_path``) before the entry is appended; the entry's
            ``look.evidence_sha256`` is its sha256.
        since_seq: as ``append_entry``: the tip the run's look was resolved at.
        check: as ``append_entry``: refuses the append when its look went stale.

    Raises:
        OutputError: the ledger or the fingerprint cannot be written, or its tail is damaged.
        RagwarrantError: whatever ``check`` raises.
    """
    decision = orjson.loads((output_dir / "decision.json").read_bytes())
    if look_evidence is not None:
        _write_look_evidence(ledger_path, str(decision.get("run_id")), look_evidence)
    manifest_sha256 = sha256_bytes((output_dir / "manifest.json").read_bytes())
    contract_sha256 = str((decision.get("contract") or {}).get("sha256") or "")
    return append_entry(
        ledger_path,
        build_entry(decision, manifest_sha256, contract_sha256, abstention),
        private_key,
        since_seq=since_seq,
        check=check,
    )


# ---------------------------------------------------------------------------------------------
# Repeated looks: earlier runs of one contract version, and their evidence fingerprints.


def look_evidence_path(ledger_path: Path, run_id: str) -> Path:
    """Where a run's evidence fingerprint is kept: ``<ledger>.looks/<run_id>.json``.

    The fingerprint holds 64-bit digests only (``evidence.looks``), never an id or a value.
    """
    return ledger_path.parent / f"{ledger_path.name}.looks" / f"{run_id}.json"


def _write_look_evidence(ledger_path: Path, run_id: str, data: bytes) -> None:
    path = look_evidence_path(ledger_path, run_id)
    try:
        path.parent.mkdir(exist_ok=True)
        write_atomic(path, data)
    except (OSError, OutputError) as exc:
        raise OutputError(
            "ledger-unwritable",
            f"cannot write the evidence fingerprint next to the ledger {ledger_path.name}: "
            f"{getattr(exc, 'strerror', None) or 'not writable'}",
            hint="mount a writable volume for --ledger (its directory must be writable)",
        ) from exc


def read_look_evidence(ledger_path: Path, run_id: str, sha256: str | None) -> bytes | None:
    """The fingerprint a run kept next to the ledger, or None when missing or not ``sha256``."""
    try:
        data = look_evidence_path(ledger_path, run_id).read_bytes()
    except OSError:
        return None
    return data if sha256 is not None and sha256_bytes(data) == sha256 else None


def _tested_something(entry: Mapping[str, Any]) -> bool:
    """Whether a run computed any noninferiority bound (a BLOCKed run can have: another
    candidate, or publication hygiene, BLOCKed it after a candidate was tested)."""
    for c in entry.get("candidates") or []:
        for b in (c.get("bounds") if isinstance(c, Mapping) else None) or []:
            if str(b.get("id", "")).startswith("noninferiority:"):
                return True
    return False


def _is_look(e: Mapping[str, Any]) -> bool:
    """Whether an entry is a look at its evidence (see ``LookEntries.earlier``), of any contract."""
    look = e.get("look")
    if is_marker(e) or not isinstance(look, dict) or look.get("blocked"):
        return False
    if e.get("run_class") == "ERROR":
        return False
    return e.get("run_class") != "BLOCK" or _tested_something(e)


def _is_earlier_look(e: Mapping[str, Any], contract_id: str, version: str) -> bool:
    contract = e.get("contract") or {}
    if contract.get("id") != contract_id or contract.get("version") != version:
        return False
    return _is_look(e)


@dataclass(frozen=True)
class LookEntries:
    """The ledger's looks as one run read them, at one instant (``read_looks``).

    Attributes:
        ledger_path: the ledger file.
        contract_id: the run's contract id.
        version: the run's contract version.
        looks: every look entry (``_is_look``, of any contract), oldest first.
        chain_break: the first break of the chain (``chain_break``), or None.
        tip_seq: ``seq`` of the last entry read (0: empty or absent), for
            ``append_entry(since_seq=...)``.
    """

    ledger_path: Path
    contract_id: str
    version: str
    looks: tuple[dict[str, Any], ...]
    chain_break: LedgerProblem | None
    tip_seq: int

    def _with_evidence(self, entries: Iterable[dict[str, Any]]) -> list[LookEntry]:
        out = []
        for e in entries:
            look = e.get("look") or {}
            sha = look.get("evidence_sha256") if isinstance(look, dict) else None
            run_id = str(e.get("run_id"))
            sha = sha if isinstance(sha, str) else None
            out.append((e, read_look_evidence(self.ledger_path, run_id, sha)))
        return out

    def earlier(self) -> list[LookEntry]:
        """Earlier looks of this contract id and version with their kept fingerprints (None:
        missing or not the recorded sha256), oldest first.

        An earlier look is an entry (not a quarantine marker) of the same contract id and
        version with a ``look`` record that was not itself refused (``look.blocked``), from a
        run that was not in ERROR and, when BLOCKed, had tested a candidate (a noninferiority
        bound in the entry: its data were seen); whatever its policies and configs
        (``gates.looks`` BLOCKs a change of configs under one contract version)."""
        mine = (e for e in self.looks if _is_earlier_look(e, self.contract_id, self.version))
        return self._with_evidence(mine)

    def others(self) -> list[LookEntry]:
        """Looks under other contract ids or versions, likewise: ``gates.looks`` uses them to
        recognise a new contract version (or a renamed contract) run on evidence that an earlier
        look of the same baseline and candidate (by policy id or config content) already saw."""
        theirs = (e for e in self.looks if not _is_earlier_look(e, self.contract_id, self.version))
        return self._with_evidence(theirs)

    def after(self, entries: Sequence[dict[str, Any]]) -> LookEntries:
        """These looks followed by ``entries`` (appended since, as ``append_entry``'s check
        receives them)."""
        if not entries:
            return self
        more = tuple(e for e in entries if _is_look(e))
        return replace(self, looks=self.looks + more, tip_seq=int(entries[-1]["seq"]))


LookEntry = tuple[dict[str, Any], bytes | None]
"""A look's ledger entry and its kept evidence fingerprint (None: missing or altered)."""


def read_looks(ledger_path: Path, contract_id: str, version: str) -> LookEntries:
    """Read what a run's look is resolved from, holding the ledger's lock only while reading.

    The run then decides without the lock; ``append_entry`` re-reads the tip under the lock and
    hands the entries appended since ``tip_seq`` to the run's check (a concurrent look of the
    same contract version makes this run's look stale). A missing ledger has no looks
    (``tip_seq`` 0) and is not created here.

    Raises:
        InputError: the ledger exists but cannot be read.
        OutputError: it cannot be opened or locked (``ledger-unwritable``, ``ledger-lock``).
    """
    if not ledger_path.is_file():
        return LookEntries(ledger_path, contract_id, version, (), None, 0)
    with held_lock(ledger_path, _LEDGER_LOCK_ERRORS, append=True) as fd:
        chained = _entries_after(fd, 0)
        broken = chain_break(ledger_path)
        looks = tuple(e for e in read_entries(ledger_path) if _is_look(e))
    tip = int(chained[-1]["seq"]) if chained else 0
    return LookEntries(ledger_path, contract_id, version, looks, broken, tip)
