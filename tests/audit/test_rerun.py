"""A retry's reuse of a committed run: the ledger entry a kill lost, and a look gone stale."""

from __future__ import annotations

import orjson
import pytest

from ragwarrant.audit.ledger import read_entries
from ragwarrant.audit.rerun import record_reused
from ragwarrant.errors import OutputError
from ragwarrant.outputs import DECISION_FILE, Decision
from ragwarrant.pipeline import run_job


def test_a_reused_run_appends_its_lost_entry_unless_a_later_look_made_it_stale(
    make_input, tmp_path
):
    """The entry a kill lost is appended to a ledger without later looks of its contract; a
    ledger holding a look of the same contract version the run did not count refuses it
    (``ledger-look-stale``) and is left unchanged."""
    run_job(make_input(), tmp_path / "x", ledger=tmp_path / "lost.jsonl")
    run_job(make_input(), tmp_path / "y", ledger=tmp_path / "other.jsonl")
    decision = Decision.model_validate_json((tmp_path / "x" / DECISION_FILE).read_bytes())
    assert decision.look is not None and decision.look.earlier_run_ids == []

    fresh = tmp_path / "fresh.jsonl"
    assert record_reused(decision, tmp_path / "x", fresh, None) is True
    assert [e["run_id"] for e in read_entries(fresh)] == [decision.run_id]
    assert record_reused(decision, tmp_path / "x", fresh, None) is False  # already there

    other = tmp_path / "other.jsonl"
    before = other.read_bytes()
    with pytest.raises(OutputError) as info:
        record_reused(decision, tmp_path / "x", other, None)
    assert info.value.code == "ledger-look-stale"
    assert other.read_bytes() == before
    assert orjson.loads(before.splitlines()[0])["run_id"] != decision.run_id
