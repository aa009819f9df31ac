"""Indexing canonical evidence: dense columns, duplicates, conflicts, missing values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ragwarrant.evidence.index import build_index
from ragwarrant.evidence.schema import EVIDENCE_SCHEMA, dictionary_codes, make_evidence_table


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


def test_dictionary_id_chunks_with_their_own_dictionaries_index_like_plain_ids():
    """Dictionary-encoded example_id chunks, each with its own dictionary (one chunk repeated),
    give the ids and codes of the plain string column."""
    a = evidence_table({"p": {"m1": np.array([1.0, 2.0, 3.0])}})
    b = evidence_table({"q": {"m1": np.array([4.0, 5.0, 6.0])}})
    c = evidence_table({"p": {"m2": np.array([7.0, 8.0, 9.0])}})
    plain = [["x2", "x0", "x1"], ["x1", "x9", "x2"], ["x2", "x0", "x1"]]
    first = pa.array(plain[0], pa.string()).dictionary_encode()
    second = pa.DictionaryArray.from_arrays(pa.array([1, 0, 2], pa.int32()), ["x9", "x1", "x2"])
    coded = [
        t.set_column(1, "example_id", ids)
        for t, ids in zip((a, b, c), (first, second, first), strict=True)
    ]
    one = build_index(
        pa.concat_tables(
            [
                t.set_column(1, "example_id", pa.array(ids))
                for t, ids in zip((a, b, c), plain, strict=True)
            ]
        )
    )
    many = build_index(pa.concat_tables(coded, promote_options="permissive"))
    assert many.example_ids.tolist() == one.example_ids.tolist() == ["x2", "x0", "x1", "x9"]
    for key, col in one.columns.items():
        assert np.array_equal(many.columns[key].value, col.value, equal_nan=True)


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


def _random_rows(seed: int, n_ids: int, wide: bool) -> dict[str, list]:
    """Canonical columns for random ids: a wide file's shape (every example once per policy and
    metric, in one order) or a shuffled long file with duplicates, missing pairs and values,
    infinities, slices, splits and ids that differ only by case or white space."""
    rng = np.random.default_rng(seed)
    ids = [f"e{i:04d}" for i in rng.permutation(n_ids)]
    if not wide:
        ids[:3] = ["E0001", " e0002", "e0001"]
    cols: dict[str, list] = {f.name: [] for f in EVIDENCE_SCHEMA}
    keys = [(p, m, e) for p in ("base", "cand") for m in ("m1", "m2") for e in range(n_ids)]
    if not wide:
        keep = rng.random(len(keys)) < 0.8  # missing pairs
        keys = [k for k, kept in zip(keys, keep, strict=True) if kept]
        keys += [keys[int(i)] for i in rng.integers(0, len(keys), 15)]  # duplicates
        keys = [keys[int(i)] for i in rng.permutation(len(keys))]
    for row, (policy, metric, e) in enumerate(keys):
        draw = rng.random()
        value = None if draw < 0.05 else float("inf") if draw < 0.07 else float(rng.random())
        cols["policy_id"].append(policy)
        cols["example_id"].append(ids[e])
        cols["group_id"].append(None if e % 3 else f"g{e % 7}")
        cols["slice"].append(f"s{e % 4}" if wide or rng.random() > 0.02 else "odd")
        cols["split"].append("test" if wide or rng.random() > 0.1 else "train")
        cols["metric"].append(metric)
        cols["value"].append(value)
        cols["missing_reason"].append("error" if value is None and draw < 0.02 else None)
        cols["source"].append(f"s{row % 2}:t@1")
        cols["source_sha256"].append("0" * 64)
        cols["source_row"].append(row + 1)
    return cols


def _reference_columns(cols: dict[str, list]) -> dict[tuple[str, str], dict[str, dict]]:
    """(policy, metric) → example id → what the index must hold, row by row in Python."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for i in range(len(cols["example_id"])):
        key = (cols["policy_id"][i], cols["metric"][i])
        cell = out.setdefault(key, {}).setdefault(cols["example_id"][i], {"count": 0})
        v = cols["value"][i]
        raw = np.nan if v is None else v
        bad = cols["missing_reason"][i] is not None or v is None
        cell.update(raw=raw, row=cols["source_row"][i], source=cols["source"][i])
        cell["count"] += 1
        cell["missing"] = cell.get("missing", False) or bad
        cell["infinite"] = cell.get("infinite", False) or np.isinf(raw)
        if not bad and np.isfinite(raw):
            cell["value"] = raw
    return out


