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

from collections.abc import Callable, Iterable
from pathlib import Path

from ragwarrant.audit._verify_attestation import check_attestation
from ragwarrant.audit._verify_base import (
    MANIFEST,
    Check,
    ReplayFn,
    VerifyContext,
    VerifyReport,
    validate,
)
from ragwarrant.audit._verify_base import (
    UNSIGNED_VERIFY_LIMITS as UNSIGNED_VERIFY_LIMITS,
)
from ragwarrant.audit._verify_base import (
    diff_json as diff_json,
)
from ragwarrant.audit._verify_checks import (
    check_copied_text,
    check_decision_views,
    check_documents,
    check_hygiene,
    check_inputs,
    check_outputs,
    check_report_md,
)
from ragwarrant.audit.replay import check_replay
from ragwarrant.errors import InputError, file_for_directory, shown_path
from ragwarrant.outputs import Manifest

CHECKS: tuple[tuple[str, Check], ...] = (
    ("outputs", check_outputs),
    ("documents", check_documents),
    ("report-md", check_report_md),
    ("decision-views", check_decision_views),
    ("attestation", check_attestation),
    ("hygiene", check_hygiene),
    ("inputs", check_inputs),
    ("copied-text", check_copied_text),
    ("replay", check_replay),
)
"""The checks after the manifest is read, in order: ``(name, check)``, one signature (``Check``).

Each check skips itself when what it needs is absent (no valid decision, no input directory,
inputs that differ from the manifest...)."""


def _read_manifest(output_dir: Path, report: VerifyReport) -> tuple[Manifest, bytes] | None:
    manifest_path = output_dir / MANIFEST
    if manifest_path.is_symlink():
        report.add(MANIFEST, None, "symlink", "is a symlink: the job writes no links")
        return None
    if not manifest_path.is_file():
        report.add(
            MANIFEST,
            None,
            "missing",
            "no manifest.json: this directory is not a completed run (the run was killed "
            "before it committed, or the manifest was removed); nothing in it is a result",
        )
        return None
    manifest_bytes = manifest_path.read_bytes()
    manifest = validate(MANIFEST, manifest_bytes, Manifest, report)
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
    for label, option, d in (("output", "OUTDIR", output_dir), ("input", "--input", input_dir)):
        if d is not None and d.is_file():
            raise file_for_directory(f"verify-{label}-not-directory", option, d)
        if d is not None and not d.is_dir():
            raise InputError(
                f"verify-{label}-missing",
                f"{option} {shown_path(d)} does not exist or is not a directory",
                hint=f"pass the run's {label} directory",
            )
    report = VerifyReport()
    read = _read_manifest(output_dir, report)
    if read is None:
        return report
    manifest, manifest_bytes = read
    ctx = VerifyContext(
        output_dir,
        manifest,
        manifest_bytes,
        report,
        input_dir=input_dir,
        public_key=public_key,
        replay=replay,
        private_texts=private_texts,
    )
    for _name, check in CHECKS:
        check(ctx)
    return report
