"""``decision.intoto.json``: an in-toto Statement v1 about the decision, optionally DSSE-signed.

The Statement (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md) names as
its subjects the release contract and every policy config (by sha256, as recorded in the
manifest), and carries the decision summary as its predicate (``PREDICATE_TYPE``). The predicate
binds ``manifest.json`` by its sha256, and the manifest binds every input and output, so an
admission policy can check a decision without re-running it.

The file is written *after* ``manifest.json`` (it hashes it) and so is not listed in it;
``ragwarrant verify`` checks it separately.

With a signing key the Statement is wrapped in a DSSE envelope
(https://github.com/secure-systems-lab/dsse, protocol v1): ``payloadType``
``application/vnd.in-toto+json``; the Ed25519 signature is over
``PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`` (LEN: ASCII decimal byte
length). Keys are PEM files: PKCS#8 private keys, SubjectPublicKeyInfo public keys, as written by
``openssl genpkey -algorithm ed25519`` and ``openssl pkey -pubout``. Cryptography is done by the
``cryptography`` package (pyca), imported only when signing or verifying.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, InternalError
from ragwarrant.sidefiles import read_regular

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    from ragwarrant.outputs import ValidationCheck

ATTESTATION_FILENAME = "decision.intoto.json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://ragwarrant.dev/decision/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
SIGNING_CHECK_ID = "attestation-signing"
"""Id of the ``validation_report.json`` check recording whether the run signed its attestation
(``expected``: ``dsse-ed25519`` or ``unsigned``; ``found``: the key id when signed)."""


class AttestationError(Exception):
    """An attestation that does not verify: bad envelope, wrong type, or a bad signature.

    An outcome of verification, not a user error: ``ragwarrant verify`` reports it as a mismatch.
    """


def pae(payload_type: str, body: bytes) -> bytes:
    """Return the DSSE v1 Pre-Authentication Encoding of a payload type and body.

    ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, LEN the ASCII decimal byte length
    (DSSE protocol.md). Example: ``pae("http://example.com/HelloWorld", b"hello world") ==
    b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"``.
    """
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def build_statement(
    decision: Mapping[str, Any],
    manifest: Mapping[str, Any],
    manifest_sha256: str,
    subject_paths: Sequence[str],
) -> dict[str, Any]:
    """Build the in-toto Statement v1 of a run.

    Args:
        decision: ``decision.json`` as a dict (candidate class under ``class``).
        manifest: ``manifest.json`` as a dict; its ``inputs`` give the subjects' digests, so the
            Statement and the manifest agree by construction.
        manifest_sha256: sha256 hex of the bytes of ``manifest.json`` as written.
        subject_paths: the contract file and every policy config, as paths relative to the input
            directory (as the manifest records them), e.g. ``["contract.yaml",
            "policies/baseline.json", "policies/cand.json"]``. An ERROR record, which has no
            inputs, names an output instead (``["decision.json"]``).

    Returns:
        ``{"_type", "subject": [{"name", "digest": {"sha256"}}], "predicateType", "predicate"}``.
        The predicate holds run id, run class, exit code, evidence class, claim scope, contract
        id/version/sha256, selected policy, each candidate's class and reasons, and the manifest
        and decision sha256.

    Raises:
        InternalError: a subject path is not among the manifest's inputs (or, for a manifest
            without inputs, its outputs).
    """
    outputs = {str(f["path"]): str(f["sha256"]) for f in manifest.get("outputs") or []}
    digests = {str(f["path"]): str(f["sha256"]) for f in manifest.get("inputs") or []} or outputs
    subjects = []
    for name in dict.fromkeys(subject_paths):
        if name not in digests:
            raise InternalError(
                "attestation-subject-unknown",
                f"attestation subject {name!r} is not an input recorded in the manifest",
                hint="pass the contract and policy config paths as the manifest records them",
            )
        subjects.append({"name": name, "digest": {"sha256": digests[name]}})
    contract = decision.get("contract") or {}
    predicate = {
        "run_id": decision.get("run_id"),
        "run_class": decision.get("run_class"),
        "exit_code": decision.get("exit_code"),
        "evidence_class": decision.get("evidence_class"),
        "claim_scope": decision.get("claim_scope"),
        "contract": {
            "id": contract.get("id"),
            "version": contract.get("version"),
            "sha256": contract.get("sha256"),
        },
        "selected_policy": decision.get("selected_policy"),
        "candidates": [
            {
                "policy_id": c.get("policy_id"),
                "class": c.get("class", c.get("decision_class")),
                "reasons": list(c.get("reasons") or []),
            }
            for c in decision.get("candidates") or []
        ],
        "manifest": {"name": "manifest.json", "digest": {"sha256": manifest_sha256}},
        "decision": {"name": "decision.json", "digest": {"sha256": outputs.get("decision.json")}},
        "finished_at": decision.get("finished_at"),
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


def statement_bytes(statement: Mapping[str, Any]) -> bytes:
    """Return the canonical bytes of a Statement (the DSSE payload): compact JSON, keys sorted."""
    return orjson.dumps(statement, option=orjson.OPT_SORT_KEYS)


_KEY_FORMS = {  # key kind -> (the PEM form it must have, how to make one)
    "signing": (
        "PEM PKCS#8 private key",
        "create one with `openssl genpkey -algorithm ed25519 -out signing.pem`",
    ),
    "public": (
        "PEM SubjectPublicKeyInfo public key",
        "derive it with `openssl pkey -in signing.pem -pubout -out signing.pub.pem`",
    ),
}


def _load_key(path: Path, what: str) -> Any:
    """The Ed25519 key of kind ``what`` (``signing`` or ``public``) in a PEM file of at most
    ``sidefiles.MAX_SIDE_FILE_BYTES``; the errors are those of ``load_private_key``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    form, hint = _KEY_FORMS[what]
    try:
        data = read_regular(path)
    except OSError as exc:
        raise InputError(
            f"{what}-key-unreadable",
            f"cannot read the {what} key file {path.name}: {exc.strerror}",
            hint=f"mount the {what} key as a file and pass its path",
        ) from exc
    try:
        key: object = (
            serialization.load_pem_private_key(data, password=None)
            if what == "signing"
            else serialization.load_pem_public_key(data)
        )
    except TypeError as exc:
        raise InputError(
            "signing-key-invalid",
            f"the signing key {path.name} is encrypted; ragwarrant needs an unencrypted key",
            hint="protect the key with the secret store (a mounted secret), not a passphrase",
        ) from exc
    except ValueError as exc:
        raise InputError(
            f"{what}-key-invalid", f"the {what} key {path.name} is not a {form}", hint=hint
        ) from exc
    wanted = ed25519.Ed25519PrivateKey if what == "signing" else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise InputError(
            f"{what}-key-invalid",
            f"the {what} key {path.name} is a {type(key).__name__}, not an Ed25519 key",
            hint=hint,
        )
    return key


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Load an unencrypted Ed25519 private key from a PKCS#8 PEM file.

    Raises:
        InputError: the file is unreadable (``signing-key-unreadable``), is not PEM, is
            encrypted, or holds another key type (``signing-key-invalid``).
    """
    return _load_key(path, "signing")


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Load an Ed25519 public key from a SubjectPublicKeyInfo PEM file.

    Raises:
        InputError: the file is unreadable (``public-key-unreadable``), is not a PEM public key,
            or holds another key type (``public-key-invalid``).
    """
    return _load_key(path, "public")


