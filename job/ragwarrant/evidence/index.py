"""Index canonical evidence by example: dense per-(policy, metric) arrays and example attributes.

Integrity facts (duplicates, conflicting attributes, split membership) are computed here once;
the hard gates read them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Duplicate", "EvidenceIndex", "MetricColumn", "build_index"]


@dataclass(frozen=True)
class MetricColumn:
    """One policy's values of one metric, dense over all examples (length E).

    Attributes:
        value: float64, NaN where there is no finite value (no row, or a missing value).
        has_row: a row exists for this example.
        missing: a row exists but its value is null/NaN/error (see ``missing_reasons``).
        infinite: a row exists with an infinite value.
        missing_reasons: reason → count, for rows that are missing.
    """

    value: np.ndarray
    has_row: np.ndarray
    missing: np.ndarray
    infinite: np.ndarray
    missing_reasons: dict[str, int]


@dataclass(frozen=True)
class Duplicate:
    """A (policy, example, metric) that has more than one row."""

    policy_id: str
    example_id: str
    metric: str
    count: int
    first_source: str
    first_row: int


@dataclass(frozen=True)
class EvidenceIndex:
    """Canonical evidence indexed by example.

    Attributes:
        example_ids: shape (E,), the example id of each example code.
        group: shape (E,) int, cluster code per example (-1 when none).
        slice: shape (E,) object, slice value or None.
        split_bits: shape (E,) int64, bit j set when the example has a row in split
            ``split_labels[j]`` (an example in two splits has two bits: see ``in_split``).
        split_labels: the split values seen, in bit order.
        columns: (policy, metric) → MetricColumn.
        duplicates: every duplicated (policy, example, metric), first 1000.
        n_duplicates: total duplicated keys; duplicates_by_policy: the same per policy.
        conflicting_attributes: (attribute, example id) pairs whose rows disagree (first 1000).
        rows_without_provenance: rows with an empty source or source_sha256.
        n_rows: rows indexed.
    """

    example_ids: np.ndarray
    group: np.ndarray
    slice: np.ndarray
    split_bits: np.ndarray
    split_labels: tuple[str, ...]
    columns: dict[tuple[str, str], MetricColumn]
    duplicates: list[Duplicate]
    n_duplicates: int
    duplicates_by_policy: dict[str, int]
    conflicting_attributes: list[tuple[str, str]]
    rows_without_provenance: int
    n_rows: int

    @property
    def n_examples(self) -> int:
        """Number of distinct example ids."""
        return int(self.example_ids.size)

    def in_split(self, value: str) -> np.ndarray:
        """Shape (E,) bool: which examples have a row in split ``value``."""
        if value not in self.split_labels:
            return np.zeros(self.n_examples, dtype=bool)
        return (self.split_bits >> self.split_labels.index(value)) & 1 == 1

    def policies(self) -> set[str]:
        """Policies that have at least one row."""
        return {p for p, _ in self.columns}

    def metrics_of(self, policy: str) -> set[str]:
        """Metrics with at least one row for ``policy``."""
        return {m for p, m in self.columns if p == policy}


def _codes(arr: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[object]]:
    enc = pc.dictionary_encode(arr)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return idx, enc.dictionary.to_pylist()


def _attribute(ex: np.ndarray, codes: np.ndarray, n_examples: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-example min and max of non-negative codes (-1 where the example has none)."""
    valid = codes >= 0
    lo = np.full(n_examples, np.iinfo(np.int64).max)
    hi = np.full(n_examples, -1)
    np.minimum.at(lo, ex[valid], codes[valid])
    np.maximum.at(hi, ex[valid], codes[valid])
    lo[hi < 0] = -1
    return lo, hi


