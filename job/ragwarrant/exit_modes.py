"""How the process exit code carries a decision: the published codes, or 0 plus the class.

``class`` (the default) exits with the published code of the decision (contracts/exit-codes.md:
0 PROMOTE, 10 REJECT, 11 INCONCLUSIVE, 12 BLOCK) or of the error. ``status`` exits 0 for every
decision and keeps the error codes: for runners that map any non-zero exit to "failed" (Argo
Rollouts' ``job`` metric provider, Airflow tasks, Argo Workflows steps), so that the class is read
from the termination message (first word), ``--summary-json`` or decision.json instead, and
REJECT, BLOCK and INCONCLUSIVE stay distinct from an ERROR. A leaf module everyone may import.
"""

from __future__ import annotations

from enum import StrEnum

from ragwarrant.exit_codes import DecisionClass, exit_code_for_class

#: The exit codes that mean "a decision was made" (any class but ERROR).
DECISION_EXIT_CODES = frozenset(
    exit_code_for_class(c) for c in DecisionClass if c is not DecisionClass.ERROR
)


class ExitMode(StrEnum):
    """The ``--exit-mode`` of ``ragwarrant run``."""

    CLASS = "class"
    STATUS = "status"


def process_exit_code(exit_code: int, mode: ExitMode) -> int:
    """The process exit code for a run that ended with ``exit_code`` under ``mode``.

    Args:
        exit_code: the decision's or the error's published exit code.
        mode: ``class`` returns it unchanged; ``status`` returns 0 for a decision of any class
            and the error code unchanged.
    """
    if mode is ExitMode.STATUS and exit_code in DECISION_EXIT_CODES:
        return 0
    return exit_code
