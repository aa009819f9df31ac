"""A run's look counted against the ledger without holding its lock across the run.

The looks are read under the ledger's lock, held only while reading (``read_looks``);
the run then decides at its look's level (``gates.looks``) without the lock; its entry is
appended under the lock after the tip is read again (``record_look``), and refused with
``ledger-look-stale`` when an entry appended since the read changes this run's look (another run
of the same contract version decided meanwhile): never recorded as a fresh full-alpha look.

Each look's evidence fingerprint (``evidence.looks``) is kept next to the ledger, in
``<ledger>.looks/<run_id>.json`` (``look_evidence_path``), and read back as a regular file of
bounded size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from pydantic import ValidationError

from ragwarrant.audit.ledger import LedgerProblem, is_marker, read_under_lock
from ragwarrant.audit.ledger_history import record_run
from ragwarrant.audit.writer import write_atomic
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, OutputError
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.evidence.looks import decode_fingerprint
from ragwarrant.gates import looks
from ragwarrant.gates.looks import LedgerLooks
from ragwarrant.inputs import Inputs
from ragwarrant.limits import MAX_EVIDENCE_FILE_BYTES
from ragwarrant.outputs import DECISION_FILE, LookRecord
from ragwarrant.sidefiles import read_regular

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


# ---------------------------------------------------------------------------------------------
# The ledger's looks, and the evidence fingerprints kept next to it.

LookEntry = tuple[dict[str, Any], bytes | None]
"""A look's ledger entry and its kept evidence fingerprint (None: missing or altered)."""


def look_evidence_path(ledger_path: Path, run_id: str) -> Path:
    """Where a run's evidence fingerprint is kept: ``<ledger>.looks/<run_id>.json``.

    Beside the file the entries go to: a ``--ledger`` given through a symlink is resolved (its
    entries are appended through the link), so every run finds the fingerprints by either path.
    The fingerprint holds 64-bit digests only (``evidence.looks``), never an id or a value.
    """
    ledger_path = ledger_path.resolve()
    return ledger_path.parent / f"{ledger_path.name}.looks" / f"{run_id}.json"


