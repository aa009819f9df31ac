"""The stale-look check at append: refused only when the recount changes how the run decides."""

from __future__ import annotations

from types import SimpleNamespace

from ragwarrant.audit.looks import _refuse_stale
from ragwarrant.errors import OutputError
from ragwarrant.gates.looks import Look
from ragwarrant.outputs import LookRecord


def _look(number: int = 1, alpha: float = 0.05, confirmatory: bool = True, **kw: object) -> Look:
    record = LookRecord(
        number=number,
        alpha_this_look=alpha,
        alpha_spent=alpha,
        units=200,
        confirmatory=confirmatory,
        reason="look",
        **kw,  # type: ignore[arg-type]
    )
    return Look(record, alpha, None, None)


def _refused(decided: Look, recounted: Look) -> str | None:
    query = SimpleNamespace(
        contract=SimpleNamespace(id="study", version="1"), resolve=lambda _ledger: recounted
    )
    try:
        _refuse_stale(query, decided, None)  # type: ignore[arg-type]
    except OutputError as exc:
        assert exc.code == "ledger-look-stale"
        return exc.message
    return None


def test_a_repeat_of_the_same_look_at_the_same_level_is_not_stale():
    """Recounted as a repeat of look 1 (another run on identical evidence): accepted."""
    assert _refused(_look(), _look(repeat_of="run-a", earlier_run_ids=["run-a"])) is None


def test_a_changed_look_number_is_stale_and_says_so():
    """Recounted as look 2: refused, naming both numbers."""
    message = _refused(_look(), _look(2, confirmatory=False))
    assert message is not None and "decided as look 1; counted now it is look 2," in message


def test_the_same_number_at_another_level_is_stale_without_contradiction():
    """Same number, other level or standing: refused, and the message names the level, never
    "look 1 ... it is look 1"."""
    message = _refused(_look(alpha=0.05), _look(alpha=0.0, confirmatory=False))
    assert message is not None and "it is look 1" not in message
    assert "look 1 is at one-sided level 0 (not confirmatory), not 0.05 (confirmatory)" in message
