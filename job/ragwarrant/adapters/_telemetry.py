"""Telemetry semantics at the evidence boundary: what an operational value can physically be.

Costs, latencies and token counts are finite and never negative; an arm (policy) whose every
cost, latency or token count is zero — or below what any real LLM call takes — while it has
examples was not instrumented, and comparing it would turn missing measurement into a "100 %
cheaper" claim. Both are ``EvidenceError`` (the run BLOCKs) naming the file, the arm, the column
and, for a single bad value, its row. Unmeasured values are null (missing), never 0: the
adapters leave them null and they are not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import dictionary_codes


@dataclass(frozen=True)
class Floor:
    """The smallest maximum an instrumented arm can show for a metric, and why."""

    value: float
    why: str


#: Metric id suffix → floor. A metric id carries its unit (house style: ``latency_ms``).
PHYSICAL_FLOORS: dict[str, Floor] = {
    "_usd": Floor(1e-9, "no LLM call costs less than 1e-9 USD"),
    "_ms": Floor(1.0, "no LLM call completes in under 1 ms"),
    "_tokens": Floor(1.0, "an LLM call reads or writes at least one token"),
}
#: What the evaluator's own LLM cost (DeepEval, TruLens), summed per example.
JUDGE_COST_METRIC = "judge_cost_usd"
#: Operational metrics that are the evaluator's own, not the application's (never floored).
_NOT_APPLICATION = frozenset({JUDGE_COST_METRIC})
_AMOUNT_SUFFIXES = ("_usd", "_ms", "_tokens", "_calls")


def check_request_values(values: pa.Array, policy: pa.Array, column: str, display: str) -> None:
    """Refuse a negative or non-finite per-request value of a telemetry column (before it is
    summed away).

    Args:
        values: float64, one per request row (null where unmeasured).
        policy: the rows' policy ids, aligned with ``values``.

    Raises:
        EvidenceError: ``evidence-non-finite`` / ``evidence-negative-value`` naming the row,
            the column and the arm.
    """
    bad = first_bad_amount(values)
    if bad is not None:
        code, i, what = bad
        raise EvidenceError(
            code,
            f"{display} row {i + 1}: column {column!r} is {values[i].as_py()}, {what} "
            f"(policy {policy[i].as_py()!r})",
            hint="costs, latencies and token counts are finite and >= 0; an unmeasured "
            "value is an empty cell, never a negative one",
            file=display,
            row=i + 1,
            column=column,
            expected="a finite number >= 0",
            found=str(values[i].as_py()),
        )


def first_bad_amount(values: pa.Array) -> tuple[str, int, str] | None:
    """The first value that is not finite, else the first negative one, as ``(error code,
    0-based index, what it is)``; None when every value is finite and >= 0 (nulls pass)."""
    for code, bad, what in (
        ("evidence-non-finite", pc.invert(pc.is_finite(values)), "not finite"),
        ("evidence-negative-value", pc.less(values, 0.0), "negative"),
    ):
        bad = pc.fill_null(bad, False)
        if pc.any(bad).as_py():
            return code, pc.index(bad, True).as_py(), what
    return None


@dataclass
class _Amounts:
    """One amount metric's values as seen so far in a source (``check_operational_evidence``).

    Attributes:
        bad: the first value (in row order) that is not finite or negative, as (source row,
            value, arm); recorded only for metrics the contract does not declare.
        count: present (non-NaN) values per arm; largest: the largest of them per arm.
    """

    bad: tuple[int, np.floating, str] | None = None
    count: dict[str, int] = field(default_factory=dict)
    largest: dict[str, np.floating] = field(default_factory=dict)

    def check_instrumented(self, metric: str, column: str, floor: Floor, display: str) -> None:
        """Refuse an arm whose every present value is below ``floor`` (``evidence-uninstrumented``,
        arms in sorted order)."""
        for policy in sorted(self.count):
            size, largest = self.count[policy], self.largest[policy]
            if size and float(largest) < floor.value:
                zero = float(largest) == 0.0
                found = "all 0" if zero else f"all below {floor.value:g} (max {largest:g})"
                raise EvidenceError(
                    "evidence-uninstrumented",
                    f"{display}: arm {policy!r} has {column!r} ({metric}) {found} over "
                    f"{size} example(s): the arm was not really instrumented "
                    f"({floor.why})",
                    hint="fix the instrumentation (or the price table) so the arm's real "
                    f"{metric} is recorded; leave unmeasured values empty, never 0",
                    file=display,
                    column=column,
                    expected=f"some {metric} >= {floor.value:g}",
                    found=found,
                )


def _scan_amounts(
    batch: pa.RecordBatch, operational: frozenset[str], seen: dict[str, _Amounts]
) -> None:
    """Add one batch's amount values to ``seen`` (metric id → ``_Amounts``), by dictionary code:
    no string of the batch becomes a Python object."""
    metric_codes, metrics = dictionary_codes(batch.column("metric"))
    policy_codes, policies = dictionary_codes(batch.column("policy_id"))
    metric_labels, policy_labels = metrics.to_pylist(), policies.to_pylist()
    values: np.ndarray | None = None
    for k, label in enumerate(metric_labels):
        metric = str(label)
        if not (metric in operational or metric.endswith(_AMOUNT_SUFFIXES)):
            continue
        sel = np.flatnonzero(metric_codes == k)
        if not sel.size:
            continue
        if values is None:
            values = batch.column("value").to_numpy(zero_copy_only=False).astype(np.float64)
        v, arms = values[sel], policy_codes[sel]
        acc = seen.setdefault(metric, _Amounts())
        if acc.bad is None and metric not in operational:
            bad = ~np.isnan(v) & (~np.isfinite(v) | (v < 0))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                row = int(batch.column("source_row")[int(sel[i])].as_py())
                acc.bad = (row, v[i], str(policy_labels[arms[i]]))
        present = ~np.isnan(v)
        v, arms = v[present], arms[present]
        for code in np.unique(arms):
            arm, mine = str(policy_labels[code]), v[arms == code]
            acc.count[arm] = acc.count.get(arm, 0) + int(mine.size)
            acc.largest[arm] = max(acc.largest.get(arm, mine.max()), mine.max())


def check_operational_evidence(
    evidence: pa.Table,
    metric_names: dict[str, str],
    operational: frozenset[str],
    display: str,
) -> None:
    """Check every operational value an adapter produced, per arm.

    The table is read one record batch at a time by dictionary code (``_scan_amounts``), so the
    check holds one batch's values, not the table's rows as Python objects.

    Args:
        evidence: canonical evidence rows of one source (``evidence.schema.EVIDENCE_SCHEMA``).
        metric_names: the provenance's original column → metric id, to name the column.
        operational: the contract's operational metric ids (plus any id ending in ``_usd``,
            ``_ms``, ``_tokens`` or ``_calls`` is an amount). The sign of a declared metric is
            left to its declared range (``min_value``, the value-range gate); every amount is
            checked for an uninstrumented arm.

    Raises:
        EvidenceError: ``evidence-negative-value`` / ``evidence-non-finite`` naming row, arm
            and column; ``evidence-uninstrumented`` when an arm's every present value of a cost,
            latency or token metric is below its physical floor (``PHYSICAL_FLOORS``). Metrics
            are checked in sorted order, each for a bad value first.
    """
    seen: dict[str, _Amounts] = {}
    for batch in evidence.to_batches():
        _scan_amounts(batch, operational, seen)
    for metric in sorted(seen):
        acc = seen[metric]
        column = next((orig for orig, m in metric_names.items() if m == metric), metric)
        if acc.bad is not None:
            # a contract-declared operational metric has its own declared range (the value-range
            # and non-finite gates); an undeclared amount (tokens, judge cost) is checked here
            row, value, arm = acc.bad
            what = "not finite" if not np.isfinite(value) else "negative"
            raise EvidenceError(
                "evidence-non-finite" if what == "not finite" else "evidence-negative-value",
                f"{display} row {row}: {column!r} ({metric}) is {value}, {what}, in arm {arm!r}",
                hint="costs, latencies and token counts are finite and >= 0",
                file=display,
                row=row,
                column=column,
                expected="a finite number >= 0",
                found=str(value),
            )
        floors = (f for suffix, f in PHYSICAL_FLOORS.items() if metric.endswith(suffix))
        floor = None if metric in _NOT_APPLICATION else next(floors, None)
        if floor is not None:
            acc.check_instrumented(metric, column, floor, display)


class KeyCodes:
    """Dense integer codes of the string keys (trace, example, policy ids) of a streamed file.

    Telemetry is reduced per batch by a group-by on these codes rather than on the strings: a
    batch's key column is dictionary-encoded (Parquet string columns arrive so, others are encoded
    by ``pyarrow.compute.dictionary_encode``), and only its dictionary — the distinct keys of the
    batch, usually shared by every batch of a row group — is looked up
    (``pyarrow.compute.index_in``); the rows are mapped by one ``take`` of the dictionary indices.
    Memory grows with the distinct keys, not the rows. Codes are assigned in order of first
    appearance; null stays null.
    """

    def __init__(self) -> None:
        self._values = pa.array([], pa.string())  # the key of each code
        self._last: tuple[pa.Array, pa.Array] | None = None  # (dictionary, its codes)

    def __len__(self) -> int:
        return len(self._values)

    def _codes_of(self, dictionary: pa.Array, indices: pa.Array) -> pa.Array:
        """The code of each dictionary value the rows use, new ones appended in dictionary order
        (a value no row uses, or null, gets null)."""
        dictionary = dictionary.cast(pa.string())
        used = np.zeros(len(dictionary), dtype=bool)
        used[pc.drop_null(indices).to_numpy()] = True
        found = pc.index_in(dictionary, value_set=self._values, skip_nulls=True)
        new = pc.and_(pc.and_(pc.is_null(found), pc.is_valid(dictionary)), pa.array(used))
        if pc.any(new).as_py():
            fresh = pc.unique(dictionary.filter(new))
            self._values = pa.concat_arrays([self._values, fresh])
            found = pc.index_in(dictionary, value_set=self._values, skip_nulls=True)
        return pc.cast(found, pa.int64())

    def encode(self, keys: pa.Array) -> pa.Array:
        """Return the int64 code of each key (null where the key is null).

        Args:
            keys: string or dictionary<string> array, one per row.
        """
        arr = keys if pa.types.is_dictionary(keys.type) else pc.dictionary_encode(keys)
        dictionary, indices = arr.dictionary, arr.indices
        if self._last is not None and (
            dictionary is self._last[0] or dictionary.equals(self._last[0])
        ):
            codes = pc.take(self._last[1], indices)
            if codes.null_count == indices.null_count:  # no value this dictionary left uncoded
                return codes
        self._last = (dictionary, self._codes_of(dictionary, indices))
        return pc.take(self._last[1], indices)

    def decode(self, codes: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The string key of each code (the inverse of ``encode``; null stays null)."""
        return pc.take(self._values, codes)


