"""``ragwarrant verify OUTDIR [--input DIR] [--public-key FILE]``: check a run's outputs offline.

Exit 0 when everything matches (for an ERROR record: when the replay stops with the recorded
error code); 65 (EX_DATAERR) when anything does not, with the first file and field that differ on
the first line; 66 when a directory or the key cannot be read; 70 on an internal error. No other
code: an input that no longer reads is a mismatch, not the run's own exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.errors import EvidenceError
from ragwarrant.exit_codes import ExitCode

if TYPE_CHECKING:
    from ragwarrant.pipeline import RunOutcome

# The adapters, the contract loader, the engine and the checks are imported by the functions that
# use them, so that ``ragwarrant --help`` and the other commands do not load them.


def read_private_texts(input_dir: Path) -> Iterator[str]:
    """Yield the questions, responses and contexts of the evidence in ``input_dir``.

    Reads each evidence source with its adapter, as the job does; sources that cannot be read
    are skipped (the replay reports them).

    Raises:
        ContractError: the contract is missing or invalid.
    """
    from ragwarrant.adapters import load_source
    from ragwarrant.audit.hygiene import private_texts_from_tables
    from ragwarrant.contract import find_contract, load_contract, resolve_inside
    from ragwarrant.inputs import evidence_digests, is_readable_evidence

    contract = load_contract(find_contract(input_dir))
    tables = []
    for source in contract.evidence:
        path = resolve_inside(input_dir, source.path)
        if not is_readable_evidence(path):
            continue
        try:
            result = load_source(source, path, evidence_digests(path, source.path)[1], contract)
        except (EvidenceError, OSError):
            continue
        if result.texts is not None:
            tables.append(result.texts)
    return private_texts_from_tables(tables)


def replay_with_job(
    input_dir: Path, output_dir: Path, recorded_dir: Path | None = None
) -> RunOutcome:
    """Re-run the job on ``input_dir`` into ``output_dir`` for ``verify --input``.

    No ledger, no signing key and no progress events: the replay writes nowhere else and keeps
    its log lines out of the command's output. A run that recorded a repeated look (``look`` in
    ``recorded_dir``'s decision.json) is replayed at that look's level: without the ledger
    the replay could not count the looks itself.
    """
    from ragwarrant.outputs import DECISION_FILE, Decision
    from ragwarrant.pipeline import run_job

    look = None
    if recorded_dir is not None:
        with suppress(OSError, ValueError):  # verify reports the unreadable decision itself
            look = Decision.model_validate_json((recorded_dir / DECISION_FILE).read_bytes()).look
    return run_job(input_dir, output_dir, on_stage=lambda event, **fields: None, replay_look=look)


VERIFY_HELP = CommandHelp(
    purpose="check an output directory against its manifest, schemas, attestation and inputs",
    reads="OUTDIR (every file and manifest.json); with --input DIR, the run's inputs; with "
    "--public-key, the Ed25519 public key (PEM)",
    writes="stdout only: 'verified: ...' and what was checked, or 'MISMATCH: <file>:<field>: ...' "
    "first; the replay runs in a temporary directory, never in OUTDIR",
    codes=(ExitCode.PROMOTE, ExitCode.VERIFY_MISMATCH, ExitCode.NO_INPUT),
    success="everything matches (for an ERROR record: the replay stops with the same error code)",
    code_note=f"{int(ExitCode.NO_INPUT)}: OUTDIR, --input or the key cannot be read, or the key "
    "is not Ed25519.",
    notes=(
        "Recomputes the sha256 of every output (and, with --input, of every input) against "
        "manifest.json, validates each output against its schema, re-renders report.md from "
        "decision.json, checks decision.intoto.json (and its signature with --public-key), "
        "rescans for publication hygiene (with --input, also for copied evidence text), and with "
        "--input replays the run and compares decision.json and validation_report.json field by "
        "field (a recorded ERROR matches a replay that stops with the same error code).",
    ),
    examples=(
        "ragwarrant verify out/demo",
        "ragwarrant verify out/demo --input examples/ragtruth-generators",
        "ragwarrant verify out/demo --public-key signing.pub.pem",
    ),
)
"""``ragwarrant verify --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``verify`` to the CLI."""
    parser = add_command(subparsers, "verify", VERIFY_HELP, run_verify)
    parser.add_argument("outdir", type=Path, metavar="OUTDIR", help="the run's output directory")
    parser.add_argument(
        "--input",
        type=Path,
        metavar="DIR",
        help="the run's input directory: hash inputs and replay",
    )
    parser.add_argument(
        "--public-key",
        type=Path,
        metavar="FILE",
        help="Ed25519 public key (PEM) the attestation must be signed with",
    )
    parser.add_argument(
        "--no-replay",
        action="store_true",
        help="with --input, hash the inputs but do not replay the decision",
    )


def run_verify(args: argparse.Namespace) -> int:
    """Verify ``args.outdir``; print the outcome; return 0 or ``ExitCode.VERIFY_MISMATCH`` (65).

    Raises:
        InputError: a directory or the public key cannot be read.
    """
    from ragwarrant.audit.verify import UNSIGNED_VERIFY_LIMITS, verify_output_dir

    report = verify_output_dir(
        args.outdir,
        input_dir=args.input,
        public_key=args.public_key,
        replay=None
        if args.no_replay
        else lambda inp, out: replay_with_job(inp, out, recorded_dir=args.outdir),
        private_texts=read_private_texts,
    )
    if not report.ok:
        sys.stdout.write(f"MISMATCH: {report.mismatches[0]}\n")
        sys.stdout.writelines(f"  also    {m}\n" for m in report.mismatches[1:])
        return int(ExitCode.VERIFY_MISMATCH)
    notes = [*report.notes, *(UNSIGNED_VERIFY_LIMITS if args.public_key is None else ())]
    if args.input is None:
        notes.append(
            "no --input given; inputs were not hashed and the decision and validation report "
            "were not replayed"
        )
    sys.stdout.write(f"verified: {args.outdir} matches its manifest\n")
    sys.stdout.writelines(f"  ok  {line}\n" for line in report.checked)
    sys.stdout.writelines(f"  note: {line}\n" for line in notes)
    return 0
