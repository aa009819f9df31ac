"""Reading a run's inputs: digests, parsed configs, unresolved references, unreadable sources."""

from __future__ import annotations

import pytest

from ragwarrant.digests import sha256_file
from ragwarrant.errors import InputError
from ragwarrant.inputs import check_input_dir, config_differences, read_inputs


def test_every_file_read_is_digested_in_reading_order(make_input):
    """The contract, the policy configs and the evidence are hashed, in the order read."""
    root = make_input()
    inputs = read_inputs(root)
    assert [d.path for d in inputs.digests] == [
        "contract.yaml",
        "policies/base.json",
        "policies/cand.json",
        "evidence/results.csv",
    ]
    assert all(d.sha256 == sha256_file(root / d.path) for d in inputs.digests)
    assert inputs.contract_sha256 == sha256_file(root / "contract.yaml")
    assert inputs.configs["cand"] == {"model": "cand", "top_k": 5}
    assert (inputs.unresolved, inputs.unreadable) == ([], [])


def test_missing_files_are_recorded_not_raised(make_input):
    """A missing config and a missing evidence file become unresolved references and checks."""
    root = make_input()
    (root / "policies" / "cand.json").unlink()
    (root / "evidence" / "results.csv").unlink()
    inputs = read_inputs(root)
    assert inputs.unresolved == [
        "policy config policies/cand.json (cand)",
        "evidence evidence/results.csv (results)",
    ]
    assert [c.id for c in inputs.checks if c.status == "fail"] == ["contract-reference"] * 2
    assert "cand" not in inputs.config_sha and inputs.results == []


def test_unreadable_evidence_is_recorded_with_its_error(make_input):
    """Evidence its adapter refuses is kept as (source id, error) and a failed check."""
    root = make_input()
    (root / "evidence" / "results.csv").write_text("nothing,useful\n1,2\n")
    inputs = read_inputs(root)
    assert [source for source, _ in inputs.unreadable] == ["results"]
    failed = next(c for c in inputs.checks if c.id == "evidence-readable:results")
    assert failed.status == "fail" and failed.message.startswith(inputs.unreadable[0][1].code)


def test_config_differences_are_sorted_leaf_paths():
    """Differing leaves are listed by dotted path; lists are shown as JSON text."""
    diffs = config_differences(
        {"model": "a", "retriever": {"top_k": 5, "filters": ["x"]}},
        {"model": "b", "retriever": {"top_k": 5, "filters": ["x", "y"]}, "extra": True},
    )
    assert [(d.path, d.baseline, d.candidate) for d in diffs] == [
        ("extra", None, True),
        ("model", "a", "b"),
        ("retriever.filters", '["x"]', '["x","y"]'),
    ]


def test_missing_input_directory_is_an_input_error(tmp_path):
    """A missing input directory raises input-missing (exit 66) with where to mount it."""
    with pytest.raises(InputError) as err:
        check_input_dir(tmp_path / "nope")
    assert (err.value.code, err.value.hint) == (
        "input-missing",
        "mount the evidence at /in, or pass --input DIR",
    )
