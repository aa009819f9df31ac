"""``ragwarrant selftest``: run the planted cases the engine must catch; exit 0 pass, 70 fail.

``run`` runs the same self-test before deciding anything; this command shows every case.
"""

from __future__ import annotations

import argparse

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.exit_codes import ExitCode

SELFTEST_HELP = CommandHelp(
    purpose="run the planted cases the engine must catch",
    reads="nothing: the planted cases are built in memory (every 'run' runs them first)",
    writes="stdout only: one line per planted case (gate or leg checked, expected and found "
    "class) and the total time",
    codes=(ExitCode.PROMOTE, ExitCode.INTERNAL),
    success="every planted case was caught",
    code_note=f"{int(ExitCode.INTERNAL)}: a case was missed; 'run' then exits the same way "
    "(class ERROR, selftest-failed).",
    examples=("ragwarrant selftest",),
)
"""``ragwarrant selftest --help``."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``selftest`` subcommand."""
    add_command(subparsers, "selftest", SELFTEST_HELP, handle)


def handle(args: argparse.Namespace) -> int:
    """Print one line per planted case (status, name, expected and found class, legs checked,
    time) with its mismatches, and a total line; return 0 when all pass, else 70."""
    from ragwarrant.selftest import run_selftest

    report = run_selftest()
    for c in report.cases:
        status = "pass" if c.passed else "FAIL"
        print(
            f"{status}  {c.name:<38} expected {c.expected_class:<12} found {c.actual_class:<12} "
            f"{c.legs} legs  {c.seconds * 1000:6.1f} ms"
        )
        for m in c.mismatches:
            print(f"      {m}")
    verdict = "passed" if report.passed else f"FAILED ({len(report.failed)} cases)"
    print(f"self-test {verdict}: {len(report.cases)} planted cases in {report.seconds:.3f} s")
    return 0 if report.passed else int(ExitCode.INTERNAL)
