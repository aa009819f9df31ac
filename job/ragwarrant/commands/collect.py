"""``ragwarrant summary --all OUT``: one table of every run of a fan-out (text or JSON).

Registered by ``commands/summary.py`` (its ``--all`` flag); the reading is
``ragwarrant.audit.collect.collect_decisions``. A missing, partial or unreadable run is a row,
never an error; the exit code is the worst row's (``Collection.exit_code``: a fan-out with one
BLOCKed run exits 12). Exits 66 when ``OUT`` cannot be listed. Every cell goes through
``display.visible`` (names through ``display.identifier``); a detail longer than the column is
cut with ``…`` and the count of characters cut (``--json`` has it whole).
"""

from __future__ import annotations

import argparse
import json
import sys

from ragwarrant.display import cut, identifier, visible

_DETAIL_CHARS = 100
_CUT = "… (+{} characters; --json has it whole)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--all``, ``--format`` and ``--expect`` to the ``summary`` parser."""
    parser.add_argument(
        "--all",
        action="store_true",
        help="OUTDIR is a fan-out's output prefix: summarise every subdirectory (one run each) "
        "in one table",
    )
    parser.add_argument(
        "--format", choices=["text", "json"], default="text", help="with --all: table or JSON"
    )
    parser.add_argument(
        "--expect",
        type=int,
        metavar="N",
        help="with --all: the fan-out had indexes 0..N-1; list those without a directory as "
        "missing",
    )


def handle(args: argparse.Namespace) -> int:
    """Print the table of ``args.outdir`` (``--format json`` or ``--json``: JSON); return the
    worst run's exit code (``Collection.exit_code``).

    Raises:
        InputError: ``args.outdir`` cannot be listed (66).
    """
    from ragwarrant.audit.collect import collect_decisions

    collection = collect_decisions(args.outdir, expect=args.expect)
    if args.format == "json" or getattr(args, "json", False):
        sys.stdout.write(json.dumps(collection.to_json(), indent=1) + "\n")
        return collection.exit_code()
    counts = ", ".join(f"{k} {v}" for k, v in collection.counts().items())
    lines = [visible(f"{len(collection.rows)} runs under {collection.root}: {counts}")]
    names = [identifier(r.name) for r in collection.rows]
    contracts = [identifier(r.contract_id) if r.contract_id else "-" for r in collection.rows]
    run_w = max([12, *map(len, names)])  # columns as wide as their longest cell
    con_w = max([24, *map(len, contracts)])
    lines.append(
        f"{'run':<{run_w}} {'status':<10} {'class':<13} {'exit':>4}  {'contract':<{con_w}} detail"
    )
    for r, name, contract in zip(collection.rows, names, contracts, strict=True):
        exit_code = "" if r.exit_code is None else str(r.exit_code)
        lines.append(
            f"{name:<{run_w}} {r.status.value:<10} {r.run_class or '-':<13} "
            f"{exit_code:>4}  {contract:<{con_w}} {cut(visible(r.detail), _DETAIL_CHARS, _CUT)}"
        )
    sys.stdout.write("\n".join(lines) + "\n")
    return collection.exit_code()
