"""``ragwarrant ledger verify FILE [--public-key PUB]`` and ``ragwarrant ledger show FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command, add_verbs
from ragwarrant.exit_codes import ExitCode

# The ledger and key functions are imported by the handlers that use them (a light ``--help``).

LEDGER_VERIFY_HELP = CommandHelp(
    purpose="check the hash chain (and, with --public-key, each entry's signature)",
    reads="FILE (the ledger, JSON Lines); with --public-key, the Ed25519 public key (PEM)",
    writes="stdout only: 'ledger intact: ...' or 'LEDGER BROKEN: first broken entry at ...'",
    codes=(ExitCode.PROMOTE, ExitCode.VERIFY_MISMATCH, ExitCode.NO_INPUT),
    success="every entry hashes to its entry_hash and links to the previous one (and, with "
    "--public-key, carries a signature by that key)",
    code_note=f"{int(ExitCode.NO_INPUT)}: the file or the key cannot be read, or the key is not "
    "Ed25519.",
    notes=(
        "A line torn by a run killed while appending is quarantined by the next append (its "
        "bytes kept in a marker entry) and reported as a note. Without --public-key the chain "
        "proves integrity against accidental edits only: anyone who can write the file can "
        "rewrite it and recompute every hash.",
    ),
    examples=(
        "ragwarrant ledger verify /ledger/ledger.jsonl",
        "ragwarrant ledger verify /ledger/ledger.jsonl --public-key signing.pub.pem",
    ),
)
"""``ragwarrant ledger verify --help``."""

LEDGER_SHOW_HELP = CommandHelp(
    purpose="history per contract and policy: classes and abstention rate by slice over time",
    reads="FILE (the ledger, JSON Lines)",
    writes="stdout only: decision classes over time per contract and policy, the abstention "
    "rate by slice over time, EARLY DRIFT flags",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT),
    success="the history was printed",
    examples=("ragwarrant ledger show /ledger/ledger.jsonl --contract ragtruth-generators",),
)
"""``ragwarrant ledger show --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``ledger verify`` and ``ledger show`` to the CLI."""
    verbs = add_verbs(
        subparsers,
        "ledger",
        "check or show the evidence ledger",
        "Check (verify) or show (show) the evidence ledger that 'run --ledger' appends to",
    )
    verify = add_command(verbs, "verify", LEDGER_VERIFY_HELP, run_ledger_verify)
    verify.add_argument("file", type=Path, metavar="FILE")
    verify.add_argument(
        "--public-key",
        type=Path,
        metavar="FILE",
        help="Ed25519 public key (PEM) every entry must be signed with (runs with --signing-key)",
    )
    show = add_command(verbs, "show", LEDGER_SHOW_HELP, run_ledger_show)
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument("--contract", metavar="ID", help="only this contract id")
    show.add_argument("--policy", metavar="ID", help="only this policy id")
    show.add_argument(
        "--drift-window",
        type=int,
        default=3,
        metavar="N",
        help="flag a slice whose abstention rate rose in each of the last N runs (default 3)",
    )
    show.add_argument(
        "--drift-min-rise",
        type=float,
        default=0.02,
        metavar="X",
        help="smallest total rise (fraction) over the window worth a flag (default 0.02)",
    )


def run_ledger_verify(args: argparse.Namespace) -> int:
    """Check the chain; print the outcome; return 0 or ``ExitCode.VERIFY_MISMATCH`` (65).

    Raises:
        InputError: the file or the public key cannot be read, or the key is not Ed25519.
    """
    from ragwarrant.audit.attestation import load_public_key
    from ragwarrant.audit.ledger import Ledger, is_marker

    key = load_public_key(args.public_key) if args.public_key is not None else None
    ledger = Ledger.read(args.file)
    problems = ledger.problems(key)
    if problems:
        sys.stdout.write(f"LEDGER BROKEN: first broken entry at {problems[0]}\n")
        sys.stdout.writelines(f"  also  {p}\n" for p in problems[1:])
        return int(ExitCode.VERIFY_MISMATCH)
    entries = ledger.entries()
    runs = sum(1 for e in entries if not is_marker(e))
    last = entries[-1]["entry_hash"] if entries else "(empty)"
    sys.stdout.write(f"ledger intact: {runs} entries; last entry_hash {last}\n")
    sys.stdout.writelines(f"  note: {q}\n" for q in ledger.quarantined())
    if key is None:
        sys.stdout.write(
            "  note: no --public-key given; the hash chain proves integrity against "
            "accidental edits only (anyone who can write the file can rewrite it and "
            "recompute every hash); entries from the end can be deleted unseen unless the "
            "last entry_hash is kept elsewhere\n"
        )
    else:
        sys.stdout.write("  every entry is signed by the given public key\n")
    return 0


def run_ledger_show(args: argparse.Namespace) -> int:
    """Print the history; return 0.

    Raises:
        InputError: the file cannot be read.
    """
    from ragwarrant.audit.ledger_history import show_history

    sys.stdout.write(
        show_history(
            args.file,
            contract=args.contract,
            policy=args.policy,
            window=args.drift_window,
            min_rise=args.drift_min_rise,
        )
    )
    return 0
