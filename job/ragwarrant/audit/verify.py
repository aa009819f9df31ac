"""``ragwarrant verify``: check an output directory offline, without trusting its writer.

Checks, in this order (the first mismatch found is the one the command names first):

1. ``manifest.json`` exists and validates against the ``Manifest`` model.
2. Every output the manifest lists exists, has the recorded size and sha256; no other file is
   in the directory except ``manifest.json`` and ``decision.intoto.json``.
3. ``decision.json`` and ``validation_report.json`` validate against their models (the models the
   committed ``contracts/*.schema.json`` are generated from; a test keeps the two identical), and
   they and the manifest agree on run id and exit code.
4. ``report.md`` is what publication renders from the recorded ``decision.json``
   (``audit.report.render_report``), byte for byte, or, when the decision's
   ``hard:publication-hygiene`` gate lists it as withheld, the withheld notice.
5. ``decision.intoto.json`` exists (every completed run, ERROR records included, writes one): a
   Statement v1 (or a DSSE envelope around one) equal, field by field, to the Statement
   ``attestation.build_statement`` makes from the recorded ``decision.json`` and
   ``manifest.json`` (every predicate member; subjects: the contract first, then policy
   configs, never an evidence file, each with the manifest's digest), and byte for byte its
   canonical rendering (an envelope: canonical payload, well-formed signatures). When
   ``validation_report.json`` records that the run signed its attestation (check
   ``attestation-signing``), an unsigned Statement is a mismatch. With ``public_key`` the
   envelope's signature must verify. With a replay, the subjects must be those the replay
   attests (in any order).
6. The publication-hygiene scan finds nothing in any file of the directory.
7. With ``input_dir``: every input the manifest lists exists there with the recorded sha256; then
   (given ``private_texts``) no output copies 12 or more tokens of the evidence's questions,
   responses or contexts; then (given a ``replay`` function) the whole decision is replayed
   from the inputs into a temporary directory and ``decision.json`` is compared field by
   field, ignoring ``run_id``, ``started_at`` and ``finished_at``, and
   ``validation_report.json`` likewise, ignoring ``run_id``, the self-test timing and the
   ``attestation-signing`` check (a replay never signs). A recorded ERROR matches a replay
   that stops with the same error code.

Without a public key nothing here is authenticated: whoever can rewrite the directory can
rewrite every unsigned file consistently. These checks catch accidental damage and partial
edits; only ``public_key`` (a signed envelope) or ``input_dir`` (a replay) tie the files to
their source.
"""

from __future__ import annotations

import base64
import binascii
import platform
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from ragwarrant.audit.attestation import (
    ATTESTATION_FILENAME,
    PAYLOAD_TYPE,
    AttestationError,
    build_statement,
    read_attestation,
    render_attestation,
    render_document,
    statement_bytes,
)
from ragwarrant.audit.hygiene import (
    DEFAULT_MOUNTS,
    HYGIENE_BLOCKER,
    WITHHELD_NOTICE,
    Finding,
    allowed_kinds_from_note,
    scan_outputs,
)
from ragwarrant.audit.manifest import WITHHELD_INPUT_PREFIX
from ragwarrant.audit.publish import render_decision_views
from ragwarrant.audit.report import render_report
from ragwarrant.audit.unlisted import unlisted_files
from ragwarrant.audit.writer import HISTORY_DIR, LOCK_FILE
from ragwarrant.digests import sha256_bytes, sha256_file
from ragwarrant.errors import InputError, InternalError, RagwarrantError, file_for_directory
from ragwarrant.exit_codes import ExitCode
from ragwarrant.outputs import Decision, FileDigest, Manifest, ValidationReport

__all__ = [
    "REPLAY_IGNORED_FIELDS",
    "SIGNING_CHECK_ID",
    "UNSIGNED_VERIFY_LIMITS",
    "VERIFY_MISMATCH_EXIT",
    "Mismatch",
    "VerifyReport",
    "check_decision_views",
    "diff_json",
    "verify_output_dir",
]

VERIFY_MISMATCH_EXIT = int(ExitCode.VERIFY_MISMATCH)
"""Exit code of ``ragwarrant verify`` / ``ragwarrant ledger verify`` when something does not
match (EX_DATAERR in sysexits(3)); to move into ``exit_codes.ExitCode`` as ``VERIFY_MISMATCH``."""

REPLAY_IGNORED_FIELDS = frozenset({"run_id", "started_at", "finished_at"})
"""Fields of ``decision.json`` that legitimately differ between a run and its replay."""

SIGNING_CHECK_ID = "attestation-signing"
"""Id of the ``validation_report.json`` check recording whether the run signed its attestation
(``expected``: ``dsse-ed25519`` or ``unsigned``; ``found``: the key id when signed)."""

_TIMED_CHECKS = frozenset({"engine-selftest"})
"""Validation checks whose message carries a wall-clock timing (compared without it)."""

MANIFEST = "manifest.json"
_MODELS: dict[str, type[BaseModel]] = {
    "decision.json": Decision,
    "validation_report.json": ValidationReport,
}

UNSIGNED_VERIFY_LIMITS = (
    "what this verify proves: every file is the one manifest.json lists, byte for byte; "
    "decision.json, report.md, manifest.json and decision.intoto.json agree with each other "
    "field by field; nothing secret-looking is published",
    "what it does not prove: who wrote them. No signature was checked (no --public-key), so "
    "whoever can write this directory can rewrite every file consistently and this verify "
    "still passes; only --public-key (a signed attestation) or --input (a replay from the "
    "inputs) ties the files to their source",
)
"""What a verify without a public key does and does not establish (printed by the command)."""

