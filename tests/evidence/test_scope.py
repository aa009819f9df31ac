"""Scopes and the checks on what the evidence holds beyond them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ragwarrant.contract import ReleaseContract
from ragwarrant.evidence.index import build_index
from ragwarrant.evidence.scope import (
    example_id_checks,
    metric_kind_checks,
    missing_value_checks,
    missing_value_table,
    scopes,
    split_checks,
    undeclared_checks,
)
from tests.conftest import base_contract
from tests.evidence.test_index import evidence_table


def _contract(**changes) -> ReleaseContract:
    c = base_contract()
    c.update(changes)
    return ReleaseContract.model_validate(c)


def _index(split: str | None = None, extra: dict | None = None):
    data = {"base": {"correct": np.ones(4)}, "cand": {"correct": np.array([1.0, np.nan, 1, 1])}}
    data.update(extra or {})
    return build_index(evidence_table(data, split=split))


def test_without_splits_every_example_is_confirmatory():
    """Without declared splits the confirmatory scope is every example, named ``all``."""
    s = scopes(_index(), _contract())
    assert (s.confirmatory.tolist(), s.development, s.confirmatory_name) == (
        [True] * 4,
        None,
        "all",
    )


def test_declared_splits_select_their_examples_and_note_the_rest():
    """The confirmatory scope is its split; examples in no declared role are noted."""
    c = _contract(splits={"development": "dev", "confirmatory": "test"})
    idx = _index(split="other")
    s = scopes(idx, c)
    assert (s.confirmatory_name, s.confirmatory.any(), s.development.any()) == (
        "test",
        False,
        False,
    )
    [check] = split_checks(idx, c)
    assert check.id == "split-unassigned" and check.message.startswith("4 examples")


def test_confirmatory_class_without_split_is_noted():
    """A confirmatory evidence class without a confirmatory split says what it assumes."""
    assert [c.id for c in split_checks(_index(), _contract())] == ["evidence-class-without-split"]
    assert split_checks(_index(), _contract(evidence_class="development")) == []


def test_padded_example_ids_are_warned_about():
    """Example ids with white space at either end are counted in one warning."""
    table = evidence_table({"base": {"correct": np.ones(2)}})
    ids = pa.array([" ex0", "ex1"])
    idx = build_index(
        table.set_column(table.schema.get_field_index("example_id"), "example_id", ids)
    )
    [check] = example_id_checks(idx)
    assert check.message.startswith("1 example ids")
    assert example_id_checks(_index()) == []


def test_example_ids_spelled_two_ways_are_warned_about():
    """Ids equal up to case or NFC/NFD normalisation are counted, naming the first pair."""
    table = evidence_table({"base": {"correct": np.ones(3)}})
    ids = pa.array(["caf\u00e9-1", "CAFE\u0301-1", "ex2"])
    idx = build_index(
        table.set_column(table.schema.get_field_index("example_id"), "example_id", ids)
    )
    [check] = example_id_checks(idx)
    assert check.id == "example-id-spelling"
    assert check.message.startswith("1 example ids differ from another only in letter case")
    assert "'caf\u00e9-1' and 'CAFE\u0301-1'" in check.message


def test_undeclared_policies_and_metrics_are_noted():
    """Rows of an unnamed policy and an untested metric are each noted once."""
    idx = _index(
        extra={"other": {"correct": np.ones(4)}, "base": {"correct": np.ones(4), "x": np.ones(4)}}
    )
    checks = undeclared_checks(idx, _contract())
    assert [(c.id, c.message.split(": ")[-1]) for c in checks] == [
        ("undeclared-policies", "other"),
        ("undeclared-metrics", "x"),
    ]


def test_missing_values_are_counted_per_policy_metric_and_reason():
    """One row and one warning per (policy, metric, reason) with missing values."""
    idx = _index()
    assert missing_value_table(idx) == [
        {"policy_id": "cand", "metric": "correct", "reason": "nan", "count": 1}
    ]
    assert [c.target for c in missing_value_checks(idx)] == ["cand/correct"]
    assert missing_value_table(None) == []


def test_metric_kind_checks_record_the_detected_or_declared_kind():
    """A null metric_kind is detected from the values; a declared one is reported as declared."""
    data = {"base": {"correct": np.array([0.0, 1.0, 1.0])}}
    idx = build_index(evidence_table(data))
    [check] = metric_kind_checks(idx, ReleaseContract.model_validate(base_contract()))
    assert (check.id, check.target, check.status) == ("metric-kind", "correct", "info")
    assert check.message == "'correct' has metric_kind null; detected binary from 3 values"
    c = base_contract()
    c["quality_metrics"][0]["metric_kind"] = "continuous"
    [check] = metric_kind_checks(idx, ReleaseContract.model_validate(c))
    assert check.message == "'correct' is declared continuous"