def try_load_private_key(path: Path | None) -> Ed25519PrivateKey | None:
    """Load the signing key for an ERROR record: None when there is none or it is unusable.

    An ERROR record is written after something failed, possibly the key itself; it is then
    written unsigned (and its ``attestation-signing`` check says so) rather than not at all.
    """
    if path is None:
        return None
    try:
        return load_private_key(path)
    except InputError:
        return None


def signing_check(private_key: Ed25519PrivateKey | None) -> ValidationCheck:
    """Return the ``validation_report.json`` check recording whether the attestation is signed.

    Id ``attestation-signing``, status ``info``, ``expected`` ``dsse-ed25519`` (with the key id
    in ``found``) or ``unsigned``. ``ragwarrant verify`` then refuses an unsigned
    ``decision.intoto.json`` in a directory that records a signed one.
    """
    from ragwarrant.outputs import ValidationCheck

    signed = private_key is not None
    return ValidationCheck(
        id=SIGNING_CHECK_ID,
        target="outputs",
        status="info",
        message="decision.intoto.json is a DSSE envelope signed with Ed25519"
        if signed
        else "decision.intoto.json is an unsigned in-toto Statement (no --signing-key)",
        expected="dsse-ed25519" if signed else "unsigned",
        found=key_id(private_key.public_key()) if private_key is not None else None,
    )