ReplayFn = Callable[[Path, Path], Any]
"""``(input_dir, output_dir) -> anything``: runs the job (``commands.verify.replay_with_job``;
passed in because ``audit`` sits below ``job`` in the layering)."""


@dataclass(frozen=True)
class Mismatch:
    """One thing that does not match.

    Attributes:
        file: the file concerned (``input:<path>`` for an input file).
        field: the JSON field path, when there is one.
        kind: ``missing``, ``size``, ``sha256``, ``unexpected-file``, ``schema``, ``consistency``,
            ``attestation``, ``signature``, ``hygiene``, ``input-missing``, ``input-sha256``,
            ``replay`` or ``replay-failed``.
        message: what was expected and what was found (never a secret).
    """

    file: str
    field: str | None
    kind: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.field}" if self.field else self.file
        return f"{where}: {self.kind}: {self.message}"


@dataclass
class VerifyReport:
    """The outcome of ``verify_output_dir``.

    Attributes:
        mismatches: in check order; ``mismatches[0]`` is the first file and field that differ.
        checked: one line per check that ran.
        signature_verified: a DSSE signature verified with the given public key.
        replayed: the decision was replayed from the inputs and compared.
        replayed_subjects: the subjects of the replay's attestation, when it wrote one.
        notes: what could not be checked, and why (e.g. an error from a command-line option,
            which no replay from the inputs reproduces).
    """

    mismatches: list[Mismatch] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    signature_verified: bool = False
    replayed: bool = False
    replayed_subjects: list[Any] | None = None

    @property
    def ok(self) -> bool:
        """True when nothing mismatched."""
        return not self.mismatches

    @property
    def exit_code(self) -> int:
        """0 when everything matches, ``VERIFY_MISMATCH_EXIT`` otherwise."""
        return 0 if self.ok else VERIFY_MISMATCH_EXIT


def _safe_relative(path: str) -> bool:
    p = PurePosixPath(path)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in path and path != ""


def _loc(err: ValidationError) -> str:
    first = err.errors()[0]
    parts: list[str] = []
    for p in first["loc"]:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "".join(parts) or "(root)"


def _validate(name: str, data: bytes, model: type[BaseModel], report: VerifyReport) -> Any:
    try:
        obj = model.model_validate_json(data)
    except ValidationError as err:
        first = err.errors()[0]
        report.mismatches.append(
            Mismatch(
                name,
                _loc(err),
                "schema",
                f"does not match the {model.__name__} schema: {first['msg']}",
            )
        )
        return None
    report.checked.append(f"{name} validates against the {model.__name__} schema")
    return obj


@dataclass(frozen=True)
class _DiffWords:
    """How ``diff_json`` words a difference (``{a}``: recorded side, ``{b}``: the other)."""

    only_recorded: str = "present in the recorded decision, absent from the replay"
    only_replayed: str = "absent from the recorded decision, present in the replay"
    lengths: str = "recorded {a} items, replay has {b}"
    values: str = "recorded {a}, replay gives {b}"


_REPLAY_WORDS = _DiffWords()


def _diff_objects(
    recorded: dict[Any, Any],
    replayed: dict[Any, Any],
    path: str,
    ignore: frozenset[str],
    words: _DiffWords,
) -> Iterator[tuple[str, str]]:
    for key in [*recorded, *(k for k in replayed if k not in recorded)]:
        if key in ignore:
            continue
        sub = f"{path}.{key}" if path else str(key)
        if key not in replayed:
            yield sub, words.only_recorded
        elif key not in recorded:
            yield sub, words.only_replayed
        else:
            yield from diff_json(recorded[key], replayed[key], sub, ignore, words=words)


def _diff_lists(
    recorded: list[Any], replayed: list[Any], path: str, ignore: frozenset[str], words: _DiffWords
) -> Iterator[tuple[str, str]]:
    for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
        yield from diff_json(a, b, f"{path}[{i}]", ignore, words=words)
    if len(recorded) != len(replayed):
        yield path or "(root)", words.lengths.format(a=len(recorded), b=len(replayed))


def _same_scalar(recorded: Any, replayed: Any) -> bool:
    """JSON scalars compare equal (``1 == 1.0``), but a recorded boolean equals only a boolean."""
    return recorded == replayed and not (type(recorded) is bool and type(replayed) is not bool)


