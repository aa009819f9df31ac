"""Publish a run: render → scan → apply any hygiene BLOCK → write, manifest last.

1. Render ``decision.json``, ``validation_report.json``, ``report.md``, ``report.html`` and
   ``junit.xml`` to bytes (the last three from the decision).
2. Scan them (``audit.hygiene.scan_outputs``): credentials, host paths, e-mail addresses, copied
   evidence text. The scanner only finds and redacts.
3. On findings, ``decision.block_for_hygiene`` BLOCKs the run (an ERROR record stays ERROR), the
   failed ``hard:publication-hygiene`` run gate (``gates.run``) and one ``hygiene:<kind>`` check
   per finding are added, everything is rendered again, and ``audit.hygiene.withhold`` redacts
   offending JSON fields and replaces an offending ``report.md`` by a notice. ``report.html``
   and ``junit.xml`` are rendered again from the redacted ``decision.json`` (so they stay a page
   and valid XML), and replaced by the notice only if that rendering still has findings.
4. Write each file atomically into a staging directory in the output volume, then
   ``manifest.json`` over exactly those bytes and ``decision.intoto.json`` over the manifest;
   commit them into the output directory (``audit.writer.commit_staged``): an earlier committed
   run is kept under ``history/<run_id>/``, the manifest goes in last, so its presence means the
   run completed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from pydantic import ValidationError

from ragwarrant.audit._findings import allowed_kinds_note
from ragwarrant.audit.attestation import (
    ATTESTATION_FILENAME,
    signing_check,
    write_attestation,
)
from ragwarrant.audit.hygiene import (
    Finding,
    HygieneOutcome,
    ScanSettings,
    files_to_withhold,
    findings_to_checks,
    private_texts_from_tables,
    scan_outputs,
    withhold,
)
from ragwarrant.audit.junit import render_junit
from ragwarrant.audit.manifest import (
    WITHHELD_INPUT_PREFIX,
    build_manifest,
    digest_bytes,
    utc_timestamp,
)
from ragwarrant.audit.report import render_report
from ragwarrant.audit.report_html import render_report_html
from ragwarrant.audit.writer import (
    HISTORY_DIR,
    LOCK_FILE,
    STAGING_PREFIX,
    commit_staged,
    dump_json,
    make_staging,
    write_atomic,
    write_model,
)
from ragwarrant.decision import block_for_hygiene
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import OutputError, shown_path
from ragwarrant.gates.run import gate_publication_hygiene
from ragwarrant.inputs import Inputs
from ragwarrant.mounts import DEFAULT_MOUNTS
from ragwarrant.outputs import (
    DECISION_FILE,
    JUNIT_FILE,
    MANIFEST_FILE,
    OUTPUT_FILES,
    REPORT_FILE,
    REPORT_HTML_FILE,
    VALIDATION_REPORT_FILE,
    Decision,
    FileDigest,
    Manifest,
    ValidationCheck,
    ValidationReport,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SCANNED_FILES = tuple(name for name in OUTPUT_FILES if name != MANIFEST_FILE)
"""Every output the hygiene scan reads: all but the manifest, which only holds hashes."""

PrivateTexts = Callable[[], Iterable[str]]
"""A zero-argument callable returning a fresh iterable of the evidence's private texts."""


@dataclass(frozen=True)
class Publication:
    """What the job may write, after the hygiene scan.

    Attributes:
        files: output name → bytes to write: every name of ``OUTPUT_FILES`` but the manifest
            (JSON redacted, ``report.md`` replaced by a notice, ``report.html`` and ``junit.xml``
            rendered from the redacted decision, when they had findings).
        decision: the decision as published (BLOCK with ``hard:publication-hygiene`` when there
            were findings; an ERROR run keeps its class and gains the gate).
        findings: the findings of the final scan (before redaction), empty when clean.
        withheld: files whose content was replaced by a notice.
        redacted: files written with offending fields replaced.
    """

    files: dict[str, bytes]
    decision: Decision
    findings: list[Finding]
    withheld: list[str]
    redacted: list[str]


