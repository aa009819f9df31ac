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
the file is read and the new line is written (``O_APPEND``, one ``write``, ``fsync``), so
concurrent runs on the same volume never interleave, lose or fork entries. No lock is held
across a run: a run reads the looks it counts under a short lock (``read_under_lock``, used by
``audit.looks.read_looks``), decides without it, and its append re-reads the tip under the lock
and refuses (``check``) when another run's entry made its look stale. ``flock`` works across
hosts on Linux NFS (emulated with POSIX locks; see docs/audit.md for the file systems whose locks
hold across nodes); on file systems without locking the append fails loudly.

This module is the chain of any JSON objects (append with the repair of a torn last line, read,
verify); ``audit.ledger_history`` builds a run's entry and renders the history and its drift;
``audit.looks`` keeps each look's evidence fingerprint next to the ledger.
"""

from __future__ import annotations

import base64
import binascii
import errno
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ragwarrant.audit.attestation import key_id
from ragwarrant.audit.writer import LockErrors, fsync_dir, held_lock
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

_CHAIN_FIELDS = frozenset({"seq", "prev_hash", "entry_hash", "keyid", "signature"})

_LEDGER_LOCK_ERRORS = LockErrors(
    open_code="ledger-unwritable",
    open_message="cannot open the ledger {name} for appending: {reason}",
    open_hint="mount a writable volume for --ledger (its directory must exist)",
    lock_code="ledger-lock",
    lock_message="cannot lock the ledger {name}: {reason}",
    lock_hint="put the ledger on a file system that supports flock (local disk, NFSv4)",
)


def entry_hash(entry: Mapping[str, Any]) -> str:
    """Return the sha256 hex of the entry's canonical JSON without ``entry_hash`` and ``signature``.

    Canonical JSON: ``orjson.dumps(entry, option=OPT_SORT_KEYS)`` (UTF-8, no whitespace, keys
    sorted at every level, floats in shortest round-trip form).
    """
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    return sha256_bytes(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))


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
# Appending under a lock, with the repair of a torn last line.


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


def _chained(
    entry: Mapping[str, Any], prev_hash: str, seq: int, private_key: Ed25519PrivateKey | None
) -> dict[str, Any]:
    """The entry as written: chain fields set (``keyid`` and ``signature`` when signing)."""
    written = {k: v for k, v in entry.items() if k not in _CHAIN_FIELDS}
    if private_key is not None:
        written["keyid"] = key_id(private_key.public_key())
    written |= {"seq": seq, "prev_hash": prev_hash}
    written["entry_hash"] = entry_hash(written)
    if private_key is not None:
        signed = private_key.sign(SIGNED_PREFIX + written["entry_hash"].encode())
        written["signature"] = base64.b64encode(signed).decode()
    return written


def _as_entry(raw: bytes) -> dict[str, Any] | None:
    """The line as a chained entry (an object with a string ``entry_hash`` and an int ``seq``)."""
    entry = _parse_line(raw)
    if entry is None or not isinstance(entry.get("entry_hash"), str):
        return None
    return entry if type(entry.get("seq")) is int else None


def _link_after(entry: Mapping[str, Any] | None) -> tuple[str, int]:
    """(``prev_hash``, ``seq``) of the entry that follows ``entry`` (None: the first entry)."""
    if entry is None:
        return GENESIS_HASH, 1
    return str(entry["entry_hash"]), int(entry["seq"]) + 1


def append_entry(
    ledger_path: Path,
    entry: Mapping[str, Any],
    private_key: Ed25519PrivateKey | None = None,
    *,
    since_seq: int = 0,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Append one entry to the ledger, chaining it to the previous one.

    Under an exclusive ``flock`` on the ledger file: reads the file, sets ``seq`` (previous
    + 1), ``prev_hash`` (the previous ``entry_hash``, or ``GENESIS_HASH``) and ``entry_hash``, then
    writes the line with one ``write`` on an ``O_APPEND`` descriptor and ``fsync``s it. The
    parent directory is fsynced when the file is created.

    A last line that is a whole entry missing only its newline gets the newline. Any other
    damaged last line (torn by a run killed mid-append, or not an entry) does not stop the
    append: it is ended with a newline and quarantined by a marker entry (``"kind":
    "quarantine"``) holding its bytes whole (base64) with their length and sha256, chained after
    the last good entry, so nothing a killed run half-wrote is lost, the current run's entry
    follows the marker, and ``verify_chain`` skips exactly that line (``Ledger.quarantined``
    lists what was set aside).

    Args:
        ledger_path: the ledger file; created (mode 0644) when absent; its directory must exist.
        entry: the entry (``build_entry``); ``seq``, ``prev_hash`` and ``entry_hash`` are set here.
        private_key: the run's signing key: the entry then also carries ``keyid`` and
            ``signature`` (see the module docstring).
        since_seq: the ``seq`` of the last entry the run read (``read_under_lock``; 0: none).
        check: called under the lock, before anything is written, with the entries appended
            since ``since_seq`` (another run's, oldest first); it raises to refuse the append
            (a run whose look those entries made stale).

    Returns:
        The entry as written, with ``seq``, ``prev_hash`` and ``entry_hash``.

    Raises:
        OutputError: the ledger cannot be opened, locked or written, or its last two lines are
            both damaged (``ledger-corrupt``).
        RagwarrantError: whatever ``check`` raises (the ledger is left as it was).
        InternalError: the entry holds NaN or Infinity.
    """
    _check_finite(entry)
    existed = ledger_path.exists()
    with held_lock(ledger_path, _LEDGER_LOCK_ERRORS, append=True) as fd:
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        if check is not None:
            check(Ledger(data).chained_after(since_seq))  # may refuse: nothing is written then
        name, newline = ledger_path.name, data.endswith(b"\n")
        *before, tail = (data[:-1] if newline else data).split(b"\n")
        last = _as_entry(tail)  # linked after when whole; else quarantined
        whole = last is not None and (newline or entry_hash(last) == last["entry_hash"])
        whole = whole or not data
        previous = _as_entry(before[-1]) if before else None
        if not whole and before and previous is None:
            raise OutputError(
                "ledger-corrupt",
                f"the last two lines of the ledger {name} are not ledger entries",
                hint="run `ragwarrant ledger verify FILE` to find the damage",
            )
        if data and not newline:
            _write_line(fd, b"\n", name)
        if whole:
            link = _link_after(last)
        else:  # quarantine the damaged last line in a marker chained after ``previous``
            quarantined = {
                "line": len(before) + 1,
                "bytes": len(tail),
                "sha256": sha256_bytes(tail),
                "base64": base64.b64encode(tail).decode("ascii"),
            }
            marker = {"ledger_schema": LEDGER_SCHEMA_VERSION, "kind": QUARANTINE_KIND}
            time = datetime.now(UTC).isoformat().replace("+00:00", "Z")
            marker |= {"time": time, "quarantined": quarantined}
            marker = _chained(marker, *_link_after(previous), private_key)
            _write_line(fd, orjson.dumps(marker, option=orjson.OPT_SORT_KEYS) + b"\n", name)
            link = _link_after(marker)
        written = _chained(entry, *link, private_key)
        _write_line(fd, orjson.dumps(written, option=orjson.OPT_SORT_KEYS) + b"\n", name)
    if not existed:
        fsync_dir(ledger_path.parent)
    return written


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


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None