def _wide_table(cols: dict[str, list], n_metrics: int) -> pa.Table:
    """The rows as a wide file's adapter lays them out: one chunk per metric, and the id,
    group, slice and split arrays of the first chunk reused by every other chunk."""
    table = make_evidence_table(cols)
    size = table.num_rows // n_metrics
    chunks = [table.slice(k * size, size).combine_chunks() for k in range(n_metrics)]
    shared = {n: chunks[0].column(n) for n in ("example_id", "group_id", "slice", "split")}
    for k in range(1, n_metrics):
        for name, col in shared.items():
            i = table.schema.get_field_index(name)
            chunks[k] = chunks[k].set_column(i, table.schema.field(i), col)
    return pa.concat_tables(chunks)


def _assert_columns_match(idx, cols: dict[str, list]) -> None:  # type: ignore[no-untyped-def]
    """Every (policy, metric) column of ``idx`` holds what ``_reference_columns`` says."""
    ids = idx.example_ids.tolist()
    reference = _reference_columns(cols)
    for key, cells in reference.items():
        col = idx.columns[key]
        for e, example in enumerate(ids):
            cell = cells.get(example)
            assert col.has_row[e] == (cell is not None)
            if cell is None:
                assert np.isnan(col.value[e]) and col.row[e] == -1 and col.source[e] == -1
                continue
            assert np.array_equal(col.value[e], cell.get("value", np.nan), equal_nan=True)
            assert np.array_equal(col.raw[e], cell["raw"], equal_nan=True)
            assert (col.row[e], idx.sources[col.source[e]]) == (cell["row"], cell["source"])
            assert (col.missing[e], col.infinite[e]) == (cell["missing"], cell["infinite"])
    counts = [c["count"] for cells in reference.values() for c in cells.values()]
    assert idx.n_duplicates == sum(c > 1 for c in counts)


def _assert_attributes_match(idx, cols: dict[str, list]) -> None:  # type: ignore[no-untyped-def]
    """Slices (a conflict is any example with two labels) and split memberships as the rows say."""
    slices: dict[str, set] = {}
    splits: dict[str, set] = {}
    for e, s, sp in zip(cols["example_id"], cols["slice"], cols["split"], strict=True):
        slices.setdefault(e, set()).add(s)
        splits.setdefault(e, set()).add(sp)
    conflicted = {e for e, s in slices.items() if len(s) > 1}
    assert {e for a, e in idx.conflicting_attributes if a == "slice"} == conflicted
    for e, example in enumerate(idx.example_ids.tolist()):
        if example not in conflicted:
            assert idx.slice[e] in slices[example]
        assert {v for v in ("test", "train") if idx.in_split(v)[e]} == splits[example]
    _assert_slice_codes_match(idx)


def _assert_slice_codes_match(idx) -> None:  # type: ignore[no-untyped-def]
    """``in_slice`` and ``slices_in`` (from the codes) say what the object labels say."""
    labels = sorted({str(v) for v in idx.slice.tolist() if v is not None})
    for value in [*labels, "absent"]:
        assert np.array_equal(idx.in_slice(value), idx.slice == value)
    rng = np.random.default_rng(0)
    for mask in (rng.random(idx.n_examples) < p for p in (0.0, 0.01, 0.5, 1.0)):
        assert idx.slices_in(mask) == set(idx.slice[mask].tolist())


