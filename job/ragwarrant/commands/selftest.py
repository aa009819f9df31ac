"""``ragwarrant selftest``: run the planted cases the engine must catch; exit 0 pass, 70 fail.

``run`` runs the same self-test before deciding anything; this command shows every case.
"""

from __future__ import annotations

import argparse

from ragwarrant.exit_codes import ExitCode

__all__ = ["handle", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``selftest`` subcommand."""
    p = subparsers.add_parser(
        "selftest", help="run the planted cases the engine must catch (exit 0 pass, 70 fail)"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Print one line per planted case and the total time; return 0 when all pass, else 70."""
    from ragwarrant.selftest import format_report, run_selftest

    report = run_selftest()
    print(format_report(report))
    return 0 if report.passed else int(ExitCode.INTERNAL)
