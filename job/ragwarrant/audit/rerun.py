"""A retry of a run: reusing the committed run it would repeat, and the key that signs both.

A retry into a volume that holds a committed run of the same engine, contract and inputs,
signed as the retry would sign it, returns that run instead of deciding again
(``reusable_run``); when a kill lost the run's ledger entry, the retry appends it
(``record_reused``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from ragwarrant.audit.attestation import ATTESTATION_FILENAME, key_id, load_private_key
from ragwarrant.audit.ledger import read_entries
from ragwarrant.audit.ledger_history import record_run
from ragwarrant.audit.looks import LookEntries
from ragwarrant.audit.publish import committed_run
from ragwarrant.audit.verify import verify_output_dir
from ragwarrant.errors import InputError, OutputError
from ragwarrant.inputs import Inputs
from ragwarrant.outputs import DECISION_FILE, MANIFEST_FILE, Decision, Manifest
from ragwarrant.version import __version__

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def load_signing_key(path: Path | None) -> Ed25519PrivateKey | None:
    """The ``--signing-key`` private key, or None without one.

    Raises:
        InputError: as ``load_private_key``, with context ``option="--signing-key"`` (the record
            names the option: a replay from the inputs never signs, so cannot reproduce it).
    """
    if path is None:
        return None
    try:
        return load_private_key(path)
    except InputError as exc:
        exc.context.setdefault("option", "--signing-key")
        raise


def _signed_by(output_dir: Path, private_key: Ed25519PrivateKey | None) -> bool:
    """Whether the committed attestation is signed as this run would sign it (or unsigned)."""
    try:
        doc = orjson.loads((output_dir / ATTESTATION_FILENAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    signatures = doc.get("signatures") if isinstance(doc, dict) else None
    if private_key is None:
        return signatures is None
    wanted = key_id(private_key.public_key())
    return isinstance(signatures, list) and any(
        isinstance(s, dict) and s.get("keyid") == wanted for s in signatures
    )


def reusable_run(
    output_dir: Path, inputs: Inputs, private_key: Ed25519PrivateKey | None
) -> Decision | None:
    """The committed run in ``output_dir`` when this run would repeat it; else None.

    Repeats it: same engine version, same contract sha256, same input digests, attestation
    signed by the same key (or unsigned, as this run), and ``verify`` passes.
    """
    if committed_run(output_dir) is None:
        return None
    try:
        manifest = Manifest.model_validate_json((output_dir / MANIFEST_FILE).read_bytes())
        decision = Decision.model_validate_json((output_dir / DECISION_FILE).read_bytes())
    except (OSError, ValidationError):
        return None
    digests = {(d.path, d.sha256) for d in inputs.digests}
    same = (
        manifest.ragwarrant_version == __version__
        and decision.contract is not None
        and decision.contract.sha256 == inputs.contract_sha256
        and {(d.path, d.sha256) for d in manifest.inputs} == digests
        and _signed_by(output_dir, private_key)
    )
    return decision if same and verify_output_dir(output_dir).ok else None


def _refuse_later_looks(decision: Decision, ledger: Path, entries: list[dict[str, Any]]) -> None:
    """Refuse to record a reused run's look when the ledger holds a look of the same contract
    version that the run did not count (appended after it decided, before a kill lost its
    entry): its look number and level are stale.

    Raises:
        OutputError: ``ledger-look-stale`` (exit 73).
    """
    look, contract = decision.look, decision.contract
    if look is None or contract is None:
        return
    counted = {*look.earlier_run_ids, decision.run_id}
    looks = LookEntries(ledger, contract.id, contract.version, (), None, 0).after(entries)
    for e, _ in looks.earlier():
        if e.get("run_id") not in counted:
            raise OutputError(
                "ledger-look-stale",
                f"the ledger holds a look of contract {contract.id!r} v{contract.version} "
                f"(run {e.get('run_id')}) that the committed run {decision.run_id} did not "
                "count, so its look is stale and it is not recorded",
                hint="rerun into an empty --output: the run then counts that look",
            )


def record_reused(
    decision: Decision,
    output_dir: Path,
    ledger: Path | None,
    private_key: Ed25519PrivateKey | None,
) -> bool:
    """Append a reused run's ledger entry when a kill lost it; return whether it was appended.

    Raises:
        OutputError: the ledger cannot be written, or ``ledger-look-stale`` when a look of the
            same contract version was appended after the run decided (``_refuse_later_looks``).
        InputError: an earlier look's kept fingerprint cannot be read
            (``audit.looks.read_look_evidence``).
    """
    if ledger is None:
        return False
    entries = read_entries(ledger) if ledger.is_file() else []
    if any(e.get("run_id") == decision.run_id for e in entries):
        return False
    record_run(
        ledger,
        output_dir,
        private_key=private_key,
        check=lambda now: _refuse_later_looks(decision, ledger, now),
    )
    return True
