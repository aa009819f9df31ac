"""The ``--help`` of every subcommand: purpose, what it reads and writes, exit codes, an example.

Exit codes are listed from ``exit_codes.ExitCode`` and ``EXIT_CODE_MEANINGS`` (the one home of
their numbers and meanings), never retyped here. Only argparse and the leaf ``exit_codes`` are
imported, so ``--help`` stays fast (issue 13).
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

from ragwarrant.exit_codes import EXIT_CODE_MEANINGS, ExitCode

ALWAYS_POSSIBLE = (ExitCode.USAGE, ExitCode.INTERNAL)
"""Codes every command can return: a wrong command line (64) and a bug (70)."""

RUN_EXIT_CODES = tuple(c for c in ExitCode if c is not ExitCode.VERIFY_MISMATCH)
"""The codes ``ragwarrant run`` can return: every code but ``verify``'s mismatch."""

_WIDTH = 79


def exit_code_lines(codes: tuple[ExitCode, ...], success: str = "") -> list[str]:
    """Return one ``  CODE  NAME  meaning`` line per code in ``codes`` (and ``ALWAYS_POSSIBLE``).

    Sorted by number, each code once; 70 names the self-test only when ``codes`` lists it (the
    commands that run the self-test). ``success``: what exit 0 means for a command that decides
    nothing (shown as ``OK``); empty for ``run``'s decision codes (0 is PROMOTE).
    """
    chosen = sorted(set(codes) | set(ALWAYS_POSSIBLE))
    meanings = dict(EXIT_CODE_MEANINGS)
    if ExitCode.INTERNAL not in codes:  # a command that runs no self-test: 70 is only a bug
        meanings[ExitCode.INTERNAL] = "internal error (a bug)"
    rows = [
        ("OK", success) if c is ExitCode.PROMOTE and success else (c.name, meanings[c])
        for c in chosen
    ]
    width = max(len(name) for name, _ in rows)
    lines = []
    for code, (name, text) in zip(chosen, rows, strict=True):
        prefix = f"  {int(code):>3}  {name:<{width}}  "
        lines.append(
            textwrap.fill(text, _WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix))
        )
    return lines


class CommandHelp(NamedTuple):
    """What a subcommand's ``--help`` says (a NamedTuple: ``dataclasses`` costs ``--help`` 0.1 s).

    Attributes:
        purpose: one line, also shown in the parent command's list.
        reads: what the command reads (files, directories, environment).
        writes: what it writes (files, stdout).
        codes: the exit codes it can return besides ``ALWAYS_POSSIBLE``.
        success: what exit 0 means, for a command that decides nothing (default: PROMOTE).
        examples: command lines, one per entry.
        notes: further paragraphs (optional).
        code_note: a line after the exit codes (optional), e.g. how an option changes them.
    """

    purpose: str
    reads: str
    writes: str
    codes: tuple[ExitCode, ...]
    examples: tuple[str, ...]
    success: str = ""
    notes: tuple[str, ...] = ()
    code_note: str = ""

    def description(self) -> str:
        """Return the text shown above the options."""
        paragraphs = [self.purpose, f"reads: {self.reads}", f"writes: {self.writes}", *self.notes]
        return "\n\n".join(textwrap.fill(p, _WIDTH) for p in paragraphs)

    def epilog(self) -> str:
        """Return the text shown below the options: the exit codes, then the examples."""
        lines = ["exit codes:", *exit_code_lines(self.codes, self.success)]
        if self.code_note:
            lines.append(
                textwrap.fill(self.code_note, _WIDTH, initial_indent="  ", subsequent_indent="  ")
            )
        lines += ["", "example:" if len(self.examples) == 1 else "examples:"]
        lines += [f"  {e}" for e in self.examples]
        return "\n".join(lines)


def add_command(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    doc: CommandHelp,
    handler: Callable[[argparse.Namespace], int] | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """Add subcommand ``name`` whose ``--help`` is ``doc`` and which runs ``handler``; return its
    parser. ``kwargs`` go to ``add_parser`` (e.g. ``aliases``)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=doc.purpose,
        description=doc.description(),
        epilog=doc.epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def add_verbs(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    purpose: str,
    description: str,
) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """Add command group ``name`` (``ragwarrant NAME VERB``); return the subparsers of its verbs.

    ``description`` is the group's ``--help`` text, followed by where each verb's help is.
    """
    group = subparsers.add_parser(
        name, help=purpose, description=f"{description}; see 'ragwarrant {name} VERB --help'."
    )
    return group.add_subparsers(dest=f"{name}_command", required=True, metavar="VERB")


def top_level_epilog() -> str:
    """Return ``ragwarrant --help``'s closing text: every exit code, then first commands."""
    lines = ["exit codes (each command's --help lists those it can return):"]
    lines += exit_code_lines(tuple(ExitCode))
    lines += [
        "",
        "examples:",
        "  ragwarrant run --input examples/ragtruth-generators --output out/demo",
        "  ragwarrant summary out/demo",
        "  ragwarrant run --help",
    ]
    return "\n".join(lines)