_RUN_NAMES = frozenset({*OUTPUT_FILES, ATTESTATION_FILENAME, LOCK_FILE, HISTORY_DIR})
"""Top-level names a run writes in its output directory (besides staging directories)."""


def _run_name(name: str) -> bool:
    """A top-level name a run writes (``clean_stale`` removes a killed run's temp files)."""
    orphan_tmp = name.startswith(".") and name.endswith(".tmp")
    return name in _RUN_NAMES or name.startswith(STAGING_PREFIX) or orphan_tmp


def _raise(exc: OSError) -> None:
    raise exc


def first_foreign_file(output_dir: Path) -> str | None:
    """The first entry of ``output_dir`` that no run wrote, relative to it, or None.

    Run files, ``history/``, staging directories, a killed run's temp files and the lock are a
    run's; anything else that is not a directory (a stray file, a symlink, a FIFO, a file under
    another directory) is foreign, as ``verify`` would flag it. The walk stops at the first one
    (a run pointed at ``/`` must not list the file system), in name order within each directory;
    a directory it cannot list counts as foreign (nothing of a run's is unreadable).
    """
    try:
        for root, dirs, files in os.walk(output_dir, onerror=_raise):
            here = Path(root)
            if here == output_dir:
                dirs[:] = [d for d in dirs if not _run_name(d)]
                files = [f for f in files if not _run_name(f)]
            dirs.sort()
            found = sorted([*files, *(d for d in dirs if (here / d).is_symlink())])
            if found:
                return (here / found[0]).relative_to(output_dir).as_posix()
    except OSError as exc:
        where = Path(exc.filename or output_dir)
        return where.relative_to(output_dir).as_posix() if where != output_dir else "."
    return None


def refuse_foreign_files(output_dir: Path) -> None:
    """Refuse an output directory holding files that no run wrote (``first_foreign_file``).

    A run committed beside them could never verify (``verify`` flags every file the manifest
    does not list), although the run would exit with its decision. Called before the run's
    lock is taken: a refused directory is left as it was.

    Raises:
        OutputError: code ``output-foreign-files`` (exit 73), naming the first file.
    """
    found = first_foreign_file(output_dir)
    if found is not None:
        raise OutputError(
            "output-foreign-files",
            f"the output directory {shown_path(output_dir)} holds files that no ragwarrant "
            f"run wrote (first: {found}); a run committed beside them could never verify",
            hint="pass --output an empty directory (or one holding only earlier ragwarrant "
            "runs), or move those files out",
        )


def render_decision_views(decision: Decision) -> dict[str, bytes]:
    """Render ``report.html`` and ``junit.xml`` (byte-deterministic) from ``decision``."""
    return {
        REPORT_HTML_FILE: render_report_html(decision).encode("utf-8"),
        JUNIT_FILE: render_junit(decision),
    }


def render_outputs(decision: Decision, report: ValidationReport) -> dict[str, bytes]:
    """Render the scanned outputs (every output file but the manifest) to bytes."""
    return {
        DECISION_FILE: dump_json(decision),
        VALIDATION_REPORT_FILE: dump_json(report),
        REPORT_FILE: render_report(decision).encode(),
        **render_decision_views(decision),
    }


def _scan(
    rendered: Mapping[str, bytes], settings: ScanSettings, texts: PrivateTexts
) -> list[Finding]:
    return scan_outputs(
        rendered, texts(), allowed_kinds=settings.allowed_kinds, mounts=settings.mounts
    )


