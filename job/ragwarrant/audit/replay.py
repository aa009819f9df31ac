"""``verify --input``: replay a run from its inputs and compare its documents field by field."""

from __future__ import annotations

import platform
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson

from ragwarrant.audit._verify_base import (
    REPLAY_IGNORED_FIELDS,
    ReplayFn,
    VerifyContext,
    VerifyReport,
    diff_json,
)
from ragwarrant.audit.attestation import (
    ATTESTATION_FILENAME,
    SIGNING_CHECK_ID,
    AttestationError,
    read_attestation,
)
from ragwarrant.audit.manifest import dependency_versions
from ragwarrant.errors import RagwarrantError
from ragwarrant.outputs import Manifest


def _version_note(manifest: Manifest) -> str:
    from ragwarrant.version import __version__

    recorded = {
        "ragwarrant": manifest.ragwarrant_version,
        "python": manifest.python_version,
        **manifest.dependencies,
    }
    here = {
        "ragwarrant": __version__,
        "python": platform.python_version(),
        **dependency_versions(manifest.dependencies),
    }
    notes = [f"{k} {v} recorded, {here[k]} here" for k, v in recorded.items() if here[k] != v]
    return f" (versions differ: {'; '.join(notes)})" if notes else ""


def _comparable_report(doc: Any) -> Any:
    """A validation report without what legitimately differs in a replay (timing, signing)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), list):
        return doc
    checks = []
    for check in doc["checks"]:
        if isinstance(check, dict) and check.get("id") == SIGNING_CHECK_ID:
            continue
        if isinstance(check, dict) and check.get("id") == "engine-selftest":  # timed message
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
    report.add(
        "decision.json",
        "error.code" if recorded_error is not None else None,
        "replay-failed" if recorded_error is None else "replay",
        f"the replay stopped with {exc.code}: {exc.message}; {was}",
    )


def _run_replay(
    input_dir: Path,
    recorded: Mapping[str, Any],
    replay: ReplayFn,
    report: VerifyReport,
) -> tuple[Any, Any, list[Any] | None] | None:
    """Replay into a temporary directory; return its decision and validation report as JSON and
    its attestation's subjects (None when absent or unreadable), or None when the comparison is
    already settled (an error, or no decision written)."""
    error = recorded.get("error")
    recorded_error = error if isinstance(error, dict) else None
    if recorded_error is not None and recorded_error.get("option"):
        # not replayed: the error came from a command-line option, not from the inputs
        options = recorded_error.get("options") or []
        given = ", ".join(map(str, options)) if isinstance(options, list) and options else "none"
        report.notes.append(
            f"not replayed: the recorded ERROR {recorded_error.get('code')} came from the value "
            f"of the command-line option {recorded_error.get('option')}, not from the inputs; a "
            "replay from --input runs without the run's options (options recorded: "
            f"{given}), so it cannot reproduce the error. The outputs and inputs were checked; "
            "to check the error, rerun 'ragwarrant run' with the same options"
        )
        return None
    with tempfile.TemporaryDirectory(prefix="ragwarrant-replay-") as tmp:
        try:
            replay(input_dir, Path(tmp))
        except RagwarrantError as exc:
            _replay_error(exc, recorded, recorded_error, report)
            return None
        if recorded_error is not None:
            report.replayed = True
            report.add(
                "decision.json",
                "error.code",
                "replay",
                f"the recorded ERROR is {recorded_error.get('code')}, but the replay "
                "completed without an error",
            )
            return None
        replayed_path = Path(tmp) / "decision.json"
        if not replayed_path.is_file():
            report.add("decision.json", None, "replay-failed", "the replay wrote no decision.json")
            return None
        report_path = Path(tmp) / "validation_report.json"
        replayed_report = orjson.loads(report_path.read_bytes()) if report_path.is_file() else None
        subjects = None
        with suppress(OSError, AttestationError):
            statement, _ = read_attestation((Path(tmp) / ATTESTATION_FILENAME).read_bytes())
            subjects = list(statement["subject"])
        return orjson.loads(replayed_path.read_bytes()), replayed_report, subjects


def _check_replayed_subjects(
    recorded_attestation: bytes | None, replayed: list[Any] | None, report: VerifyReport
) -> None:
    """The replay's attestation names the same subjects (contract and policy configs)."""
    if recorded_attestation is None or replayed is None:
        return
    try:
        statement, _ = read_attestation(recorded_attestation)
    except AttestationError:
        return  # already a mismatch
    recorded = {orjson.dumps(s, option=orjson.OPT_SORT_KEYS) for s in statement["subject"]}
    if recorded == {orjson.dumps(s, option=orjson.OPT_SORT_KEYS) for s in replayed}:
        report.checked.append(f"{ATTESTATION_FILENAME} names the subjects its replay names")
    else:
        report.add(
            ATTESTATION_FILENAME,
            "subject",
            "attestation",
            "the subjects differ from those the replay attests (the contract and every "
            "policy config, with their digests)",
        )


def check_replay(ctx: VerifyContext) -> None:
    """Given a replay function and matching inputs: the run replays to the recorded documents.

    ``decision.json`` is compared field by field ignoring ``REPLAY_IGNORED_FIELDS``,
    ``validation_report.json`` ignoring its run id, the self-test timing and the signing check;
    then the replay's attestation must name the recorded subjects.
    """
    recorded, report = ctx.docs.decision_dict, ctx.report
    if ctx.input_dir is None or ctx.replay is None or recorded is None:
        return
    if not ctx.inputs_ok:
        report.checked.append("replay skipped: the inputs differ from the manifest")
        return
    replayed = _run_replay(ctx.input_dir, recorded, ctx.replay, report)
    if replayed is None:
        return
    replayed_decision, replayed_report, subjects = replayed
    report.replayed = True
    note = _version_note(ctx.manifest)
    diffs = list(diff_json(recorded, replayed_decision, ignore=REPLAY_IGNORED_FIELDS))
    if not diffs:
        report.checked.append(
            "decision.json equals its replay from the inputs (time and run id aside)"
        )
    for path, message in diffs:
        report.add("decision.json", path, "replay", message + note)
    if ctx.docs.report_dict is not None:
        report_diffs = list(
            diff_json(
                _comparable_report(ctx.docs.report_dict),
                _comparable_report(replayed_report),
                ignore=frozenset({"run_id"}),
            )
        )
        if not report_diffs:
            report.checked.append(
                "validation_report.json equals its replay "
                "(run id, self-test timing and signing aside)"
            )
        for path, message in report_diffs:
            report.add("validation_report.json", path, "replay", message + note)
    _check_replayed_subjects(ctx.attestation, subjects, report)
