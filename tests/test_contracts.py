"""contracts/ stays in step with the code: schemas regenerate identically, exit codes match."""

from __future__ import annotations

import re

from ragwarrant.commands.schemas import render_schemas
from ragwarrant.exit_codes import ExitCode
from tests.conftest import REPO


def test_committed_schemas_match_models():
    """Every JSON Schema regenerated from the pydantic models equals the committed bytes."""
    for name, data in render_schemas().items():
        committed = (REPO / "contracts" / name).read_bytes()
        assert committed == data, f"contracts/{name} drifted from the models: run `make schemas`"


def test_exit_code_table_matches_enum():
    """contracts/exit-codes.md lists exactly the codes of ExitCode."""
    text = (REPO / "contracts" / "exit-codes.md").read_text()
    codes = {int(m) for m in re.findall(r"^\| (\d+) \|", text, flags=re.M)}
    assert codes == {int(c) for c in ExitCode}


def test_readme_lists_exit_codes():
    """README carries the same exit-code table."""
    text = (REPO / "README.md").read_text()
    for code in ExitCode:
        assert re.search(rf"\| {int(code)} \|", text), f"README lacks exit code {int(code)}"
