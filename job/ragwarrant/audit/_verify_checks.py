"""``verify``'s checks of the outputs, documents, rendered views, inputs and hygiene."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import orjson
from pydantic import BaseModel

from ragwarrant.audit._findings import allowed_kinds_from_note
from ragwarrant.audit._verify_base import (
    MANIFEST,
    VerifyContext,
    VerifyReport,
    safe_relative,
    validate,
)
from ragwarrant.audit.attestation import ATTESTATION_FILENAME
from ragwarrant.audit.hygiene import WITHHELD_NOTICE, Finding, scan_outputs
from ragwarrant.audit.manifest import WITHHELD_INPUT_PREFIX
from ragwarrant.audit.publish import render_decision_views, run_mounts
from ragwarrant.audit.report import render_report
from ragwarrant.audit.unlisted import unlisted_files
from ragwarrant.audit.writer import HISTORY_DIR, LOCK_FILE
from ragwarrant.digests import sha256_bytes, sha256_file
from ragwarrant.errors import RagwarrantError
from ragwarrant.gates.run import HYGIENE_BLOCKER
from ragwarrant.outputs import Decision, ValidationReport

_MODELS: dict[str, type[BaseModel]] = {
    "decision.json": Decision,
    "validation_report.json": ValidationReport,
}


def check_outputs(ctx: VerifyContext) -> None:
    """Every output the manifest lists exists, a regular file, not a symlink, with its size and
    sha256; no other file is there."""
    out, manifest, report, present = ctx.output_dir, ctx.manifest, ctx.report, ctx.present
    for digest in manifest.outputs:
        name = digest.path
        if not safe_relative(name):
            report.add(
                MANIFEST, "outputs", "consistency", f"output path {name!r} is not a relative path"
            )
            continue
        path = out / name
        if path.is_symlink() or path.resolve().parent != (out.resolve() / name).parent:
            report.add(
                name,
                None,
                "symlink",
                "is a symlink (or lies under one): the job writes no links, so its content is "
                "not the run's output",
            )
            continue
        if not path.is_file():
            report.add(name, None, "missing", "listed in manifest.json but not present")
            continue
        data = path.read_bytes()
        present[name] = data
        if len(data) != digest.bytes:
            report.add(
                name, None, "size", f"manifest records {digest.bytes} bytes, found {len(data)}"
            )
        actual = sha256_bytes(data)
        if actual != digest.sha256:
            report.add(
                name,
                None,
                "sha256",
                f"manifest records {digest.sha256[:16]}..., file hashes to {actual[:16]}...",
            )
        else:
            report.checked.append(f"{name} sha256 matches the manifest")
    for rel in unlisted_files(out, manifest):
        report.add(
            rel,
            None,
            "unexpected-file",
            f"{rel} is in the output directory but not in manifest.json; verify treats "
            f"every file not in the manifest (other than {ATTESTATION_FILENAME}, "
            f"{LOCK_FILE} and earlier runs under {HISTORY_DIR}/) as a mismatch, since it "
            "may have been planted",
        )


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


def check_decision_views(ctx: VerifyContext) -> None:
    """``report.html`` and ``junit.xml`` must be their rendering from the recorded decision.

    Publication renders both from the decision as published (redacted, when hygiene redacted
    it), so they match byte for byte; one the hygiene gate lists as withheld is the notice.
    """
    present, decision, report = ctx.present, ctx.docs.decision, ctx.report
    if decision is None:
        return
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
        report.add(
            name,
            None,
            "render",
            f"differs from its rendering from decision.json ({name} was edited, or "
            "decision.json was)",
        )


def check_report_md(ctx: VerifyContext) -> None:
    """``report.md`` must be what publication renders from the recorded decision."""
    present, decision, report = ctx.present, ctx.docs.decision, ctx.report
    name = "report.md"
    if decision is None or name not in present:
        return
    recorded = present[name]
    withheld = _withheld_by_gate(decision)
    if name in (withheld or set()):
        if _NOTICE_RE.fullmatch(recorded.decode("utf-8", "replace")):
            report.checked.append(
                f"{name} is the withheld notice, as decision.json's hygiene gate records"
            )
        else:
            report.add(
                name,
                None,
                "render",
                "decision.json records report.md as withheld, but it is not the notice",
            )
        return
    expected = render_report(decision).encode()
    if recorded == expected:
        report.checked.append(f"{name} equals its rendering from decision.json")
        return
    rec_lines, exp_lines = recorded.splitlines(), expected.splitlines()
    # decision.json redacted after report.md was rendered from the unredacted decision: lines
    # may differ only where the re-rendering shows a redaction.
    pairs = enumerate(zip(rec_lines, exp_lines, strict=False), start=1)
    differing = [(i, b) for i, (a, b) in pairs if a != b]
    if (
        withheld is not None
        and len(rec_lines) == len(exp_lines)
        and all(b"[withheld: " in b for _, b in differing)
    ):
        report.checked.append(
            f"{name} equals its rendering from decision.json, except at the "
            f"{len(differing)} line(s) showing fields redacted in decision.json"
        )
        return
    line = differing[0][0] if differing else min(len(rec_lines), len(exp_lines)) + 1
    report.add(
        name,
        f"line {line}",
        "render",
        "differs from the report rendered from decision.json (report.md was edited, or "
        "decision.json was)",
    )


def _file_hashes(input_dir: Path) -> set[str]:
    """The sha256 of every regular file under ``input_dir`` (not a symlink: nothing outside the
    directory is read)."""
    return {sha256_file(p) for p in input_dir.rglob("*") if p.is_file() and not p.is_symlink()}


def check_inputs(ctx: VerifyContext) -> None:
    """With an input directory: every input the manifest lists is there with its sha256; an
    input whose name was withheld (a hygiene finding) is matched by its sha256 alone."""
    input_dir, manifest, report = ctx.input_dir, ctx.manifest, ctx.report
    if input_dir is None:
        return
    before = len(report.mismatches)
    withheld = [d for d in manifest.inputs if d.path.startswith(WITHHELD_INPUT_PREFIX)]
    hashes = _file_hashes(input_dir) if withheld else set()
    for digest in sorted(manifest.inputs, key=lambda d: d not in withheld):  # withheld first
        label = f"input:{digest.path}"
        if digest in withheld:  # its name was withheld: matched by its sha256 alone
            if digest.sha256 not in hashes:
                report.add(
                    label,
                    None,
                    "input-missing",
                    "its name was withheld (hygiene finding) and no file in the input directory "
                    "has its recorded sha256",
                )
        elif not safe_relative(digest.path):
            report.add(
                MANIFEST, "inputs", "consistency", f"input path {digest.path!r} is not relative"
            )
        elif not (input_dir / digest.path).is_file():
            message = "recorded in manifest.json, not in the input directory"
            report.add(label, None, "input-missing", message)
        elif (actual := sha256_file(input_dir / digest.path)) != digest.sha256:
            report.add(
                label,
                None,
                "input-sha256",
                f"manifest records {digest.sha256[:16]}..., file hashes to {actual[:16]}...",
            )
    ctx.inputs_ok = len(report.mismatches) == before
    if ctx.inputs_ok:
        report.checked.append(f"{len(manifest.inputs)} input(s) match their manifest sha256")


def check_documents(ctx: VerifyContext) -> None:
    """Validate decision.json and validation_report.json; check run id and exit code."""
    present, manifest, report, docs = ctx.present, ctx.manifest, ctx.report, ctx.docs
    for name, model in _MODELS.items():
        if name not in present:
            continue
        obj = validate(name, present[name], model, report)
        if obj is None:
            continue
        if obj.run_id != manifest.run_id:
            report.add(
                name,
                "run_id",
                "consistency",
                f"{obj.run_id!r} differs from manifest.json's {manifest.run_id!r}",
            )
        if isinstance(obj, ValidationReport):
            docs.report, docs.report_dict = obj, orjson.loads(present[name])
        if isinstance(obj, Decision):
            docs.decision, docs.decision_dict = obj, orjson.loads(present[name])
            if obj.exit_code != manifest.exit_code:
                report.add(
                    name,
                    "exit_code",
                    "consistency",
                    f"{obj.exit_code} differs from manifest.json's {manifest.exit_code}",
                )


def _hygiene_mismatches(findings: Iterable[Finding], report: VerifyReport) -> None:
    for f in findings:
        where = f.safe_field or (f"line {f.line}" if f.line else None)
        report.add(f.file, where, "hygiene", f.kind)


def check_hygiene(ctx: VerifyContext) -> None:
    """The publication-hygiene scan finds nothing in any file of the directory."""
    mounts = run_mounts(*(d for d in (ctx.input_dir, ctx.output_dir) if d is not None))
    # the kinds the run's contract allowed, as its publication-hygiene check records them
    checks = ctx.docs.report.checks if ctx.docs.report is not None else []
    notes = [c.expected for c in checks if c.id == HYGIENE_BLOCKER]
    allowed = allowed_kinds_from_note(notes[0]) if notes else frozenset()
    findings = scan_outputs(ctx.scanned, (), allowed_kinds=allowed, mounts=mounts)
    _hygiene_mismatches(findings, ctx.report)
    if not findings:
        ctx.report.checked.append("publication-hygiene scan is clean")


def check_copied_text(ctx: VerifyContext) -> None:
    """Given the evidence's texts: no output copies 12 or more tokens of them."""
    input_dir, private_texts, report = ctx.input_dir, ctx.private_texts, ctx.report
    if input_dir is None or private_texts is None or not ctx.inputs_ok:
        return
    try:
        texts = list(private_texts(input_dir))
    except RagwarrantError as exc:
        # The evidence cannot be read as the run read it (an ERROR run's bad contract, say);
        # the replay says whether that is what was recorded.
        report.checked.append(f"copied-text scan skipped: the inputs give {exc.code}")
        return
    copies = [f for f in scan_outputs(ctx.scanned, texts) if f.kind == "copied-text"]
    _hygiene_mismatches(copies, report)
    if not copies:
        report.checked.append("no output copies 12 or more tokens of the evidence text")
