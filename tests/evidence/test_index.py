"""Indexing canonical evidence: dense columns, duplicates, conflicts, missing values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ragwarrant.evidence.index import build_index
from ragwarrant.evidence.schema import EVIDENCE_SCHEMA, make_evidence_table


def evidence_table(data: dict[str, dict[str, np.ndarray]], *, split: str | None = None) -> pa.Table:
    """Canonical rows from policy → metric → values (example i is 'ex<i>')."""
    cols: dict[str, list] = {f.name: [] for f in EVIDENCE_SCHEMA}
    for policy, metrics in data.items():
        for metric, values in metrics.items():
            for i, v in enumerate(values):
                missing = v is None or (isinstance(v, float) and np.isnan(v))
                cols["policy_id"].append(policy)
                cols["example_id"].append(f"ex{i}")
                cols["group_id"].append(None)
                cols["slice"].append(None)
                cols["split"].append(split)
                cols["metric"].append(metric)
                cols["value"].append(None if missing else float(v))
                cols["missing_reason"].append("nan" if missing else None)
                cols["source"].append("t:fixture@1")
                cols["source_sha256"].append("0" * 64)
                cols["source_row"].append(i + 1)
    return make_evidence_table(cols)


def test_dense_columns_and_missing_counts():
    """Values land at their example's index; missing values are counted by reason, not dropped."""
    t = evidence_table({"a": {"m": np.array([1.0, np.nan, 3.0])}, "b": {"m": np.array([0.5, 0.5])}})
    idx = build_index(t)
    col = idx.columns[("a", "m")]
    assert idx.n_examples == 3
    assert col.has_row.tolist() == [True, True, True]
    assert col.missing.tolist() == [False, True, False]
    assert col.missing_reasons == {"nan": 1}
    assert idx.columns[("b", "m")].has_row.tolist() == [True, True, False]


def test_duplicates_counted_per_policy():
    """A repeated (policy, example, metric) is reported with its count and first source row."""
    t = evidence_table({"a": {"m": np.array([1.0, 2.0])}})
    t = pa.concat_tables([t, t.slice(1, 1)])
    idx = build_index(t)
    assert idx.n_duplicates == 1 and idx.duplicates_by_policy == {"a": 1}
    d = idx.duplicates[0]
    assert (d.example_id, d.count, d.first_row) == ("ex1", 2, 2)


def test_split_membership_and_conflicting_slices():
    """An example seen in two splits keeps both; disagreeing slices are conflicts."""
    dev = evidence_table({"a": {"m": np.array([1.0, 2.0])}}, split="dev")
    conf = evidence_table({"b": {"m": np.array([1.0])}}, split="conf")
    conf = conf.set_column(3, "slice", pa.array(["x"], pa.string()))
    dev = dev.set_column(3, "slice", pa.array(["y", None], pa.string()))
    idx = build_index(pa.concat_tables([dev, conf]))
    assert idx.in_split("dev").tolist() == [True, True] and idx.in_split("conf").tolist() == [
        True,
        False,
    ]
    assert idx.in_split("missing").tolist() == [False, False]
    assert idx.conflicting_attributes == [("slice", "ex0")]


def test_loose_example_id_folds_case_white_space_and_invisible_characters():
    """'Q1 ', '\u200bq1' and the full-width 'ｑ１' are all 'q1' loosely; inner spaces collapse."""
    from ragwarrant.evidence.index import loose_example_id

    assert {loose_example_id(x) for x in ("q1", "Q1 ", "\u200bq1", "\uff51\uff11")} == {"q1"}
    assert loose_example_id("a  b") == "a b"


def test_example_id_variants_are_counted():
    """Ids equal to another after the loose form are counted and the first pair is kept."""
    t = evidence_table({"a": {"m": np.array([1.0, 0.0])}})
    ids = pa.array(["ex0", "EX0 "])
    t = t.set_column(t.schema.get_field_index("example_id"), "example_id", ids)
    idx = build_index(t)
    assert idx.n_id_variants == 1
    assert idx.id_variants == [("EX0 ", "ex0")] or idx.id_variants == [("ex0", "EX0 ")]


