"""--exit-mode: status exits 0 for every decision and keeps the error codes."""

from __future__ import annotations

import pytest

from ragwarrant.exit_codes import ExitCode
from ragwarrant.exit_modes import ExitMode, process_exit_code


@pytest.mark.parametrize("code", [0, 10, 11, 12])
def test_status_mode_makes_every_decision_exit_zero(code: int) -> None:
    """PROMOTE, REJECT, INCONCLUSIVE and BLOCK exit 0 in status mode, their own code otherwise."""
    assert process_exit_code(code, ExitMode.STATUS) == 0
    assert process_exit_code(code, ExitMode.CLASS) == code


@pytest.mark.parametrize("code", [c.value for c in ExitCode if c.value >= 64])
def test_errors_keep_their_codes_in_every_mode(code: int) -> None:
    """An error is never turned into success."""
    assert process_exit_code(code, ExitMode.STATUS) == code
    assert process_exit_code(code, ExitMode.CLASS) == code
