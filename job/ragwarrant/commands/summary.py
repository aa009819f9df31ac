"""``ragwarrant summary OUTDIR``: print a finished run's decision for a person."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ragwarrant.commands import collect as collect_command  # `summary --all` (issue 16)
from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.digests import sha256_bytes
from ragwarrant.display import identifier, visible
from ragwarrant.errors import (
    InputError,
    MismatchError,
    file_for_directory,
    first_invalid,
    shown_path,
)
from ragwarrant.exit_codes import DecisionClass, ExitCode, exit_code_for_class
from ragwarrant.sidefiles import read_regular

if TYPE_CHECKING:
    from ragwarrant.outputs import Decision

# The record models (pydantic) and the summary are imported by the functions that use them, so
# that ``ragwarrant --help`` and the other commands do not load them.

SUMMARY_HELP = CommandHelp(
    purpose="print the decision of a finished run",
    reads="OUTDIR/decision.json and OUTDIR/manifest.json (with --all: every subdirectory's)",
    writes="stdout only: the run class, each candidate's class and first reason, the next step "
    "(--json: the machine summary {run_class, exit_code, next_step, candidates})",
    codes=tuple(ExitCode),
    code_note="Exits with the recorded run's code (any code of 'ragwarrant run'); "
    f"{int(ExitCode.VERIFY_MISMATCH)} when decision.json differs from manifest.json or a file is "
    f"not in it; {int(ExitCode.NO_INPUT)} without manifest.json (not a completed run). With "
    "--all: the worst run's code (the largest any run wrote; a run without a committed "
    f"decision counts as {int(ExitCode.NO_INPUT)} or {int(ExitCode.VERIFY_MISMATCH)}), "
    f"{int(ExitCode.NO_INPUT)} when OUTDIR cannot be listed or holds no run; --json or "
    "--format json prints the table as JSON.",
    examples=("ragwarrant summary out/demo", "ragwarrant summary --all out --expect 8"),
)
"""``ragwarrant summary --help``."""

_VERIFY_HINT = "run 'ragwarrant verify' on the output directory"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``summary`` subcommand."""
    p = add_command(subparsers, "summary", SUMMARY_HELP, handle)
    p.add_argument("outdir", type=Path, metavar="OUTDIR", help="a run's output directory")
    collect_command.add_arguments(p)  # --all, --format, --expect: commands/collect.py
    p.add_argument(
        "--json",
        action="store_true",
        help="print the machine summary {run_class, exit_code, next_step, candidates} as JSON",
    )


def _check_manifest(outdir: Path, decision_bytes: bytes) -> None:
    """Raise InputError without manifest.json, MismatchError when it does not record these bytes."""
    from pydantic import ValidationError

    from ragwarrant.outputs import Manifest

    manifest_path = outdir / "manifest.json"
    if not manifest_path.is_file():
        raise InputError(
            "run-incomplete",
            f"{outdir} is not a completed run: it has no manifest.json (the run was killed "
            "before it committed, or the manifest was removed); its decision.json is not a result",
            hint="run the job again into this directory; a completed run writes manifest.json last",
        )
    try:
        manifest = Manifest.model_validate_json(read_regular(manifest_path, within=outdir))
    except (OSError, ValidationError) as exc:
        raise MismatchError(
            "manifest-invalid", f"{manifest_path} is not a readable manifest", hint=_VERIFY_HINT
        ) from exc
    recorded = next((d.sha256 for d in manifest.outputs if d.path == "decision.json"), None)
    actual = sha256_bytes(decision_bytes)
    if recorded != actual:
        raise MismatchError(
            "decision-sha256",
            f"{outdir / 'decision.json'} hashes to {actual[:16]}..., manifest.json records "
            f"{str(recorded)[:16]}...: the decision was changed after the run",
            hint=_VERIFY_HINT,
        )
    from ragwarrant.audit.unlisted import unlisted_files

    extra = unlisted_files(outdir, manifest)
    if extra:
        raise MismatchError(
            "unexpected-file",
            f"{outdir / extra[0]} is not in manifest.json ({len(extra)} such file(s)): a file no "
            "run wrote may have been planted, so this directory is not a verified result",
            hint=_VERIFY_HINT,
        )


