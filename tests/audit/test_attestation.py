"""Tests of the in-toto Statement and its DSSE Ed25519 envelope."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from ragwarrant.audit.attestation import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    AttestationError,
    build_statement,
    key_id,
    load_private_key,
    load_public_key,
    pae,
    parse_statement,
    read_attestation,
    render_attestation,
    render_document,
    sign_envelope,
    verify_envelope,
)
from ragwarrant.errors import InputError, InternalError

from .conftest import Run, write_keypair


def _statement() -> dict:
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": "contract.yaml", "digest": {"sha256": "a" * 64}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {"run_id": "r1", "run_class": "PROMOTE"},
    }


def test_pae_matches_the_dsse_test_vector() -> None:
    """PAE reproduces the example of the DSSE protocol specification."""
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_counts_bytes_not_characters() -> None:
    """LEN is the UTF-8 byte length."""
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"


def test_sign_and_verify_round_trip(tmp_path: Path) -> None:
    """A signed envelope verifies with the matching public key and yields the Statement."""
    private, public = write_keypair(tmp_path, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    assert envelope["payloadType"] == PAYLOAD_TYPE
    assert envelope["signatures"][0]["keyid"] == key_id(load_public_key(public))
    body = base64.b64decode(envelope["payload"])
    sig = base64.b64decode(envelope["signatures"][0]["sig"])
    load_public_key(public).verify(
        sig, b"DSSEv1 %d %s %d %s" % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(body), body)
    )
    assert verify_envelope(envelope, load_public_key(public)) == _statement()


def test_tampered_payload_fails(tmp_path: Path) -> None:
    """Changing the payload after signing makes verification fail."""
    private, public = write_keypair(tmp_path, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    forged = _statement()
    forged["predicate"]["run_class"] = "REJECT"
    envelope["payload"] = base64.b64encode(
        orjson.dumps(forged, option=orjson.OPT_SORT_KEYS)
    ).decode()
    with pytest.raises(AttestationError, match="no signature"):
        verify_envelope(envelope, load_public_key(public))


def test_tampered_payload_type_fails(tmp_path: Path) -> None:
    """The payload type is authenticated too."""
    private, public = write_keypair(tmp_path, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    envelope["payloadType"] = "application/json"
    with pytest.raises(AttestationError):
        verify_envelope(envelope, load_public_key(public))


def test_another_key_fails(tmp_path: Path) -> None:
    """A signature by another key does not verify."""
    private, _ = write_keypair(tmp_path, "signing")
    other = tmp_path / "other"
    other.mkdir()
    _, other_public = write_keypair(other, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    with pytest.raises(AttestationError):
        verify_envelope(envelope, load_public_key(other_public))


def test_url_safe_base64_is_accepted(tmp_path: Path) -> None:
    """Verifiers must accept URL-safe base64 (DSSE protocol)."""
    private, public = write_keypair(tmp_path, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    for field in ("payload",):
        envelope[field] = (
            base64.urlsafe_b64encode(base64.b64decode(envelope[field])).decode().rstrip("=")
        )
    sig = envelope["signatures"][0]
    sig["sig"] = base64.urlsafe_b64encode(base64.b64decode(sig["sig"])).decode()
    assert verify_envelope(envelope, load_public_key(public)) == _statement()


def test_read_attestation_unsigned_and_signed(tmp_path: Path) -> None:
    """An unsigned Statement reads without a key, is refused with one; a signed one verifies."""
    private, public = write_keypair(tmp_path, "signing")
    unsigned = render_attestation(_statement())
    assert read_attestation(unsigned) == (_statement(), False)
    with pytest.raises(AttestationError, match="unsigned"):
        read_attestation(unsigned, load_public_key(public))
    signed = render_attestation(_statement(), load_private_key(private))
    assert read_attestation(signed, load_public_key(public)) == (_statement(), True)
    assert read_attestation(signed) == (_statement(), False)


def test_an_envelope_is_read_alike_with_and_without_a_key(tmp_path: Path) -> None:
    """Without a key every check of the envelope but the signature still runs: one stripped of
    its signatures, or carrying another payload type, is refused."""
    private, _ = write_keypair(tmp_path, "signing")
    envelope = sign_envelope(_statement(), load_private_key(private))
    with pytest.raises(AttestationError, match="no signatures"):
        read_attestation(render_document({**envelope, "signatures": []}))
    with pytest.raises(AttestationError, match="payloadType is 'application/json'"):
        read_attestation(render_document({**envelope, "payloadType": "application/json"}))


def test_parse_statement_rejects_wrong_types() -> None:
    """Only in-toto Statement v1 with the ragwarrant predicate type is accepted."""
    for field, value in (("_type", "https://in-toto.io/Statement/v0.1"), ("predicateType", "x")):
        bad = {**_statement(), field: value}
        with pytest.raises(AttestationError, match=field):
            parse_statement(orjson.dumps(bad))
    with pytest.raises(AttestationError, match="sha256"):
        parse_statement(orjson.dumps({**_statement(), "subject": [{"name": "c", "digest": {}}]}))


def test_key_loading_errors(tmp_path: Path) -> None:
    """Unreadable, non-PEM, encrypted and non-Ed25519 keys raise typed errors with their codes."""
    with pytest.raises(InputError) as err:
        load_private_key(tmp_path / "missing.pem")
    assert err.value.code == "signing-key-unreadable"
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key")
    with pytest.raises(InputError) as err:
        load_private_key(garbage)
    assert err.value.code == "signing-key-invalid"
    with pytest.raises(InputError) as err:
        load_public_key(garbage)
    assert err.value.code == "public-key-invalid"
    encrypted = tmp_path / "enc.pem"
    encrypted.write_bytes(
        ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        )
    )
    with pytest.raises(InputError, match="encrypted"):
        load_private_key(encrypted)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_file = tmp_path / "rsa.pem"
    rsa_file.write_bytes(
        rsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(InputError, match="not an Ed25519 key"):
        load_private_key(rsa_file)
    private, _ = write_keypair(tmp_path, "signing")
    with pytest.raises(InputError) as err:
        load_public_key(private)
    assert err.value.code == "public-key-invalid"


_MAKE_PRIVATE = "create one with `openssl genpkey -algorithm ed25519 -out signing.pem`"
_MAKE_PUBLIC = "derive it with `openssl pkey -in signing.pem -pubout -out signing.pub.pem`"


@pytest.mark.parametrize(
    ("kind", "file", "code", "message", "hint"),
    [
        ("private", "missing.pem", "signing-key-unreadable",
         "cannot read the signing key file missing.pem: No such file or directory",
         "mount the signing key as a file and pass its path"),
        ("public", "missing.pem", "public-key-unreadable",
         "cannot read the public key file missing.pem: No such file or directory",
         "mount the public key as a file and pass its path"),
        ("private", "garbage.pem", "signing-key-invalid",
         "the signing key garbage.pem is not a PEM PKCS#8 private key", _MAKE_PRIVATE),
        ("public", "garbage.pem", "public-key-invalid",
         "the public key garbage.pem is not a PEM SubjectPublicKeyInfo public key", _MAKE_PUBLIC),
        ("private", "signing.pub.pem", "signing-key-invalid",
         "the signing key signing.pub.pem is not a PEM PKCS#8 private key", _MAKE_PRIVATE),
        ("public", "signing.pem", "public-key-invalid",
         "the public key signing.pem is not a PEM SubjectPublicKeyInfo public key", _MAKE_PUBLIC),
        ("private", "rsa.pem", "signing-key-invalid",
         "the signing key rsa.pem is a RSAPrivateKey, not an Ed25519 key", _MAKE_PRIVATE),
        ("public", "rsa.pub.pem", "public-key-invalid",
         "the public key rsa.pub.pem is a RSAPublicKey, not an Ed25519 key", _MAKE_PUBLIC),
        ("private", "enc.pem", "signing-key-invalid",
         "the signing key enc.pem is encrypted; ragwarrant needs an unencrypted key",
         "protect the key with the secret store (a mounted secret), not a passphrase"),
    ],
)  # fmt: skip
def test_key_loading_error_messages(
    tmp_path: Path, kind: str, file: str, code: str, message: str, hint: str
) -> None:
    """Each unusable signing or public key names the file, what it is and how to make a good one."""
    write_keypair(tmp_path, "signing")
    (tmp_path / "garbage.pem").write_text("not a key")
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem, pkcs8, spki = (
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.PublicFormat.SubjectPublicKeyInfo,
    )
    (tmp_path / "rsa.pem").write_bytes(
        rsa_key.private_bytes(pem, pkcs8, serialization.NoEncryption())
    )
    (tmp_path / "rsa.pub.pem").write_bytes(rsa_key.public_key().public_bytes(pem, spki))
    (tmp_path / "enc.pem").write_bytes(
        ed25519.Ed25519PrivateKey.generate().private_bytes(
            pem, pkcs8, serialization.BestAvailableEncryption(b"passphrase")
        )
    )
    load = load_private_key if kind == "private" else load_public_key
    with pytest.raises(InputError) as err:
        load(tmp_path / file)
    assert (err.value.code, err.value.message, err.value.hint) == (code, message, hint)


def test_statement_of_a_real_run(real_run: Run) -> None:
    """Subjects are the contract and policy configs with the manifest's digests."""
    decision = orjson.loads((real_run.output_dir / "decision.json").read_bytes())
    manifest_bytes = (real_run.output_dir / "manifest.json").read_bytes()
    manifest = orjson.loads(manifest_bytes)
    configs = sorted(
        p.relative_to(real_run.input_dir).as_posix()
        for p in (real_run.input_dir / "policies").iterdir()
    )
    names = ["contract.yaml", *configs]
    statement = build_statement(
        decision, manifest, hashlib.sha256(manifest_bytes).hexdigest(), names
    )
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    assert [s["name"] for s in statement["subject"]] == names
    for s in statement["subject"]:
        assert (
            s["digest"]["sha256"]
            == hashlib.sha256((real_run.input_dir / s["name"]).read_bytes()).hexdigest()
        )
    p = statement["predicate"]
    assert p["run_id"] == decision["run_id"] and p["run_class"] == decision["run_class"]
    assert p["contract"]["sha256"] == decision["contract"]["sha256"]
    assert [c["class"] for c in p["candidates"]] == [c["class"] for c in decision["candidates"]]
    assert p["manifest"]["digest"]["sha256"] == hashlib.sha256(manifest_bytes).hexdigest()
    with pytest.raises(InternalError):
        build_statement(decision, manifest, "0" * 64, ["policies/not-an-input.json"])
