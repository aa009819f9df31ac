"""Repeated request identities in per-request telemetry: one request written twice.

A telemetry file holds one row per request (an LLM call, a span). Reducing it with ``sum`` or
``count`` turns a row written twice — a re-run ingestion, a concatenated export — into twice the
arm's cost (fifth fresh-user trial: every baseline row appended a second time doubled the
baseline's summed ``cost_usd`` and turned REJECT into PROMOTE). So before the reduction counts,
each row's request identity must be unique:

- the column the contract names (``columns.request_id``), else a column literally named
  ``request_id``, else the span id (``span_id`` / ``context.span_id``, with its trace id
  ``trace_id`` / ``context.trace_id`` when present: OpenTelemetry span ids are unique within a
  trace, W3C Trace Context §3.2);
- without any of them, the whole row: rows identical in every column are a duplicated ingestion.

Request ids (text) are compared ignoring letter case, white space at either end and invisible
characters (Unicode format characters such as a zero-width space, BOM, joiner or soft hyphen, and
U+180E) anywhere, as example ids are (``'r1'``, ``'R1 '``, ``'r1\u200b'``: one request written
two ways would count twice).

A repeat is an ``EvidenceError`` (``evidence-duplicate-request``; the run BLOCKs at
``hard:evidence-readable:<source>``) naming the file, the first and the repeating 1-based data
row, the identity columns and the arm (policy id), never the identity's value.

``SpanIdentity`` is the same check for the span adapters (``otel``, ``phoenix``), which stream
spans folded per trace: a (trace, span id) pair seen twice, span ids folded to lower-case hex
without white space or invisible characters; a span without a valid id is refused, and a file
without a span id column is compared by whole rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.adapters._telemetry import KeyCodes
from ragwarrant.errors import EvidenceError

#: Default request-identity columns, first present wins (a span id goes with its trace id).
REQUEST_ID_COLUMNS: tuple[tuple[str, ...], ...] = (
    ("request_id",),
    ("span_id", "trace_id"),
    ("context.span_id", "context.trace_id"),
)


#: Characters no id means but a copy may carry: Unicode format characters (category Cf: zero-width
#: space, BOM, joiners, word joiner, soft hyphen) and U+180E (Cf before Unicode 6.3). RE2 syntax.
_INVISIBLE = r"[\p{Cf}\x{180E}]"


def fold_request_ids(ids: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Request ids as compared: invisible characters (``_INVISIBLE``) removed, white space at
    either end trimmed, lower case. Vectorised (``pyarrow.compute``); the regular expression
    runs only when some id is not ASCII (ASCII has no format characters).

    Args:
        ids: shape (n,) Arrow strings (nulls stay null).
    """
    if not pc.all(pc.string_is_ascii(ids)).as_py():
        ids = pc.replace_substring_regex(ids, _INVISIBLE, "")
    return pc.utf8_lower(pc.utf8_trim_whitespace(ids))


def identity_columns(names: Sequence[str], declared: str | None = None) -> tuple[list[str], bool]:
    """The columns that identify one request, and whether they are an id (False: every column).

    Args:
        names: the file's column names.
        declared: the contract's ``columns.request_id``, if any.

    Raises:
        EvidenceError: ``evidence-missing-column`` when ``declared`` is not a column.
    """
    if declared is not None:
        if declared not in names:
            raise EvidenceError(
                "evidence-missing-column",
                f"the request id column {declared!r} (columns.request_id) is not in the file",
                hint="name the file's request id column, or leave columns.request_id out",
                column=declared,
                expected=declared,
                found=", ".join(sorted(names)[:20]),
            )
        return [declared], True
    for group in REQUEST_ID_COLUMNS:
        if group[0] in names:
            return [c for c in group if c in names], True
    return list(names), False