def diff_json(
    recorded: Any,
    replayed: Any,
    path: str = "",
    ignore: frozenset[str] = frozenset(),
    *,
    words: _DiffWords = _REPLAY_WORDS,
) -> Iterator[tuple[str, str]]:
    """Yield ``(field path, message)`` for every difference between two JSON values, in order.

    Objects are compared member by member in the recorded document's order (then members only
    the replay has), lists element by element; members named in ``ignore`` are skipped at any
    depth. Numbers compare exactly (``1 == 1.0``): a replay with the same seed and versions is
    bit-for-bit identical. ``words`` phrases the messages (a replay's by default).
    """
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        yield from _diff_objects(recorded, replayed, path, ignore, words)
    elif isinstance(recorded, list) and isinstance(replayed, list):
        yield from _diff_lists(recorded, replayed, path, ignore, words)
    elif not _same_scalar(recorded, replayed):
        yield path or "(root)", words.values.format(a=_short(recorded), b=_short(replayed))


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _check_outputs(out: Path, manifest: Manifest, report: VerifyReport) -> dict[str, bytes]:
    present: dict[str, bytes] = {}
    for digest in manifest.outputs:
        name = digest.path
        if not _safe_relative(name):
            report.mismatches.append(
                Mismatch(
                    MANIFEST,
                    "outputs",
                    "consistency",
                    f"output path {name!r} is not a relative path",
                )
            )
            continue
        path = out / name
        if not path.is_file():
            report.mismatches.append(
                Mismatch(name, None, "missing", "listed in manifest.json but not present")
            )
            continue
        data = path.read_bytes()
        present[name] = data
        if len(data) != digest.bytes:
            report.mismatches.append(
                Mismatch(
                    name, None, "size", f"manifest records {digest.bytes} bytes, found {len(data)}"
                )
            )
        actual = sha256_bytes(data)
        if actual != digest.sha256:
            report.mismatches.append(
                Mismatch(
                    name,
                    None,
                    "sha256",
                    f"manifest records {digest.sha256[:16]}..., file hashes to {actual[:16]}...",
                )
            )
        else:
            report.checked.append(f"{name} sha256 matches the manifest")
    for rel in unlisted_files(out, manifest):
        report.mismatches.append(
            Mismatch(
                rel,
                None,
                "unexpected-file",
                f"{rel} is in the output directory but not in manifest.json; verify treats "
                f"every file not in the manifest (other than {ATTESTATION_FILENAME}, "
                f"{LOCK_FILE} and earlier runs under {HISTORY_DIR}/) as a mismatch, since it "
                "may have been planted",
            )
        )
    return present


@dataclass
class _Documents:
    """The validated JSON outputs (None where absent or invalid)."""

    decision: Decision | None = None
    decision_dict: dict[str, Any] | None = None
    report: ValidationReport | None = None
    report_dict: Any = None


def _missing_attestation(public_key: Path | None) -> Mismatch:
    return Mismatch(
        ATTESTATION_FILENAME,
        None,
        "signature" if public_key is not None else "missing",
        "every completed run writes an attestation, and there is none"
        + (" (a public key was given)" if public_key is not None else ""),
    )


def _read_statement(
    data: bytes, public_key: Path | None, report: VerifyReport
) -> dict[str, Any] | None:
    """Parse (and with ``public_key`` verify) the attestation; None after a mismatch."""
    key = None
    if public_key is not None:
        from ragwarrant.audit.attestation import load_public_key

        key = load_public_key(public_key)
    try:
        statement, signed = read_attestation(data, key)
    except AttestationError as exc:
        kind = "signature" if public_key is not None else "attestation"
        report.mismatches.append(Mismatch(ATTESTATION_FILENAME, None, kind, str(exc)))
        return None
    report.signature_verified = signed
    if signed:
        report.checked.append(f"{ATTESTATION_FILENAME} DSSE signature verifies with the public key")
    return statement


def _check_signed_as_recorded(
    data: bytes, recorded_signing: str | None, report: VerifyReport
) -> None:
    if recorded_signing == "dsse-ed25519" and not _is_envelope(data):
        report.mismatches.append(
            Mismatch(
                ATTESTATION_FILENAME,
                None,
                "signature",
                "validation_report.json records that the run signed its attestation, but "
                f"{ATTESTATION_FILENAME} is an unsigned Statement",
            )
        )


def _check_manifest_binding(
    predicate: Mapping[str, Any], manifest_bytes: bytes, report: VerifyReport
) -> None:
    manifest_sha = sha256_bytes(manifest_bytes)
    recorded_sha = ((predicate.get("manifest") or {}).get("digest") or {}).get("sha256")
    if recorded_sha != manifest_sha:
        report.mismatches.append(
            _attestation_mismatch(
                "predicate.manifest.digest.sha256",
                f"records {str(recorded_sha)[:16]}..., "
                f"manifest.json hashes to {manifest_sha[:16]}...",
            )
        )


def _check_subjects(statement: Mapping[str, Any], manifest: Manifest, report: VerifyReport) -> None:
    inputs = {d.path: d.sha256 for d in manifest.inputs}
    # An ERROR record has no inputs: its subject is its own decision.json.
    digests = inputs if manifest.inputs else {d.path: d.sha256 for d in manifest.outputs}
    for i, subject in enumerate(statement["subject"]):
        name, sha = subject.get("name"), subject["digest"]["sha256"]
        if digests.get(name) != sha:
            report.mismatches.append(
                _attestation_mismatch(
                    f"subject[{i}].digest.sha256",
                    f"subject {name!r} does not match the manifest's digest",
                )
            )


def _attestation_mismatch(field_path: str | None, message: str) -> Mismatch:
    return Mismatch(ATTESTATION_FILENAME, field_path, "attestation", message)


_ATTESTATION_WORDS = _DiffWords(
    only_recorded="present in the attestation, absent from what decision.json and "
    "manifest.json give",
    only_replayed="absent from the attestation, present in what decision.json and "
    "manifest.json give",
    lengths="the attestation records {a} items, decision.json and manifest.json give {b}",
    values="the attestation records {a}, decision.json and manifest.json give {b}",
)


