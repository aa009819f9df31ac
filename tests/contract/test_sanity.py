"""Contract sanity: margins within the scale, directions that agree with the metric's name."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ragwarrant.contract import ReleaseContract, load_contract
from ragwarrant.errors import ContractError
from tests.conftest import base_contract


def _load(tmp_path, contract: dict[str, Any]) -> ReleaseContract:
    import yaml

    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return load_contract(path)


def _refused(tmp_path, contract: dict[str, Any]) -> ContractError:
    with pytest.raises(ContractError) as info:
        _load(tmp_path, contract)
    return info.value


def test_margin_wider_than_scale_refused(tmp_path):
    """``margin_abs: 3`` on a [0, 1] metric is refused with a did-you-mean in metric units."""
    c = base_contract()
    c["quality_metrics"][0]["margin_abs"] = 3
    err = _refused(tmp_path, c)
    assert "quality_metrics[0].margin_abs (line" in err.message
    assert "did you mean margin_abs: 0.03" in err.message


@pytest.mark.parametrize("margin", [0.05, 2])
def test_a_scale_whose_ends_differ_past_g_prints_them_apart(tmp_path, margin):
    """A scale [1e15, 1e15 + 1] is shown with both ends apart (it printed [1e+15, 1e+15])."""
    c = base_contract()
    c["quality_metrics"][0].update(scale=[1e15, 1e15 + 1], margin_abs=margin)
    assert "the scale [1e+15, 1000000000000001.0]" in _refused(tmp_path, c).message


@pytest.mark.parametrize("margin", [0, -0.1])
def test_margin_not_positive_refused(tmp_path, margin):
    """A margin of zero or below is refused."""
    c = base_contract()
    c["quality_metrics"][0]["margin_abs"] = margin
    assert "quality_metrics[0].margin_abs" in _refused(tmp_path, c).message


def test_slice_margin_wider_than_scale_refused(tmp_path):
    """A protected slice's margin wider than its metric's scale is refused."""
    c = base_contract()
    c["protected_slices"] = [{"value": "a", "margin_abs": 5}]
    assert "protected_slices[0].margin_abs" in _refused(tmp_path, c).message


@pytest.mark.parametrize(
    ("section", "metric", "declared", "wanted"),
    [
        ("operational_metrics", "latency_ms", "higher_is_better", "lower_is_better"),
        ("operational_metrics", "cost_usd", "higher_is_better", "lower_is_better"),
        ("quality_metrics", "hallucination_rate", "higher_is_better", "lower_is_better"),
        ("quality_metrics", "toxicity", "higher_is_better", "lower_is_better"),
        ("quality_metrics", "errorRate", "higher_is_better", "lower_is_better"),
        ("quality_metrics", "faithfulness", "lower_is_better", "higher_is_better"),
        ("quality_metrics", "answer_accuracy", "lower_is_better", "higher_is_better"),
        ("quality_metrics", "groundedness", "lower_is_better", "higher_is_better"),
        ("quality_metrics", "context_relevance", "lower_is_better", "higher_is_better"),
    ],
)
def test_direction_contradicting_name_refused(tmp_path, section, metric, declared, wanted):
    """A direction against the metric's name family is refused with the direction it suggests."""
    c = base_contract()
    entry = c[section][0]
    old = entry["id"]
    entry.update({"id": metric, "direction": declared})
    for claim in c["claims"]["items"]:
        if claim["metric"] == old:
            claim["metric"] = metric
    c["evidence"][0]["metrics"] = {
        k: (metric if v == old else v) for k, v in c["evidence"][0]["metrics"].items()
    }
    err = _refused(tmp_path, c)
    assert f"{section}[0].direction (line" in err.message
    assert f"did you mean direction: {wanted}" in err.message
    assert "direction_confirmed: true" in err.hint + err.message


def test_direction_confirmed_overrides_name_family(tmp_path):
    """``direction_confirmed: true`` accepts a direction that contradicts the name family."""
    c = base_contract()
    c["operational_metrics"][0].update(
        {"direction": "higher_is_better", "direction_confirmed": True}
    )
    c["claims"]["items"] = [{"kind": "quality-improvement", "metric": "correct"}]
    assert _load(tmp_path, c).operational_metrics[0].direction.value == "higher_is_better"


def test_unrelated_name_has_no_family(tmp_path):
    """A metric whose name is in no family keeps any declared direction."""
    c = base_contract()
    c["quality_metrics"][0]["direction"] = "lower_is_better"
    assert _load(tmp_path, c).quality_metrics[0].direction.value == "lower_is_better"


def test_metric_kind_defaults_to_detect():
    """``metric_kind`` is optional (null: detected from the data) and takes the three kinds."""
    c = base_contract()
    assert ReleaseContract.model_validate(c).quality_metrics[0].metric_kind is None
    c["quality_metrics"][0]["metric_kind"] = "binary"
    assert ReleaseContract.model_validate(c).quality_metrics[0].metric_kind == "binary"
    c["quality_metrics"][0]["metric_kind"] = "nominal"
    with pytest.raises(ValidationError):
        ReleaseContract.model_validate(c)


