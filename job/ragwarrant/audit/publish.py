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
4. Write each file atomically (``audit.writer.write_atomic``), then ``manifest.json`` over
   exactly those bytes: its presence means the run completed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ragwarrant.audit.attestation import ATTESTATION_FILENAME
from ragwarrant.audit.hygiene import (
    Finding,
    HygieneOutcome,
    files_to_withhold,
    findings_to_checks,
    scan_outputs,
    withhold,
)
from ragwarrant.audit.junit import render_junit
from ragwarrant.audit.manifest import build_manifest, digest_bytes, utc_timestamp
from ragwarrant.audit.report import render_report
from ragwarrant.audit.report_html import render_report_html
from ragwarrant.audit.writer import dump_json, write_atomic, write_model
from ragwarrant.decision import block_for_hygiene
from ragwarrant.errors import OutputError, UsageError
from ragwarrant.gates.run import gate_publication_hygiene
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
    ValidationCheck,
    ValidationReport,
)

__all__ = [
    "Publication",
    "check_output_dir",
    "is_inside",
    "publish_outputs",
    "render_decision_views",
    "render_outputs",
    "write_outputs",
]

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


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it (symlinks resolved; False if unresolvable)."""
    try:
        p, r = path.resolve(), root.resolve()
    except OSError:
        return False
    return p == r or r in p.parents


def check_output_dir(output_dir: Path, input_dir: Path) -> None:
    """Check the output directory lies outside the input directory, and create it writable.

    Raises:
        UsageError: the output directory lies inside the input directory (exit 64).
        OutputError: the output directory cannot be created or written (exit 73).
    """
    if is_inside(output_dir, input_dir):
        raise UsageError(
            "output-inside-input",
            f"the output directory {output_dir} is inside the input directory {input_dir}",
            hint="the input is never written to: choose an output directory outside it",
        )
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot create output directory {output_dir}: {exc.strerror}",
            hint="mount a writable volume at /out, or pass --output DIR",
        ) from exc
    if not os.access(output_dir, os.W_OK | os.X_OK):
        raise OutputError(
            "output-not-writable",
            f"output directory {output_dir} is not writable",
            hint=(
                "mount a writable volume at /out (the job runs as uid 65532), or pass --output DIR"
            ),
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


def _withhold(rendered: dict[str, bytes], private_texts: PrivateTexts) -> HygieneOutcome:
    """Scan and withhold; re-render the decision's views from a redacted ``decision.json``."""
    outcome = withhold(rendered, scan_outputs(rendered, private_texts()))
    if DECISION_FILE not in outcome.redacted:
        return outcome
    views = render_decision_views(Decision.model_validate_json(outcome.kept[DECISION_FILE]))
    again = withhold(views, scan_outputs(views, private_texts()))
    withheld = sorted((set(outcome.withheld) - set(views)) | set(again.withheld))
    kept = {name: again.kept.get(name, data) for name, data in outcome.kept.items()}
    return HygieneOutcome(kept, withheld, outcome.redacted, outcome.findings)


def _with_checks(report: ValidationReport, checks: list[ValidationCheck]) -> ValidationReport:
    return report.model_copy(update={"checks": [*report.checks, *checks]})


def _clean_check() -> ValidationCheck:
    return ValidationCheck(
        id="publication-hygiene",
        target="outputs",
        status="pass",
        message=f"{', '.join(SCANNED_FILES[:-1])} and {SCANNED_FILES[-1]} were scanned: no "
        "credentials, host paths, e-mail addresses or copied evidence text",
    )


def publish_outputs(
    decision: Decision, report: ValidationReport, private_texts: PrivateTexts = tuple
) -> Publication:
    """Render the decision, validation report and report; scan them; BLOCK and withhold on findings.

    Args:
        decision: the decision to publish.
        report: the validation report to publish.
        private_texts: called once per scan, e.g.
            ``lambda: private_texts_from_tables(r.texts for r in results if r.texts is not None)``.

    Returns:
        The files to write (then write the manifest over exactly these) and the final decision.
    """
    findings = scan_outputs(render_outputs(decision, report), private_texts())
    if not findings:
        report = _with_checks(report, [_clean_check()])
        return Publication(render_outputs(decision, report), decision, [], [], [])
    checks = [ValidationCheck.model_validate(c) for c in findings_to_checks(findings)]
    report = _with_checks(report, checks)
    base_gates = list(decision.run_gates)
    decision = block_for_hygiene(decision, len(findings))
    withheld = files_to_withhold(findings)
    outcome = HygieneOutcome({}, [], [], [])
    for _ in range(3):  # the withheld list goes into the gate; stop when it no longer changes
        gate = gate_publication_hygiene(findings, withheld)
        decision = decision.model_copy(update={"run_gates": [*base_gates, gate]})
        rendered = render_outputs(decision, report)
        outcome = _withhold(rendered, private_texts)
        if outcome.withheld == withheld:
            break
        withheld = outcome.withheld
    return Publication(outcome.kept, decision, outcome.findings, outcome.withheld, outcome.redacted)


def write_outputs(
    output_dir: Path,
    decision: Decision,
    report: ValidationReport,
    input_digests: list[FileDigest],
    seed: int | None,
    started_at: str,
    private_texts: PrivateTexts = tuple,
    signing: ValidationCheck | None = None,
) -> Decision:
    """Scan, write and hash the outputs, manifest last; return the decision as published.

    Any stale ``decision.intoto.json`` is removed first (the attestation is written after the
    manifest, by the caller). ``signing`` (``attestation.signing_check``) records in the
    validation report whether that attestation is signed.

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
    extra = [schema_check] if signing is None else [schema_check, signing]
    publication = publish_outputs(decision, _with_checks(report, extra), private_texts)
    (output_dir / ATTESTATION_FILENAME).unlink(missing_ok=True)  # never leave a stale attestation
    outputs: list[FileDigest] = []
    for name, data in publication.files.items():
        write_atomic(output_dir / name, data)
        outputs.append(digest_bytes(name, data))
    manifest = build_manifest(
        run_id=decision.run_id,
        seed=seed,
        started_at=started_at,
        finished_at=utc_timestamp(),
        exit_code=publication.decision.exit_code,
        inputs=input_digests,
        outputs=outputs,
    )
    write_model(output_dir / MANIFEST_FILE, manifest)
    return publication.decision