def _hygiene_check(allowed_kinds: frozenset[str], *, clean: bool) -> ValidationCheck:
    """The ``publication-hygiene`` check: a clean scan (pass) or, beside a failed scan's checks,
    the record of the finding kinds the contract allows (info)."""
    kinds = ", ".join(sorted(allowed_kinds))
    if clean:
        message = (
            f"{', '.join(SCANNED_FILES[:-1])} and {SCANNED_FILES[-1]} were scanned: no "
            "credentials, host paths, e-mail addresses or copied evidence text"
            + (f" (published as the contract allows: {kinds})" if allowed_kinds else "")
        )
    else:
        message = "the contract allows these finding kinds to be published: " + kinds
    return ValidationCheck(
        id="publication-hygiene",
        target="outputs",
        status="pass" if clean else "info",
        message=message,
        expected=allowed_kinds_note(allowed_kinds),
    )


_INPUT_FIELD = re.compile(r"^inputs\[(\d+)\]$")


@dataclass(frozen=True)
class InputNames:
    """Input paths as the manifest and the attestation publish them, after the name scan.

    Attributes:
        digests: the manifest's inputs, each offending path replaced by a placeholder.
        subjects: the attestation's subject paths, replaced the same way.
        findings: one per offending path and kind (file ``manifest.json``, field ``inputs[i]``).
    """

    digests: list[FileDigest]
    subjects: list[str]
    findings: list[Finding]


def withhold_input_names(
    digests: Sequence[FileDigest], subjects: Sequence[str], settings: ScanSettings
) -> InputNames:
    """Scan every input path (relative to the input root: file and directory names at every
    depth) with the output scanner before the manifest publishes it.

    A path with a finding (a token, e-mail address, phone number... in a file or directory
    name) is replaced by ``WITHHELD_INPUT_PREFIX + <index>`` in the manifest and in the
    attestation's subjects, so neither publishes it; the caller BLOCKs the run with the
    findings, which name the index and the kind, never the name.
    """
    doc = orjson.dumps({"inputs": [d.path for d in digests]})
    findings = scan_outputs(
        {MANIFEST_FILE: doc}, allowed_kinds=settings.allowed_kinds, mounts=settings.mounts
    )
    bad: dict[str, str] = {}
    for f in findings:
        m = _INPUT_FIELD.match(f.field or "")
        if m is not None:
            index = int(m.group(1))
            bad[digests[index].path] = f"{WITHHELD_INPUT_PREFIX}{index}"
    return InputNames(
        [d.model_copy(update={"path": bad.get(d.path, d.path)}) for d in digests],
        [bad.get(p, p) for p in subjects],
        findings,
    )