def read_look_evidence(ledger_path: Path, run_id: str, sha256: str | None) -> bytes | None:
    """The fingerprint a run kept next to the ledger, or None when missing or not ``sha256``.

    Read as a regular file of at most ``limits.MAX_EVIDENCE_FILE_BYTES`` (a fingerprint of
    10^8 cells is about 1.1 GB) with ``sidefiles.read_regular``: a FIFO put in its place is
    refused, never waited on, and a device is never read without end.

    Raises:
        InputError: ``ledger-unreadable`` naming the file (``<ledger>.looks/<run_id>.json``,
            no absolute path): it exists but is not a regular file, is larger than the limit, or
            cannot be read.
    """
    if sha256 is None:
        return None
    path = look_evidence_path(ledger_path, run_id)
    try:
        data = read_regular(path, limit=MAX_EVIDENCE_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(
            "ledger-unreadable",
            f"cannot read the evidence fingerprint {path.parent.name}/{path.name} kept next to "
            f"the ledger: {exc.strerror}",
            hint="the ledger's .looks directory holds the regular files runs wrote there; "
            "restore or remove what took this one's place",
        ) from exc
    return data if sha256_bytes(data) == sha256 else None


def _is_look(e: Mapping[str, Any]) -> bool:
    """Whether an entry is a look at its evidence (see ``LookEntries.earlier``), of any contract:
    a BLOCKed run is one when it computed a noninferiority bound (another candidate, or
    publication hygiene, BLOCKed it after a candidate was tested)."""
    look = e.get("look")
    if is_marker(e) or not isinstance(look, dict) or look.get("blocked"):
        return False
    if e.get("run_class") == "ERROR":
        return False
    bounds = (
        b
        for c in e.get("candidates") or []
        for b in (c.get("bounds") if isinstance(c, Mapping) else None) or []
    )
    tested = any(str(b.get("id", "")).startswith("noninferiority:") for b in bounds)
    return e.get("run_class") != "BLOCK" or tested


@dataclass(frozen=True)
class LookEntries:
    """The ledger's looks as one run read them, at one instant (``read_looks``).

    Attributes:
        ledger_path: the ledger file.
        contract_id: the run's contract id.
        version: the run's contract version.
        looks: every look entry (``_is_look``, of any contract), oldest first.
        chain_break: the first break of the chain (``audit.ledger.read_under_lock``), or None.
        tip_seq: ``seq`` of the last entry read (0: empty or absent), for
            ``append_entry(since_seq=...)``.
    """

    ledger_path: Path
    contract_id: str
    version: str
    looks: tuple[dict[str, Any], ...]
    chain_break: LedgerProblem | None
    tip_seq: int

    def _with_evidence(self, mine: bool) -> list[LookEntry]:
        out = []
        for e in self.looks:
            contract = e.get("contract") or {}
            same = (contract.get("id"), contract.get("version")) == (self.contract_id, self.version)
            if same != mine:
                continue
            look = e.get("look") or {}
            sha = look.get("evidence_sha256") if isinstance(look, dict) else None
            sha = sha if isinstance(sha, str) else None
            out.append((e, read_look_evidence(self.ledger_path, str(e.get("run_id")), sha)))
        return out

    def earlier(self) -> list[LookEntry]:
        """Earlier looks of this contract id and version with their kept fingerprints (None:
        missing or not the recorded sha256), oldest first.

        An earlier look is an entry (not a quarantine marker) of the same contract id and
        version with a ``look`` record that was not itself refused (``look.blocked``), from a
        run that was not in ERROR and, when BLOCKed, had tested a candidate (a noninferiority
        bound in the entry: its data were seen); whatever its policies and configs
        (``gates.looks`` BLOCKs a change of configs under one contract version).

        Raises:
            InputError: a kept fingerprint cannot be read (``read_look_evidence``).
        """
        return self._with_evidence(mine=True)

    def others(self) -> list[LookEntry]:
        """Looks under other contract ids or versions, likewise: ``gates.looks`` uses them to
        recognise a new contract version (or a renamed contract) run on evidence that an earlier
        look of the same baseline and candidate (by policy id or config content) already saw.

        Raises:
            InputError: a kept fingerprint cannot be read (``read_look_evidence``).
        """
        return self._with_evidence(mine=False)

    def after(self, entries: Sequence[dict[str, Any]]) -> LookEntries:
        """These looks followed by ``entries`` (appended since, as ``append_entry``'s check
        receives them)."""
        if not entries:
            return self
        more = tuple(e for e in entries if _is_look(e))
        return replace(self, looks=self.looks + more, tip_seq=int(entries[-1]["seq"]))

    def counted(self) -> LedgerLooks:
        """These looks as ``gates.looks`` counts them (``earlier``, else ``others``; the chain
        break). Raises InputError when a kept fingerprint cannot be read."""
        earlier = [_earlier_look(e, data) for e, data in self.earlier()]
        mine = [e for e in earlier if e is not None]
        theirs = [] if mine else [_earlier_look(e, data) for e, data in self.others()]
        broken = self.chain_break
        where = f"line {broken.line} ({broken.kind})" if broken is not None else None
        return LedgerLooks(mine, [e for e in theirs if e is not None], where)


def read_looks(ledger_path: Path, contract_id: str, version: str) -> LookEntries:
    """Read what a run's look is resolved from, holding the ledger's lock only while reading.

    The run then decides without the lock; ``append_entry`` re-reads the tip under the lock and
    hands the entries appended since ``tip_seq`` to the run's check (a concurrent look of the
    same contract version makes this run's look stale). A missing ledger has no looks
    (``tip_seq`` 0) and is not created here.

    Raises:
        OutputError: it cannot be opened or locked (``ledger-unwritable``, ``ledger-lock``).
    """
    if not ledger_path.is_file():
        return LookEntries(ledger_path, contract_id, version, (), None, 0)
    entries, broken, tip = read_under_lock(ledger_path)
    looks_ = tuple(e for e in entries if _is_look(e))
    return LookEntries(ledger_path, contract_id, version, looks_, broken, tip)


def _earlier_look(entry: Mapping[str, object], evidence: bytes | None) -> looks.EarlierLook | None:
    """An earlier look from its ledger entry and its kept fingerprint file's bytes.

    Returns None when the entry has no valid ``look`` record; the fingerprint is None when
    ``evidence`` is missing or not a fingerprint document.
    """
    try:
        record = LookRecord.model_validate(entry.get("look"))
    except ValidationError:
        return None
    try:
        fp = decode_fingerprint(orjson.loads(evidence)["digests"]) if evidence else None
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        fp = None
    contract = entry.get("contract")
    sha = contract.get("sha256") if isinstance(contract, dict) else None
    return looks.EarlierLook(
        record, str(entry.get("run_id")), fp, sha if isinstance(sha, str) and sha else None
    )


@dataclass(frozen=True)
class RunLook:
    """A run's look, what it was resolved from, and how to tell at append that it went stale.

    Attributes:
        look: the run's look (``gates.looks.Look``).
        query: the run's side of the comparison (its fingerprint, units, configs).
        ledger: the ledger's looks as the run read them, or None (no ledger, or a replay).
    """

    look: looks.Look
    query: looks.LookQuery
    ledger: LookEntries | None = None

    def check(self, appended: list[dict[str, Any]]) -> None:
        """Refuse the append when entries appended since the read change this run's look.

        Another run of the same study appended a look after this run read the ledger. When the
        recount gives this run another look number, level, confirmatory standing or BLOCK, the
        decision is stale and refused: it is never recorded as a fresh look. When it gives the
        same (a concurrent run on identical evidence: ``gates.looks`` counts it as a repeat of
        that look at its level, and the seeded decision on the same evidence at the same level
        is the same one), the append goes ahead; only the record's links (``repeat_of``) differ.

        Raises:
            OutputError: ``ledger-look-stale`` (exit 73; the ERROR record replaces the decision).
        """
        if self.ledger is None or not appended:
            return
        fresh = self.query.resolve(self.ledger.after(appended).counted()).record
        was = self.look.record
        keys = ("number", "alpha_this_look", "alpha_spent", "confirmatory", "blocked")
        if all(getattr(fresh, k) == getattr(was, k) for k in keys):
            return  # decided alike: same number, level and standing
        if fresh.number != was.number:
            now = f"it is look {fresh.number}"
        else:
            standing = [
                "blocked" if r.blocked else "confirmatory" if r.confirmatory else "not confirmatory"
                for r in (fresh, was)
            ]
            now = (
                f"look {fresh.number} is at one-sided level {fresh.alpha_this_look:.4g} "
                f"({standing[0]}), not {was.alpha_this_look:.4g} ({standing[1]})"
            )
        contract = self.query.contract
        raise OutputError(
            "ledger-look-stale",
            f"another run of contract {contract.id!r} v{contract.version} appended a look to "
            f"the ledger while this run decided as look {was.number}; counted now {now}, so its "
            "decision's level is stale",
            hint="rerun: the run then counts that look and tests at its own look's level",
        )


def run_look(
    inputs: Inputs,
    index: EvidenceIndex,
    scope: np.ndarray,
    ledger: Path | None,
    replay: LookRecord | None,
) -> RunLook | None:
    """Which look at this contract version the run is, on the decided examples ``scope`` (bool,
    shape (n_examples,)); None when the run has neither a ledger nor a sequential plan nor a
    recorded look to replay (nothing to count looks with).

    Raises:
        InputError, OutputError: the ledger cannot be read or locked (``read_looks``).
    """
    contract = inputs.contract
    if ledger is None and contract.sequential is None and replay is None:
        return None
    query = looks.look_query(inputs, index, scope)
    if replay is not None:
        return RunLook(query.replayed(replay), query)
    if ledger is None:
        return RunLook(query.resolve(looks.LedgerLooks([], [])), query)
    entries = read_looks(ledger, contract.id, contract.version)  # a short lock, then none
    return RunLook(query.resolve(entries.counted()), query, entries)


def record_look(
    ledger: Path, output_dir: Path, key: Ed25519PrivateKey | None, looked: RunLook | None
) -> None:
    """Keep the run's evidence fingerprint next to the ledger (``look_evidence_path``), then
    append the run's ledger entry (``audit.ledger_history.record_run``), chained after the tip
    read under the lock and refused when its look went stale.

    Raises:
        OutputError: the ledger or the fingerprint cannot be written, or ``ledger-look-stale``.
    """
    if looked is None:
        record_run(ledger, output_dir, private_key=key)
        return
    run_id = str(orjson.loads((output_dir / DECISION_FILE).read_bytes()).get("run_id"))
    path = look_evidence_path(ledger, run_id)
    try:
        path.parent.mkdir(exist_ok=True)
        write_atomic(path, looked.query.evidence)
    except (OSError, OutputError) as exc:
        raise OutputError(
            "ledger-unwritable",
            f"cannot write the evidence fingerprint next to the ledger {ledger.name}: "
            f"{getattr(exc, 'strerror', None) or 'not writable'}",
            hint="mount a writable volume for --ledger (its directory must be writable)",
        ) from exc
    since = looked.ledger.tip_seq if looked.ledger is not None else 0
    check = looked.check if looked.ledger is not None else None
    record_run(ledger, output_dir, private_key=key, since_seq=since, check=check)
