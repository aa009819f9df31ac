"""Reading tabular files (CSV, JSON, JSON lines, Parquet, datasets) into Arrow tables.

Shared by the adapters; nothing here knows a tool's format.
"""

from __future__ import annotations

import contextlib
import csv
from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from ragwarrant.adapters._dataset import iter_dataset_batches, read_dataset_table
from ragwarrant.adapters._integrity import (
    READER_FAILURES,
    check_header,
    dataset_unsupported,
    guarded,
    no_rows,
    parser_message,
    reader_error,
    require_columns,
)
from ragwarrant.errors import EvidenceError
from ragwarrant.limits import MAX_CSV_FIELD_CHARS


def _read_csv(path: Path, display: str) -> pa.Table:
    """A CSV file, every column as strings; the block size follows the header (read first by the
    csv module: any number of fields, each at most ``limits.MAX_CSV_FIELD_CHARS`` characters).

    Raises:
        EvidenceError: ``evidence-limit``, a header field past the limit.
    """
    with path.open(newline="", encoding="utf-8-sig") as fh:
        try:
            names = next(csv.reader(fh), [])
        except csv.Error:  # "field larger than field limit": the one error the reader raises
            raise EvidenceError(
                "evidence-limit",
                f"{display}: a header field is longer than the limit of "
                f"{MAX_CSV_FIELD_CHARS:,} characters",
                hint="column names are short: is the first line the header?",
                file=display,
                row=0,
                expected=f"at most {MAX_CSV_FIELD_CHARS} characters per header field",
                found=f"more than {MAX_CSV_FIELD_CHARS} characters",
            ) from None
    longest = max((len(n) for n in names), default=0)
    block = max(1 << 20, 4 * (sum(len(n) + 3 for n in names) + longest))
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(block_size=block),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _csv_field_count_error(path: Path, display: str) -> EvidenceError | None:
    """Locate the first CSV record whose field count differs from the header's, after a failure.

    Re-reads single-threaded (Arrow numbers records only then) with an invalid-row handler that
    notes the record; the record's text is never copied into the message.
    """
    bad: list[tuple[int, int, int | None]] = []

    def note(row: pacsv.InvalidRow) -> str:
        bad.append((row.expected_columns, row.actual_columns, row.number))
        return "error"

    options = pacsv.ParseOptions(invalid_row_handler=note)
    with contextlib.suppress(*READER_FAILURES):
        pacsv.read_csv(
            path, read_options=pacsv.ReadOptions(use_threads=False), parse_options=options
        )
    if not bad:
        return None
    expected, actual, record = bad[0]
    if record is None:
        return None
    row = record - 1  # Arrow counts the header as record 1; rows count from the first below it
    return EvidenceError(
        "evidence-field-count",
        f"{display} row {row} has {actual} fields where the header has {expected}",
        hint="a value holding the delimiter must be quoted; every row needs as many fields as "
        "the header",
        file=display,
        row=row,
        expected=f"{expected} fields",
        found=f"{actual} fields",
    )


def read_table(path: Path, fmt: str, display: str) -> pa.Table:
    """Read a whole CSV, JSONL, JSON-array or Parquet file into an Arrow table.

    CSV columns are read as strings (nothing is inferred, so a bad cell is reported by row, not
    coerced); the block size follows the header, so a header of thousands of columns is read.
    Parquet and JSONL keep their types; Parquet page checksums are verified where present.
    Column names must be unique and free of invisible characters (``check_header``). A directory
    is a dataset of part files, read by ``_dataset.read_dataset_table``.

    Raises:
        EvidenceError: ``evidence-empty`` for a file with no rows, ``evidence-unparseable`` when
            the file is not of its declared format (with the line where the parser stopped),
            ``evidence-field-count`` for a CSV row with more or fewer fields than the header,
            ``evidence-corrupt`` / ``evidence-checksum`` for damaged Parquet, as ``check_header``;
            for a directory, as ``read_dataset_table``.
    """
    if path.is_dir():
        table = read_dataset_table(path, fmt, display)  # type: ignore[arg-type]
        check_header(table.schema.names, display)
        return table
    try:
        if fmt == "csv":
            table = _read_csv(path, display)
        elif fmt == "parquet":
            check_header(pq.read_schema(path).names, display)  # two fields of one name
            table = pq.read_table(path, page_checksum_verification=True)
            table.validate(full=True)  # damaged pages without checksums: bad offsets, UTF-8
        elif fmt in ("jsonl", "json"):
            table = _read_json(path, fmt, display)
        else:  # guarded by the contract's Literal
            raise ValueError(fmt)
    except READER_FAILURES as exc:
        if "Empty CSV file" in str(exc):
            raise EvidenceError(
                "evidence-empty",
                f"{display} is empty",
                file=display,
                expected="a header and rows",
                found="no bytes",
            ) from exc
        located = _csv_field_count_error(path, display) if fmt == "csv" else None
        if located is not None:
            raise located from exc
        raise reader_error(exc, fmt, display, parser_message(exc, path, display)) from exc
    check_header(table.schema.names, display)
    if table.num_rows == 0:
        raise no_rows(display)
    return table


