"""The contract's corroboration block: defaults, validation, and its place on ReleaseContract."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragwarrant.contract import Corroboration, ReleaseContract
from tests.conftest import base_contract


def test_defaults():
    """Only the judge's groundedness metric is required; the rest has documented defaults."""
    c = Corroboration(groundedness_metric="faithfulness")
    assert (c.lexical_gate, c.calibration, c.supported_threshold) == ("hybrid", "lexical-v1", 0.5)
    assert c.task_type is None
    assert (c.max_disagreement_rate, c.max_abstention_rate, c.sample_metrics) == (0.2, 0.1, [])


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"sample_metrics": ["s1"]}, "at least two"),
        ({"sample_metrics": ["s1", "s1"]}, "distinct"),
        ({"lexical_gate": "bleu"}, "lexical_gate"),
        ({"calibration": "lexical-v9"}, "calibration"),
        ({"calibration": "lexical-v2", "task_type": "chat"}, "task_type"),
        ({"task_type": "summary"}, "needs a per-task calibration"),
        ({"max_disagreement_rate": 1.5}, "max_disagreement_rate"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_invalid_blocks_are_rejected(extra, needle):
    """Bad sample lists, unknown gates or calibrations, bad rates and unknown fields fail."""
    with pytest.raises(ValidationError) as exc:
        Corroboration.model_validate({"groundedness_metric": "f", **extra})
    assert needle in str(exc.value)


def test_release_contract_carries_it():
    """The block is optional on the release contract and parsed when present."""
    assert ReleaseContract.model_validate(base_contract()).corroboration is None
    c = ReleaseContract.model_validate(
        {**base_contract(), "corroboration": {"groundedness_metric": "faith"}}
    )
    assert c.corroboration is not None and c.corroboration.groundedness_metric == "faith"


@pytest.mark.parametrize("task", ["qa", "summary", "data2txt", "unknown"])
def test_per_task_calibration_and_task_type_are_accepted(task):
    """lexical-v2 takes every declared task type; unknown is allowed with lexical-v1 too."""
    c = Corroboration.model_validate(
        {"groundedness_metric": "f", "calibration": "lexical-v2", "task_type": task}
    )
    assert (c.calibration, c.task_type) == ("lexical-v2", task)
    pooled = Corroboration.model_validate({"groundedness_metric": "f", "task_type": "unknown"})
    assert pooled.task_type == "unknown"


def test_task_type_error_is_located_in_the_contract():
    """A declared task type with the pooled calibration names the corroboration block."""
    with pytest.raises(ValidationError) as exc:
        ReleaseContract.model_validate(
            {**base_contract(), "corroboration": {"groundedness_metric": "f", "task_type": "qa"}}
        )
    (err,) = exc.value.errors()
    assert err["loc"][0] == "corroboration" and "lexical-v2" in err["msg"]
