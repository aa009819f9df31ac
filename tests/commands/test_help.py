"""Every subcommand's --help: purpose, what it reads and writes, its exit codes, an example."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from ragwarrant.cli import build_parser
from ragwarrant.commands._help import ALWAYS_POSSIBLE, RUN_EXIT_CODES
from ragwarrant.exit_codes import EXIT_CODE_MEANINGS, ExitCode


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Yield (command path, parser) for every subcommand that runs a handler."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs and path:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*path, name))


LEAVES = dict(_leaves(build_parser()))


def _help(*path: str) -> str:
    return LEAVES[path].format_help()


def _listed_codes(text: str) -> dict[int, str]:
    """Code → name as the help's exit-code table lists them."""
    table = text.split("exit codes:", 1)[1].split("\n\n", 1)[0]
    return {int(c): n for c, n in re.findall(r"^ {2,4}(\d+)  (\w+) ", table, flags=re.M)}


def test_every_command_is_covered():
    """The leaves found are the commands a user can run (none silently skipped)."""
    assert set(LEAVES) == {
        ("run",),
        ("summary",),
        ("verify",),
        ("ledger", "verify"),
        ("ledger", "show"),
        ("selftest",),
        ("schemas",),
        ("k8s", "render"),
        ("k8s", "submit"),
        ("init",),
        ("review", "sample"),
    }


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_help_has_purpose_reads_writes_codes_and_example(path):
    """Each --help states its purpose, what it reads and writes, exit codes and an example."""
    text = _help(*path)
    purpose = text.split("\n\n", 2)[1]
    assert purpose.count("\n") <= 1 and not purpose.startswith(("reads:", "options:"))
    assert "\nreads: " in text and "\nwrites: " in text
    codes = _listed_codes(text)
    for code in ALWAYS_POSSIBLE:
        assert codes[int(code)] == code.name
    for code, name in codes.items():
        assert name == ("OK" if code == 0 and name == "OK" else ExitCode(code).name)
    example = text.split("\nexample", 1)[1]
    assert f"\n  ragwarrant {' '.join(path)}" in example
    for line in example.splitlines()[1:]:  # every example is a command line the parser accepts
        argv = shlex.split(line.split("|", 1)[0])
        assert argv[0] == "ragwarrant"
        build_parser().parse_args(argv[1:])


def test_run_help_lists_every_code_it_can_return_from_the_enum():
    """``run --help`` lists every ExitCode but verify's mismatch, with the enum's meaning."""
    text = _help("run")
    assert _listed_codes(text) == {int(c): c.name for c in RUN_EXIT_CODES}
    assert set(RUN_EXIT_CODES) == set(ExitCode) - {ExitCode.VERIFY_MISMATCH}
    flat = " ".join(text.split())
    for code in RUN_EXIT_CODES:
        assert f"{int(code)} {code.name} {EXIT_CODE_MEANINGS[code]}" in flat
    assert "--exit-mode status" in flat


def test_summary_and_top_level_help_list_every_code():
    """``summary`` returns a recorded run's code or 65: every code; so does the top level."""
    every = {int(c): c.name for c in ExitCode}
    assert _listed_codes(_help("summary")) == every
    assert _listed_codes(build_parser().format_help().replace("exit codes (", "exit codes:(")) == (
        every
    )


def test_verify_codes():
    """``verify`` and ``ledger verify``: 0, 65 on a mismatch, 66 on an unreadable input."""
    for path in (("verify",), ("ledger", "verify")):
        codes = _listed_codes(_help(*path))
        assert codes == {
            0: "OK",
            64: "USAGE",
            65: "VERIFY_MISMATCH",
            66: "NO_INPUT",
            70: "INTERNAL",
        }


def test_every_exit_code_has_one_meaning():
    """EXIT_CODE_MEANINGS covers ExitCode exactly, one non-empty line each."""
    assert set(EXIT_CODE_MEANINGS) == set(ExitCode)
    assert all(m and "\n" not in m for m in EXIT_CODE_MEANINGS.values())


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_only_commands_that_run_the_selftest_blame_it_for_exit_70(path):
    """70 reads "or the self-test failed" only in the help of a command that runs it."""
    text = " ".join(_help(*path).split("exit codes:", 1)[1].split())
    runs_selftest = path in {("run",), ("selftest",), ("summary",), ("k8s", "submit")}
    assert ("self-test failed" in text) is runs_selftest, path
    assert "70 INTERNAL internal error" in text