def invalid_json(display: str, exc: Exception) -> EvidenceError:
    """The ``evidence-unparseable`` error of a whole file that is not JSON.

    Args:
        exc: the parser's exception, quoted in the message.
    """
    return EvidenceError(
        "evidence-unparseable",
        f"{display} is not valid JSON: {exc}",
        file=display,
        expected="JSON",
    )


def iter_json_lines(
    path: Path, display: str, expected: str = "one JSON object per line"
) -> Iterator[tuple[int, object]]:
    """Yield ``(line number, parsed value)`` for every non-blank line of a JSON-lines file.

    Line numbers count from 1 and include blank lines. The caller checks the value's shape.

    Raises:
        EvidenceError: ``evidence-unparseable`` naming the first line that is not JSON
            (``expected`` says what the line should have been).
    """
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise EvidenceError(
                    "evidence-unparseable",
                    f"{display} line {lineno} is not valid JSON: {exc}",
                    file=display,
                    row=lineno,
                    expected=expected,
                    found=str(exc),  # the parser's position, never the line's (private) text
                ) from exc
            yield lineno, obj


def iter_json_objects(
    path: Path, display: str, *, not_object: str
) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON-lines file of objects.

    Args:
        not_object: what the message says of a line holding another JSON value
            (``"<display> line <n> <not_object>"``); ``{type}`` in it names that value's type.

    Raises:
        EvidenceError: ``evidence-unparseable`` naming the first line that is not JSON (as
            ``iter_json_lines``) or not an object.
    """
    for lineno, obj in iter_json_lines(path, display):
        if not isinstance(obj, dict):
            raise EvidenceError(
                "evidence-unparseable",
                f"{display} line {lineno} {not_object.format(type=type(obj).__name__)}",
                file=display,
                row=lineno,
                expected="a JSON object",
                found=type(obj).__name__,
            )
        yield lineno, obj


def _read_json(path: Path, fmt: str, display: str) -> pa.Table:
    """A JSON-lines file (``fmt`` ``jsonl``) or a JSON array of objects as a table (as
    ``_from_records``; JSON lines by pyarrow's reader when it can)."""
    if fmt == "jsonl":
        try:
            return pajson.read_json(path)
        except pa.ArrowInvalid:
            pass
        # Slow path, to name the first bad line: pyarrow's message does not carry it.
        objects = list(
            iter_json_objects(path, display, not_object="holds a JSON {type}, not an object")
        )
        return _from_records([obj for _, obj in objects], display, [n for n, _ in objects])
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise invalid_json(display, exc) from exc
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise EvidenceError(
            "evidence-unparseable",
            f"{display} must hold a JSON array of objects",
            file=display,
            expected="[{...}, ...]",
            found=type(data).__name__,
        )
    return _from_records(data, display)


#: The JSON kind of a parsed value (int and float are both numbers; null has none).
_JSON_KINDS: dict[type, str | None] = {
    type(None): None,
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "list",
    dict: "object",
}


def _booleans_among_numbers_as_text(records: list[dict[str, object]]) -> list[dict[str, object]]:
    """Records where a field holding both JSON booleans and numbers (and nulls) is text
    (``true``/``false``/``0.8``): pyarrow would read true as 1, but a metric column refuses the
    text true/false (or maps it, for a tool that writes booleans) as it does in a CSV file."""
    kinds: dict[str, set[str | None]] = {}
    for record in records:
        for key, value in record.items():
            kinds.setdefault(key, set()).add(_JSON_KINDS.get(type(value), type(value).__name__))
    mixed = {
        f for f, k in kinds.items() if {"boolean", "number"} <= k <= {"boolean", "number", None}
    }
    if not mixed:
        return records
    return [
        {f: str(v).lower() if f in mixed and v is not None else v for f, v in r.items()}
        for r in records
    ]


def _from_records(
    records: list[dict[str, object]], display: str, linenos: list[int] | None = None
) -> pa.Table:
    """Records as a table; a field whose JSON kind changes is named with its line (JSONL) or
    record (JSON array) and both kinds, never its value (pyarrow's message quotes it)."""
    if not records:
        return pa.table({})
    records = _booleans_among_numbers_as_text(records)
    try:
        return pa.Table.from_pylist(records)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        seen: dict[str, str] = {}  # each field's JSON kind, to find its first change
        hit = next(
            (
                (i, field, first, kind)
                for i, record in enumerate(records)
                for field, value in record.items()
                if (kind := _JSON_KINDS.get(type(value), type(value).__name__)) is not None
                and (first := seen.setdefault(field, kind)) != kind
            ),
            None,
        )
        if hit is None:
            where, field, msg = None, None, f"({type(exc).__name__})"
        else:
            i, field, first, kind = hit
            where = linenos[i] if linenos is not None else i + 1
            label = "line" if linenos is not None else "record"
            kind, first = (("an " if k[0] in "aeiou" else "a ") + k for k in (kind, first))
            msg = f"{label} {where}: field {field!r} holds {kind}, earlier records {first}"
        raise EvidenceError(
            "evidence-unparseable",
            f"{display} {msg}: records do not share one type per field",
            hint="give each field one type (a number, or an empty value) in every record",
            file=display,
            row=where,
            column=field,
            expected="the same type in each field across records",
        ) from exc


def iter_parquet_batches(
    path: Path, columns: list[str], display: str, batch_size: int = 1 << 20
) -> Iterator[pa.RecordBatch]:
    """Stream a Parquet file's ``columns`` in record batches (memory bounded by one batch); a
    directory is a Parquet dataset, streamed part by part (``_dataset.iter_dataset_batches``).

    Raises:
        EvidenceError: the file is not Parquet, or lacks one of ``columns``.
    """
    if path.is_dir():
        yield from iter_dataset_batches(path, columns, "parquet", display, batch_size)
        return
    pf = open_parquet(path, display)
    require_columns(pf.schema_arrow.names, columns, display)
    if pf.metadata.num_rows == 0:
        raise no_rows(display)
    yield from guarded(
        pf.iter_batches(batch_size=batch_size, columns=columns), path, "parquet", display
    )


def open_parquet(path: Path, display: str, **options: object) -> pq.ParquetFile:
    """Open a Parquet file for its schema, metadata and batches, with page checksums verified
    where the file has them (``page_checksum_verification``) and its header checked.

    Args:
        options: further ``pyarrow.parquet.ParquetFile`` options (``read_dictionary``, ...).

    Raises:
        EvidenceError: ``evidence-unparseable`` / ``evidence-corrupt`` when the file is not
            readable Parquet; ``evidence-dataset-unsupported`` for a directory (the adapters
            that open one Parquet file do not read datasets); as ``check_header``.
    """
    if path.is_dir():
        raise dataset_unsupported(display)
    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True, **options)  # type: ignore[arg-type]
        names = pf.schema_arrow.names
    except READER_FAILURES as exc:
        raise reader_error(exc, "parquet", display, parser_message(exc, path, display)) from exc
    check_header(names, display)
    return pf


def at_file_row(exc: EvidenceError, offset: int) -> EvidenceError:
    """The same error with its row counted from the start of the file, not of the batch.

    Args:
        exc: an error whose ``row`` (and the ``row N:`` in its message) counts from 1 in a batch.
        offset: rows of the file before the batch.
    """
    if exc.row is None:
        return exc
    row = exc.row + offset
    return EvidenceError(
        exc.code,
        exc.message.replace(f"row {exc.row}:", f"row {row}:", 1),
        exc.hint,
        file=exc.file,
        row=row,
        column=exc.column,
        expected=exc.expected,
        found=exc.found,
    )
