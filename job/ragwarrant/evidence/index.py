"""Index canonical evidence by example: dense per-(policy, metric) arrays and example attributes.

Integrity facts (duplicates, example ids spelled two ways (``evidence.ids``), conflicting
attributes, split membership) are computed here once; the hard gates read them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.evidence.ids import id_variants
from ragwarrant.evidence.schema import dictionary_codes


@dataclass(frozen=True)
class MetricColumn:
    """One policy's values of one metric, dense over all examples (length E).

    Attributes:
        value: float64, NaN where there is no finite value (no row, or a missing value).
        has_row: a row exists for this example.
        missing: a row exists but its value is null/NaN/error (see ``missing_reasons``).
        infinite: a row exists with an infinite value.
        missing_reasons: reason → count, for rows that are missing or infinite (``inf``).
        raw: float64, the value as read (NaN where missing, ±inf kept), for range checks; the
            same array as ``value`` when they are equal (no duplicate, infinite or flagged
            value). Neither is ever written in place.
        row: int64, the source row of the example's (last) row, -1 without a row.
        source: int32, code of that row's source in ``EvidenceIndex.sources``, -1 without a row.
    """

    value: np.ndarray
    has_row: np.ndarray
    missing: np.ndarray
    infinite: np.ndarray
    missing_reasons: dict[str, int]
    raw: np.ndarray
    row: np.ndarray
    source: np.ndarray


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
        id_array: shape (E,) Arrow strings, the example id of each example code
            (``example_ids`` is the same as a numpy object array, built on first use).
        example_rank: shape (E,) int64, the rank of each example's id in code-point order
            (Python ``str`` order): sorting examples by it is sorting them by id, the canonical
            order of resampling, without comparing strings.
        group: shape (E,) int, cluster code per example (-1 when none).
        slice: shape (E,) object, slice value or None.
        slice_codes: shape (E,) int, index of each example's slice in ``slice_labels`` (-1 when
            none).
        slice_labels: the slice values seen, indexed by ``slice_codes``.
        split_bits: shape (E,) int64, bit j set when the example has a row in split
            ``split_labels[j]`` (an example in two splits has two bits: see ``in_split``).
        split_labels: the split values seen, in bit order.
        columns: (policy, metric) → MetricColumn.
        duplicates: every duplicated (policy, example, metric), first 1000.
        n_duplicates: total duplicated keys; duplicates_by_policy: the same per policy.
        conflicting_attributes: (attribute, example id) pairs whose rows disagree (first 1000).
        rows_without_provenance: rows with an empty source or source_sha256.
        sources: source tags (``<source id>:<tool>@<version>``) indexed by ``MetricColumn.source``.
        source_paths: source id → file path relative to the input directory, for messages.
        n_rows: rows indexed.
        id_variants: pairs of distinct example ids equal after ``ids.loose_example_id`` (first
            1000): one example written two ways, which would count twice.
        n_id_variants: example ids that equal an earlier one after ``ids.loose_example_id``.
    """

    id_array: pa.Array
    example_rank: np.ndarray
    group: np.ndarray
    slice: np.ndarray
    slice_codes: np.ndarray
    slice_labels: tuple[object, ...]
    split_bits: np.ndarray
    split_labels: tuple[str, ...]
    columns: dict[tuple[str, str], MetricColumn]
    duplicates: list[Duplicate]
    n_duplicates: int
    duplicates_by_policy: dict[str, int]
    conflicting_attributes: list[tuple[str, str]]
    rows_without_provenance: int
    n_rows: int
    sources: tuple[str, ...] = ()
    source_paths: dict[str, str] | None = None
    id_variants: list[tuple[str, str]] = field(default_factory=list)
    n_id_variants: int = 0

    @functools.cached_property
    def example_ids(self) -> np.ndarray:
        """Shape (E,) object: the example id of each example code (built on first use: 10^6
        Python strings are about 70 MB that most runs never read)."""
        return np.array(self.id_array.to_pylist(), dtype=object)

    @property
    def n_examples(self) -> int:
        """Number of distinct example ids."""
        return len(self.id_array)

    def locate(self, policy: str, metric: str, example: int) -> str:
        """Where the row of (policy, metric, example) came from: ``<file> row <n>``."""
        col = self.columns[(policy, metric)]
        code = int(col.source[example])
        if code < 0:
            return f"no row for example {self.example_ids[example]}"
        source_id = self.sources[code].split(":", 1)[0]
        path = (self.source_paths or {}).get(source_id, f"source {source_id}")
        return f"{path} row {int(col.row[example])}"

    def in_slice(self, value: str) -> np.ndarray:
        """Shape (E,) bool: which examples' slice equals ``value`` (``slice == value``, from the
        integer codes: 10^6 object comparisons are about 80 ms)."""
        hits = [i for i, label in enumerate(self.slice_labels) if label == value]
        if len(hits) == 1:
            return self.slice_codes == hits[0]
        return np.isin(self.slice_codes, hits)

    def slices_in(self, examples: np.ndarray) -> set[object]:
        """The slice values (None for none) of the examples selected by ``examples`` (shape (E,)
        bool): ``set(slice[examples])`` without reading the object array."""
        codes = np.unique(self.slice_codes[examples])
        return {self.slice_labels[int(c)] if c >= 0 else None for c in codes}

    def in_split(self, value: str) -> np.ndarray:
        """Shape (E,) bool: which examples have a row in split ``value``."""
        if value not in self.split_labels:
            return np.zeros(self.n_examples, dtype=bool)
        return (self.split_bits >> self.split_labels.index(value)) & 1 == 1

    def policies(self) -> set[str]:
        """Policies that have at least one row."""
        return {p for p, _ in self.columns}


