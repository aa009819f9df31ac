"""Tests of the staged commit: stale litter removed, an earlier run kept, the manifest last."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragwarrant.audit import writer
from ragwarrant.audit.ledger import append_entry
from ragwarrant.audit.writer import (
    HISTORY_DIR,
    STAGING_PREFIX,
    LockErrors,
    clean_stale,
    commit_staged,
    held_lock,
    make_staging,
    output_lock,
    write_atomic,
)
from ragwarrant.errors import OutputError
from ragwarrant.mounts import unwritable_hint


def test_clean_stale_removes_staging_and_orphan_temp_files(tmp_path: Path) -> None:
    """A killed run's staging directory and ``.<name>.<random>.tmp`` files are removed."""
    (tmp_path / f"{STAGING_PREFIX}r1").mkdir()
    (tmp_path / f"{STAGING_PREFIX}r1" / "decision.json").write_text("{}")
    (tmp_path / ".decision.json.abc123.tmp").write_text("{")
    (tmp_path / "decision.json").write_text("{}")
    removed = clean_stale(tmp_path)
    assert removed == [".decision.json.abc123.tmp", f"{STAGING_PREFIX}r1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decision.json"]


def test_commit_keeps_the_earlier_run_and_moves_the_manifest_last(tmp_path: Path) -> None:
    """The earlier run goes to history/<id>/ whole; the new files replace it; staging is gone."""
    for name in ("a.json", "manifest.json"):
        (tmp_path / name).write_text(f"old {name}")
    staging = make_staging(tmp_path, "new")
    for name in ("a.json", "manifest.json"):
        (staging / name).write_text(f"new {name}")
    commit_staged(
        staging, tmp_path, ["a.json", "manifest.json"], ("old", ["a.json", "manifest.json"])
    )
    assert (tmp_path / "a.json").read_text() == "new a.json"
    assert (tmp_path / "manifest.json").read_text() == "new manifest.json"
    kept = tmp_path / HISTORY_DIR / "old"
    assert sorted(p.read_text() for p in kept.iterdir()) == ["old a.json", "old manifest.json"]
    assert not staging.exists()


def test_commit_killed_midway_leaves_no_manifest(tmp_path: Path, monkeypatch) -> None:
    """A failure while moving files in leaves no manifest: the directory is not a result."""
    (tmp_path / "manifest.json").write_text("old")
    staging = make_staging(tmp_path, "new")
    (staging / "a.json").write_text("new")
    (staging / "manifest.json").write_text("new")
    calls: list[str] = []
    real = os.replace

    def failing(src, dst):  # the second move fails
        calls.append(str(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OutputError, match="cannot commit"):
        commit_staged(staging, tmp_path, ["a.json", "manifest.json"], ("old", ["manifest.json"]))
    assert not (tmp_path / "manifest.json").exists()
    assert (tmp_path / HISTORY_DIR / "old" / "manifest.json").read_text() == "old"


def test_commit_syncs_every_other_file_in_before_the_manifest_and_once_per_step(
    tmp_path: Path, monkeypatch
) -> None:
    """The output directory is synced after all the other renames, before the manifest's."""
    staging = make_staging(tmp_path, "new")
    names = ["a.json", "b.json", "decision.intoto.json", "manifest.json"]
    for name in names:
        (staging / name).write_text(name)
    events: list[tuple[str, str]] = []
    real_replace, real_fsync = os.replace, os.fsync

    def replace(src, dst):
        events.append(("rename", Path(dst).name))
        real_replace(src, dst)

    def fsync(fd):
        events.append(("sync", Path(os.readlink(f"/proc/self/fd/{fd}")).name))
        real_fsync(fd)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "fsync", fsync)
    commit_staged(staging, tmp_path, names)
    out = tmp_path.name
    assert (
        events
        == [
            ("sync", staging.name),
            ("sync", out),  # the old manifest's removal
            *[("rename", n) for n in names[:-1]],
            ("sync", out),
            ("rename", "manifest.json"),
            ("sync", out),
        ]
    )


def test_a_staged_file_is_synced_but_not_its_directory(tmp_path: Path, monkeypatch) -> None:
    """write_atomic(sync_dir=False) fsyncs the file only; by default the directory too."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "a.json", b"{}", sync_dir=False)
    assert len(synced) == 1 and synced[0].startswith(".a.json.")
    write_atomic(tmp_path / "b.json", b"{}")
    assert len(synced) == 3 and synced[2] == tmp_path.name
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes() == b"{}"


@pytest.mark.parametrize(
    ("lock", "code"),
    [
        (lambda d: output_lock(d).__enter__(), "output-not-writable"),
        (lambda d: append_entry(d / "ledger.jsonl", {"kind": "test"}), "ledger-lock"),
    ],
)
def test_both_run_locks_share_held_lock_and_close_on_a_failed_flock(
    tmp_path: Path, monkeypatch, lock, code: str
) -> None:
    """The output and ledger locks both fail through ``held_lock``, closing the descriptor."""

    def refuse(fd: int, op: int) -> None:
        raise OSError(37, "No locks available")

    monkeypatch.setattr(writer.fcntl, "flock", refuse)
    open_before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OutputError) as info:
        lock(tmp_path)
    assert info.value.code == code
    assert "No locks available" in str(info.value)
    assert len(os.listdir("/proc/self/fd")) == open_before


def test_held_lock_reports_the_open_failure_with_the_given_code(tmp_path: Path) -> None:
    """A missing directory fails the open step with the caller's code, message and hint."""
    errors = LockErrors("o-code", "open {name} in {dir}: {reason}", "o-hint", "l", "l", "l")
    with pytest.raises(OutputError) as info, held_lock(tmp_path / "missing" / "x.lock", errors):
        pass
    assert (info.value.code, info.value.hint) == ("o-code", "o-hint")
    assert f"open x.lock in {tmp_path / 'missing'}: No such file or directory" in str(info.value)


def test_an_unwritable_output_hint_fits_the_case(tmp_path: Path) -> None:
    """An --output the user named is to be made writable; only /out asks for a mounted volume."""
    from ragwarrant.inputs import check_output_dir

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OutputError) as err:
        check_output_dir(blocker / "out", tmp_path / "in")
    assert err.value.code == "output-not-writable" and "/out" not in (err.value.hint or "")
    assert "pass another --output" in (err.value.hint or "")
    with pytest.raises(OutputError) as err:
        make_staging(blocker / "out", "r1")
    assert "pass another --output" in (err.value.hint or "")
    assert unwritable_hint(Path("/out/job-7")).startswith("mount a writable volume at /out")