@dataclass
class _Walk:
    """``Ledger.problems`` walking the chain line by line: the public key (None: the hash chain
    only) and the link the next entry must carry (the previous line's recorded hash and seq)."""

    public_key: Ed25519PublicKey | None
    prev_recorded: str = GENESIS_HASH
    prev_seq: int = 0

    def step(self, entry: dict[str, Any] | None) -> Iterator[tuple[str, str]]:
        """(kind, message) of each problem of the next line's entry (None: not a JSON object),
        then move the link past it."""
        fields = entry if entry is not None else {}
        missing = [k for k in ("seq", "prev_hash", "entry_hash") if k not in fields]
        if entry is None:
            yield "unparseable", "not a JSON object"
        elif missing:
            yield "missing-field", f"missing {', '.join(missing)}"
        else:
            yield from self._link(entry)
            if self.public_key is not None:
                yield from self._signature(entry, self.public_key)
        seq = None if missing else fields["seq"]
        self.prev_recorded = str(fields.get("entry_hash", ""))
        self.prev_seq = seq if isinstance(seq, int) else self.prev_seq + 1

    def _link(self, entry: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
        """The entry's own hash, its link to the previous line and its seq."""
        recomputed = entry_hash(entry)
        if recomputed != entry["entry_hash"]:
            yield (
                "entry-hash",
                (
                    f"entry_hash is {str(entry['entry_hash'])[:12]}..., the entry hashes to "
                    f"{recomputed[:12]}...: the entry was changed after it was written"
                ),
            )
        if entry["prev_hash"] != self.prev_recorded:
            yield (
                "prev-hash",
                (
                    f"prev_hash is {str(entry['prev_hash'])[:12]}..., the previous entry's "
                    f"entry_hash is {self.prev_recorded[:12] or '(none)'}...: an entry before "
                    "this one was deleted, inserted or reordered"
                ),
            )
        if entry["seq"] != self.prev_seq + 1:
            yield "seq", f"seq is {entry['seq']}, expected {self.prev_seq + 1}"

    @cached_property
    def keyid(self) -> str:
        return key_id(self.public_key) if self.public_key is not None else ""

    def _signature(
        self, entry: Mapping[str, Any], key: Ed25519PublicKey
    ) -> Iterator[tuple[str, str]]:
        """The entry's ``signature`` by the key over its ``entry_hash``, and its ``keyid``."""
        from cryptography.exceptions import InvalidSignature

        sig = entry.get("signature")
        if not isinstance(sig, str):
            yield "unsigned", "the entry has no signature"
            return
        try:
            signed = SIGNED_PREFIX + str(entry["entry_hash"]).encode()
            key.verify(base64.b64decode(sig, validate=True), signed)
            verified = entry.get("keyid") == self.keyid
        except (binascii.Error, ValueError, InvalidSignature):
            verified = False
        if not verified:
            yield (
                "signature",
                (
                    "the signature does not verify with the given public key (the entry was "
                    "rewritten, or signed with another key)"
                ),
            )


@dataclass(frozen=True)
class Ledger:
    """A ledger file's bytes (``data``), read once: its entries, quarantined lines and problems."""

    data: bytes

    @classmethod
    def read(cls, path: Path) -> Ledger:
        """Read the whole ledger; a FIFO or device is refused, never waited on or read without end.

        Raises:
            InputError: the file cannot be read (``ledger-unreadable``).
        """
        try:
            return cls(read_regular(path, limit=sys.maxsize))
        except OSError as exc:
            raise InputError(
                "ledger-unreadable",
                f"cannot read the ledger {path}: {exc.strerror}",
                hint="pass the ledger file given to `ragwarrant run --ledger`",
            ) from exc

    def entries(self) -> list[dict[str, Any]]:
        """The parseable entries (JSON objects) in file order; other lines are skipped."""
        return [e for e in map(_parse_line, self.data.splitlines()) if e is not None]

    def chained_after(self, since_seq: int) -> list[dict[str, Any]]:
        """The chained entries whose ``seq`` is above ``since_seq``, in file order."""
        entries = (_as_entry(raw) for raw in self.data.split(b"\n") if raw)
        return [e for e in entries if e is not None and e["seq"] > since_seq]

    def quarantined(self) -> list[QuarantinedLine]:
        """The damaged lines that a marker entry set aside (each followed by a marker that holds
        exactly their bytes), in line order."""
        lines = self.data.splitlines()
        out: list[QuarantinedLine] = []
        for number, raw in enumerate(lines[1:], start=2):
            entry = _parse_line(raw)
            info = entry.get("quarantined") if entry is not None and is_marker(entry) else None
            if not isinstance(info, dict) or info.get("line") != number - 1:
                continue
            damaged = lines[number - 2]
            if info.get("sha256") == sha256_bytes(damaged):
                out.append(QuarantinedLine(number - 1, number, len(damaged), info["sha256"]))
        return out

    def problems(self, public_key: Ed25519PublicKey | None = None) -> list[LedgerProblem]:
        """``verify_chain`` of these bytes."""
        problems: list[LedgerProblem] = []
        if self.data and not self.data.endswith(b"\n"):
            problems.append(
                LedgerProblem(
                    self.data.count(b"\n") + 1,
                    "torn",
                    "the last line has no trailing newline (a run killed while appending?); the "
                    "next append quarantines it",
                )
            )
        walk, quarantined = _Walk(public_key), {q.line for q in self.quarantined()}
        for number, raw in enumerate(self.data.splitlines(), start=1):
            if number not in quarantined:
                problems += [LedgerProblem(number, *p) for p in walk.step(_parse_line(raw))]
        return problems


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
        entry before it; ``Ledger.quarantined`` lists such lines.

    Raises:
        InputError: the file cannot be read.
    """
    return Ledger.read(path).problems(public_key)


def read_entries(path: Path) -> list[dict[str, Any]]:
    """Return the ledger's parseable entries in file order (unparseable lines are skipped).

    Raises:
        InputError: the file cannot be read.
    """
    return Ledger.read(path).entries()


def read_under_lock(
    ledger_path: Path,
) -> tuple[list[dict[str, Any]], LedgerProblem | None, int]:
    """Read the ledger once under its lock, held only while reading.

    Returns:
        Its parseable entries in file order; the first break of its chain that earlier looks
        cannot be counted across (a deleted, reordered, inserted or edited entry may have been
        an earlier look, so ``gates.looks`` BLOCKs; a torn last line is not one: the next
        append quarantines it), or None; and the ``seq`` of its last chained entry (0: none),
        for ``append_entry(since_seq=...)``.

    Raises:
        OutputError: it cannot be opened or locked (``ledger-unwritable``, ``ledger-lock``).
    """
    with held_lock(ledger_path, _LEDGER_LOCK_ERRORS, append=True) as fd:
        ledger = Ledger(os.pread(fd, os.fstat(fd).st_size, 0))
    problems = ledger.problems()
    torn = {p.line for p in problems if p.kind == "torn"}
    broken = next((p for p in problems if p.line not in torn), None)
    chained = ledger.chained_after(0)
    return ledger.entries(), broken, int(chained[-1]["seq"]) if chained else 0