def test_publication_block():
    """``publication.allow_finding_kinds`` defaults to none and takes only known finding kinds."""
    c = base_contract()
    assert ReleaseContract.model_validate(c).publication.allow_finding_kinds == []
    c["publication"] = {"allow_finding_kinds": ["ip-address", "private-path"]}
    got = ReleaseContract.model_validate(c).publication.allow_finding_kinds
    assert got == ["ip-address", "private-path"]
    c["publication"] = {"allow_finding_kinds": ["private-key"]}
    with pytest.raises(ValidationError):
        ReleaseContract.model_validate(c)


@pytest.mark.parametrize(
    ("metric", "family"),
    [
        ("no_hallucination", "higher_is_better"),
        ("error_free_rate", "higher_is_better"),
        ("toxicity_free", "higher_is_better"),
        ("no_relevance", "lower_is_better"),
        ("hallucination_rate", "lower_is_better"),
        ("faithfulness_vs_cost", None),  # words of both families
        ("non_llm_context_recall", "higher_is_better"),  # "non" qualifies "llm", not "recall"
        ("absence_of_errors", "higher_is_better"),
    ],
)
def test_negated_names_turn_the_family_around(metric, family):
    """A negation word turns a name's family around (``no_hallucination``: higher is better)."""
    from ragwarrant.contract import name_family

    assert name_family(metric) == family


def test_a_reversed_no_metric_is_refused():
    """``no_hallucination`` declared lower_is_better contradicts its name (it used to pass)."""
    from ragwarrant.contract import Direction
    from ragwarrant.contract._sanity import check_direction_family

    with pytest.raises(ValueError, match="did you mean direction: higher_is_better"):
        check_direction_family("no_hallucination", Direction("lower_is_better"), False)
    check_direction_family("no_hallucination", Direction("lower_is_better"), True)  # confirmed


def test_a_margin_of_half_the_scale_is_warned(tmp_path):
    """A margin of half the scale or more is legal but gets a located warn check."""
    from ragwarrant.contract import ReleaseContract, wide_margins

    c = ReleaseContract.model_validate(base_contract())
    assert wide_margins(c) == []
    doc = base_contract()
    doc["quality_metrics"][0]["margin_abs"] = 0.5 * (
        doc["quality_metrics"][0]["scale"][1] - doc["quality_metrics"][0]["scale"][0]
    )
    (key, _, _), *rest = wide_margins(ReleaseContract.model_validate(doc))
    assert key == "quality_metrics[0].margin_abs" and rest == []


@pytest.mark.parametrize("slices", [[], [{"value": "a", "margin_abs": 0.1}]])
def test_no_required_quality_metric_refused(tmp_path, slices):
    """A contract whose every quality metric is ``required: false`` tests no quality: refused.

    Without the rule such a contract PROMOTEd on a cost claim alone (no slices), or crashed with
    an internal error (protected slices with no metric to test).
    """
    c = base_contract()
    for m in c["quality_metrics"]:
        m["required"] = False
    c["protected_slices"] = slices
    err = _refused(tmp_path, c)
    assert "quality_metrics (line" in err.message
    assert "required: true" in err.message


@pytest.mark.parametrize("path", ["policies/base.json", "policies/./base.json"])
def test_candidate_sharing_the_baseline_config_refused(tmp_path, path):
    """A candidate whose config file is the baseline's is refused (it PROMOTEd, unchanged)."""
    c = base_contract()
    c["baseline"]["config"] = "policies/base.json"
    c["candidates"][0]["config"] = path
    err = _refused(tmp_path, c)
    assert "candidates[0].config (line" in err.message
    assert "same config file" in err.message


@pytest.mark.parametrize(
    ("metric_id", "unit"), [("cost_usd", "eur"), ("cost_usd", "ms"), ("latency_ms", "s")]
)
def test_unit_contradicting_the_metric_name_refused(tmp_path, metric_id, unit):
    """An operational metric whose id ends in a unit other than its declared ``unit`` is refused."""
    c = base_contract()
    c["operational_metrics"] = [{"id": metric_id, "unit": unit}]
    c["claims"]["items"][0]["metric"] = metric_id
    err = _refused(tmp_path, c)
    assert "operational_metrics[0].unit (line" in err.message
    assert f"did you mean unit: {metric_id.rsplit('_', 1)[1]}?" in err.message


@pytest.mark.parametrize(
    ("metric_id", "unit"),
    [("cost_usd", "USD"), ("latency_s", "seconds"), ("cost", "eur"), ("calls", "calls")],
)
def test_unit_agreeing_with_the_metric_name_accepted(tmp_path, metric_id, unit):
    """A unit that agrees with the id's unit word (or an id naming none) is accepted."""
    c = base_contract()
    c["operational_metrics"] = [{"id": metric_id, "unit": unit}]
    c["claims"]["items"][0]["metric"] = metric_id
    assert _load(tmp_path, c).operational_metrics[0].unit == unit


def _metric_id_twice(c: dict[str, Any]) -> None:
    c["operational_metrics"][0]["id"] = "correct"
    c["operational_metrics"][0]["direction_confirmed"] = True


