"""Tests of the staged commit: stale litter removed, an earlier run kept, the manifest last."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragwarrant.audit.writer import (
    HISTORY_DIR,
    STAGING_PREFIX,
    clean_stale,
    commit_staged,
    make_staging,
)
from ragwarrant.errors import OutputError


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