def _expected_statement(
    statement: Mapping[str, Any],
    manifest_bytes: bytes,
    decision_dict: Mapping[str, Any],
    report: VerifyReport,
) -> dict[str, Any] | None:
    """The Statement the run writes for these decision.json and manifest.json, with the
    attestation's own subject names (their digests come from the manifest); None when a
    subject is not a manifest input."""
    names = [str(s.get("name")) for s in statement["subject"] if isinstance(s, dict)]
    try:
        return build_statement(
            decision_dict, orjson.loads(manifest_bytes), sha256_bytes(manifest_bytes), names
        )
    except InternalError:
        report.mismatches.append(
            _attestation_mismatch(
                "subject", "a subject is not an input recorded in manifest.json (by name)"
            )
        )
        return None


def _check_subject_names(
    statement: Mapping[str, Any], decision: Decision, report: VerifyReport
) -> None:
    """Subjects: the contract first, then policy configs (each candidate's among them), each
    once; never an evidence file. An ERROR record's only subject is its decision.json."""
    names = [s.get("name") for s in statement["subject"]]
    first = decision.contract.path if decision.contract is not None else "decision.json"
    problems = []
    if names[0] != first:
        problems.append(f"the first subject is {_short(names[0])}, expected {first!r}")
    if len(set(names)) != len(names):
        problems.append("a subject is named twice")
    evidence = {s.path for s in decision.sources} & set(names)
    if evidence:
        problems.append("an evidence file is a subject (subjects are the contract and configs)")
    digests = {s["digest"]["sha256"] for s in statement["subject"]}
    configs = {c.config_sha256 for c in decision.candidates if c.config_sha256 is not None}
    if not configs <= digests:
        problems.append("a candidate's policy config (config_sha256) is not a subject")
    for message in problems:
        report.mismatches.append(_attestation_mismatch("subject", message))


def _canonical_envelope(doc: Mapping[str, Any], expected: Mapping[str, Any]) -> str | None:
    """What is wrong with a DSSE envelope around ``expected`` (None: nothing detectable without
    the public key)."""
    if set(doc) != {"payload", "payloadType", "signatures"}:
        return "the DSSE envelope has other members than payload, payloadType and signatures"
    if doc["payloadType"] != PAYLOAD_TYPE:
        return f"payloadType is not {PAYLOAD_TYPE!r}"
    if doc["payload"] != base64.b64encode(statement_bytes(expected)).decode("ascii"):
        return "the payload is not the canonical encoding of the expected Statement"
    signatures = doc["signatures"]
    if not isinstance(signatures, list) or not all(_well_formed_sig(s) for s in signatures):
        return "a signature is not a keyid and a 64-byte Ed25519 signature in standard base64"
    return None


