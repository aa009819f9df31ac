"""Run-time contract checks against the evidence: pure functions returning located messages."""

from __future__ import annotations

import pytest
import yaml

from ragwarrant.contract import (
    ReleaseContract,
    check_directions,
    check_near_misses,
    check_policy_ids,
    check_scales,
    check_splits_declared,
    load_contract_source,
)
from ragwarrant.display import quoted
from tests.conftest import base_contract


def _loaded(tmp_path, contract=None):
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract or base_contract(), sort_keys=False))
    return load_contract_source(path)


def test_policy_ids_all_present():
    """No message when every declared policy is in the evidence."""
    c = ReleaseContract.model_validate(base_contract())
    assert check_policy_ids(c, {"base", "cand"}) == []


def test_policy_id_typo_lists_present_ids(tmp_path):
    """A candidate id absent from the evidence names the ids present and the closest one."""
    src = _loaded(tmp_path)
    messages = check_policy_ids(src.contract, ["base", "cnad", "other"], source=src)
    assert len(messages) == 1
    line = src.line_of(("candidates", 0, "policy_id"))
    assert f"contract.yaml: candidates[0].policy_id (line {line})" in messages[0]
    assert "base, cnad, other" in messages[0] and "did you mean 'cnad'" in messages[0]


def test_policy_id_check_without_source():
    """Without the source the message still names the key path."""
    c = ReleaseContract.model_validate(base_contract())
    (message,) = check_policy_ids(c, ["cand"])
    assert message.startswith("baseline.policy_id:") and "'base'" in message


def test_split_values_without_splits_block(tmp_path):
    """Split values in the evidence with no ``splits:`` block are reported with a suggestion."""
    src = _loaded(tmp_path)
    (message,) = check_splits_declared(src.contract, {"dev", "holdout"}, source=src)
    assert "dev, holdout" in message and "splits:" in message
    assert "confirmatory: holdout" in message and "development: dev" in message


def test_split_values_with_splits_block():
    """A declared confirmatory split present in the evidence is fine; one absent is reported."""
    c = base_contract()
    c["splits"] = {"development": "dev", "confirmatory": "holdout"}
    contract = ReleaseContract.model_validate(c)
    assert check_splits_declared(contract, {"dev", "holdout"}) == []
    (message,) = check_splits_declared(contract, {"dev", "heldout"})
    assert message.startswith("splits.confirmatory:") and "did you mean 'heldout'" in message


def test_split_near_misses_by_case_space_or_unicode_form():
    """Undeclared values that fold (NFKC, casefold, no white space) to a declared split are
    reported per role with their example counts; a distinct value and declared ones are not."""
    c = base_contract()
    c["splits"] = {"development": "dev", "confirmatory": "holdout"}
    contract = ReleaseContract.model_validate(c)
    counts = {"holdout": 400, "Holdout": 150, "hold out ": 40, "\uff28oldout": 10, "dev": 50}
    counts |= {"DEV": 3, "train": 900}
    dev, held = check_near_misses(contract, "split", counts)
    assert held.startswith("splits.confirmatory:") and "200 examples" in held
    assert "'Holdout' (150 examples)" in held and "'hold out ' (40 examples)" in held
    assert "'\\uff28oldout' (10 examples)" in held and "train" not in held
    assert dev.startswith("splits.development:") and "'DEV' (3 examples)" in dev
    assert check_near_misses(contract, "split", {"holdout": 400, "dev": 5, "train": 900}) == []


@pytest.mark.parametrize(
    "label",
    [
        "ho\u200bldout",  # zero-width space (Cf)
        "hold\u2010out",  # Unicode hyphen (Pd)
        "hold-out",
        "hold_out",
        "hold\u043eut",  # Cyrillic o
        "\u041dOLDOUT",  # Cyrillic capital En, drawn like H
        "h\u03bfldout",  # Greek omicron
        "ho\u0301ldout",  # combining acute accent
        "\u202eholdout",  # bidirectional override
    ],
)
def test_split_near_misses_by_invisible_dash_accent_or_lookalike(label):
    """Format characters, dashes and punctuation, accents and Cyrillic or Greek letters drawn
    like Latin ones (UTS #39 confusables) fold away: each such label BLOCKs, shown escaped."""
    c = base_contract()
    c["splits"] = {"confirmatory": "holdout"}
    contract = ReleaseContract.model_validate(c)
    (message,) = check_near_misses(contract, "split", {"holdout": 400, label: 7})
    assert f"also labels {quoted(label)} (7 examples), which" in message  # the count once
    assert label.isprintable() or label not in message