class RequestIdentity:
    """Collects the identity columns of a streamed telemetry file and checks them once.

    Memory: the identity columns of every row (one string per row with an id column); the
    check is one ``pyarrow.Table.group_by`` count over them (vectorised, no Python per row).
    """

    def __init__(self, columns: list[str], is_id: bool, display: str) -> None:
        self.columns, self.is_id, self.display = columns, is_id, display
        self._parts: list[pa.Table] = []

    def add(self, batch: pa.Table, policy: pa.Array) -> None:
        """Keep one batch's identity columns and its rows' policy ids (aligned, in order)."""
        keep = {}
        for name in self.columns:  # group-by keys: dictionaries decoded, nested types left out
            col = batch.column(name)
            if pa.types.is_dictionary(col.type):
                col = col.cast(col.type.value_type)
            if self.is_id and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                col = fold_request_ids(col)  # 'r1 ', 'R1', 'r1\u200b': one request
            if not pa.types.is_nested(col.type):
                keep[name] = col
        keep["__policy"] = pa.chunked_array([policy])
        self._parts.append(pa.table(keep))

    def check(self) -> None:
        """Raise on the first repeated identity (by the row of its first occurrence).

        Raises:
            EvidenceError: ``evidence-duplicate-request`` naming the file, both 1-based data
                rows, the identity columns, the arm and the count of repeating rows.
        """
        if not self._parts:
            return
        table = pa.concat_tables(self._parts)
        self._parts = []
        keys = [c for c in table.schema.names if c != "__policy"]
        if not keys:
            return
        rows = pa.array(np.arange(1, table.num_rows + 1, dtype=np.int64))
        grouped = (
            table.select(keys)
            .append_column("__row", rows)
            .group_by(keys, use_threads=False)
            .aggregate([("__row", "min"), ("__row", "count")])
        )
        counts = grouped.column("__row_count").to_numpy()
        if counts.size == 0 or counts.max() <= 1:
            return
        repeated = np.flatnonzero(counts > 1)
        firsts = grouped.column("__row_min").to_numpy()[repeated]
        at = int(repeated[np.argmin(firsts)])
        same = pa.chunked_array([pa.array(np.ones(table.num_rows, dtype=bool))])
        for k in keys:  # the rows whose key equals the repeated one (null equals null)
            value, col = grouped.column(k)[at].as_py(), table.column(k)
            hit = pc.is_null(col) if value is None else pc.fill_null(pc.equal(col, value), False)
            same = pc.and_(same, hit)
        rows_hit = np.flatnonzero(same.to_numpy(zero_copy_only=False))
        first, repeat = (int(i) + 1 for i in rows_hit[:2])
        policy = table.column("__policy")[first - 1].as_py()
        what = (
            f"the same request id ({', '.join(repr(c) for c in self.columns)}; letter case, "
            "white space at either end and invisible characters ignored)"
            if self.is_id
            else "every column (no request_id or span_id column)"
        )
        raise EvidenceError(
            "evidence-duplicate-request",
            f"{self.display} rows {first} and {repeat} repeat {what} (policy {policy!r}); "
            f"{int((counts[repeated] - 1).sum())} row(s) in all repeat an earlier request: a "
            "request counted twice would double its arm's summed cost",
            hint="remove the repeated rows (a re-run ingestion or a concatenated export); "
            "each telemetry row must be one request",
            file=self.display,
            row=repeat,
            column=", ".join(self.columns) if self.is_id else None,
            expected="each request once",
            found=f"rows {first} and {repeat} are the same request",
        )


