"""``verify``'s checks of ``decision.intoto.json`` against the recorded decision and manifest."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ragwarrant.audit._verify_base import (
    DiffWords,
    VerifyContext,
    diff_json,
    short,
)
from ragwarrant.audit.attestation import (
    ATTESTATION_FILENAME,
    PAYLOAD_TYPE,
    SIGNING_CHECK_ID,
    AttestationError,
    build_statement,
    read_attestation,
    render_attestation,
    render_document,
    statement_bytes,
)
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InternalError
from ragwarrant.outputs import Decision


def _read_statement(ctx: VerifyContext, data: bytes) -> dict[str, Any] | None:
    """Parse (and with ``ctx.public_key`` verify) the attestation; None after a mismatch. When
    ``validation_report.json`` records a signed attestation (``SIGNING_CHECK_ID``), an unsigned
    Statement is a mismatch."""
    public_key, report, key = ctx.public_key, ctx.report, None
    if public_key is not None:
        from ragwarrant.audit.attestation import load_public_key

        key = load_public_key(public_key)
    try:
        statement, signed = read_attestation(data, key)
    except AttestationError as exc:
        kind = "signature" if public_key is not None else "attestation"
        report.add(ATTESTATION_FILENAME, None, kind, str(exc))
        return None
    report.signature_verified = signed
    if signed:
        report.checked.append(f"{ATTESTATION_FILENAME} DSSE signature verifies with the public key")
    checks = ctx.docs.report.checks if ctx.docs.report is not None else []
    signing = next((c.expected for c in checks if c.id == SIGNING_CHECK_ID), None)
    # read_attestation parsed it: a JSON object, an envelope when it has a payloadType
    if signing == "dsse-ed25519" and "payloadType" not in orjson.loads(data):
        report.add(
            ATTESTATION_FILENAME,
            None,
            "signature",
            "validation_report.json records that the run signed its attestation, but "
            f"{ATTESTATION_FILENAME} is an unsigned Statement",
        )
    return statement


_ATTESTATION_WORDS = DiffWords(
    only_recorded="present in the attestation, absent from what decision.json and "
    "manifest.json give",
    only_replayed="absent from the attestation, present in what decision.json and "
    "manifest.json give",
    lengths="the attestation records {a} items, decision.json and manifest.json give {b}",
    values="the attestation records {a}, decision.json and manifest.json give {b}",
)

_CANONICAL_SIG = re.compile(r"[A-Za-z0-9+/]{85}[AQgw]==")
"""A 64-byte Ed25519 signature in canonical standard base64: 88 characters, the last sextet's
four spare bits zero (so decoding and encoding again gives the same text)."""


@dataclass(frozen=True)
class _StatementCheck:
    """The attestation's bytes and Statement, checked against the run's documents (``ctx``)."""

    ctx: VerifyContext
    data: bytes
    statement: Mapping[str, Any]

    def add(self, field: str | None, message: str) -> None:
        """Record an ``attestation`` mismatch at ``field`` of the attestation."""
        self.ctx.report.add(ATTESTATION_FILENAME, field, "attestation", message)

    def digests(self) -> None:
        """Without a valid decision.json: the manifest binding and the subjects' digests only."""
        manifest = self.ctx.manifest
        manifest_sha = sha256_bytes(self.ctx.manifest_bytes)
        predicate = self.statement["predicate"]
        recorded_sha = ((predicate.get("manifest") or {}).get("digest") or {}).get("sha256")
        if recorded_sha != manifest_sha:
            self.add(
                "predicate.manifest.digest.sha256",
                f"records {str(recorded_sha)[:16]}..., manifest.json hashes to "
                f"{manifest_sha[:16]}...",
            )
        inputs = {d.path: d.sha256 for d in manifest.inputs}
        # An ERROR record has no inputs: its subject is its own decision.json.
        digests = inputs if manifest.inputs else {d.path: d.sha256 for d in manifest.outputs}
        for i, subject in enumerate(self.statement["subject"]):
            name, sha = subject.get("name"), subject["digest"]["sha256"]
            if digests.get(name) != sha:
                self.add(
                    f"subject[{i}].digest.sha256",
                    f"subject {name!r} does not match the manifest's digest",
                )

    def subject_names(self, decision: Decision) -> None:
        """Subjects: the contract first, then policy configs (each candidate's among them), each
        once; never an evidence file. An ERROR record's only subject is its decision.json."""
        names = [s.get("name") for s in self.statement["subject"]]
        first = decision.contract.path if decision.contract is not None else "decision.json"
        problems = []
        if names[0] != first:
            problems.append(f"the first subject is {short(names[0])}, expected {first!r}")
        if len(set(names)) != len(names):
            problems.append("a subject is named twice")
        if {s.path for s in decision.sources} & set(names):
            problems.append("an evidence file is a subject (subjects are the contract and configs)")
        digests = {s["digest"]["sha256"] for s in self.statement["subject"]}
        configs = {c.config_sha256 for c in decision.candidates if c.config_sha256 is not None}
        if not configs <= digests:
            problems.append("a candidate's policy config (config_sha256) is not a subject")
        for message in problems:
            self.add("subject", message)

    def fields(
        self, decision: Decision, decision_dict: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """Compare every field of the Statement with the one built from decision.json and the
        manifest; return the expected Statement (None when it cannot be built)."""
        self.subject_names(decision)
        manifest_bytes = self.ctx.manifest_bytes
        try:  # the attestation's own subject names (their digests come from the manifest)
            expected = build_statement(
                decision_dict,
                orjson.loads(manifest_bytes),
                sha256_bytes(manifest_bytes),
                [str(s.get("name")) for s in self.statement["subject"] if isinstance(s, dict)],
            )
        except InternalError:
            self.add("subject", "a subject is not an input recorded in manifest.json (by name)")
            return None
        for path, message in diff_json(self.statement, expected, words=_ATTESTATION_WORDS):
            self.add(path, message)
        return expected

    def canonical_bytes(self, expected: Mapping[str, Any]) -> None:
        """Every byte matters: the file must be the canonical rendering of the expected Statement
        (or of a DSSE envelope around it, whose signature only ``--public-key`` can check)."""
        data = self.data
        doc = orjson.loads(data)  # read_attestation parsed it already
        if "payloadType" not in doc:
            problem = (
                "not byte for byte the Statement the run writes for this decision.json and "
                "manifest.json (canonical JSON: sorted keys, two-space indent)"
            )
            if data == render_attestation(expected):
                return
        elif set(doc) != {"payload", "payloadType", "signatures"}:
            problem = "the DSSE envelope has other members than payload, payloadType and signatures"
        elif doc["payloadType"] != PAYLOAD_TYPE:
            problem = f"payloadType is not {PAYLOAD_TYPE!r}"
        elif doc["payload"] != base64.b64encode(statement_bytes(expected)).decode("ascii"):
            problem = "the payload is not the canonical encoding of the expected Statement"
        elif not isinstance(doc["signatures"], list) or not all(
            isinstance(s, dict)
            and set(s) == {"keyid", "sig"}
            and _CANONICAL_SIG.fullmatch(str(s["sig"]))
            for s in doc["signatures"]
        ):
            problem = (
                "a signature is not a keyid and a 64-byte Ed25519 signature in standard base64"
            )
        elif data != render_document(doc):
            problem = "not byte for byte the canonical rendering of its DSSE envelope"
        else:
            return
        self.add(None, problem)


def check_attestation(ctx: VerifyContext) -> None:
    """Check ``decision.intoto.json``; keep its bytes in ``ctx.attestation`` (None when absent).

    With a valid decision.json every field of the Statement (subjects, predicate type and every
    predicate member) is compared with the Statement built from decision.json and manifest.json,
    and the file must be its canonical rendering byte for byte; otherwise (decision.json absent
    or invalid, already a mismatch) only the manifest binding and the subjects' digests.
    """
    docs, report = ctx.docs, ctx.report
    path = ctx.output_dir / ATTESTATION_FILENAME
    if path.is_symlink():
        report.add(ATTESTATION_FILENAME, None, "symlink", "is a symlink: the job writes no links")
        return
    if not path.is_file():
        key = ctx.public_key is not None
        report.add(
            ATTESTATION_FILENAME,
            None,
            "signature" if key else "missing",
            "every completed run writes an attestation, and there is none"
            + (" (a public key was given)" if key else ""),
        )
        return
    data = ctx.attestation = path.read_bytes()
    before = len(report.mismatches)
    statement = _read_statement(ctx, data)
    if statement is None:
        return
    check = _StatementCheck(ctx, data, statement)
    if docs.decision is None or docs.decision_dict is None:
        check.digests()
        return
    expected = check.fields(docs.decision, docs.decision_dict)
    if expected is not None and len(report.mismatches) == before:
        # Fields agree: then every remaining byte (layout, encoding, envelope) must be canonical.
        check.canonical_bytes(expected)
    if len(report.mismatches) == before:
        report.checked.append(
            f"{ATTESTATION_FILENAME} is byte for byte the Statement built from decision.json and "
            "manifest.json (every subject and predicate field checked)"
        )