@pytest.mark.parametrize(
    ("kind", "label"),
    [
        ("metric", "faithfuIness"),  # capital I for l
        ("metric", "faithfu1ness"),  # digit one for l
        ("metric", "fa\u0131thfulness"),  # dotless i
        ("metric", "faithfu|ness"),  # vertical line for l
        ("metric", "FAITHFULNESS"),  # a capital I still reads as i
        ("metric", "FAIthfuIness"),  # both readings in one label
        ("split", "hoIdout"),
        ("split", "ho1dout"),
        ("split", "h0ldout"),  # digit zero for o
        ("split", "\u0399\u0399"),  # Greek capital iotas for declared 'il'
        ("slice", "surnrnary"),  # rn for m
    ],
)
def test_near_misses_by_ascii_lookalike(kind, label):
    """ASCII-range confusables of UTS #39 (``I``, ``1`` and ``|`` for ``l``, ``ı`` for ``i``,
    ``0`` for ``o``, ``rn`` for ``m``) fold to the declared label: each BLOCKs (fresh-user trial
    PROMOTEd with the candidate's failures labelled ``faithfuIness``)."""
    c = base_contract()
    c["quality_metrics"][0]["id"] = "faithfulness"
    c["splits"] = {"development": "il", "confirmatory": "holdout"}
    c["protected_slices"] = [{"value": "summary", "margin_abs": 0.05}]
    contract = ReleaseContract.model_validate(c)
    wanted = {"metric": "faithfulness", "split": "holdout", "slice": "summary"}[kind]
    wanted = "il" if label.startswith("\u0399") else wanted
    (message,) = check_near_misses(contract, kind, {wanted: 400, label: 7})
    assert f"{kind} {quoted(wanted)} is declared" in message
    assert f"also labels {quoted(label)} (7 examples), which" in message


@pytest.mark.parametrize(
    ("declared", "label"),
    [
        ("split1", "split2"),  # digits that are not lookalikes stay distinct
        ("split1", "split11"),
        ("fail", "fall"),  # lower-case i and l are distinct letters
        ("fail", "FALL"),
        ("top10", "top1"),
        ("faithfulness", "faithfulness_v2"),
    ],
)
def test_distinct_labels_with_digits_or_i_and_l_do_not_fold(declared, label):
    """Labels that differ by more than a lookalike (another digit, ``i`` against ``l``, a
    suffix) are not near misses: they stay a note."""
    c = base_contract()
    c["splits"] = {"confirmatory": declared}
    contract = ReleaseContract.model_validate(c)
    assert check_near_misses(contract, "split", {declared: 400, label: 7}) == []


def test_slice_and_policy_near_misses_name_the_contract_key():
    """Protected slice values and policy ids get the same check, located at their key; labels
    that differ by more than folding (another task, a third policy) are not reported."""
    c = base_contract()
    c["protected_slices"] = [{"value": "summ", "margin_abs": 0.05}]
    contract = ReleaseContract.model_validate(c)
    (sl,) = check_near_misses(contract, "slice", {"summ": 50, "Summ": 20, "summary": 9, "qa": 5})
    assert sl.startswith("protected_slices[0].value:") and "'Summ' (20 examples)" in sl
    assert "summary" not in sl
    base, cand = contract.baseline.policy_id, contract.candidates[0].policy_id
    counts = {base: 100, cand: 100, cand.upper(): 30, f"{base}-2": 4}
    (pol,) = check_near_misses(contract, "policy", counts)
    assert pol.startswith("candidates[0].policy_id:") and f"'{cand.upper()}' (30 examples)" in pol
    assert check_near_misses(contract, "slice", {"summary": 9}) == []


def test_metric_near_misses_name_the_declared_id_and_a_row():
    """Metric labels get the same check against quality and operational ids, each label with a
    row holding it when ``located`` is given; other metrics (``correct_v2``) are not reported."""
    contract = ReleaseContract.model_validate(base_contract())  # correct, cost_usd
    near = {"CORRECT": 30, "\uff43orrect": 2, "c\u043errect": 1, "cost-usd": 5}
    counts = {"correct": 100, "cost_usd": 100, "correct_v2": 9, "incorrect": 4} | near
    rows = {label: f"evals.csv row {n}" for label, n in counts.items()}
    quality, operational = check_near_misses(contract, "metric", counts, located=rows)
    assert (
        quality.startswith("quality_metrics[0].id:") and "metric 'correct' is declared" in quality
    )
    assert "labels 33 examples: 'CORRECT' (30 examples, e.g. evals.csv row 30)" in quality
    assert "'\\uff43orrect' (2 examples" in quality and "'c\\u043errect' (1 examples" in quality
    assert operational.startswith("operational_metrics[0].id:")
    assert "'cost-usd' (5 examples, e.g. evals.csv row 5)" in operational
    assert "correct_v2" not in quality and "incorrect" not in quality
    assert check_near_misses(contract, "metric", {"correct": 1, "correct_v2": 9}) == []


