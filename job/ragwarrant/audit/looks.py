"""A run's look counted against the ledger without holding its lock across the run.

The looks are read under the ledger's lock, held only while reading (``audit.ledger.read_looks``);
the run then decides at its look's level (``gates.looks``) without the lock; its entry is
appended under the lock after the tip is read again (``record_look``), and refused with
``ledger-look-stale`` when an entry appended since the read changes this run's look (another run
of the same contract version decided meanwhile): never recorded as a fresh full-alpha look.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from pydantic import ValidationError

from ragwarrant.audit.ledger import LookEntries, read_looks, record_run
from ragwarrant.errors import OutputError
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.evidence.looks import decode_fingerprint
from ragwarrant.gates import looks
from ragwarrant.inputs import Inputs
from ragwarrant.outputs import LookRecord

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


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


def _refuse_stale(query: looks.LookQuery, look: looks.Look, ledger: looks.LedgerLooks) -> None:
    """Refuse a run whose look is no longer the one ``ledger`` (read again at append) gives.

    Another run of the same study appended a look after this run read the ledger. When the
    recount gives this run another look number, level, confirmatory standing or BLOCK, the
    decision is stale and refused: it is never recorded as a fresh look. When it gives the same
    (a concurrent run on identical evidence: ``gates.looks`` counts it as a repeat of that look
    at its level, and the seeded decision on the same evidence at the same level is the same
    one), the append goes ahead; only the record's links (``repeat_of``) differ.

    Raises:
        OutputError: ``ledger-look-stale`` (exit 73; the ERROR record replaces the decision).
    """
    fresh = query.resolve(ledger).record
    was = look.record
    if _decided_alike(fresh, was):
        return
    if fresh.number != was.number:
        now = f"it is look {fresh.number}"
    else:
        now = (
            f"look {fresh.number} is at one-sided level {fresh.alpha_this_look:.4g} "
            f"({_standing(fresh)}), not {was.alpha_this_look:.4g} ({_standing(was)})"
        )
    raise OutputError(
        "ledger-look-stale",
        f"another run of contract {query.contract.id!r} v{query.contract.version} appended a "
        f"look to the ledger while this run decided as look {was.number}; counted now "
        f"{now}, so its decision's level is stale",
        hint="rerun: the run then counts that look and tests at its own look's level",
    )


def _decided_alike(fresh: LookRecord, was: LookRecord) -> bool:
    """Whether two records of a run's look decide alike: same number, level and standing."""
    keys = ("number", "alpha_this_look", "alpha_spent", "confirmatory", "blocked")
    return all(getattr(fresh, k) == getattr(was, k) for k in keys)


def _standing(record: LookRecord) -> str:
    if record.blocked:
        return "blocked"
    return "confirmatory" if record.confirmatory else "not confirmatory"


def _ledger_looks(entries: LookEntries) -> looks.LedgerLooks:
    """The ledger's looks (``audit.ledger``) as ``gates.looks`` counts them."""
    earlier = [_earlier_look(e, data) for e, data in entries.earlier()]
    mine = [e for e in earlier if e is not None]
    theirs = [] if mine else [_earlier_look(e, data) for e, data in entries.others()]
    broken = entries.chain_break
    where = f"line {broken.line} ({broken.kind})" if broken is not None else None
    return looks.LedgerLooks(mine, [e for e in theirs if e is not None], where)


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

        Raises:
            OutputError: ``ledger-look-stale`` (``_refuse_stale``).
        """
        if self.ledger is not None and appended:
            _refuse_stale(self.query, self.look, _ledger_looks(self.ledger.after(appended)))


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
    return RunLook(query.resolve(_ledger_looks(entries)), query, entries)


def record_look(
    ledger: Path, output_dir: Path, key: Ed25519PrivateKey | None, looked: RunLook | None
) -> None:
    """Append the run's ledger entry (``audit.ledger.record_run``) with its look's fingerprint,
    chained after the tip read under the lock and refused when its look went stale.

    Raises:
        OutputError: the ledger cannot be written, or ``ledger-look-stale``.
    """
    evidence = looked.query.evidence if looked is not None else None
    if looked is None or looked.ledger is None:
        record_run(ledger, output_dir, private_key=key, look_evidence=evidence)
        return
    since = looked.ledger.tip_seq
    record_run(
        ledger, output_dir, private_key=key, look_evidence=evidence, since_seq=since,
        check=looked.check,
    )  # fmt: skip
