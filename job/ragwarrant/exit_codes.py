"""The published exit-code table (contracts/exit-codes.md); a leaf module everyone may import.

Decision classes map to 0/10/11/12; errors follow BSD sysexits(3).
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from types import MappingProxyType


class DecisionClass(StrEnum):
    """The class of a run or of one candidate."""

    PROMOTE = "PROMOTE"
    REJECT = "REJECT"
    INCONCLUSIVE = "INCONCLUSIVE"
    BLOCK = "BLOCK"
    ERROR = "ERROR"


class ExitCode(IntEnum):
    """Process exit codes; a published contract, never renumbered."""

    PROMOTE = 0
    REJECT = 10
    INCONCLUSIVE = 11
    BLOCK = 12
    USAGE = 64  # EX_USAGE: bad command line
    NO_INPUT = 66  # EX_NOINPUT: input directory missing or unreadable
    VERIFY_MISMATCH = 65  # EX_DATAERR: `verify` / `ledger verify` found a mismatch
    INTERNAL = 70  # EX_SOFTWARE: internal error, or the self-test failed
    CANT_CREATE = 73  # EX_CANTCREAT: output directory not writable
    CONFIG = 78  # EX_CONFIG: release contract invalid


EXIT_CODE_MEANINGS = MappingProxyType(
    {
        ExitCode.PROMOTE: "a candidate may replace the baseline",
        ExitCode.REJECT: "the evidence goes against every tested candidate",
        ExitCode.INCONCLUSIVE: "the evidence does not settle it (or is below the promotion class)",
        ExitCode.BLOCK: "a hard gate failed",
        ExitCode.USAGE: "the command line is wrong",
        ExitCode.VERIFY_MISMATCH: "a file, field or ledger line differs from the record",
        ExitCode.NO_INPUT: "an input (directory or file) is missing or unreadable",
        ExitCode.INTERNAL: "internal error, or the self-test failed",
        ExitCode.CANT_CREATE: "the output directory cannot be created or written",
        ExitCode.CONFIG: "the release contract is missing or invalid",
    }
)
"""One line per exit code, as ``--help`` lists them (the table: contracts/exit-codes.md)."""

_CLASS_TO_CODE: dict[DecisionClass, ExitCode] = {
    c: ExitCode[c.name] for c in DecisionClass if c is not DecisionClass.ERROR
}


def exit_code_for_class(decision_class: DecisionClass) -> ExitCode:
    """Return the exit code of a decision class.

    Raises:
        KeyError: for ``ERROR``, whose code depends on the error (see ``errors``).
    """
    return _CLASS_TO_CODE[decision_class]