def build_index(table: pa.Table) -> EvidenceIndex:
    """Index a canonical evidence table.

    Args:
        table: rows with the canonical schema (possibly from several sources).

    Returns:
        The EvidenceIndex; nothing is dropped: duplicates, conflicts and missing values are
        counted for the gates.
    """
    table = table.combine_chunks()
    ex, example_labels = _codes(table.column("example_id"))
    n_ex = len(example_labels)
    example_ids = np.array(example_labels, dtype=object)

    conflicts: list[tuple[str, str]] = []
    attrs: dict[str, tuple[np.ndarray, list[object]]] = {}
    for name in ("group_id", "slice"):
        codes, labels = _codes(table.column(name))
        lo, hi = _attribute(ex, codes, n_ex)
        bad = np.flatnonzero(lo != hi)
        conflicts += [(name, str(example_ids[i])) for i in bad[:1000]]
        attrs[name] = (lo, labels)
    group = attrs["group_id"][0]
    slice_labels = attrs["slice"][1]
    slice_codes = attrs["slice"][0]
    slices = np.array([*slice_labels, None], dtype=object)[np.where(slice_codes >= 0, slice_codes, len(slice_labels))]

    split_codes, split_labels = _codes(table.column("split"))
    if len(split_labels) > 62:
        raise ValueError(f"at most 62 distinct split values are supported, found {len(split_labels)}")
    split_bits = np.zeros(n_ex, dtype=np.int64)
    has_split = split_codes >= 0
    np.bitwise_or.at(split_bits, ex[has_split], np.left_shift(1, split_codes[has_split]))

    source = table.column("source")
    sha = table.column("source_sha256")
    no_prov = pc.or_(
        pc.fill_null(pc.equal(pc.utf8_length(source), 0), True),
        pc.fill_null(pc.equal(pc.utf8_length(sha), 0), True),
    )
    rows_without_provenance = int(pc.sum(pc.cast(no_prov, pa.int64())).as_py() or 0)

    pol, pol_labels = _codes(table.column("policy_id"))
    met, met_labels = _codes(table.column("metric"))
    n_met = len(met_labels)
    key = (pol * n_met + met) * n_ex + ex
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    boundaries = np.flatnonzero(np.diff(sorted_key)) + 1
    starts = np.concatenate([[0], boundaries])
    counts = np.diff(np.concatenate([starts, [key.size]]))
    dup_starts = starts[counts > 1]
    n_duplicates = int(dup_starts.size)
    rows = table.column("source_row").to_numpy()
    dup_pol = pol[order[dup_starts]]
    duplicates_by_policy = {
        str(pol_labels[p]): int(c) for p, c in zip(*np.unique(dup_pol, return_counts=True), strict=True)
    }
    duplicates = []
    for s, c in zip(dup_starts[:1000], counts[counts > 1][:1000], strict=True):
        i = order[s]
        duplicates.append(
            Duplicate(
                policy_id=str(pol_labels[pol[i]]),
                example_id=str(example_ids[ex[i]]),
                metric=str(met_labels[met[i]]),
                count=int(c),
                first_source=str(source[int(i)]),
                first_row=int(rows[i]),
            )
        )


    values = table.column("value").to_numpy(zero_copy_only=False).astype(np.float64)
    reasons = table.column("missing_reason")
    reason_codes, reason_labels = _codes(reasons)
    columns: dict[tuple[str, str], MetricColumn] = {}
    group_key = pol * n_met + met
    for pm in np.unique(group_key):
        sel = np.flatnonzero(group_key == pm)
        p, m = divmod(int(pm), n_met)
        e = ex[sel]
        v = values[sel]
        rc = reason_codes[sel]
        dense = np.full(n_ex, np.nan)
        has_row = np.zeros(n_ex, dtype=bool)
        missing = np.zeros(n_ex, dtype=bool)
        infinite = np.zeros(n_ex, dtype=bool)
        has_row[e] = True
        is_missing = (rc >= 0) | np.isnan(v)
        is_inf = np.isinf(v)
        missing[e[is_missing]] = True
        infinite[e[is_inf]] = True
        ok = ~is_missing & ~is_inf
        dense[e[ok]] = v[ok]
        reason_count: dict[str, int] = {}
        for code, cnt in zip(*np.unique(rc[rc >= 0], return_counts=True), strict=True):
            reason_count[str(reason_labels[code])] = int(cnt)
        nan_no_reason = int(np.sum(np.isnan(v) & (rc < 0)))
        if nan_no_reason:
            reason_count["nan"] = reason_count.get("nan", 0) + nan_no_reason
        columns[(str(pol_labels[p]), str(met_labels[m]))] = MetricColumn(
            value=dense, has_row=has_row, missing=missing, infinite=infinite,
            missing_reasons=reason_count,
        )

    return EvidenceIndex(
        example_ids=example_ids,
        group=group,
        slice=slices,
        split_bits=split_bits,
        split_labels=tuple(str(x) for x in split_labels),
        columns=columns,
        duplicates=duplicates,
        n_duplicates=n_duplicates,
        duplicates_by_policy=duplicates_by_policy,
        conflicting_attributes=conflicts,
        rows_without_provenance=rows_without_provenance,
        n_rows=table.num_rows,
    )
