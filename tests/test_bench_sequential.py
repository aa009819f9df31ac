"""The repeated-looks validity study runs (tiny size) and its plans' levels stay within alpha."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "bench" / "validity_sequential.py"


def _module():
    spec = importlib.util.spec_from_file_location("validity_sequential", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("rule", ["obrien_fleming", "pocock", "open"])
@pytest.mark.parametrize("looks", [2, 3, 5])
def test_study_levels_sum_to_at_most_alpha(rule, looks):
    """Every new rule's per-look levels sum to <= alpha; today's rule spends alpha per look."""
    mod = _module()
    assert sum(mod.levels(rule, looks, 400)) <= mod.ALPHA + 1e-12
    assert mod.levels("today", looks, 400) == [mod.ALPHA] * looks


def test_study_runs_and_writes_between_its_markers(tmp_path):
    """A 20-replicate run prints every (data, looks, rule) row and writes only its own block."""
    doc = tmp_path / "validity.md"
    doc.write_text("<!-- validity:begin -->\nkept\n<!-- validity:end -->\n")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--replicates", "20", "--write", str(doc)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("| obrien_fleming |") == 6
    text = doc.read_text()
    assert "kept" in text and text.count("<!-- sequential:begin -->") == 1
    assert "| continuous (N = 200) | 1 | fixed-n |" in text


@pytest.mark.parametrize("looks", [2, 3, 5])
def test_retries_with_a_new_note_are_counted_as_looks(looks):
    """Retries that change only the candidate's note get the plan's levels under one version,
    and under a new version each time only the first look may PROMOTE (issue 33: each was a
    fresh look 1 at full alpha)."""
    mod = _module()
    assert mod.levels("note+obrien_fleming", looks, 400) == mod.levels("obrien_fleming", looks, 400)
    assert mod.levels("note+new-version", looks, 400) == [mod.ALPHA] + [0.0] * (looks - 1)