def test_no_split_values_no_block():
    """No split column and no block: nothing to report."""
    contract = ReleaseContract.model_validate(base_contract())
    assert check_splits_declared(contract, set()) == []


def test_scale_contradicted_by_values(tmp_path):
    """Values outside the declared scale are reported with the observed range as a suggestion."""
    src = _loaded(tmp_path)
    (message,) = check_scales(src.contract, {"correct": (0.0, 5.0)}, source=src)
    line = src.line_of(("quality_metrics", 0, "scale"))
    assert f"quality_metrics[0].scale (line {line})" in message
    assert "range over [0.0, 5.0]" in message and "covers them (e.g. [0, 5])" in message


def test_scale_end_rounding_is_not_a_contradiction():
    """A value one rounding step past the scale's end (BLEU 1.0000000000000004) is inside it."""
    contract = ReleaseContract.model_validate(base_contract())
    assert check_scales(contract, {"correct": (0.0, 1.0000000000000004)}) == []
    assert check_scales(contract, {"correct": (0.0, 1.001)}) != []


def test_scale_respected_and_unknown_metrics_ignored():
    """Values inside the scale, or of undeclared metrics, give no message."""
    contract = ReleaseContract.model_validate(base_contract())
    assert check_scales(contract, {"correct": (0.0, 1.0), "other": (-9.0, 9.0)}) == []


def test_binary_kind_contradicted_by_values():
    """A metric declared binary whose values are not all 0 or 1 is reported."""
    c = base_contract()
    c["quality_metrics"][0]["metric_kind"] = "binary"
    contract = ReleaseContract.model_validate(c)
    (message,) = check_scales(contract, {"correct": (0.0, 1.0)}, non_binary={"correct"})
    assert message.startswith("quality_metrics[0].metric_kind:") and "binary" in message


def test_directions_contradicted_by_an_export_name_the_source():
    """An operational metric the export declares higher_is_better is reported with the fix."""
    c = ReleaseContract.model_validate(base_contract())
    messages = check_directions(c, {"cost_usd": {"results": "higher_is_better"}})
    assert messages == [
        "operational_metrics[0].direction: 'cost_usd' is declared lower_is_better but evidence "
        "source 'results' (higher_is_better) declares it the other way round; did you mean "
        "direction: higher_is_better? (if lower_is_better is really right, add "
        "direction_confirmed: true)"
    ]


def test_directions_agreeing_undeclared_or_confirmed_pass():
    """Agreement, no declaration, or direction_confirmed: true give no message."""
    raw = base_contract()
    c = ReleaseContract.model_validate(raw)
    assert check_directions(c, {"correct": {"results": "higher_is_better"}, "other": {}}) == []
    raw["quality_metrics"][0]["direction_confirmed"] = True
    c = ReleaseContract.model_validate(raw)
    assert check_directions(c, {"correct": {"results": "lower_is_better"}}) == []


def test_declared_labels_name_each_kind_at_its_key():
    """Each kind of label maps its contract key path to the declared value, in contract order."""
    raw = base_contract()
    raw["splits"] = {"development": "dev", "confirmatory": "test"}
    raw["protected_slices"] = [{"value": "summ", "min_paired_n": 2}]
    c = ReleaseContract.model_validate(raw)
    assert list(c.declared_labels("policy").items()) == [
        (("baseline", "policy_id"), "base"),
        (("candidates", 0, "policy_id"), "cand"),
    ]
    assert c.policy_ids == ["base", "cand"]
    assert list(c.declared_labels("split").items()) == [
        (("splits", "development"), "dev"),
        (("splits", "confirmatory"), "test"),
    ]
    assert c.declared_labels("slice") == {("protected_slices", 0, "value"): "summ"}
    metrics = c.declared_labels("metric")
    assert list(metrics.values()) == [m.id for m in c.quality_metrics] + [
        m.id for m in c.operational_metrics
    ]
    assert list(c.declared_labels("source")) == [
        ("evidence", i, "id") for i in range(len(c.evidence))
    ]