def publish_outputs(
    decision: Decision,
    report: ValidationReport,
    private_texts: PrivateTexts = tuple,
    *,
    allowed_kinds: frozenset[str] = frozenset(),
    mounts: tuple[str, ...] = DEFAULT_MOUNTS,
    prior_findings: Sequence[Finding] = (),
) -> Publication:
    """Render the decision, validation report and report; scan them; BLOCK and withhold on findings.

    Args:
        decision: the decision to publish.
        report: the validation report to publish.
        private_texts: called once per scan, e.g.
            ``lambda: private_texts_from_tables(r.texts for r in results if r.texts is not None)``.
        allowed_kinds: finding kinds the contract allows (``publication.allow_finding_kinds``,
            as ``audit.hygiene.ALLOWABLE_KINDS`` names); recorded in the ``publication-hygiene``
            check's ``expected`` (``allowed_kinds_note``) so ``verify`` rescans the same way.
        mounts: absolute paths that are not ``absolute-path`` findings (``run_mounts``).
        prior_findings: findings outside the rendered files (``withhold_input_names``); they
            BLOCK the run like the others.

    Returns:
        The files to write (then write the manifest over exactly these) and the final decision.
    """
    settings = ScanSettings(frozenset(allowed_kinds), tuple(mounts))
    scanned = render_outputs(decision, report)
    findings = [*prior_findings, *_scan(scanned, settings, private_texts)]
    if not findings:
        clean = _hygiene_check(settings.allowed_kinds, clean=True)
        report = report.model_copy(update={"checks": [*report.checks, clean]})
        # Only validation_report.json holds the new check; the other files are the scanned bytes
        # (rendering them again cost a second report.html per run; issue 13).
        files = {**scanned, VALIDATION_REPORT_FILE: dump_json(report)}
        return Publication(files, decision, [], [], [])
    checks = [ValidationCheck.model_validate(c) for c in findings_to_checks(findings)]
    if settings.allowed_kinds:
        checks.insert(0, _hygiene_check(settings.allowed_kinds, clean=False))
    report = report.model_copy(update={"checks": [*report.checks, *checks]})
    base_gates = list(decision.run_gates)
    decision = block_for_hygiene(decision, len(findings))
    withheld = files_to_withhold(findings)
    outcome = HygieneOutcome({}, [], [], [])
    for _ in range(3):  # the withheld list goes into the gate; stop when it no longer changes
        gate = gate_publication_hygiene(findings, withheld)
        decision = decision.model_copy(update={"run_gates": [*base_gates, gate]})
        rendered = render_outputs(decision, report)
        outcome = withhold(rendered, _scan(rendered, settings, private_texts))
        if DECISION_FILE in outcome.redacted:  # re-render its views from the redacted decision
            views = render_decision_views(Decision.model_validate_json(outcome.kept[DECISION_FILE]))
            again = withhold(views, _scan(views, settings, private_texts))
            outcome = HygieneOutcome(
                {name: again.kept.get(name, data) for name, data in outcome.kept.items()},
                sorted((set(outcome.withheld) - set(views)) | set(again.withheld)),
                outcome.redacted,
                outcome.findings,
            )
        if outcome.withheld == withheld:
            break
        withheld = outcome.withheld
    return Publication(
        outcome.kept,
        decision,
        [*prior_findings, *outcome.findings],
        outcome.withheld,
        outcome.redacted,
    )


def committed_run(output_dir: Path) -> tuple[str, list[str]] | None:
    """The run committed in ``output_dir``: ``(run_id, its file names)``; None without a manifest.

    A manifest that cannot be read still marks a committed run (kept, never overwritten): its
    id is then ``unreadable-<sha256 prefix of the manifest>``.
    """
    path = output_dir / MANIFEST_FILE
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    names = [*OUTPUT_FILES[:-1], ATTESTATION_FILENAME, MANIFEST_FILE]
    try:
        manifest = Manifest.model_validate_json(raw)
    except ValidationError:
        return f"unreadable-{sha256_bytes(raw)[:12]}", names
    listed = [d.path for d in manifest.outputs if "/" not in d.path and d.path != MANIFEST_FILE]
    return manifest.run_id, [*listed, ATTESTATION_FILENAME, MANIFEST_FILE]


@dataclass(frozen=True)
class RunRecord:
    """What ``write_outputs`` needs besides the decision and the report.

    Attributes:
        input_digests: the inputs' digests, for the manifest.
        seed: the contract's seed (None for an ERROR record).
        started_at: the run's start time (UTC, ISO 8601).
        subject_paths: the attestation's subjects (``attestation.build_statement``).
        private_texts: the evidence's private texts, for the scan.
        private_key: signs the attestation when given.
        allowed_kinds: hygiene kinds the contract allows (``ALLOWABLE_KINDS`` names).
        mounts: the run's input and output directories (absolute), not ``absolute-path``
            findings, with the container mounts ``/in`` and ``/out``.
    """

    input_digests: list[FileDigest]
    seed: int | None
    started_at: str
    subject_paths: Sequence[str] = (DECISION_FILE,)
    private_texts: PrivateTexts = tuple
    private_key: Ed25519PrivateKey | None = None
    allowed_kinds: frozenset[str] = frozenset()
    mounts: tuple[str, ...] = DEFAULT_MOUNTS


def run_mounts(*dirs: Path) -> tuple[str, ...]:
    """``/in``, ``/out`` and each of ``dirs`` resolved to an absolute path."""
    extra = [str(d.resolve()) for d in dirs]
    return tuple(dict.fromkeys([*DEFAULT_MOUNTS, *extra]))


