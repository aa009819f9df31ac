"""The Python API: ragwarrant.decide gives the CLI's decision; load_contract validates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ragwarrant
from ragwarrant.cli import main
from ragwarrant.errors import ContractError
from ragwarrant.outputs import Decision
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "ragtruth-generators"
_VOLATILE = {"run_id", "started_at", "finished_at"}


def _comparable(decision: Decision) -> dict[str, Any]:
    return decision.model_dump(mode="json", by_alias=True, exclude=_VOLATILE)


def test_decide_returns_the_cli_decision(tmp_path: Path) -> None:
    """decide() on the example equals decision.json written by `ragwarrant run` (but run times)."""
    code = main(["run", "--input", str(EXAMPLE), "--output", str(tmp_path / "cli")])
    cli = Decision.model_validate_json((tmp_path / "cli" / "decision.json").read_bytes())
    api = ragwarrant.decide(EXAMPLE, tmp_path / "api")
    assert code == api.exit_code == 0
    assert _comparable(api) == _comparable(cli)
    on_disk = Decision.model_validate_json((tmp_path / "api" / "decision.json").read_bytes())
    assert on_disk == api
    assert (tmp_path / "api" / "manifest.json").is_file()


def test_decide_without_output_dir_keeps_only_the_decision(tmp_path: Path) -> None:
    """With no output directory the outputs go to a removed temporary directory."""
    events: list[str] = []
    decision = ragwarrant.decide(EXAMPLE, on_progress=lambda event, **kw: events.append(event))
    assert decision.run_class.value == "PROMOTE"
    assert (events[0], events[-1]) == ("source_read", "run_finished")
    assert {"inputs_read", "candidate_evaluated"} <= set(events)


def test_decide_raises_the_typed_error_and_records_it(tmp_path: Path) -> None:
    """A bad contract raises ContractError (exit 78) and leaves an ERROR record, like the CLI."""
    bad = tmp_path / "in"
    bad.mkdir()
    (bad / "contract.yaml").write_text("schema_version: '1'\nid: x\n")
    with pytest.raises(ContractError) as err:
        ragwarrant.decide(bad, tmp_path / "out")
    assert err.value.exit_code == 78
    record = Decision.model_validate_json((tmp_path / "out" / "decision.json").read_bytes())
    assert record.run_class.value == "ERROR" and record.exit_code == 78


def test_load_contract_returns_the_model() -> None:
    """load_contract parses and validates the example's contract."""
    contract = ragwarrant.load_contract(EXAMPLE / "contract.yaml")
    assert (contract.id, contract.baseline.policy_id) == ("ragtruth-generators", "gpt-4-0613")


def test_unknown_attribute_is_an_attribute_error() -> None:
    """The package's lazy attributes do not hide typos."""
    with pytest.raises(AttributeError):
        ragwarrant.decidee  # type: ignore[attr-defined]  # noqa: B018
