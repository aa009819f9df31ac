"""The generic adapter: a results file (wide or long) or a per-request telemetry file.

The contract's column mapping says where each canonical field is. Results files yield one row
per (policy, example, metric); telemetry files are reduced per (policy, example) by the declared
reductions (sum, count, max, mean) while streaming, so memory grows with the number of examples,
not with the number of requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, SourceProvenance
from ragwarrant.adapters._columns import column_as_float, column_as_string
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.adapters._requests import RequestIdentity, identity_columns
from ragwarrant.adapters._tables import at_file_row, iter_parquet_batches, open_parquet, read_table
from ragwarrant.adapters._telemetry import check_request_values, one_chunk
from ragwarrant.adapters._text import read_texts
from ragwarrant.contract import EvidenceSource
from ragwarrant.errors import EvidenceError
from ragwarrant.evidence.schema import (
    DICTIONARY_STRING,
    EVIDENCE_SCHEMA,
    conform_evidence,
    constant_column,
)


def policy_column(table: pa.Table, source: EvidenceSource, display: str) -> pa.Array:
    """Return the policy id of each row: the mapped column, or the source's fixed ``policy``.

    When both are given, every row's policy must equal the fixed one.

    Raises:
        EvidenceError: ``evidence-mixed-policies`` naming the first row of another policy.
    """
    n = table.num_rows
    mapped = source.columns.policy_id
    if mapped and mapped in table.schema.names:
        col = column_as_string(table, mapped, display, allow_null=False)
        if source.policy is not None:
            other = pc.not_equal(col, source.policy)
            if pc.any(other).as_py():
                row = pc.index(other, True).as_py()
                raise EvidenceError(
                    "evidence-mixed-policies",
                    f"{display} row {row + 1}: column {mapped!r} is {col[row].as_py()!r}, but the "
                    f"contract says every row of this file is policy {source.policy!r}",
                    hint="split the file per policy, or drop 'policy' from the source",
                    file=display,
                    row=row + 1,
                    column=mapped,
                    expected=source.policy,
                    found=col[row].as_py(),
                )
        return col
    if source.policy is None:
        require_columns(table.schema.names, [mapped or "policy_id"], display)
    return pa.repeat(pa.scalar(source.policy, pa.string()), n)  # not a list of n strings


#: The key columns of one metric's canonical rows: policy, example, group, slice, split (each a
#: string array of length n, or None for all null) and the int64 1-based source rows.
Keys = tuple[pa.Array, pa.Array, pa.Array | None, pa.Array | None, pa.Array | None, pa.Array]


def canonical_rows(
    keys: Keys, metric: str, values: pa.Array, missing_reason: pa.Array, source: str, sha256: str
) -> pa.Table:
    """Assemble canonical evidence rows for one metric from aligned column arrays.

    Args:
        keys: the rows' key columns (``Keys``), length n.
        metric: canonical metric id of every row.
        values: float64 of length n (null where missing); missing_reason aligned with it.
        source: ``<source id>:<tool>@<version>``; sha256: the file's hash.
    """
    policy, example, *labels, rows = keys
    n = len(policy)
    null_str = constant_column(None, n)
    columns = [
        policy,
        example,
        *(k if k is not None else null_str for k in labels),
        constant_column(metric, n),
        values,
        missing_reason,
        constant_column(source, n),
        constant_column(sha256, n),
        rows,
    ]
    return conform_evidence(pa.Table.from_arrays(columns, names=EVIDENCE_SCHEMA.names))


def _optional(table: pa.Table, name: str | None, display: str) -> pa.Array | None:
    if not name:
        return None
    require_columns(table.schema.names, [name], display)
    return column_as_string(table, name, display, allow_null=True)


def load(request: AdapterRequest) -> AdapterResult:
    """Read a generic results or telemetry file into canonical evidence.

    Raises:
        EvidenceError: the file does not match the declared mapping (missing column, wrong type,
            empty file, null key, mixed policies), naming file, row, column, expected and found.
    """
    source = request.source
    if source.kind == "telemetry":
        return _load_telemetry(request)
    display = request.display_path
    table = read_table(request.path, source.format, display)
    cols = source.columns
    require_columns(table.schema.names, [cols.example_id], display)
    policy = policy_column(table, source, display)
    example = column_as_string(table, cols.example_id, display, allow_null=False)
    group = _optional(table, cols.group_id, display)
    slice_ = _optional(table, cols.slice, display)
    split = _optional(table, cols.split, display)
    rows = pa.array(np.arange(1, table.num_rows + 1, dtype=np.int64))  # not 10^6 Python ints
    tag = f"{source.id}:{source.evaluator}@{source.evaluator_version or 'unknown'}"
    parts: list[pa.Table] = []
    names: dict[str, str] = {}
    if source.layout == "wide":
        require_columns(table.schema.names, list(source.metrics), display)
        # every metric's rows share these key arrays: dictionary-encode them once, not per metric;
        # absent keys and all-present missing reasons share one all-null column (8 MB per 10^6)
        null = constant_column(None, table.num_rows)
        # (cast to the canonical dictionary-encoded string type, as ``conform_evidence`` does)
        enc = [
            a.cast(DICTIONARY_STRING) if a is not None else null
            for a in (policy, group, slice_, split)
        ]
        keys: Keys = (enc[0], example, enc[1], enc[2], enc[3], rows)
        for column, metric in source.metrics.items():
            values, reason = column_as_float(table, column, display)
            reason = null if reason.null_count == len(reason) else reason
            names[column] = metric
            parts.append(canonical_rows(keys, metric, values, reason, tag, request.sha256))
    else:
        assert cols.metric and cols.value  # guaranteed by the contract model
        require_columns(table.schema.names, [cols.metric, cols.value], display)
        metric_col = column_as_string(table, cols.metric, display, allow_null=False)
        values, reason = column_as_float(table, cols.value, display)
        every: Keys = (policy, example, group, slice_, split, rows)
        for metric in pc.unique(metric_col).to_pylist():
            mask = pc.equal(metric_col, metric)
            names[metric] = metric
            p, e, g, sl, sp, r = (k.filter(mask) if k is not None else None for k in every)
            values_m, reason_m = values.filter(mask), reason.filter(mask)
            keys_m: Keys = (p, e, g, sl, sp, r)
            parts.append(canonical_rows(keys_m, metric, values_m, reason_m, tag, request.sha256))
    evidence = pa.concat_tables(parts)
    provenance = SourceProvenance(
        source_id=source.id,
        path=display,
        sha256=request.sha256,
        adapter="generic",
        tool=source.evaluator,
        tool_version=source.evaluator_version,
        metric_names=names,
        pairing_method="id-column",
        rows_read=table.num_rows,
    )
    texts = read_texts(table, source, policy, example, display)  # private; never written out
    return AdapterResult(evidence=evidence, provenance=provenance, texts=texts)


@dataclass(frozen=True)
class _Telemetry:
    """A per-request telemetry source being reduced per (policy, example) as it streams.

    Attributes:
        request: the source's request.
        wanted: the columns to read (keys, labels, values).
        values: the value columns alone.
        nonnegative: the value columns whose per-request values cannot be negative: those
            reduced into a metric the contract does not give a negative ``min_value`` (costs,
            latencies are >= 0).
    """

    request: AdapterRequest
    wanted: list[str]
    values: list[str]
    nonnegative: set[str]

    @classmethod
    def of(cls, request: AdapterRequest) -> _Telemetry:
        """The columns ``request``'s source reads and the value columns refused when negative."""
        source = request.source
        cols = source.columns
        keys = [cols.example_id] + (
            [cols.policy_id] if cols.policy_id and source.policy is None else []
        )
        extra = [c for c in (cols.group_id, cols.slice, cols.split) if c]
        values = sorted({r.column for r in source.reduce.values() if r.column})
        floor = {m.id: m.min_value for m in request.contract.operational_metrics}
        nonnegative = set()
        for metric, r in source.reduce.items():
            declared = floor.get(metric, 0.0)
            if r.column and declared is not None and declared >= 0:
                nonnegative.add(r.column)
        return cls(request, list(dict.fromkeys(keys + extra + values)), values, nonnegative)

    def batches(self) -> tuple[Iterator[pa.RecordBatch], RequestIdentity]:
        """The file's batches (``wanted`` plus its request-identity columns) and the identity
        check that the caller feeds batch by batch (``_requests``)."""
        source, display, path = self.request.source, self.request.display_path, self.request.path
        if source.format == "parquet":  # the column names from the footer(s)
            if path.is_dir():
                names = list(pads.dataset(path, format="parquet").schema.names)
            else:
                names = list(open_parquet(path, display).schema_arrow.names)
            ids, is_id = identity_columns(names)
            read = list(dict.fromkeys(self.wanted + ids))
            return iter_parquet_batches(path, read, display), RequestIdentity(ids, is_id, display)
        table = read_table(path, source.format, display)
        require_columns(table.schema.names, self.wanted, display)
        ids, is_id = identity_columns(table.schema.names)
        read = list(dict.fromkeys(self.wanted + ids))
        return iter(table.select(read).to_batches()), RequestIdentity(ids, is_id, display)

    def partial(self, t: pa.Table, offset: int) -> pa.Table:
        """One batch (``offset`` rows after the file's first) grouped by its keys: first row,
        counts, and sum/max/count of each value."""
        source, display = self.request.source, self.request.display_path
        cols = source.columns
        try:
            key_arrays = {
                "policy_id": policy_column(t, source, display),
                "example_id": column_as_string(t, cols.example_id, display, allow_null=False),
            }
            for role in ("group_id", "slice", "split"):  # the mapping's field is the role
                if name := getattr(cols, role):
                    key_arrays[role] = column_as_string(t, name, display, allow_null=True)
            data = dict(key_arrays)
            for c in self.values:
                values, reason = column_as_float(t, c, display)
                if c in self.nonnegative:
                    check_request_values(values, key_arrays["policy_id"], c, display)
                data[f"v:{c}"] = values
                data[f"m:{c}"] = pc.cast(pc.is_valid(reason), pa.int64())
        except EvidenceError as exc:
            raise at_file_row(exc, offset) from exc
        data["first_row"] = pa.array(np.arange(offset + 1, offset + t.num_rows + 1, dtype=np.int64))
        aggs = [("first_row", "min")] + [(f"m:{c}", "sum") for c in self.values]
        for c in self.values:
            aggs += [(f"v:{c}", "sum"), (f"v:{c}", "max"), (f"v:{c}", "count")]
        aggs.append(("first_row", "count"))
        return pa.table(data).group_by(list(key_arrays), use_threads=False).aggregate(aggs)

    def merge(self, partials: list[pa.Table]) -> tuple[pa.Table, list[str]]:
        """Re-aggregate the per-batch partials per key; return them and the key columns."""
        merged = pa.concat_tables(partials)
        group_keys = [
            n
            for n in ("policy_id", "example_id", "group_id", "slice", "split")
            if n in merged.schema.names
        ]
        reaggs = [("first_row_min", "min"), ("first_row_count", "sum")]
        for c in self.values:
            reaggs += [
                (f"m:{c}_sum", "sum"),
                (f"v:{c}_sum", "sum"),
                (f"v:{c}_max", "max"),
                (f"v:{c}_count", "sum"),
            ]
        return merged.group_by(group_keys, use_threads=False).aggregate(reaggs), group_keys