def handle(args: argparse.Namespace) -> int:
    """Print run class, each candidate's class and whole first reason, then the next step.

    With ``--json``, print ``audit.summary.summary_document`` instead. Returns the run's exit code.

    ``manifest.json`` must be present (it is committed last: without it the directory is not a
    completed run) and record decision.json's sha256.

    Raises:
        InputError: decision.json cannot be read, is not a regular file (a FIFO, a device), is
            larger than ``sidefiles.MAX_SIDE_FILE_BYTES`` or a symlink leading outside OUTDIR,
            or there is no manifest.json (66).
        MismatchError: it is not a valid decision record, its sha256 differs from the
            manifest's, its exit code contradicts its class, or its class contradicts its
            candidates' classes (65): use ``ragwarrant verify`` for a full check.
    """
    if args.outdir.is_file():
        raise file_for_directory("summary-not-directory", "OUTDIR", args.outdir)
    if args.all:  # a fan-out's directory of runs: commands/collect.py
        return collect_command.handle(args)
    import orjson
    from pydantic import ValidationError

    from ragwarrant.audit.summary import summary_document
    from ragwarrant.decision import run_class
    from ragwarrant.outputs import Decision

    path = args.outdir / "decision.json"
    try:
        raw = read_regular(path, within=args.outdir)
    except OSError as exc:
        shown = Path(shown_path(args.outdir)) / "decision.json"
        raise InputError("decision-unreadable", f"cannot read {shown}: {exc.strerror}") from exc
    _check_manifest(args.outdir, raw)
    try:
        d = Decision.model_validate_json(raw)
    except ValidationError as exc:
        raise MismatchError(
            "decision-invalid",
            f"{path} is not a valid decision record: {first_invalid(exc)}",
            hint=_VERIFY_HINT,
        ) from exc
    expected = (
        d.error.exit_code
        if d.error is not None
        else int(exit_code_for_class(d.run_class))
        if d.run_class is not DecisionClass.ERROR
        else None
    )
    if expected is None or d.exit_code != expected:
        raise MismatchError(
            "decision-inconsistent",
            f"{path}: exit_code {d.exit_code} contradicts run_class {d.run_class.value}",
            hint=_VERIFY_HINT,
        )
    if d.run_class is not DecisionClass.ERROR:
        implied = run_class([c.decision_class for c in d.candidates])
        if implied is not d.run_class:
            raise MismatchError(
                "decision-inconsistent",
                f"{path}: run_class {d.run_class.value} contradicts the candidates' classes "
                f"(which give {implied.value})",
                hint=_VERIFY_HINT,
            )
    if args.json:
        sys.stdout.write(
            orjson.dumps(summary_document(d), option=orjson.OPT_INDENT_2).decode() + "\n"
        )
    else:
        _print_human(d)
    return d.exit_code


def _print_human(d: Decision) -> None:
    """Class, summary, each candidate's whole first reason, any error, then the next step; every
    value from the inputs through ``display.visible``, so a line printed is a line meant."""
    from ragwarrant.audit.summary import next_step

    print(f"decision: {d.run_class.value} (exit {d.exit_code})")
    print(f"  {visible(d.summary)}")
    for c in d.candidates:
        first_reason = visible(c.reasons[0]) if c.reasons else ""
        print(f"  {identifier(c.policy_id):<28} {c.decision_class.value:<13} {first_reason}")
    if d.error and f"{d.error.code}: {d.error.message}" not in d.summary:
        print(visible(f"  error: {d.error.code}: {d.error.message}"))  # what the summary lacks
    print(f"  next: {visible(next_step(d))}")