def write_outputs(
    output_dir: Path, decision: Decision, report: ValidationReport, run: RunRecord
) -> Decision:
    """Scan, stage and commit the outputs, attestation and manifest; return the decision published.

    The decision returned is the one ``decision.json`` holds (fields with findings withheld), so
    what the caller prints (the one-line decision, the termination message) leaks nothing either.

    Every file is written into a staging directory inside ``output_dir`` (``writer.make_staging``),
    ``decision.intoto.json`` over the staged manifest, then committed by ``writer.commit_staged``
    (a committed earlier run is kept under ``history/<run_id>/``; the manifest goes in last).
    The validation report records whether the attestation is signed, and the hygiene kinds the
    contract allowed (the ``publication-hygiene`` check's ``expected``, which ``verify`` reads).

    Raises:
        OutputError: an output cannot be written (exit 73).
    """
    schema_check = ValidationCheck(
        id="output-schemas",
        target="outputs",
        status="pass",
        message=f"{DECISION_FILE} and {VALIDATION_REPORT_FILE} were built by the models whose JSON "
        "Schemas are committed under contracts/ (unknown fields and non-finite numbers refused)",
    )
    extra = [schema_check, signing_check(run.private_key)]
    names = withhold_input_names(
        run.input_digests, run.subject_paths, ScanSettings(run.allowed_kinds, run.mounts)
    )
    publication = publish_outputs(
        decision,
        report.model_copy(update={"checks": [*report.checks, *extra]}),
        run.private_texts,
        allowed_kinds=run.allowed_kinds,
        mounts=run.mounts,
        prior_findings=names.findings,
    )
    staging = make_staging(output_dir, decision.run_id)
    outputs: list[FileDigest] = []
    for name, data in publication.files.items():
        write_atomic(staging / name, data, sync_dir=False)  # commit_staged syncs staging
        outputs.append(digest_bytes(name, data))
    manifest = build_manifest(
        run_id=decision.run_id,
        seed=run.seed,
        started_at=run.started_at,
        finished_at=utc_timestamp(),
        exit_code=publication.decision.exit_code,
        inputs=names.digests,
        outputs=outputs,
    )
    write_model(staging / MANIFEST_FILE, manifest, sync_dir=False)
    write_attestation(staging, names.subjects, run.private_key, sync_dir=False)
    files = [*publication.files, ATTESTATION_FILENAME, MANIFEST_FILE]
    commit_staged(staging, output_dir, files, committed_run(output_dir))
    try:  # the decision as decision.json holds it: fields with findings withheld
        return Decision.model_validate_json(publication.files[DECISION_FILE])
    except ValidationError:  # a withheld value a model field refuses: the unredacted decision
        return publication.decision


_CONTRACT_KIND_NAMES = {"private-path": "absolute-path"}
"""Contract finding kinds (``contract.FindingKind``) that ``audit.hygiene`` names otherwise."""


def run_record(
    inputs: Inputs,
    started_at: str,
    private_key: Ed25519PrivateKey | None,
    input_dir: Path,
    output_dir: Path,
) -> RunRecord:
    """What ``write_outputs`` needs of a decided run besides its decision and report."""
    policies = [inputs.contract.baseline, *inputs.contract.candidates]
    subjects = [p.config for p in policies if p.policy_id in inputs.config_sha]
    texts = [r.texts for r in inputs.results if r.texts is not None]
    publication = getattr(inputs.contract, "publication", None)
    allowed = publication.allow_finding_kinds if publication is not None else []
    return RunRecord(
        input_digests=inputs.digests,
        seed=inputs.contract.statistics.seed,
        started_at=started_at,
        subject_paths=[inputs.contract_path, *subjects],
        private_texts=lambda: private_texts_from_tables(texts),
        private_key=private_key,
        allowed_kinds=frozenset(_CONTRACT_KIND_NAMES.get(k, k) for k in allowed),
        mounts=run_mounts(input_dir, output_dir),
    )