def _ranks(labels: pa.Array) -> np.ndarray:
    """Shape (len(labels),) int64: each distinct string's rank in code-point order.

    Arrow orders strings by their UTF-8 bytes, which is code-point order (as Python's ``str``).
    """
    if len(labels) > 1 and pc.all(pc.less(labels[:-1], labels[1:])).as_py():
        return np.arange(len(labels), dtype=np.int64)  # in order already (a sorted file's ids)
    return pc.rank(labels, tiebreaker="first").to_numpy().astype(np.int64) - 1


def _chunk_key(chunk: pa.Array) -> tuple[object, ...]:
    """What makes two chunks the same array: their buffers, offset and length."""
    return (
        *(b.address if b is not None else None for b in chunk.buffers()),
        chunk.offset,
        len(chunk),
    )


def _example_codes(arr: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """int32 example codes and the distinct ids they index, in order of first appearance.

    Adapters reuse one id array for every metric of a wide file, so the canonical table's
    ``example_id`` chunks are often one array several times: each distinct chunk is hashed once
    (one dictionary across chunks: ``pyarrow.compute.dictionary_encode``, or
    ``unify_dictionaries`` for dictionary chunks), and a repeated chunk reuses its codes. The
    codes equal those of encoding the concatenated column.
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    first: dict[tuple[object, ...], int] = {}
    which = [first.setdefault(_chunk_key(c), len(first)) for c in chunks]
    distinct = pa.chunked_array([chunks[which.index(i)] for i in range(len(first))], arr.type)
    dictionary_chunks = pa.types.is_dictionary(arr.type)
    enc = distinct.unify_dictionaries() if dictionary_chunks else pc.dictionary_encode(distinct)
    coded = [dictionary_codes(c)[0] for c in enc.chunks]
    dictionary = enc.chunks[0].dictionary if enc.num_chunks else pa.array([], pa.string())
    codes = [coded[i] for i in which]
    return (np.concatenate(codes) if codes else np.zeros(0, np.int32)), dictionary


class _Labels:
    """Global codes of a dictionary string column, for the rows of any take of it.

    Codes index ``labels``: every chunk's dictionary in chunk order, each label once (as
    ``pyarrow``'s ``unify_dictionaries`` orders them); a plain string chunk is encoded first.
    """

    def __init__(self, col: pa.ChunkedArray) -> None:
        self._code_of: dict[object, int] = {}
        for chunk in col.chunks:
            for label in dictionary_codes(chunk)[1].to_pylist():
                self._code_of.setdefault(label, len(self._code_of))
        self.labels: list[object] = list(self._code_of)

    def codes(self, arr: pa.ChunkedArray) -> np.ndarray:
        """int32 global code of each row of ``arr`` (-1 for null)."""
        parts = []
        for chunk in arr.chunks:
            codes, dictionary = dictionary_codes(chunk)
            known = [self._code_of[label] for label in dictionary.to_pylist()]
            parts.append(np.array([*known, -1], dtype=np.int32)[codes])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)


@dataclass(frozen=True)
class _Group:
    """One (policy, metric) group's rows (``sel``, ascending table rows), row-aligned."""

    e: np.ndarray  # example code
    rows: np.ndarray  # source row
    values: np.ndarray  # float64, NaN for null
    reason_codes: np.ndarray
    src_codes: np.ndarray
    counts: np.ndarray  # shape (E,): the group's rows per example


@dataclass(frozen=True)
class _Rows:
    """The table every (policy, metric) group is taken from, one group at a time, with the
    example codes of its rows (``attributes``: each example's group, slice and splits).

    Only the example codes are held for every row; each group's source rows, values, missing
    reasons and sources are taken from the Arrow columns when it is visited (at 10^7 rows, the
    whole-table arrays were 240 MB held through the loop), then read into its dense column and
    its duplicates.
    """

    ex: np.ndarray
    example_ids: pa.Array
    table: pa.Table
    reasons: _Labels
    sources: _Labels

    def without_repeats(self, name: str) -> tuple[np.ndarray, pa.ChunkedArray]:
        """The example codes and the ``name`` column, less the chunks whose (example id chunk,
        ``name`` chunk) pair repeats an earlier one exactly (``_chunk_key``).

        A wide file's adapter reuses one id array and one attribute array for every metric, so the
        table repeats each (example, attribute) row once per metric; a repeat changes no per-example
        minimum, maximum or bit set, and the kept chunks list the labels in the same order. The
        whole column when the two columns' chunks do not align.
        """
        ex, ids, col = self.ex, self.table.column("example_id"), self.table.column(name)
        if [len(c) for c in ids.chunks] != [len(c) for c in col.chunks]:
            return ex, col
        seen: set[tuple[object, ...]] = set()
        keep = []
        for i, (a, b) in enumerate(zip(ids.chunks, col.chunks, strict=True)):
            key = (*_chunk_key(a), *_chunk_key(b))
            if key not in seen:
                seen.add(key)
                keep.append(i)
        if len(keep) == col.num_chunks:
            return ex, col
        bounds = np.cumsum([0, *map(len, ids.chunks)])
        kept_ex = np.concatenate([ex[bounds[i] : bounds[i + 1]] for i in keep])
        return kept_ex, pa.chunked_array([col.chunks[i] for i in keep], col.type)

    def attributes(
        self,
    ) -> tuple[
        np.ndarray,
        tuple[np.ndarray, np.ndarray, tuple[object, ...]],
        tuple[np.ndarray, list[object]],
        list[tuple[str, str]],
    ]:
        """Per-example group code; slice label (object), slice code (-1 when none) and the slice
        labels the codes index; split bit sets (bit j: a row in split j) and the split labels; the
        (attribute, example) pairs in conflict (a group or slice with two values)."""
        example_ids = self.example_ids
        n_ex = len(example_ids)
        conflicts: list[tuple[str, str]] = []
        attrs: dict[str, tuple[np.ndarray, list[object]]] = {}
        for name in ("group_id", "slice", "split"):
            ex_kept, col = self.without_repeats(name)
            codes, dictionary = dictionary_codes(col)
            labels = dictionary.to_pylist()
            valid = codes >= 0  # per example, the min and max of its codes (-1 without one)
            e, c = (ex_kept, codes) if valid.all() else (ex_kept[valid], codes[valid])
            if name == "split":  # every split an example has rows in, as one bit each
                if len(labels) > 62:
                    raise ValueError(
                        f"at most 62 distinct split values are supported, found {len(labels)}"
                    )
                bits = np.left_shift(np.int64(1), c.astype(np.int64))
                attrs[name] = (_scattered(e, bits, n_ex, 0, np.bitwise_or), labels)
                continue
            lo = _scattered(e, c, n_ex, -1, np.minimum).astype(np.int64)
            bad = np.flatnonzero(lo != _scattered(e, c, n_ex, -1, np.maximum))
            conflicts += [(name, str(example_ids[int(i)].as_py())) for i in bad[:1000]]
            attrs[name] = (lo, labels)
        slice_codes, slice_labels = attrs["slice"]
        slices = np.array([*slice_labels, None], dtype=object)[
            np.where(slice_codes >= 0, slice_codes, len(slice_labels))
        ]
        slice_attrs = (slices, slice_codes, tuple(slice_labels))
        return attrs["group_id"][0], slice_attrs, attrs["split"], conflicts

    def take(self, name: str, sel: np.ndarray) -> pa.ChunkedArray:
        """``self.table.column(name).take(sel)`` for ascending ``sel``, taken chunk by chunk: a
        take across chunks first concatenates the whole column (about 70 ms per 10^7-row column,
        4 columns per group). Contiguous rows (a wide file's group) are a slice, not a take."""
        col = self.table.column(name)
        if sel.size and int(sel[-1]) - int(sel[0]) + 1 == sel.size:
            return col.slice(int(sel[0]), sel.size)
        bounds = np.cumsum([0, *map(len, col.chunks)])
        cuts = np.searchsorted(sel, bounds)
        pieces = [
            chunk.take(pa.array(sel[lo:hi] - start))
            for chunk, start, lo, hi in zip(
                col.chunks, bounds[:-1], cuts[:-1], cuts[1:], strict=True
            )
            if hi > lo
        ]
        return pa.chunked_array(pieces, type=col.type)

    def group(self, sel: np.ndarray) -> _Group:
        """The rows ``sel`` (ascending) of the table."""
        e = self.ex[sel]
        return _Group(
            e=e,
            rows=self.take("source_row", sel).to_numpy(),
            values=self.take("value", sel).to_numpy().astype(np.float64, copy=False),
            reason_codes=self.reasons.codes(self.take("missing_reason", sel)),
            src_codes=self.sources.codes(self.take("source", sel)),
            counts=np.bincount(e, minlength=len(self.example_ids)),
        )

    def duplicates(
        self, grp: _Group, policy: str, metric: str, room: int
    ) -> tuple[int, list[Duplicate]]:
        """How many examples of the group ``grp`` have several rows, and the first ``room``."""
        dup_examples = np.flatnonzero(grp.counts > 1)
        if not dup_examples.size:
            return 0, []
        first_row_of: dict[int, int] = {}
        for pos in np.flatnonzero(np.isin(grp.e, dup_examples[:1000])).tolist():
            first_row_of.setdefault(int(grp.e[pos]), pos)
        out = []
        for d in dup_examples[: max(0, room)]:
            k = first_row_of[int(d)]
            code = grp.src_codes[k]
            out.append(
                Duplicate(
                    policy_id=policy,
                    example_id=str(self.example_ids[int(d)].as_py()),
                    metric=metric,
                    count=int(grp.counts[d]),
                    first_source=str(self.sources.labels[code]) if code >= 0 else "",
                    first_row=int(grp.rows[k]),
                )
            )
        return int(dup_examples.size), out

    def column(self, grp: _Group) -> MetricColumn:
        """The dense column of one (policy, metric) group.

        When the rows are every example once in code order (0, 1, ..., E - 1: every group of a wide
        file) the row-aligned arrays are the dense ones (copied, not scattered): the same values,
        without 7 scatters of 10^6 entries per group.
        """
        n_ex = len(self.example_ids)
        e, v, rc = grp.e, grp.values, grp.reason_codes
        is_missing = (rc >= 0) | np.isnan(v)
        is_inf = np.isinf(v)
        ok = ~is_missing & ~is_inf
        clean = grp.counts.max(initial=0) <= 1 and not np.any(~ok & ~np.isnan(v))
        every = e.size == n_ex > 0 and e[0] == 0 and e[-1] == n_ex - 1 and np.all(np.diff(e) == 1)
        if every:
            dense = np.where(ok, v, np.nan)
            row_of = grp.rows.astype(np.int64)  # a copy: never a view of the table's buffers
            source_of = grp.src_codes.astype(np.int32)
            missing, infinite = is_missing, is_inf
            raw = dense if clean else v.astype(np.float64)
        else:
            dense = np.full(n_ex, np.nan)
            dense[e[ok]] = v[ok]
            row_of = _scattered(e, grp.rows.astype(np.int64, copy=False), n_ex, -1)
            source_of = _scattered(e, grp.src_codes.astype(np.int32, copy=False), n_ex, -1)
            missing = np.zeros(n_ex, dtype=bool)
            infinite = np.zeros(n_ex, dtype=bool)
            missing[e[is_missing]] = True
            infinite[e[is_inf]] = True
            # no duplicate, and every excluded value is NaN: the same array, not a copy
            raw = dense if clean else _scattered(e, v, n_ex, np.nan)
        # missing reason → count (NaN without a reason counts as ``nan``, infinities as ``inf``)
        reason_count = {
            str(self.reasons.labels[code]): int(cnt)
            for code, cnt in zip(*np.unique(rc[rc >= 0], return_counts=True), strict=True)
        }
        if nan_no_reason := int(np.sum(np.isnan(v) & (rc < 0))):
            reason_count["nan"] = reason_count.get("nan", 0) + nan_no_reason
        if n_inf := int(np.sum(is_inf)):
            reason_count["inf"] = n_inf
        return MetricColumn(
            value=dense,
            has_row=grp.counts > 0,
            missing=missing,
            infinite=infinite,
            missing_reasons=reason_count,
            raw=raw,
            row=row_of,
            source=source_of,
        )


def _scattered(
    e: np.ndarray, values: np.ndarray, n_ex: int, fill: object, combine: np.ufunc | None = None
) -> np.ndarray:
    """Shape (n_ex,): ``values`` at the examples ``e``, ``fill`` elsewhere; an example with
    several rows gets its last row's value, or with ``combine`` (``np.minimum``,
    ``np.bitwise_or``...) all of them combined.

    One scatter gives each example one of its values; only the examples whose rows disagree
    with it (rare) are reduced with ``combine.at``.
    """
    out = np.full(n_ex, fill, dtype=values.dtype)
    out[e] = values
    if combine is not None and np.any(disagree := out[e] != values):
        several = np.zeros(n_ex, dtype=bool)
        several[e[disagree]] = True
        rows = several[e]
        combine.at(out, e[rows], values[rows])
    return out


def _rows_without_provenance(table: pa.Table) -> int:
    """Rows with an empty or null source or source_sha256, one record batch at a time."""
    count = 0
    for batch in table.select(["source", "source_sha256"]).to_batches():
        empty = np.zeros(batch.num_rows, dtype=bool)
        for arr in batch.columns:  # from the dictionary: its empty labels, and null (-1)
            codes, dictionary = dictionary_codes(arr)
            empty |= np.array([not s for s in dictionary.to_pylist()] + [True], dtype=bool)[codes]
        count += int(np.sum(empty))
    return count


_MAX_RUNS = 4096
"""Above this many runs of equal group keys, groups are found by comparing every row's key."""


def _group_selections(group_key: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(key, its rows ascending) for each distinct group key, keys ascending.

    A wide file's table holds each group in a few long runs of rows: the runs are found in one
    pass and a group's rows are the concatenation of its runs. Otherwise (many short runs,
    a long file with interleaved rows) each group's rows are ``flatnonzero(group_key == key)``;
    both give the same rows.
    """
    n = group_key.size
    starts = np.flatnonzero(group_key[1:] != group_key[:-1]) + 1
    if starts.size >= _MAX_RUNS:
        # the distinct keys ascending: a count per key, not a sort of every row's key
        keys = np.bincount(group_key).nonzero()[0] if group_key.min() >= 0 else np.unique(group_key)
        for key in keys.tolist():
            yield key, np.flatnonzero(group_key == key)
        return
    bounds = np.concatenate([[0], starts, [n]]).astype(np.int64) if n else np.zeros(1, np.int64)
    run_keys = group_key[bounds[:-1]]
    for key in sorted(set(run_keys.tolist())):
        runs = np.flatnonzero(run_keys == key)
        yield key, np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in runs])


def _group_keys(table: pa.Table) -> tuple[np.ndarray, list[object], list[object]]:
    """Shape (rows,) int32 policy code × metrics + metric code, and the two label lists."""
    key, pol_labels = dictionary_codes(table.column("policy_id"))
    met, met_labels = dictionary_codes(table.column("metric"))
    key = key.astype(np.int32)  # a copy when the codes are a view of the table's indices
    key *= len(met_labels)
    key += met
    return key, pol_labels.to_pylist(), met_labels.to_pylist()


def build_index(table: pa.Table, source_paths: dict[str, str] | None = None) -> EvidenceIndex:
    """Index a canonical evidence table.

    Args:
        table: rows with the canonical schema (possibly from several sources).
        source_paths: source id → file path, so gates can name the file of a row.

    Returns:
        The EvidenceIndex; nothing is dropped: duplicates, conflicts and missing values are
        counted for the gates.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index") as pool:
        # Arrow's kernels release the GIL: what does not need the example codes (the group
        # keys, the provenance count), then the id checks, run on the second core
        keys = pool.submit(_group_keys, table)
        provenance = pool.submit(_rows_without_provenance, table)
        ex, example_ids = _example_codes(table.column("example_id"))
        ids = pool.submit(lambda: (id_variants(example_ids), _ranks(example_ids)))
        reasons, sources = _Labels(table.column("missing_reason")), _Labels(table.column("source"))
        r = _Rows(ex, example_ids, table, reasons, sources)
        group, slices, (split_bits, split_labels), conflicts = r.attributes()
        group_key, pol_labels, met_labels = keys.result()
        columns: dict[tuple[str, str], MetricColumn] = {}
        duplicates: list[Duplicate] = []
        duplicates_by_policy: dict[str, int] = {}
        # One (policy, metric) group's rows in memory at a time, freed before the next are taken
        # (two threads held two, and their malloc arenas kept more: +150-200 MiB at 10^6 pairs).
        for pm, sel in _group_selections(group_key):
            p, m = divmod(pm, len(met_labels))
            policy, metric = str(pol_labels[p]), str(met_labels[m])
            grp = r.group(sel)
            n_dup, found = r.duplicates(grp, policy, metric, 1000 - len(duplicates))
            if n_dup:
                duplicates_by_policy[policy] = duplicates_by_policy.get(policy, 0) + n_dup
                duplicates += found
            columns[(policy, metric)] = r.column(grp)
            del grp
        (n_variants, variants), ranks = ids.result()
    return EvidenceIndex(
        id_array=example_ids, example_rank=ranks, group=group, slice=slices[0],
        slice_codes=slices[1], slice_labels=slices[2], split_bits=split_bits,
        split_labels=tuple(str(x) for x in split_labels), columns=columns,
        duplicates=duplicates, n_duplicates=sum(duplicates_by_policy.values()),
        duplicates_by_policy=duplicates_by_policy, conflicting_attributes=conflicts,
        rows_without_provenance=provenance.result(), n_rows=table.num_rows,
        sources=tuple(str(x) for x in sources.labels), source_paths=source_paths,
        id_variants=variants, n_id_variants=n_variants,
    )  # fmt: skip