def key_id(public_key: Ed25519PublicKey) -> str:
    """Return the key id: ``sha256:`` + hex sha256 of the key's DER SubjectPublicKeyInfo.

    A hint for picking the key only; DSSE forbids using it for security decisions.
    """
    from cryptography.hazmat.primitives import serialization

    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + sha256_bytes(der)


def sign_envelope(statement: Mapping[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """Wrap a Statement in a DSSE envelope signed with Ed25519.

    Returns:
        ``{"payload": b64(body), "payloadType": PAYLOAD_TYPE, "signatures": [{"keyid", "sig"}]}``,
        standard base64, ``sig`` = Ed25519 over ``pae(PAYLOAD_TYPE, body)``.
    """
    body = statement_bytes(statement)
    sig = private_key.sign(pae(PAYLOAD_TYPE, body))
    return {
        "payload": base64.b64encode(body).decode("ascii"),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [
            {
                "keyid": key_id(private_key.public_key()),
                "sig": base64.b64encode(sig).decode("ascii"),
            }
        ],
    }


def _b64decode(value: Any, what: str) -> bytes:
    """Decode standard or URL-safe base64 (DSSE verifiers must accept both)."""
    if not isinstance(value, str):
        raise AttestationError(f"{what} is not a base64 string")
    text = value.strip()
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AttestationError(f"{what} is not valid base64") from exc


def verify_envelope(
    envelope: Mapping[str, Any], public_key: Ed25519PublicKey | None
) -> dict[str, Any]:
    """Verify a DSSE envelope's Ed25519 signature and return the Statement it carries.

    Follows DSSE protocol v1: decode, verify a signature over ``PAE(payloadType, payload)`` (any
    one of the envelope's signatures made with ``public_key`` suffices), then check the payload
    type and parse the payload. Without ``public_key`` every step but the signature check runs.

    Raises:
        AttestationError: a field is missing or malformed, no signature verifies, the payload
            type is not ``PAYLOAD_TYPE``, or the payload is not an in-toto Statement v1.
    """
    for field in ("payload", "payloadType", "signatures"):
        if field not in envelope:
            raise AttestationError(f"the DSSE envelope has no '{field}'")
    body = _b64decode(envelope["payload"], "payload")
    payload_type = envelope["payloadType"]
    if not isinstance(payload_type, str):
        raise AttestationError("payloadType is not a string")
    signatures = envelope["signatures"]
    if not isinstance(signatures, list) or not signatures:
        raise AttestationError("the DSSE envelope has no signatures")
    if public_key is not None:
        from cryptography.exceptions import InvalidSignature

        for s in signatures:
            if not isinstance(s, Mapping) or "sig" not in s:
                continue
            try:
                public_key.verify(_b64decode(s["sig"], "signature"), pae(payload_type, body))
            except (InvalidSignature, AttestationError):
                continue
            break
        else:
            raise AttestationError(
                "no signature of the DSSE envelope verifies with the given public key "
                "(the payload was changed, or it was signed with another key)"
            )
    if payload_type != PAYLOAD_TYPE:
        raise AttestationError(f"payloadType is {payload_type!r}, expected {PAYLOAD_TYPE!r}")
    return parse_statement(body)


def parse_statement(body: bytes) -> dict[str, Any]:
    """Parse and check an in-toto Statement v1 with the ragwarrant predicate type.

    Raises:
        AttestationError: not JSON, wrong ``_type`` or ``predicateType``, or a subject without
            a sha256 digest.
    """
    try:
        statement = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise AttestationError("the payload is not JSON") from exc
    if not isinstance(statement, dict):
        raise AttestationError("the payload is not a JSON object")
    if statement.get("_type") != STATEMENT_TYPE:
        raise AttestationError(f"_type is {statement.get('_type')!r}, expected {STATEMENT_TYPE!r}")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise AttestationError(
            f"predicateType is {statement.get('predicateType')!r}, expected {PREDICATE_TYPE!r}"
        )
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not subjects:
        raise AttestationError("the Statement has no subject")
    for i, s in enumerate(subjects):
        if not isinstance(s, dict) or not isinstance((s.get("digest") or {}).get("sha256"), str):
            raise AttestationError(f"subject[{i}] has no sha256 digest")
    if not isinstance(statement.get("predicate"), dict):
        raise AttestationError("the Statement has no predicate object")
    return statement


def render_attestation(
    statement: Mapping[str, Any], private_key: Ed25519PrivateKey | None = None
) -> bytes:
    """Return the bytes of ``decision.intoto.json``: the Statement, or its signed envelope."""
    doc: Mapping[str, Any] = (
        statement if private_key is None else sign_envelope(statement, private_key)
    )
    return render_document(doc)


def render_document(doc: Mapping[str, Any]) -> bytes:
    """Return the file bytes of a Statement or envelope: JSON, keys sorted, two-space indent,
    trailing newline (``verify`` requires exactly these bytes)."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def read_attestation(
    data: bytes, public_key: Ed25519PublicKey | None = None
) -> tuple[dict[str, Any], bool]:
    """Read ``decision.intoto.json``: return (Statement, whether a signature was verified).

    A bare Statement is accepted only without ``public_key``; an envelope's signature is checked
    when ``public_key`` is given, else the rest of the envelope only (``verify_envelope``).

    Raises:
        AttestationError: unparseable, not a Statement/envelope, unsigned while a key is given,
            or a signature that does not verify.
    """
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise AttestationError("decision.intoto.json is not JSON") from exc
    if not isinstance(doc, dict):
        raise AttestationError("decision.intoto.json is not a JSON object")
    if "payloadType" in doc:
        return verify_envelope(doc, public_key), public_key is not None
    if public_key is not None:
        raise AttestationError(
            "decision.intoto.json is an unsigned Statement, but a public key was given"
        )
    return parse_statement(data), False


def write_attestation(
    output_dir: Path,
    subject_paths: Sequence[str],
    private_key: Ed25519PrivateKey | None = None,
    *,
    sync_dir: bool = True,
) -> bytes:
    """Write ``decision.intoto.json`` for a completed run; return the bytes written.

    Reads ``decision.json`` and ``manifest.json`` back from ``output_dir`` (so the Statement
    describes exactly what was published), builds the Statement and writes it atomically, signed
    when ``private_key`` is given. Call after the manifest is written.

    Args:
        output_dir: the run's output directory.
        subject_paths: the contract file and the policy configs, relative to the input
            directory as the manifest records them.
        private_key: from ``load_private_key`` (load it at start-up, so a bad key fails early).
        sync_dir: fsync ``output_dir`` after the write (``writer.write_atomic``); False in a
            staging directory, which ``writer.commit_staged`` syncs.

    Raises:
        InternalError: a subject is not a manifest input.
        OutputError: the file cannot be written.
    """
    from ragwarrant.audit.writer import write_atomic

    decision = orjson.loads((output_dir / "decision.json").read_bytes())
    manifest_bytes = (output_dir / "manifest.json").read_bytes()
    statement = build_statement(
        decision,
        orjson.loads(manifest_bytes),
        sha256_bytes(manifest_bytes),
        subject_paths,
    )
    data = render_attestation(statement, private_key)
    write_atomic(output_dir / ATTESTATION_FILENAME, data, sync_dir=sync_dir)
    return data
