"""``ragwarrant summary --all OUT``: one table of every run of a fan-out (text or JSON).

Registered by ``commands/summary.py`` (its ``--all`` flag); the reading is
``ragwarrant.audit.collect.collect_decisions``. Exits 0 once the table is written, whatever the
runs decided; a missing, partial or unreadable run is a row, never an error. Exits 66 when
``OUT`` cannot be listed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # audit.collect loads the record models (pydantic): imported where used
    from ragwarrant.audit.collect import Collection

__all__ = ["add_arguments", "handle"]

_DETAIL_CHARS = 100


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


def _text(collection: Collection) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in collection.counts().items())
    lines = [f"{len(collection.rows)} runs under {collection.root}: {counts}"]
    lines.append(f"{'run':<12} {'status':<10} {'class':<13} {'exit':>4}  {'contract':<24} detail")
    for r in collection.rows:
        exit_code = "" if r.exit_code is None else str(r.exit_code)
        lines.append(
            f"{r.name:<12} {r.status.value:<10} {r.run_class or '-':<13} {exit_code:>4}  "
            f"{r.contract_id or '-':<24} {r.detail[:_DETAIL_CHARS]}"
        )
    return "\n".join(lines) + "\n"


def handle(args: argparse.Namespace) -> int:
    """Print the table of ``args.outdir`` (``--format``); return 0.

    Raises:
        InputError: ``args.outdir`` cannot be listed (66).
    """
    from ragwarrant.audit.collect import collect_decisions

    collection = collect_decisions(args.outdir, expect=args.expect)
    if args.format == "json":
        sys.stdout.write(json.dumps(collection.to_json(), indent=1) + "\n")
    else:
        sys.stdout.write(_text(collection))
    return 0