def _well_formed_sig(s: Any) -> bool:
    if not isinstance(s, dict) or set(s) != {"keyid", "sig"} or not isinstance(s["sig"], str):
        return False
    try:
        raw = base64.b64decode(s["sig"], validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 64 and base64.b64encode(raw).decode("ascii") == s["sig"]


def _check_attestation_bytes(
    data: bytes, expected: Mapping[str, Any], report: VerifyReport
) -> None:
    """Every byte matters: the file must be the canonical rendering of the expected Statement
    (or of a DSSE envelope around it, whose signature only ``--public-key`` can check)."""
    doc = orjson.loads(data)  # read_attestation parsed it already
    if "payloadType" not in doc:
        if data != render_attestation(expected):
            report.mismatches.append(
                _attestation_mismatch(
                    None,
                    "not byte for byte the Statement the run writes for this decision.json "
                    "and manifest.json (canonical JSON: sorted keys, two-space indent)",
                )
            )
        return
    problem = _canonical_envelope(doc, expected)
    if problem is None and data != render_document(doc):
        problem = "not byte for byte the canonical rendering of its DSSE envelope"
    if problem is not None:
        report.mismatches.append(_attestation_mismatch(None, problem))


def _check_statement_fields(
    statement: Mapping[str, Any],
    manifest_bytes: bytes,
    decision: Decision,
    decision_dict: Mapping[str, Any],
    report: VerifyReport,
) -> Mapping[str, Any] | None:
    """Compare every field of the Statement with the one built from decision.json and the
    manifest; return the expected Statement (None when it cannot be built)."""
    _check_subject_names(statement, decision, report)
    expected = _expected_statement(statement, manifest_bytes, decision_dict, report)
    if expected is None:
        return None
    for path, message in diff_json(statement, expected, words=_ATTESTATION_WORDS):
        report.mismatches.append(_attestation_mismatch(path, message))
    return expected


def _check_attestation(
    out: Path,
    manifest: Manifest,
    manifest_bytes: bytes,
    docs: _Documents,
    public_key: Path | None,
    report: VerifyReport,
) -> bytes | None:
    """Check ``decision.intoto.json``; return its bytes (None when absent).

    With a valid decision.json every field of the Statement (subjects, predicate type and every
    predicate member) is compared with the Statement built from decision.json and manifest.json,
    and the file must be its canonical rendering byte for byte; otherwise (decision.json absent
    or invalid, already a mismatch) only the manifest binding and the subjects' digests.
    """
    path = out / ATTESTATION_FILENAME
    if not path.is_file():
        report.mismatches.append(_missing_attestation(public_key))
        return None
    data = path.read_bytes()
    statement = _read_statement(data, public_key, report)
    if statement is None:
        return data
    before = len(report.mismatches)
    _check_signed_as_recorded(data, recorded_signing(docs.report), report)
    if docs.decision is None or docs.decision_dict is None:
        _check_manifest_binding(statement["predicate"], manifest_bytes, report)
        _check_subjects(statement, manifest, report)
        return data
    expected = _check_statement_fields(
        statement, manifest_bytes, docs.decision, docs.decision_dict, report
    )
    if expected is not None and len(report.mismatches) == before:
        # Fields agree: then every remaining byte (layout, encoding, envelope) must be canonical.
        _check_attestation_bytes(data, expected, report)
    if len(report.mismatches) == before:
        report.checked.append(
            f"{ATTESTATION_FILENAME} is byte for byte the Statement built from decision.json and "
            "manifest.json (every subject and predicate field checked)"
        )
    return data


def _is_envelope(data: bytes) -> bool:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(doc, dict) and "payloadType" in doc


def recorded_signing(report_doc: ValidationReport | None) -> str | None:
    """Return what the run recorded about signing: ``dsse-ed25519``, ``unsigned`` or None.

    None when ``validation_report.json`` is invalid or predates the ``attestation-signing`` check.
    """
    if report_doc is None:
        return None
    for check in report_doc.checks:
        if check.id == SIGNING_CHECK_ID:
            return check.expected
    return None


_NOTICE_RE = re.compile(
    re.escape(WITHHELD_NOTICE)
    .replace(re.escape("{name}"), re.escape("report.md"))
    .replace(re.escape("{count}"), r"[0-9]+")
    .replace(re.escape("{kinds}"), r"[a-z0-9-]+(?:, [a-z0-9-]+)*")
)


def _withheld_by_gate(decision: Decision) -> set[str] | None:
    """Files the failed ``hard:publication-hygiene`` gate lists as withheld; None: no such gate."""
    for gate in decision.run_gates:
        if gate.id == f"hard:{HYGIENE_BLOCKER}" and gate.status == "fail":
            return set(str((gate.details or {}).get("withheld") or "").split(","))
    return None


def check_decision_views(
    present: Mapping[str, bytes], decision: Decision, report: VerifyReport
) -> None:
    """``report.html`` and ``junit.xml`` must be their rendering from the recorded decision.

    Publication renders both from the decision as published (redacted, when hygiene redacted
    it), so they match byte for byte; one the hygiene gate lists as withheld is the notice.
    """
    withheld = _withheld_by_gate(decision) or set()
    for name, expected in render_decision_views(decision).items():
        if name not in present:
            continue
        notice = re.compile(_NOTICE_RE.pattern.replace(re.escape("report.md"), re.escape(name)))
        if present[name] == expected or (
            name in withheld and notice.fullmatch(present[name].decode("utf-8", "replace"))
        ):
            report.checked.append(f"{name} equals its rendering from decision.json")
            continue
        report.mismatches.append(
            Mismatch(
                name,
                None,
                "render",
                f"differs from its rendering from decision.json ({name} was edited, or "
                "decision.json was)",
            )
        )


def _check_withheld_notice(name: str, recorded: bytes, report: VerifyReport) -> None:
    if _NOTICE_RE.fullmatch(recorded.decode("utf-8", "replace")):
        report.checked.append(
            f"{name} is the withheld notice, as decision.json's hygiene gate records"
        )
        return
    report.mismatches.append(
        Mismatch(
            name,
            None,
            "render",
            "decision.json records report.md as withheld, but it is not the notice",
        )
    )


def _differs_only_by_redaction(rec_lines: list[bytes], exp_lines: list[bytes]) -> int | None:
    """Number of differing lines when each shows a redaction in the re-rendering, else None."""
    if len(rec_lines) != len(exp_lines):
        return None
    differing = [(a, b) for a, b in zip(rec_lines, exp_lines, strict=True) if a != b]
    return len(differing) if all(b"[withheld: " in b for _, b in differing) else None


def _check_report_md(
    present: Mapping[str, bytes], decision: Decision, report: VerifyReport
) -> None:
    """``report.md`` must be what publication renders from the recorded decision."""
    name = "report.md"
    if name not in present:
        return
    recorded = present[name]
    withheld = _withheld_by_gate(decision)
    if name in (withheld or set()):
        _check_withheld_notice(name, recorded, report)
        return
    expected = render_report(decision).encode()
    if recorded == expected:
        report.checked.append(f"{name} equals its rendering from decision.json")
        return
    rec_lines, exp_lines = recorded.splitlines(), expected.splitlines()
    # decision.json redacted after report.md was rendered from the unredacted decision: lines
    # may differ only where the re-rendering shows a redaction.
    redacted = _differs_only_by_redaction(rec_lines, exp_lines) if withheld is not None else None
    if redacted is not None:
        report.checked.append(
            f"{name} equals its rendering from decision.json, except at the "
            f"{redacted} line(s) showing fields redacted in decision.json"
        )
        return
    line = next(
        (i for i, (a, b) in enumerate(zip(rec_lines, exp_lines, strict=False), start=1) if a != b),
        min(len(rec_lines), len(exp_lines)) + 1,
    )
    report.mismatches.append(
        Mismatch(
            name,
            f"line {line}",
            "render",
            "differs from the report rendered from decision.json (report.md was edited, or "
            "decision.json was)",
        )
    )


def _files_by_sha256(input_dir: Path) -> dict[str, str]:
    """sha256 → one relative path, for every file under ``input_dir``."""
    out: dict[str, str] = {}
    for path in sorted(p for p in input_dir.rglob("*") if p.is_file()):
        out.setdefault(sha256_file(path), path.relative_to(input_dir).as_posix())
    return out


def _check_withheld_input(
    digest: FileDigest, by_hash: dict[str, str], report: VerifyReport
) -> bool:
    """An input whose name was withheld (a hygiene finding) is matched by its sha256 alone."""
    if digest.sha256 in by_hash:
        return True
    report.mismatches.append(
        Mismatch(
            f"input:{digest.path}",
            None,
            "input-missing",
            "its name was withheld (hygiene finding) and no file in the input directory has "
            "its recorded sha256",
        )
    )
    return False


def _check_inputs(input_dir: Path, manifest: Manifest, report: VerifyReport) -> bool:
    ok = True
    withheld = [d for d in manifest.inputs if d.path.startswith(WITHHELD_INPUT_PREFIX)]
    by_hash = _files_by_sha256(input_dir) if withheld else {}
    for digest in withheld:
        ok = _check_withheld_input(digest, by_hash, report) and ok
    for digest in manifest.inputs:
        if digest in withheld:
            continue
        label = f"input:{digest.path}"
        if not _safe_relative(digest.path):
            report.mismatches.append(
                Mismatch(
                    MANIFEST, "inputs", "consistency", f"input path {digest.path!r} is not relative"
                )
            )
            ok = False
            continue
        path = input_dir / digest.path
        if not path.is_file():
            report.mismatches.append(
                Mismatch(
                    label,
                    None,
                    "input-missing",
                    "recorded in manifest.json, not in the input directory",
                )
            )
            ok = False
            continue
        actual = sha256_file(path)
        if actual != digest.sha256:
            report.mismatches.append(
                Mismatch(
                    label,
                    None,
                    "input-sha256",
                    f"manifest records {digest.sha256[:16]}..., file hashes to {actual[:16]}...",
                )
            )
            ok = False
    if ok:
        report.checked.append(f"{len(manifest.inputs)} input(s) match their manifest sha256")
    return ok


def _version_note(manifest: Manifest) -> str:
    from ragwarrant.version import __version__

    notes = []
    if manifest.ragwarrant_version != __version__:
        notes.append(f"ragwarrant {manifest.ragwarrant_version} recorded, {__version__} here")
    if manifest.python_version != platform.python_version():
        notes.append(f"python {manifest.python_version} recorded, {platform.python_version()} here")
    for name, version in manifest.dependencies.items():
        try:
            here = metadata.version(name)
        except metadata.PackageNotFoundError:
            here = "not installed"
        if here != version:
            notes.append(f"{name} {version} recorded, {here} here")
    return f" (versions differ: {'; '.join(notes)})" if notes else ""


def _comparable_report(doc: Any) -> Any:
    """A validation report without what legitimately differs in a replay (timing, signing)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), list):
        return doc
    checks = []
    for check in doc["checks"]:
        if isinstance(check, dict) and check.get("id") == SIGNING_CHECK_ID:
            continue
        if isinstance(check, dict) and check.get("id") in _TIMED_CHECKS:
            check = {k: v for k, v in check.items() if k != "message"}
        checks.append(check)
    return {**doc, "checks": checks}


def _replay_error(
    exc: RagwarrantError,
    recorded: Mapping[str, Any],
    recorded_error: Mapping[str, Any] | None,
    report: VerifyReport,
) -> None:
    """Compare a replay that stopped with ``exc`` with the recorded decision."""
    report.replayed = True
    if recorded_error is not None and recorded_error.get("code") == exc.code:
        report.checked.append(
            f"the replay stops with the recorded error {exc.code} (exit {int(exc.exit_code)})"
        )
        return
    was = (
        f"the recorded ERROR is {recorded_error.get('code')}"
        if recorded_error is not None
        else f"decision.json records {recorded.get('run_class')}"
    )
    report.mismatches.append(
        Mismatch(
            "decision.json",
            "error.code" if recorded_error is not None else None,
            "replay-failed" if recorded_error is None else "replay",
            f"the replay stopped with {exc.code}: {exc.message}; {was}",
        )
    )


def _option_error_note(error: Mapping[str, Any]) -> str:
    """Why an ERROR that came from a command-line option is not replayed."""
    options = error.get("options") or []
    given = ", ".join(str(o) for o in options) if isinstance(options, list) and options else "none"
    return (
        f"not replayed: the recorded ERROR {error.get('code')} came from the value of the "
        f"command-line option {error.get('option')}, not from the inputs; a replay from --input "
        "runs without the run's options (options recorded: "
        f"{given}), so it cannot reproduce the error. The outputs and inputs were checked; to "
        "check the error, rerun 'ragwarrant run' with the same options"
    )


def _run_replay(
    input_dir: Path,
    recorded: Mapping[str, Any],
    replay: ReplayFn,
    report: VerifyReport,
) -> tuple[Any, Any] | None:
    """Replay into a temporary directory; return (decision, validation report) as JSON, or None
    when the comparison is already settled (an error, or no decision written)."""
    error = recorded.get("error")
    recorded_error = error if isinstance(error, dict) else None
    if recorded_error is not None and recorded_error.get("option"):
        report.notes.append(_option_error_note(recorded_error))
        return None
    with tempfile.TemporaryDirectory(prefix="ragwarrant-replay-") as tmp:
        try:
            replay(input_dir, Path(tmp))
        except RagwarrantError as exc:
            _replay_error(exc, recorded, recorded_error, report)
            return None
        if recorded_error is not None:
            report.replayed = True
            report.mismatches.append(
                Mismatch(
                    "decision.json",
                    "error.code",
                    "replay",
                    f"the recorded ERROR is {recorded_error.get('code')}, but the replay "
                    "completed without an error",
                )
            )
            return None
        replayed_path = Path(tmp) / "decision.json"
        if not replayed_path.is_file():
            report.mismatches.append(
                Mismatch(
                    "decision.json", None, "replay-failed", "the replay wrote no decision.json"
                )
            )
            return None
        report_path = Path(tmp) / "validation_report.json"
        replayed_report = orjson.loads(report_path.read_bytes()) if report_path.is_file() else None
        report.replayed_subjects = _subjects_of(Path(tmp) / ATTESTATION_FILENAME)
        return orjson.loads(replayed_path.read_bytes()), replayed_report


def _subjects_of(path: Path) -> list[Any] | None:
    """The subjects of an attestation file; None when it is absent or unreadable."""
    try:
        statement, _ = read_attestation(path.read_bytes())
    except (OSError, AttestationError):
        return None
    return list(statement["subject"])


def _subject_set(subjects: Iterable[Any]) -> set[bytes]:
    return {orjson.dumps(s, option=orjson.OPT_SORT_KEYS) for s in subjects}


def _check_replayed_subjects(recorded_attestation: bytes | None, report: VerifyReport) -> None:
    """The replay's attestation names the same subjects (contract and policy configs)."""
    replayed = report.replayed_subjects
    if recorded_attestation is None or replayed is None:
        return
    try:
        statement, _ = read_attestation(recorded_attestation)
    except AttestationError:
        return  # already a mismatch
    if _subject_set(statement["subject"]) == _subject_set(replayed):
        report.checked.append(f"{ATTESTATION_FILENAME} names the subjects its replay names")
    else:
        report.mismatches.append(
            _attestation_mismatch(
                "subject",
                "the subjects differ from those the replay attests (the contract and every "
                "policy config, with their digests)",
            )
        )


def _replay(
    input_dir: Path,
    recorded: Mapping[str, Any],
    recorded_report: Any,
    manifest: Manifest,
    replay: ReplayFn,
    report: VerifyReport,
) -> None:
    replayed = _run_replay(input_dir, recorded, replay, report)
    if replayed is None:
        return
    replayed_decision, replayed_report = replayed
    report.replayed = True
    note = _version_note(manifest)
    diffs = list(diff_json(recorded, replayed_decision, ignore=REPLAY_IGNORED_FIELDS))
    if not diffs:
        report.checked.append(
            "decision.json equals its replay from the inputs (time and run id aside)"
        )
    for path, message in diffs:
        report.mismatches.append(Mismatch("decision.json", path, "replay", message + note))
    if recorded_report is None:
        return
    report_diffs = list(
        diff_json(
            _comparable_report(recorded_report),
            _comparable_report(replayed_report),
            ignore=frozenset({"run_id"}),
        )
    )
    if not report_diffs:
        report.checked.append(
            "validation_report.json equals its replay (run id, self-test timing and signing aside)"
        )
    for path, message in report_diffs:
        report.mismatches.append(Mismatch("validation_report.json", path, "replay", message + note))


def _check_documents(
    present: Mapping[str, bytes], manifest: Manifest, report: VerifyReport
) -> _Documents:
    """Validate decision.json and validation_report.json; check run id and exit code."""
    docs = _Documents()
    for name, model in _MODELS.items():
        if name not in present:
            continue
        obj = _validate(name, present[name], model, report)
        if obj is None:
            continue
        if obj.run_id != manifest.run_id:
            report.mismatches.append(
                Mismatch(
                    name,
                    "run_id",
                    "consistency",
                    f"{obj.run_id!r} differs from manifest.json's {manifest.run_id!r}",
                )
            )
        if isinstance(obj, ValidationReport):
            docs.report, docs.report_dict = obj, orjson.loads(present[name])
        if isinstance(obj, Decision):
            docs.decision, docs.decision_dict = obj, orjson.loads(present[name])
            _check_exit_code(obj, manifest, report)
    return docs


def _check_exit_code(decision: Decision, manifest: Manifest, report: VerifyReport) -> None:
    if decision.exit_code != manifest.exit_code:
        report.mismatches.append(
            Mismatch(
                "decision.json",
                "exit_code",
                "consistency",
                f"{decision.exit_code} differs from manifest.json's {manifest.exit_code}",
            )
        )


def _hygiene_mismatches(findings: Iterable[Finding], report: VerifyReport) -> None:
    for f in findings:
        where = f.safe_field or (f"line {f.line}" if f.line else None)
        report.mismatches.append(Mismatch(f.file, where, "hygiene", f.kind))


def _allowed_kinds(report_doc: ValidationReport | None) -> frozenset[str]:
    """The kinds the run's contract allowed, as its ``publication-hygiene`` check records."""
    for check in report_doc.checks if report_doc is not None else ():
        if check.id == HYGIENE_BLOCKER:
            return allowed_kinds_from_note(check.expected)
    return frozenset()


def _check_hygiene(
    scanned: Mapping[str, bytes],
    allowed: frozenset[str],
    report: VerifyReport,
    mounts: tuple[str, ...] = DEFAULT_MOUNTS,
) -> None:
    findings = scan_outputs(scanned, (), allowed_kinds=allowed, mounts=mounts)
    _hygiene_mismatches(findings, report)
    if not findings:
        report.checked.append("publication-hygiene scan is clean")


def _check_copied_text(
    input_dir: Path,
    scanned: Mapping[str, bytes],
    private_texts: Callable[[Path], Iterable[str]],
    report: VerifyReport,
) -> None:
    try:
        texts = list(private_texts(input_dir))
    except RagwarrantError as exc:
        # The evidence cannot be read as the run read it (an ERROR run's bad contract, say);
        # the replay says whether that is what was recorded.
        report.checked.append(f"copied-text scan skipped: the inputs give {exc.code}")
        return
    copies = [f for f in scan_outputs(scanned, texts) if f.kind == "copied-text"]
    _hygiene_mismatches(copies, report)
    if not copies:
        report.checked.append("no output copies 12 or more tokens of the evidence text")


def _check_against_inputs(
    input_dir: Path,
    manifest: Manifest,
    scanned: Mapping[str, bytes],
    docs: _Documents,
    replay: ReplayFn | None,
    private_texts: Callable[[Path], Iterable[str]] | None,
    report: VerifyReport,
) -> None:
    """Hash the inputs, rescan for copied evidence text, replay the decision."""
    inputs_ok = _check_inputs(input_dir, manifest, report)
    if inputs_ok and private_texts is not None:
        _check_copied_text(input_dir, scanned, private_texts, report)
    if replay is None or docs.decision_dict is None:
        return
    if not inputs_ok:
        report.checked.append("replay skipped: the inputs differ from the manifest")
        return
    _replay(input_dir, docs.decision_dict, docs.report_dict, manifest, replay, report)
    _check_replayed_subjects(scanned.get(ATTESTATION_FILENAME), report)


def _require_dirs(output_dir: Path, input_dir: Path | None) -> None:
    for label, d in (("output", output_dir), ("input", input_dir)):
        if d is not None and d.is_file():
            raise file_for_directory(f"verify-{label}-not-directory", f"the {label}", d)
        if d is not None and not d.is_dir():
            raise InputError(
                f"verify-{label}-missing",
                f"the {label} directory {d} does not exist or is not a directory",
                hint=f"pass the run's {label} directory",
            )


def _read_manifest(output_dir: Path, report: VerifyReport) -> tuple[Manifest, bytes] | None:
    manifest_path = output_dir / MANIFEST
    if not manifest_path.is_file():
        report.mismatches.append(
            Mismatch(
                MANIFEST,
                None,
                "missing",
                "no manifest.json: this directory is not a completed run (the run was killed "
                "before it committed, or the manifest was removed); nothing in it is a result",
            )
        )
        return None
    manifest_bytes = manifest_path.read_bytes()
    manifest = _validate(MANIFEST, manifest_bytes, Manifest, report)
    return (manifest, manifest_bytes) if isinstance(manifest, Manifest) else None


def verify_output_dir(
    output_dir: Path,
    *,
    input_dir: Path | None = None,
    public_key: Path | None = None,
    replay: ReplayFn | None = None,
    private_texts: Callable[[Path], Iterable[str]] | None = None,
) -> VerifyReport:
    """Verify an output directory against its manifest, its schemas, its attestation and its inputs.

    Args:
        output_dir: the run's output directory.
        input_dir: the run's input directory; enables input hashing and the replay.
        public_key: Ed25519 public key (PEM SubjectPublicKeyInfo) that must have signed the
            attestation.
        replay: with ``input_dir``, the function that re-runs the job into a directory
            (``commands.verify.replay_with_job``); None hashes the inputs without replaying.
        private_texts: with ``input_dir``, a function returning the evidence's private texts
            (``commands.verify.read_private_texts``); the outputs are then rescanned for copied
            evidence text.

    Returns:
        The report; ``report.mismatches[0]`` names the first file and field that differ.

    Raises:
        InputError: ``output_dir`` or ``input_dir`` is not a readable directory, or the public key
            cannot be read or is not an Ed25519 key.
    """
    _require_dirs(output_dir, input_dir)
    report = VerifyReport()
    read = _read_manifest(output_dir, report)
    if read is None:
        return report
    manifest, manifest_bytes = read
    present = _check_outputs(output_dir, manifest, report)
    docs = _check_documents(present, manifest, report)
    if docs.decision is not None:
        _check_report_md(present, docs.decision, report)
        check_decision_views(present, docs.decision, report)
    attestation = _check_attestation(output_dir, manifest, manifest_bytes, docs, public_key, report)
    scanned = {**present, MANIFEST: manifest_bytes}
    if attestation is not None:
        scanned[ATTESTATION_FILENAME] = attestation
    dirs = [d for d in (input_dir, output_dir) if d is not None]
    mounts = tuple(dict.fromkeys([*DEFAULT_MOUNTS, *(str(d.resolve()) for d in dirs)]))
    _check_hygiene(scanned, _allowed_kinds(docs.report), report, mounts)
    if input_dir is not None:
        _check_against_inputs(input_dir, manifest, scanned, docs, replay, private_texts, report)
    return report