_INT64 = np.iinfo(np.int64)


class TraceTotals:
    """Running per-trace sums, minima and maxima of span columns, indexed by trace code.

    Each batch is reduced by one vectorised group-by on its trace codes (``KeyCodes``):
    ``numpy.bincount`` for the float sums and the counts of boolean columns (a column true on
    every row is the trace's row count, one false on every row is skipped), ``numpy.add.at`` for
    integer sums, ``numpy.minimum.at``/``maximum.at`` for the extremes, into arrays with one
    slot per trace seen so far. Memory is a few numbers per trace, flat in the number of spans.
    Sums add a trace's spans in row order within a batch, then the batches in order — the
    association of Arrow's ``hash_sum`` over per-batch partials, so the results are
    bit-identical to grouping each batch with ``pyarrow.Table.group_by`` and summing the
    partials in order. Integer and boolean columns are summed exactly (int64).
    A null in a ``mins``/``maxes`` column is skipped; a trace with none gets null.

    ``first`` names an output column holding each trace's first row number: codes must be
    dense and assigned in stream order (a trace first seen in a batch has a code above every
    code of the earlier batches, as ``KeyCodes`` assigns them), so only rows of new traces are
    looked at.
    """

    def __init__(
        self,
        sums: tuple[str, ...],
        mins: tuple[str, ...],
        maxes: tuple[str, ...],
        first: str | None = None,
    ):
        self._sums, self._mins, self._maxes, self._first = sums, mins, maxes, first
        self._acc: dict[str, np.ndarray] = {}
        self._size = 0
        self._seen = 0  # traces seen so far (codes 0 .. _seen - 1)

    def _grow(self, size: int) -> None:
        if size <= self._size:
            return
        cap = max(size, 2 * self._size)
        firsts = ((self._first, _INT64.max),) if self._first else ()
        for name, empty in (
            *((c, None) for c in self._sums),
            *((c, _INT64.max) for c in self._mins),
            *((c, _INT64.min) for c in self._maxes),
            *firsts,
        ):
            old = self._acc.get(name)
            dtype = old.dtype if old is not None else np.float64 if empty is None else np.int64
            new = np.zeros(cap, dtype) if empty is None else np.full(cap, empty, np.int64)
            if old is not None:
                new[: len(old)] = old
            self._acc[name] = new
        self._size = cap

    def _add_sum(
        self, c: str, trace: np.ndarray, n: int, column: pa.Array, count: list[np.ndarray]
    ) -> None:
        """Add one column's sums over a batch's traces ``0 .. n - 1`` (``count``: the batch's row
        count per trace, cached)."""
        if pa.types.is_boolean(column.type):  # per trace, the rows where it is true (null: false)
            if column.null_count:
                column = pc.fill_null(column, False)
            true = column.true_count
            if true == 0:
                return
            if true < len(column):
                counts = np.bincount(trace[column.to_numpy(zero_copy_only=False)], minlength=n)
            else:  # true everywhere: the row count per trace
                if not count:
                    count.append(np.bincount(trace, minlength=n))
                counts = count[0]
            self._acc[c] = self._acc[c].astype(np.int64, copy=False)
            self._acc[c][:n] += counts
            return
        values = column.to_numpy()
        if self._acc[c].dtype != values.dtype:  # int64 sums stay int64
            self._acc[c] = self._acc[c].astype(values.dtype)
        if values.dtype.kind in "iub":  # exact: add straight into the running totals
            np.add.at(self._acc[c], trace, values)
        else:  # float: the batch's partial sums (in row order) first, then one addition per trace
            self._acc[c][:n] += np.bincount(trace, weights=values, minlength=n)

    def add(self, trace: np.ndarray, columns: pa.Table, first_row: int = 0) -> None:
        """Fold one batch in.

        Args:
            trace: int64 trace code of each row (non-null, dense from 0).
            columns: the ``sums`` (numeric or boolean, non-null), ``mins`` and ``maxes`` (int64)
                columns, aligned with ``trace``.
            first_row: the row number of the batch's first row (for ``first``).
        """
        n = int(trace.max()) + 1
        self._grow(n)
        count: list[np.ndarray] = []  # the batch's row count per trace, computed once if needed
        for c in self._sums:
            self._add_sum(c, trace, n, one_chunk(columns.column(c)), count)
        for names, ufunc, empty in (
            (self._mins, np.minimum, _INT64.max),
            (self._maxes, np.maximum, _INT64.min),
        ):
            for c in names:
                col = one_chunk(columns.column(c))
                if col.null_count:
                    col = pc.fill_null(col, empty)
                ufunc.at(self._acc[c], trace, col.to_numpy().astype(np.int64, copy=False))
        if self._first and n > self._seen:
            new = np.flatnonzero(trace >= self._seen)
            np.minimum.at(self._acc[self._first], trace[new], new + first_row)
        self._seen = max(self._seen, n)

    def table(self, count: int) -> pa.Table:
        """The totals of traces ``0 .. count - 1``, one column per name (extremes null when
        empty)."""
        out: dict[str, pa.Array] = {}
        for c in self._sums:
            out[c] = pa.array(self._acc[c][:count])
        for names, empty in ((self._mins, _INT64.max), (self._maxes, _INT64.min)):
            for c in names:
                values = self._acc[c][:count]
                out[c] = pa.array(values, mask=values == empty)
        if self._first:
            out[self._first] = pa.array(self._acc[self._first][:count])
        return pa.table(out)


def one_chunk(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one array (without a copy when it already is one chunk)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column