def _source_id_twice(c: dict[str, Any]) -> None:
    c["evidence"].append({**c["evidence"][0], "path": "evidence/more.csv"})


@pytest.mark.parametrize(
    ("edit", "key", "what"),
    [
        (_metric_id_twice, "operational_metrics[0].id", "metric ids must be distinct"),
        (_source_id_twice, "evidence[1].id", "evidence source ids must be distinct"),
    ],
)
def test_an_id_given_twice_is_refused_at_its_second_place(tmp_path, edit, key, what):
    """A metric id shared by a quality and an operational metric, or two evidence sources with
    one id, is refused at the second one's key, naming the id."""
    c = base_contract()
    edit(c)
    err = _refused(tmp_path, c)
    assert f"{key} (line" in err.message
    assert what in err.message and "twice" in err.message


@pytest.mark.parametrize(
    ("kind", "metric", "said"),
    [
        ("quality-improvement", "cost_usd", "not a declared quality metric (declared: correct)"),
        ("cost-reduction", "cost_usdd", "operational metric (declared: cost_usd); did you mean"),
    ],
)
def test_a_claim_on_an_undeclared_metric_of_its_kind_is_refused(tmp_path, kind, metric, said):
    """A claim names a declared metric of its own kind (quality or operational), or is refused
    at its metric key with the declared ones listed."""
    c = base_contract()
    c["claims"]["items"] = [{"kind": kind, "metric": metric}]
    err = _refused(tmp_path, c)
    assert "claims.items[0].metric (line" in err.message
    assert said in err.message


@pytest.mark.parametrize("scale", [[-1e308, 1e308], [0, 1e160]])
def test_scale_ends_past_float64_aggregation_refused(tmp_path, scale):
    """A scale end past ``limits.MAX_SCALE_MAGNITUDE`` is refused at ``scale``: a worst-case
    value at that end overflowed the statistics (exit 70, or a REJECT with a bound of -7e142)."""
    c = base_contract()
    c["quality_metrics"][0].update(scale=scale, margin_abs=0.02, on_missing="worst")
    err = _refused(tmp_path, c)
    assert "quality_metrics[0].scale (line" in err.message
    assert "without float64 overflow" in err.message


def test_margin_below_float64_resolution_on_the_scale_refused(tmp_path):
    """A 0.02 margin on a [0, 1e18] scale is refused: a 1e17 value among 0.1 losses made the
    sums lose the losses, and the run PROMOTEd; a 1e6 margin (1e12 per scale end) is accepted."""
    c = base_contract()
    c["quality_metrics"][0].update(scale=[0, 1e18], margin_abs=0.02)
    err = _refused(tmp_path, c)
    assert "quality_metrics[0].margin_abs (line" in err.message
    assert "expected a margin of at least 1e+06" in err.message
    c["quality_metrics"][0]["margin_abs"] = 1e6
    assert _load(tmp_path, c).quality_metrics[0].margin_abs == 1e6


def test_slice_margin_below_float64_resolution_refused(tmp_path):
    """A protected slice's margin is held to the same resolution as the metric's own."""
    c = base_contract()
    c["quality_metrics"][0].update(scale=[-1e6, 1e6], margin_abs=1.0)
    c["protected_slices"] = [{"value": "a", "margin_abs": 1e-7}]
    assert "protected_slices[0].margin_abs" in _refused(tmp_path, c).message


@pytest.mark.parametrize("alpha", [5e-324, 1e-13])
def test_alpha_below_its_floor_refused(tmp_path, alpha):
    """``statistics.alpha`` below ``limits.MIN_ALPHA`` is refused at its key: 5e-324 overflowed
    ``20 / alpha`` and ``log2(1 / alpha)`` to inf in the tests (exit 70)."""
    c = base_contract()
    c["statistics"]["alpha"] = alpha
    assert "statistics.alpha (line" in _refused(tmp_path, c).message
    c["statistics"]["alpha"] = 1e-12
    assert _load(tmp_path, c).statistics.alpha == 1e-12


def test_the_first_broken_contract_rule_is_the_one_reported(tmp_path):
    """Rules on the whole contract run in a fixed order (ids, required metric, configs, claims):
    a contract breaking all four is refused at the repeated id; mend it and the next rule speaks."""
    c = base_contract()
    _metric_id_twice(c)
    for m in c["quality_metrics"]:
        m["required"] = False
    c["baseline"]["config"] = c["candidates"][0]["config"]
    c["claims"]["items"][0]["metric"] = "nowhere"
    said = []
    for mend in (
        lambda: c["operational_metrics"][0].update(id="cost_usd"),
        lambda: c["quality_metrics"][0].update(required=True),
        lambda: c["baseline"].update(config="policies/elsewhere.json"),
    ):
        said.append(_refused(tmp_path, c).message)
        mend()
    said.append(_refused(tmp_path, c).message)
    assert ["ids must be distinct" in said[0], "required: true" in said[1]] == [True, True]
    assert ["same config file" in said[2], "names metric 'nowhere'" in said[3]] == [True, True]