def test_index_equals_a_row_by_row_reference():
    """Wide (fast paths: contiguous groups, repeated chunks, plain ids) and long shuffled
    tables in two chunks (duplicates, missing pairs, id variants) index as a Python loop says."""
    for seed, wide in [(1, True), (2, False), (3, False)]:
        cols = _random_rows(seed, 300, wide)
        if wide:  # rows grouped by (metric, policy) as the wide adapter emits them
            order = sorted(
                range(len(cols["metric"])), key=lambda i: (cols["metric"][i], cols["policy_id"][i])
            )
            cols = {k: [v[i] for i in order] for k, v in cols.items()}
            table = _wide_table(cols, 2)
            first, second = (table.column("slice").chunk(k).buffers()[1] for k in (0, 1))
            assert first.address == second.address  # one array reused: the repeat-free path
        else:  # two chunks that repeat nothing: both are read
            table = make_evidence_table(cols)
            half = table.num_rows // 2
            table = pa.concat_tables([table.slice(0, half), table.slice(half)])
        idx = build_index(table)
        ids = idx.example_ids.tolist()
        assert ids == list(dict.fromkeys(cols["example_id"]))
        assert idx.example_ids[np.argsort(idx.example_rank)].tolist() == sorted(ids)
        _assert_columns_match(idx, cols)
        _assert_attributes_match(idx, cols)
        assert (idx.n_id_variants > 0) == (not wide)


def test_slice_codes_with_examples_in_no_slice_match_the_labels():
    """Examples without a slice (None) are in no ``in_slice`` and are None in ``slices_in``;
    both answer from the codes as the object array of slice values does."""
    cols = _random_rows(4, 200, True)
    cols["slice"] = [
        None if int(e[1:]) % 3 == 0 else s
        for e, s in zip(cols["example_id"], cols["slice"], strict=True)
    ]
    idx = build_index(make_evidence_table(cols))
    _assert_slice_codes_match(idx)
    assert None in idx.slices_in(np.ones(idx.n_examples, dtype=bool))


def test_rows_without_provenance_count_empty_and_null_sources_and_digests():
    """A row counts once when its source or its sha256 is empty or null, in any record batch."""
    t = evidence_table({"a": {"m": np.arange(4.0)}, "b": {"m": np.arange(4.0)}})
    source = pa.array(["", None, "t:fixture@1", "t:fixture@1"] * 2).dictionary_encode()
    sha = pa.array(["", "0" * 64, None, "0" * 64] * 2).dictionary_encode()
    t = t.set_column(t.schema.get_field_index("source"), "source", source)
    t = t.set_column(t.schema.get_field_index("source_sha256"), "source_sha256", sha)
    assert build_index(t).rows_without_provenance == 6
    assert build_index(pa.concat_tables([t.slice(0, 3), t.slice(3)])).rows_without_provenance == 6


def test_dictionary_codes_of_plain_dictionary_and_chunked_columns():
    """Codes index the returned dictionary (-1 for null) for plain, dictionary and chunked
    columns; a dictionary array without nulls gives its own indices, not a copy."""
    plain = pa.array(["b", None, "a", "b"])
    coded = plain.dictionary_encode()
    chunked = pa.chunked_array(
        [pa.array(["a", "b"]).dictionary_encode(), pa.array(["c", None, "a"]).dictionary_encode()]
    )
    for arr, expected in [(plain, ["b", None, "a", "b"]), (coded, ["b", None, "a", "b"])] + [
        (chunked, ["a", "b", "c", None, "a"])
    ]:
        codes, dictionary = dictionary_codes(arr)
        assert codes.dtype == np.int32
        labels = dictionary.to_pylist() + [None]
        assert [labels[c] for c in codes] == expected
    no_null = pa.array(["x", "y", "x"]).dictionary_encode()
    codes, _ = dictionary_codes(no_null)
    assert codes.ctypes.data == no_null.indices.buffers()[1].address