def test_example_rank_orders_ids_as_python_strings():
    """example_rank sorts examples exactly as sorting their ids (code points, non-ASCII too)."""
    ids = ["b", "a", "\u00e9", "Z", "a1", "\u00c9t\u00e9", "a\U0001f600", "a\u00e9"]
    cols: dict[str, list] = {f.name: [None] * len(ids) for f in EVIDENCE_SCHEMA}
    cols |= {
        "policy_id": ["p"] * len(ids),
        "example_id": ids,
        "metric": ["m"] * len(ids),
        "value": [1.0] * len(ids),
        "source": ["t:fixture@1"] * len(ids),
        "source_sha256": ["0" * 64] * len(ids),
        "source_row": list(range(1, len(ids) + 1)),
    }
    idx = build_index(make_evidence_table(cols))
    assert idx.example_ids.tolist() == ids
    assert idx.example_ids[np.argsort(idx.example_rank)].tolist() == sorted(ids)


def test_repeated_id_chunks_index_like_one_column():
    """A table whose example_id chunks repeat one array indexes as its concatenation does."""
    a = evidence_table({"p": {"m1": np.array([1.0, 2.0, 3.0])}})
    b = evidence_table({"p": {"m2": np.array([4.0, 5.0, 6.0])}, "q": {"m1": np.array([7.0])}})
    ids = pa.array(["x2", "x0", "x1"], pa.string())
    a = a.set_column(1, "example_id", ids)
    b = b.set_column(1, "example_id", pa.concat_arrays([ids, pa.array(["x9"], pa.string())]))
    shared = pa.concat_tables([a, b.slice(0, 3).set_column(1, "example_id", ids), b.slice(3)])
    assert shared.column("example_id").chunk(0) is not shared.column("example_id").chunk(1)
    one = build_index(shared.combine_chunks())
    many = build_index(shared)
    assert many.example_ids.tolist() == one.example_ids.tolist() == ["x2", "x0", "x1", "x9"]
    for key, col in one.columns.items():
        assert np.array_equal(many.columns[key].value, col.value, equal_nan=True)
        assert many.columns[key].row.tolist() == col.row.tolist()


def test_conflicting_slice_takes_the_first_label_and_splits_combine():
    """An example whose rows disagree is a conflict labelled by its first-seen slice; an example
    with rows in several splits has every one of them."""
    t = evidence_table({"a": {"m": np.array([1.0, 2.0]), "n": np.array([1.0, 2.0])}}, split="s1")
    t = t.set_column(3, "slice", pa.array(["x", "y", "z", "y"], pa.string()))
    t = t.set_column(4, "split", pa.array(["s1", "s1", "s2", "s1"], pa.string()))
    idx = build_index(t)
    assert idx.conflicting_attributes == [("slice", "ex0")]
    assert idx.slice.tolist() == ["x", "y"]
    assert idx.in_split("s1").tolist() == [True, True]
    assert idx.in_split("s2").tolist() == [True, False]


def test_raw_keeps_infinite_and_flagged_values():
    """``raw`` is the value as read (±inf kept), ``value`` only the finite unflagged values."""
    cols: dict[str, list] = {f.name: [None] * 3 for f in EVIDENCE_SCHEMA}
    cols |= {
        "policy_id": ["p"] * 3,
        "example_id": ["e0", "e1", "e2"],
        "metric": ["m"] * 3,
        "value": [1.0, float("inf"), 2.0],
        "missing_reason": [None, None, "error"],
        "source": ["t:fixture@1"] * 3,
        "source_sha256": ["0" * 64] * 3,
        "source_row": [1, 2, 3],
    }
    col = build_index(make_evidence_table(cols)).columns[("p", "m")]
    assert col.raw.tolist() == [1.0, float("inf"), 2.0]
    assert np.array_equal(col.value, [1.0, np.nan, np.nan], equal_nan=True)
    assert col.infinite.tolist() == [False, True, False]
    assert col.missing.tolist() == [False, False, True]