def _words16(ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each 16-byte id (OpenTelemetry's span id in hex) as its two 64-bit words, shape (n, 2)
    (zeros for other ids), and which ids are 16 bytes.

    Args:
        ids: shape (n,) Arrow ``string`` array (nulls allowed).
    """
    sixteen = pc.fill_null(pc.equal(pc.binary_length(ids), 16), False)
    ok = sixteen.to_numpy(zero_copy_only=False)
    words = np.zeros((len(ids), 2), np.uint64)
    chars = ids if ok.all() else ids.filter(sixteen)
    if len(chars):
        offsets = np.frombuffer(chars.buffers()[1], np.int32, len(chars) + 1, 4 * chars.offset)
        text = np.frombuffer(chars.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
        words[ok] = text.view(np.uint64).reshape(-1, 2)
    return words, ok


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer (Steele, Lea & Flood, OOPSLA 2014) of uint64 values, in place."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


#: White space (ASCII, U+0085, every Unicode separator) and invisible characters: none is part of
#: a span or trace id. RE2 syntax.
_SPACE_OR_INVISIBLE = r"[\s\x0B\x{85}\p{Z}\p{Cf}\x{180E}]"
_LOWER_HEX = np.zeros(256, dtype=bool)
_LOWER_HEX[np.frombuffer(b"0123456789abcdef", np.uint8)] = True
_ZERO_WORD = np.frombuffer(b"00000000", np.uint64)[0]  # eight '0' digits: half an invalid id
#: A 128-bit id written as a UUID (``8-4-4-4-12``, in braces or as ``urn:uuid:``) or a 64- or
#: 128-bit id with a ``0x`` prefix: the groups of its hex digits, joined they are the W3C form.
_HEX_FORMS = (
    r"^(?:urn:uuid:)?\{?([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})\}?$"
    r"|^0x([0-9a-f]{16}|[0-9a-f]{32})$"
)


def fold_span_ids(ids: pa.Array) -> pa.Array:
    """Span (or trace) ids as compared: white space and invisible characters removed anywhere,
    lower case, and a UUID or ``0x`` form written as its hex digits. W3C Trace Context (§3.2.2)
    writes ids as lower-case hex, so ``'7C2B…'``, ``' 7c2b…'``, ``'\u00a07c2b…'`` and
    ``'0x7c2b…'`` are one id (a base64 form is not recognised). Vectorised: when every id is already
    lower-case hex (one byte-table pass over the values), the ids are returned as they are.

    Args:
        ids: shape (n,) Arrow ``string`` array (nulls stay null).
    """
    offsets = np.frombuffer(ids.buffers()[1], np.int32, len(ids) + 1, 4 * ids.offset)
    data = ids.buffers()[2]
    if data is None or _LOWER_HEX[np.frombuffer(data, np.uint8)[offsets[0] : offsets[-1]]].all():
        return ids
    folded = pc.utf8_lower(pc.replace_substring_regex(ids, _SPACE_OR_INVISIBLE, ""))
    return pc.replace_substring_regex(folded, _HEX_FORMS, r"\1\2\3\4\5\6")


class SpanIdentity:
    """Repeated (trace id, span id) pairs in a streamed spans file: a span delivered twice.

    OpenTelemetry span ids are unique within a trace (W3C Trace Context §3.2), so a repeat is a
    re-delivered or concatenated export (a Collector's at-least-once delivery), which would
    count its LLM calls and cost twice. Span ids are compared folded (``fold_span_ids``). Each
    span is kept as one 64-bit hash of its trace's code (the adapter's ``KeyCodes``) and its
    span id (its bytes when it is 16 bytes long, the OpenTelemetry hex form, else its code in a
    ``KeyCodes`` of its own): 8 bytes per span. Two different spans share a hash with
    probability about n²/2^65 for n spans (1 in 370,000 at 10^7 spans).

    Every OpenTelemetry span has a span id (OTLP ``Span.span_id``; all zeros is invalid, W3C
    Trace Context §3.2.2.4): a span row whose id is missing, empty or all zeros is refused. A
    file with no span id column is compared by whole rows (``add_rows``), as generic telemetry
    without an id column is.
    """

    def __init__(self, display: str) -> None:
        self.column: str | None = "span_id"
        self.display = display
        self._other = KeyCodes()
        self._columns: dict[str, KeyCodes] = {}
        self._hashes: list[np.ndarray] = []

    def add(self, trace: np.ndarray, ids: pa.Array, first_row: int, column: str) -> None:
        """Keep one batch's span keys: ``trace`` its rows' trace codes, ``ids`` their span ids
        (from ``column``), ``first_row`` the 1-based span row of the batch's first row.

        Raises:
            EvidenceError: ``evidence-null-key`` naming the file, the 1-based span row and the
                column of the first span whose id is missing, empty or all zeros.
        """
        self.column = column
        ids = ids.dictionary_decode() if pa.types.is_dictionary(ids.type) else ids
        ids = fold_span_ids(ids.cast(pa.string()))
        words, packed = _words16(ids)
        missing = packed & (words == _ZERO_WORD).all(axis=1)
        rest = np.flatnonzero(~packed)
        codes = np.zeros(0, np.int64)
        if rest.size:
            other = ids.take(pa.array(rest))
            invalid = pc.or_(
                pc.equal(pc.binary_length(other), 0), pc.match_substring_regex(other, "^0+$")
            )
            missing[rest[pc.fill_null(invalid, True).to_numpy(zero_copy_only=False)]] = True
            codes = pc.fill_null(self._other.encode(other), -1).to_numpy()
        if missing.any():
            raise self._no_span_id(first_row + int(np.argmax(missing)), column)
        words[rest, 0] = codes.view(np.uint64)
        key = trace.astype(np.int64) * 2 + (~packed)  # 16-byte and coded ids apart
        mixed = _mix(_mix(key.view(np.uint64)) ^ words[:, 0])
        self._hashes.append(_mix(mixed ^ words[:, 1]))

    def add_rows(self, batch: pa.Table) -> None:
        """Keep one batch's whole-row keys, for a file without a span id column: each column's
        value coded (a ``KeyCodes`` per column, memory growing with its distinct values), mixed
        into one 64-bit hash per row; nested columns are left out."""
        self.column = None
        hashes = np.zeros(batch.num_rows, np.uint64)
        for name in sorted(batch.schema.names):
            col = batch.column(name)
            if pa.types.is_nested(col.type):
                continue
            text = pc.cast(col, pa.string()).combine_chunks()
            codes = self._columns.setdefault(name, KeyCodes()).encode(text)
            hashes = _mix(hashes ^ pc.fill_null(codes, -1).to_numpy().view(np.uint64))
        self._hashes.append(hashes)

    def _no_span_id(self, row: int, column: str) -> EvidenceError:
        return EvidenceError(
            "evidence-null-key",
            f"{self.display} span row {row}: column {column!r} has no valid span id (missing, "
            "empty or all zeros); every OpenTelemetry span has one",
            hint="export the spans with their span ids (a span without one cannot be told from "
            "a re-delivered copy)",
            file=self.display,
            row=row,
            column=column,
            expected="a span id (16 lower-case hex digits, not all zeros)",
            found="no valid span id",
        )

    def check(self) -> None:
        """Raise on the earliest span row that repeats an earlier span's (trace, span id).

        Raises:
            EvidenceError: ``evidence-duplicate-request`` naming the file, both 1-based span
                rows and the span id column, never the ids.
        """
        if not self._hashes:
            return
        hashes = np.concatenate(self._hashes)
        self._hashes = []
        ordered = np.sort(hashes)
        repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        del ordered
        if not repeated.size:
            return
        rows = np.flatnonzero(np.isin(hashes, repeated))
        seen: dict[int, int] = {}
        first = repeat = 0
        for row in rows.tolist():
            h = int(hashes[row])
            if h in seen:
                first, repeat = seen[h] + 1, row + 1
                break
            seen[h] = row
        same = (
            f"the same trace id and {self.column!r}"
            if self.column
            else "identical in every column; no span id column"
        )
        raise EvidenceError(
            "evidence-duplicate-request",
            f"{self.display} span rows {first} and {repeat} are the same span ({same}); "
            f"{int(rows.size - repeated.size)} span row(s) in all "
            "repeat an earlier span: a span counted twice would double its arm's calls and cost",
            hint="remove the repeated spans (a re-delivered or concatenated export); each span "
            "must appear once",
            file=self.display,
            row=repeat,
            column=self.column,
            expected="each span once",
            found=f"rows {first} and {repeat} are the same span",
        )
