"""bench/fuzz.py, briefly: mutated real exports never crash the loader or slip a defect through.

The long run (10,000 inputs, ``docs/fuzz.md``) is a benchmark, not a test.
"""

from __future__ import annotations

import importlib.util
import sys

from tests.conftest import REPO


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("fuzz", REPO / "bench" / "fuzz.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz"] = module
    spec.loader.exec_module(module)
    return module


def test_two_hundred_mutated_inputs_neither_crash_nor_slip_through() -> None:
    """200 seeded mutations: every one is read or blocked; none crashes or is accepted defective."""
    fuzz = _fuzz_module()
    found: list[str] = []
    tallies = fuzz.fuzz(200, seed=11, log=found.append)
    assert sum(t.inputs for t in tallies.values()) == 200
    assert found == []
    assert sum(t.blocked for t in tallies.values()) > 0  # the mutations do reach the boundary


def test_fuzz_counts_a_crash(monkeypatch) -> None:
    """A loader that raises something other than EvidenceError is counted as a crash."""
    fuzz = _fuzz_module()

    def boom(*args, **kwargs):
        raise KeyError("x")

    monkeypatch.setattr(fuzz, "load_source", boom)
    tallies = fuzz.fuzz(5, seed=0, log=lambda _: None)
    assert sum(t.crash for t in tallies.values()) == 5
