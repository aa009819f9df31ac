"""The stale-look check at append: refused only when the recount changes how the run decides."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragwarrant.audit.ledger import append_entry
from ragwarrant.audit.looks import LookEntries, RunLook, look_evidence_path, read_looks
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, OutputError
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
    read = LookEntries(Path("ledger.jsonl"), "study", "1", (), None, 0)
    try:  # another run's entry (no look of its own) was appended since the read
        RunLook(decided, query, read).check([{"seq": 1}])  # type: ignore[arg-type]
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


def _kept_look(tmp_path: Path, fingerprint: bytes) -> tuple[Path, Path]:
    """A ledger holding one look whose entry records ``fingerprint``'s sha256; the kept path."""
    ledger = tmp_path / "ledger.jsonl"
    look = {"number": 1, "evidence_sha256": sha256_bytes(fingerprint)}
    append_entry(ledger, {"run_id": "r1", "contract": {"id": "c", "version": "1"}, "look": look})
    kept = look_evidence_path(ledger, "r1")
    kept.parent.mkdir()
    return ledger, kept


def test_a_kept_fingerprint_is_read_back_and_a_missing_or_altered_one_is_none(tmp_path: Path):
    """The kept bytes come back when they hash to the entry's sha256; else None."""
    ledger, kept = _kept_look(tmp_path, b'{"digests": {}}')
    assert read_looks(ledger, "c", "1").earlier()[0][1] is None  # missing
    kept.write_bytes(b'{"digests": {}}')
    assert read_looks(ledger, "c", "1").earlier()[0][1] == b'{"digests": {}}'
    kept.write_bytes(b'{"digests": {"ids": ""}}')
    assert read_looks(ledger, "c", "1").earlier()[0][1] is None  # altered


def test_a_ledger_through_a_symlink_keeps_its_fingerprints_beside_the_real_file(tmp_path: Path):
    """Entries go through a symlinked ``--ledger`` to its target, and so do the fingerprints:
    a look read by the real path finds one kept through the link (and the reverse)."""
    (tmp_path / "vol").mkdir()
    real, link = tmp_path / "vol" / "ledger.jsonl", tmp_path / "ledger-link.jsonl"
    link.symlink_to(real)  # dangling until the first entry is appended through it
    assert look_evidence_path(link, "r1") == look_evidence_path(real, "r1")
    assert look_evidence_path(link, "r1").parent == real.resolve().parent / "ledger.jsonl.looks"
    _, kept = _kept_look(tmp_path / "vol", b"{}")
    kept.write_bytes(b"{}")
    assert read_looks(link, "c", "1").earlier()[0][1] == b"{}"


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_kept_fingerprint_that_is_not_a_regular_file_is_a_typed_error(tmp_path: Path, kind):
    """A FIFO (never waited on) or a directory in a fingerprint's place is ``ledger-unreadable``
    naming the file, raised by the look read that needs it."""
    ledger, kept = _kept_look(tmp_path, b"{}")
    os.mkfifo(kept) if kind == "fifo" else kept.mkdir()
    looks = read_looks(ledger, "c", "1")
    assert isinstance(looks, LookEntries) and looks.others() == []
    with pytest.raises(InputError) as err:
        looks.earlier()
    assert err.value.code == "ledger-unreadable"
    named = f"evidence fingerprint ledger.jsonl.looks/{kept.name} kept next to the ledger: it is "
    assert named in err.value.message