def _load_telemetry(request: AdapterRequest) -> AdapterResult:
    """Reduce a per-request telemetry file to per-(policy, example) operational metrics."""
    source = request.source
    display = request.display_path
    telemetry = _Telemetry.of(request)
    partials: list[pa.Table] = []
    rows_read = 0
    batches, identity = telemetry.batches()
    for batch in batches:
        t = pa.Table.from_batches([batch])
        partials.append(telemetry.partial(t, rows_read))
        identity.add(t, policy_column(t, source, display))
        rows_read += t.num_rows
    identity.check()  # a request written twice would be summed twice (_requests)
    final, group_keys = telemetry.merge(partials)
    n = final.num_rows
    tag = f"{source.id}:{source.evaluator}@{source.evaluator_version or 'unknown'}"

    def key(name: str) -> pa.Array | None:
        return final.column(name).combine_chunks() if name in group_keys else None

    keys: Keys = (
        final.column("policy_id").combine_chunks(),
        final.column("example_id").combine_chunks(),
        key("group_id"),
        key("slice"),
        key("split"),
        final.column("first_row_min_min").combine_chunks(),
    )
    parts = []
    for metric, red in source.reduce.items():  # missing where any request's value is
        if red.how == "count":
            values = pc.cast(final.column("first_row_count_sum"), pa.float64())
            missing = pa.nulls(n, pa.string())
        else:
            col = red.column
            assert col is not None  # guaranteed by TelemetryReduction
            total = final.column(f"v:{col}_sum_sum")
            if red.how == "sum":
                values = total
            elif red.how == "max":
                values = final.column(f"v:{col}_max_max")
            else:
                values = pc.divide(total, pc.cast(final.column(f"v:{col}_count_sum"), pa.float64()))
            has_missing = pc.greater(final.column(f"m:{col}_sum_sum"), 0)
            values = pc.if_else(has_missing, pa.scalar(None, pa.float64()), values)
            missing = pc.if_else(has_missing, pa.scalar("null"), pa.scalar(None, pa.string()))
            values, missing = one_chunk(pc.cast(values, pa.float64())), one_chunk(missing)
        parts.append(canonical_rows(keys, metric, values, missing, tag, request.sha256))
    provenance = SourceProvenance(
        source_id=source.id,
        path=display,
        sha256=request.sha256,
        adapter="generic",
        tool=source.evaluator,
        tool_version=source.evaluator_version,
        metric_names={k: (v.column or "count(*)") for k, v in source.reduce.items()},
        pairing_method="id-column",
        rows_read=rows_read,
        notes=[f"{rows_read} requests reduced to {n} (policy, example) rows"],
    )
    return AdapterResult(evidence=pa.concat_tables(parts), provenance=provenance)
