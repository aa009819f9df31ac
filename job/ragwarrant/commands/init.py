"""``ragwarrant init --from FILE [FILE...] --output contract.yaml``: a contract draft."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragwarrant.errors import EvidenceError, InputError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``init`` subcommand."""
    p = subparsers.add_parser(
        "init",
        help="draft a release contract from your evaluation exports (margins left to declare)",
    )
    p.add_argument("--from", dest="sources", type=Path, nargs="+", required=True, metavar="FILE")
    p.add_argument("--output", type=Path, default=Path("contract.yaml"))
    p.add_argument("--id", dest="contract_id", default="my-release", help="the contract id")
    p.add_argument("--force", action="store_true", help="overwrite --output if it exists")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Describe each export, write the draft, print what was seen; return 0.

    Paths in the draft are relative to the directory of ``--output`` (the input directory).

    Raises:
        InputError: an export is missing, unreadable, of an unknown suffix, or not of its format.
        UsageError: ``--output`` exists and ``--force`` is not given.
    """
    # imported here: reading exports needs pyarrow and the contract models, --help does not
    from ragwarrant.scaffold import describe_export, draft_contract, write_contract

    base = args.output.resolve().parent
    exports = []
    for path in args.sources:
        if not path.is_file():
            raise InputError("init-missing", f"{path} is not a readable file")
        resolved = path.resolve()
        display = str(resolved.relative_to(base)) if resolved.is_relative_to(base) else str(path)
        try:
            exports.append(describe_export(resolved, display))
        except EvidenceError as exc:
            raise InputError(exc.code, exc.message, hint=exc.hint) from exc
    write_contract(draft_contract(exports, args.contract_id), args.output, force=args.force)
    for e in exports:
        metrics = ", ".join(m.metric_id for m in e.metrics) or "(listed by the adapter)"
        print(f"{e.path}: {e.adapter} ({e.detected}); metrics: {metrics}")
    print(
        f"wrote {args.output}: declare each margin_abs, the evidence class and every line marked "
        "CHECK, then 'ragwarrant run'"
    )
    return 0
