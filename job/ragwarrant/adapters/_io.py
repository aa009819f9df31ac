"""Reading tabular files with pyarrow, and turning cells into floats with located errors.

Shared by the adapters; nothing here knows a tool's format.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import math
import re
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from ragwarrant.adapters._dataset import iter_dataset_batches, read_dataset_table
from ragwarrant.adapters._integrity import (
    READER_FAILURES,
    check_header,
    dataset_unsupported,
    guarded,
    missing_name,
    no_rows,
    parser_message,
    reader_error,
    require_columns,
)
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import EvidenceError

__all__ = [
    "at_file_row",
    "check_policies",
    "check_unique_keys",
    "column_as_float",
    "contract_policy_ids",
    "dataset_unsupported",
    "evidence_from_records",
    "float_cell",
    "input_dir_of",
    "invalid_json",
    "iter_json_lines",
    "iter_json_objects",
    "looks_numeric_column",
    "make_texts",
    "no_rows",
    "open_parquet",
    "parse_number",
    "normalize_question",
    "parse_list_literal",
    "parse_python_literal",
    "question_hash",
    "select_metrics",
    "snake_metric_id",
    "source_tag",
    "version_note",
    "column_as_string",
    "is_value_type",
    "iter_parquet_batches",
    "read_table",
    "require_columns",
]


def _csv_header(path: Path) -> list[str]:
    """The header of a CSV file, as the csv module reads its first record (any length)."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return next(csv.reader(fh), [])


def _read_csv(path: Path) -> pa.Table:
    names = _csv_header(path)
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
            table = _read_csv(path)
        elif fmt == "parquet":
            check_header(pq.read_schema(path).names, display)  # two fields of one name
            table = pq.read_table(path, page_checksum_verification=True)
            table.validate(full=True)  # damaged pages without checksums: bad offsets, UTF-8
        elif fmt == "jsonl":
            table = _read_jsonl(path, display)
        elif fmt == "json":
            table = _read_json_array(path, display)
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


def _read_jsonl(path: Path, display: str) -> pa.Table:
    try:
        return pajson.read_json(path)
    except pa.ArrowInvalid:
        pass
    # Slow path, to name the first bad line: pyarrow's message does not carry it.
    objects = list(
        iter_json_objects(path, display, not_object="holds a JSON {type}, not an object")
    )
    return _from_records([obj for _, obj in objects], display, [n for n, _ in objects])


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


def _read_json_array(path: Path, display: str) -> pa.Table:
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


def _json_kind(value: object) -> str | None:
    """The JSON kind of a value (int and float are both numbers); None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    kinds: dict[type, str] = {str: "string", list: "list", dict: "object"}
    return kinds.get(type(value), type(value).__name__)


def _first_mixed_field(records: list[dict[str, object]]) -> tuple[int, str, str, str] | None:
    """``(record index, field, kind first seen, kind found)`` of the first type change."""
    seen: dict[str, str] = {}
    for i, record in enumerate(records):
        for field, value in record.items():
            kind = _json_kind(value)
            first = seen.setdefault(field, kind) if kind is not None else None
            if first is not None and first != kind:
                return i, field, first, kind or "null"
    return None


def _from_records(
    records: list[dict[str, object]], display: str, linenos: list[int] | None = None
) -> pa.Table:
    """Records as a table; a field whose JSON kind changes is named with its line (JSONL) or
    record (JSON array) and both kinds, never its value (pyarrow's message quotes it)."""
    if not records:
        return pa.table({})
    try:
        return pa.Table.from_pylist(records)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        hit = _first_mixed_field(records)
        if hit is None:
            where, field, msg = None, None, f"({type(exc).__name__})"
        else:
            i, field, first, kind = hit
            where = linenos[i] if linenos is not None else i + 1
            label = "line" if linenos is not None else "record"
            msg = f"{label} {where}: field {field!r} holds a {kind}, earlier records a {first}"
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


def column_as_string(table: pa.Table, name: str, display: str, *, allow_null: bool) -> pa.Array:
    """Return a column as a string array; numbers are rendered, never rounded.

    Raises:
        EvidenceError: ``evidence-null-key`` for a null or empty value when ``allow_null`` is false
            (naming the first such row), ``evidence-wrong-type`` for nested values.
    """
    col = table.column(name).combine_chunks()
    if pa.types.is_nested(col.type) or pa.types.is_binary(col.type):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds {col.type}, not a scalar id or label",
            file=display,
            column=name,
            expected="string or integer",
            found=str(col.type),
        )
    if pa.types.is_floating(col.type):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds floating-point numbers; "
            "ids must be strings or integers",
            file=display,
            column=name,
            expected="string or integer",
            found=str(col.type),
        )
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if isinstance(col.type, pa.BaseExtensionType):
        col = _extension_as_plain(col)
    strings = pc.cast(col, pa.string()) if not pa.types.is_string(col.type) else col
    if not allow_null:
        bad = pc.or_(pc.is_null(strings), pc.equal(pc.utf8_trim_whitespace(strings), ""))
        bad = pc.fill_null(bad, True)
        if pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            raise EvidenceError(
                "evidence-null-key",
                f"{display} row {row + 1}: column {name!r} is empty",
                hint="every row needs a value in its key columns",
                file=display,
                row=row + 1,
                column=name,
                expected="a non-empty value",
                found="empty",
            )
    else:
        strings = pc.if_else(pc.equal(strings, ""), pa.scalar(None, pa.string()), strings)
    return strings


def _extension_as_plain(col: pa.Array) -> pa.Array:
    """Unwrap an extension array; UUIDs (16-byte storage, e.g. ``arrow.uuid``) become their
    canonical hex strings, as LangSmith's ``to_pandas()`` writes them to Parquet."""
    storage = col.storage
    if pa.types.is_fixed_size_binary(storage.type) and storage.type.byte_width == 16:
        return pa.array(
            [str(uuid.UUID(bytes=b)) if b is not None else None for b in storage.to_pylist()],
            pa.string(),
        )
    return storage


_NAN_STRINGS = {"nan", "NaN", "NAN", "-nan"}
_NULL_STRINGS = {"", "null", "None", "NULL", "NA", "N/A"}


def column_as_float(table: pa.Table, name: str, display: str) -> tuple[pa.Array, pa.Array]:
    """Return a metric column as float64 values and a missing-reason array.

    Booleans map to 1.0 (true) and 0.0 (false). Empty cells, ``null`` and absent values are
    null with reason ``null``; NaN (the float, or the strings nan/NaN) is null with reason ``nan``.
    Infinite values are kept as they are so the non-finite gate counts them.

    Returns:
        ``(values, missing_reason)``: float64 with nulls where missing; string, null where present.

    Raises:
        EvidenceError: ``evidence-wrong-type`` naming the first row whose cell is not a number,
            and what was found.
    """
    col = table.column(name).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    n = len(col)
    if (
        pa.types.is_boolean(col.type)
        or pa.types.is_integer(col.type)
        or pa.types.is_floating(col.type)
        or pa.types.is_decimal(col.type)
    ):
        values = pc.cast(col, pa.float64())
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        values = _parse_float_strings(col, name, display)
    elif pa.types.is_null(col.type):
        values = pa.nulls(n, pa.float64())
    else:
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} column {name!r} holds {col.type}, not numbers",
            file=display,
            column=name,
            expected="a number per row",
            found=str(col.type),
        )
    is_nan = pc.fill_null(pc.is_nan(values), False)
    if values.null_count == 0 and not pc.any(is_nan).as_py():  # the common case: no pass per row
        return values, pa.nulls(n, pa.string())
    reason = pc.if_else(
        pc.is_null(values),
        pa.scalar("null"),
        pc.if_else(is_nan, pa.scalar("nan"), pa.scalar(None, pa.string())),
    )
    values = pc.if_else(is_nan, pa.scalar(None, pa.float64()), values)
    return values, reason


def _parse_float_strings(col: pa.Array, name: str, display: str) -> pa.Array:
    trimmed = pc.utf8_trim_whitespace(col)
    is_null = pc.or_(
        pc.is_null(trimmed), pc.is_in(trimmed, value_set=pa.array(sorted(_NULL_STRINGS)))
    )
    is_nan = pc.is_in(trimmed, value_set=pa.array(sorted(_NAN_STRINGS)))
    lowered = pc.utf8_lower(trimmed)
    is_bool = pc.is_in(lowered, value_set=pa.array(["true", "false"]))
    cleaned = pc.if_else(pc.or_(is_null, pc.or_(is_nan, is_bool)), pa.scalar("0"), trimmed)
    try:
        parsed = pc.cast(cleaned, pa.float64())
    except pa.ArrowInvalid:
        cells = cleaned.to_pylist()
        row = next((i for i, cell in enumerate(cells) if parse_number(cell) is None), 0)
        raise _not_a_number(display, row + 1, name, cells[row]) from None
    parsed = pc.if_else(is_bool, pc.if_else(pc.equal(lowered, "true"), 1.0, 0.0), parsed)
    parsed = pc.if_else(is_nan, pa.scalar(math.nan), parsed)
    return pc.if_else(is_null, pa.scalar(None, pa.float64()), parsed)


# --- helpers shared by the tool adapters -------------------------------------------------------


def normalize_question(text: str) -> str:
    """Return the normalized form of a question used for question-hash pairing.

    Normalization: Unicode NFKC, then ``str.casefold``, then every run of whitespace (including
    newlines and non-breaking spaces, which NFKC maps to spaces) collapsed to one space, then
    leading and trailing whitespace removed. Punctuation is kept: "What's X?" and "Whats X" differ.
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def question_hash(text: str) -> str:
    """Return the example id derived from a question: ``qh:`` + the first 16 hex digits of
    sha256(UTF-8 of ``normalize_question(text)``).

    64 bits make an accidental collision among a million questions about 3e-8 likely; a collision
    would show as a duplicated id, which the adapters reject.
    """
    digest = sha256_bytes(normalize_question(text).encode("utf-8"))
    return f"qh:{digest[:16]}"


_SNAKE_RE = re.compile(r"[^0-9a-z]+")


def snake_metric_id(name: str) -> str:
    """Return the canonical snake_case metric id of a tool's metric name.

    ``"Answer Relevancy"`` → ``answer_relevancy``; ``"rouge_score(mode=fmeasure)"`` →
    ``rouge_score_mode_fmeasure``; ``"context_recall@3"`` → ``context_recall_at_3``;
    ``"feedback.token_f1"`` is not special here (adapters strip their own prefixes first).
    """
    lowered = unicodedata.normalize("NFKC", name).casefold().replace("@", "_at_")
    return _SNAKE_RE.sub("_", lowered).strip("_")


def _shape_of(text: str) -> str:
    """What a text cell looks like without quoting it (cells hold private question text)."""
    first = text.lstrip()[:1]
    return f"{len(text)} characters starting with {first!r}" if first else "blank text"


def parse_list_literal(cell: object, display: str, row: int, column: str) -> list[str] | None:
    """Parse a list cell: a Python repr (``"['a', 'b']"``, as pandas writes lists to CSV), a JSON
    array, or an already-parsed list. Empty and null cells give ``None``.

    Uses ``ast.literal_eval`` only (never ``eval``): the cell can hold literals and nothing else.

    Raises:
        EvidenceError: ``evidence-wrong-type`` when the cell is not a literal, or is a literal but
            not a list of strings (e.g. a dict, a number, a string), naming file, row and column.
    """
    if cell is None:
        return None
    if isinstance(cell, list | tuple):
        items: object = list(cell)
    elif isinstance(cell, str):
        text = cell.strip()
        if text in _NULL_STRINGS or text in _NAN_STRINGS:
            return None
        try:
            items = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise EvidenceError(
                "evidence-wrong-type",
                f"{display} row {row}: column {column!r} is not a list literal",
                hint="list cells hold a Python or JSON list such as ['a', 'b']",
                file=display,
                row=row,
                column=column,
                expected="a list literal",
                found=_shape_of(text),
            ) from None
    else:
        items = cell
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} row {row}: column {column!r} holds a {type(items).__name__}, "
            "not a list of strings",
            hint="list cells hold a Python or JSON list such as ['a', 'b']",
            file=display,
            row=row,
            column=column,
            expected="a list of strings",
            found=_shape_of(str(cell)),
        )
    return items


#: Calls a Python repr may hold (pandas/TruLens write datetimes into nested cells): read as text.
_REPR_CALLS = frozenset(
    {
        "datetime.datetime",
        "datetime.date",
        "datetime.time",
        "datetime.timedelta",
        "datetime.timezone",
        "Timestamp",
        "pd.Timestamp",
        "Timedelta",
        "pd.Timedelta",
        "UUID",
        "uuid.UUID",
    }
)
_REPR_NAMES = {"None": None, "True": True, "False": False, "nan": math.nan, "NaT": None}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _repr_value(node: ast.expr) -> object:
    """A literal like ``ast.literal_eval``'s, plus datetime / Timestamp / UUID calls (kept as
    their source text) and ``nan`` / ``NaT``; nothing is ever executed."""
    if isinstance(node, ast.Call) and _dotted(node.func) in _REPR_CALLS:
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            _repr_value(arg)  # arguments must be literals too
        return ast.unparse(node)
    if isinstance(node, ast.Name) and node.id in _REPR_NAMES:
        return _REPR_NAMES[node.id]
    if isinstance(node, ast.Dict):
        return {
            _repr_value(k) if k is not None else None: _repr_value(v)  # type: ignore[misc]
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_repr_value(e) for e in node.elts]
    return ast.literal_eval(node)


def parse_python_literal(cell: str, display: str, row: int, column: str) -> object:
    """Parse a nested cell written as a Python repr or JSON (dict/list), without executing it.

    JSON's ``true``/``false``/``null`` are accepted (tried with orjson first). Python reprs may
    hold ``datetime.datetime(...)``, ``Timestamp(...)`` or ``UUID(...)`` calls with literal
    arguments (as TruLens 2.x OTel-mode tables do), read as their text, and ``nan``.

    Raises:
        EvidenceError: ``evidence-wrong-type`` when the cell is neither JSON nor such a literal.
    """
    try:
        return orjson.loads(cell)
    except orjson.JSONDecodeError:
        pass
    try:
        return _repr_value(ast.parse(cell.strip(), mode="eval").body)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise EvidenceError(
            "evidence-wrong-type",
            f"{display} row {row}: column {column!r} is neither JSON nor a Python literal",
            file=display,
            row=row,
            column=column,
            expected="a JSON or Python literal",
            found=_shape_of(cell),
        ) from None


_NUMBER = re.compile(
    r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity)", re.I | re.A
)


def parse_number(text: str | None) -> float | None:
    """A number string as Arrow's float parser reads it, or None when it is not one.

    One rule for every cell: plain ASCII decimal (``1``, ``-0.5``, ``.5``, ``1e-3``) or
    ``inf``/``infinity`` with an optional sign. Strings Python's ``float()`` also accepts but
    Arrow refuses (``0.20_857``, full-width ``０.５``, other scripts' digits) are not numbers.
    """
    if text is None or not _NUMBER.fullmatch(text):
        return None
    return float(text)


def _not_a_number(display: str, row: int, column: str, cell: object) -> EvidenceError:
    text = str(cell)
    why = ""
    if isinstance(cell, str):
        try:
            float(text)
            why = " (plain ASCII digits only: no '_' separators or non-ASCII digits)"
        except ValueError:
            pass
    return EvidenceError(
        "evidence-wrong-type",
        f"{display} row {row}: column {column!r} is not a number{why}",
        hint="metric columns hold numbers, empty cells or NaN",
        file=display,
        row=row,
        column=column,
        expected="a number",
        found=_shape_of(text) if isinstance(cell, str) else type(cell).__name__,
    )


def float_cell(
    value: object, display: str, row: int, column: str
) -> tuple[float | None, str | None]:
    """Turn one JSON-native cell into ``(value, missing_reason)``.

    ``None`` → ``(None, "null")``; NaN → ``(None, "nan")``; booleans → 1.0/0.0; numbers kept
    (infinities too, for the non-finite gate); numeric strings parsed by ``parse_number`` (the
    rule CSV cells follow); "nan"/"" strings as above.

    Raises:
        EvidenceError: ``evidence-wrong-type`` for anything else, naming file, row and column.
    """
    if value is None:
        return None, "null"
    if isinstance(value, bool):
        return (1.0 if value else 0.0), None
    if isinstance(value, int | float):
        f = float(value)
        return (None, "nan") if math.isnan(f) else (f, None)
    if isinstance(value, str):
        text = value.strip()
        if text in _NULL_STRINGS:
            return None, "null"
        if text in _NAN_STRINGS:
            return None, "nan"
        if text.lower() in ("true", "false"):
            return (1.0 if text.lower() == "true" else 0.0), None
        number = parse_number(text)
        if number is not None:
            return number, None
    raise EvidenceError(
        "evidence-wrong-type",
        f"{display} row {row}: {column!r} is not a number",
        hint="metric values are numbers, booleans, null or NaN",
        file=display,
        row=row,
        column=column,
        expected="a number",
        found=_shape_of(value) if isinstance(value, str) else type(value).__name__,
    )


def evidence_from_records(
    records: list[tuple[str, str, str, float | None, str | None, int]],
    *,
    source: str,
    sha256: str,
) -> pa.Table:
    """Build canonical evidence from ``(policy, example, metric, value, reason, row)`` tuples.

    group_id, slice and split are null (the tool formats carry none of them).
    """
    from ragwarrant.evidence.schema import make_evidence_table

    n = len(records)
    cols: list[tuple[object, ...]] = (
        list(zip(*records, strict=True)) if records else [(), (), (), (), (), ()]
    )
    return make_evidence_table(
        {
            "policy_id": cols[0],
            "example_id": cols[1],
            "group_id": [None] * n,
            "slice": [None] * n,
            "split": [None] * n,
            "metric": cols[2],
            "value": cols[3],
            "missing_reason": cols[4],
            "source": [source] * n,
            "source_sha256": [sha256] * n,
            "source_row": cols[5],
        }
    )


def check_unique_keys(
    policies: list[str], examples: list[str], rows: list[int], display: str, column: str
) -> None:
    """Raise on the first (policy, example) that occurs twice.

    Raises:
        EvidenceError: ``evidence-duplicate-id`` naming both rows, the key column and the id.
    """
    seen: dict[tuple[str, str], int] = {}
    for p, e, r in zip(policies, examples, rows, strict=True):
        first = seen.setdefault((p, e), r)
        if first != r:
            raise EvidenceError(
                "evidence-duplicate-id",
                f"{display} row {r}: example {e!r} of policy {p!r} already appears in row {first}",
                hint="each (policy, example) may appear once per file; remove the repeat or "
                "declare a distinct id column",
                file=display,
                row=r,
                column=column,
                expected="a unique example id per policy",
                found=f"{e!r} again (first in row {first})",
            )


def check_policies(
    file_policies: list[str | None],
    rows: list[int],
    *,
    declared: str | None,
    contract_policies: list[str],
    display: str,
    column: str,
) -> list[str]:
    """Decide each row's policy from what the file says and what the contract declares.

    - ``declared`` given: rows that name another policy → ``evidence-mixed-policies``; a file
      whose rows all name other policies → ``evidence-policy-missing``; rows that name none take
      the declared one.
    - ``declared`` absent: every row must name a policy (``evidence-policy-unknown`` otherwise),
      every named policy must be one of the contract's (``evidence-policy-unknown``), and every
      contract policy must appear (``evidence-policy-missing``): a file that holds one policy
      declares it with ``policy:``.

    Args:
        file_policies: the policy each row names, or None where the file says nothing.
        rows: 1-based row numbers aligned with ``file_policies``.

    Returns:
        The policy id of each row.
    """
    if declared is not None:
        named = [p for p in file_policies if p is not None]
        if named and declared not in named:
            found = sorted(set(named))
            raise EvidenceError(
                "evidence-policy-missing",
                f"{display}: the contract says this file holds policy {declared!r}, but its rows "
                f"name {', '.join(map(repr, found))} ({column})",
                hint="point the source at the file of that policy, or fix 'policy'",
                file=display,
                column=column,
                expected=declared,
                found=", ".join(found),
            )
        if not set(file_policies) <= {declared, None}:  # one pass; the loop names the row
            _refuse_other_policy(file_policies, rows, declared, display, column)
        return [declared] * len(file_policies)
    seen = set(file_policies)
    if None in seen or not seen <= set(contract_policies):  # the loop names the first row
        _refuse_unknown_policy(file_policies, rows, contract_policies, display, column)
    out = [p for p in file_policies if p is not None]  # every row names one (checked above)
    missing = [p for p in contract_policies if p not in seen]
    if missing:
        named = sorted(set(out))
        raise EvidenceError(
            "evidence-policy-missing",
            f"{display}: no row of policy {', '.join(map(repr, missing))} ({column} names only "
            f"{', '.join(map(repr, named))})",
            hint=_missing_policy_hint(missing, named),
            file=display,
            column=column,
            expected=", ".join(contract_policies),
            found=", ".join(sorted(set(out))),
        )
    return out


def _missing_policy_hint(missing: list[str], named: list[str]) -> str:
    """What to fix when a file naming its rows' policies lacks some contract policies.

    A file naming one policy may hold only that policy (declare it with ``policy:``); a file
    naming several is the whole comparison (telemetry of every arm), so a contract policy it
    lacks is misnamed in the contract (often a policy id taken from a file name).
    """
    if len(named) == 1:
        return (
            f"if this file holds only policy {named[0]!r}, declare 'policy: {named[0]}' on the "
            "evidence source; else give the contract's policies the ids the file uses"
        )
    return (
        f"the file names policies {', '.join(map(repr, named))}: give the contract's "
        f"{', '.join(map(repr, missing))} the id the file uses for that policy (policy ids "
        "must be the same in every evidence file), or remove it if it is not a policy"
    )


def _refuse_other_policy(
    file_policies: list[str | None], rows: list[int], declared: str, display: str, column: str
) -> None:
    """Raise ``evidence-mixed-policies`` at the first row naming a policy other than
    ``declared``."""
    for p, r in zip(file_policies, rows, strict=True):
        if p is not None and p != declared:
            raise EvidenceError(
                "evidence-mixed-policies",
                f"{display} row {r}: {column} is {p!r}, but the contract says every row of "
                f"this file is policy {declared!r}",
                hint="split the file per policy, or drop 'policy' from the source",
                file=display,
                row=r,
                column=column,
                expected=declared,
                found=p,
            )


def _refuse_unknown_policy(
    file_policies: list[str | None],
    rows: list[int],
    contract_policies: list[str],
    display: str,
    column: str,
) -> None:
    """Raise ``evidence-policy-unknown`` at the first row naming no policy or one the contract
    does not declare."""
    for p, r in zip(file_policies, rows, strict=True):
        if p is None:
            raise EvidenceError(
                "evidence-policy-unknown",
                f"{display} row {r}: no policy ({column} is empty) and the source declares none",
                hint="add 'policy: <id>' to the evidence source when the file holds one policy",
                file=display,
                row=r,
                column=column,
                expected="a policy id",
                found="nothing",
            )
        if p not in contract_policies:
            raise EvidenceError(
                "evidence-policy-unknown",
                f"{display} row {r}: {column} is {p!r}, which is not a policy of the contract "
                f"({', '.join(contract_policies)})",
                hint="name the policies in the contract as the file does",
                file=display,
                row=r,
                column=column,
                expected=" | ".join(contract_policies),
                found=p,
            )


def make_texts(
    policies: list[str],
    examples: list[str],
    questions: list[Any],
    responses: list[Any],
    contexts: list[list[str] | None],
    *,
    display: str,
) -> pa.Table:
    """Build the private text table (``TEXT_SCHEMA``); cited_quotes are null (no tool has them).

    Raises:
        EvidenceError: ``evidence-wrong-type`` naming the first row whose question or response
            is neither text nor empty (the value itself is private and never quoted).
    """
    from ragwarrant.evidence.schema import TEXT_SCHEMA

    for field, cells in (("question", questions), ("response", responses)):
        row = next(
            (i for i, c in enumerate(cells, 1) if c is not None and not isinstance(c, str)), 0
        )
        if row:
            raise EvidenceError(
                "evidence-wrong-type",
                f"{display} row {row}: the {field} is a {type(cells[row - 1]).__name__}, not text",
                file=display,
                row=row,
                column=field,
                expected="text or nothing",
                found=type(cells[row - 1]).__name__,
            )
    n = len(policies)
    return pa.Table.from_pydict(
        {
            "policy_id": policies,
            "example_id": examples,
            "question": questions,
            "response": responses,
            "contexts": contexts,
            "cited_quotes": [None] * n,
        },
        schema=TEXT_SCHEMA,
    )


def source_tag(source_id: str, tool: str, version: str | None) -> str:
    """Return the ``source`` field of evidence rows: ``<source id>:<tool>@<version or unknown>``."""
    return f"{source_id}:{tool}@{version or 'unknown'}"


def contract_policy_ids(contract: object) -> list[str]:
    """Return the baseline and candidate policy ids of a ``ReleaseContract``, baseline first."""
    return [contract.baseline.policy_id, *(c.policy_id for c in contract.candidates)]  # type: ignore[attr-defined]


def input_dir_of(path: Path, relative: str, display: str) -> Path:
    """Return the input directory, given a source's resolved path and its contract-relative path.

    Raises:
        EvidenceError: ``evidence-path`` when the resolved path does not end with the relative one
            (the file was reached through a symlink), so a sibling cannot be located safely.
    """
    parts = PurePosixPath(relative).parts
    if tuple(path.parts[-len(parts) :]) != parts:
        raise EvidenceError(
            "evidence-path",
            f"{display} resolves to {path.name} through a symlink; "
            "its sibling files cannot be located",
            file=display,
        )
    return path.parents[len(parts) - 1]


def _check_distinct_ids(available: dict[str, str], display: str) -> None:
    """Refuse two metric names that become one id (``Faithfulness`` and ``faithfulness``)."""
    seen: dict[str, str] = {}
    for name, metric in available.items():
        other = seen.setdefault(metric, name)
        if other != name:
            raise EvidenceError(
                "evidence-metric-ambiguous",
                f"{display}: metrics {other!r} and {name!r} differ only in case or punctuation "
                f"and both become {metric!r}",
                hint="rename one of them in the export; which one is meant cannot be told",
                file=display,
                column=name,
                expected="metric names that stay distinct as snake_case ids",
                found=f"{other!r} and {name!r}",
            )


def select_metrics(
    available: dict[str, str], wanted: dict[str, str], display: str
) -> dict[str, str]:
    """Choose which of a file's metrics to read and their canonical ids.

    Args:
        available: original name → default canonical id, for every metric the file holds.
        wanted: the contract's ``metrics`` (original name or default id → metric id); empty
            means every available metric under its default id.

    Returns:
        original name → canonical metric id.

    Raises:
        EvidenceError: ``evidence-missing-column`` for a wanted metric the file does not hold;
            ``evidence-metric-ambiguous`` for two names with the same id;
            ``evidence-header-invisible`` for a name with white space or invisible characters
            at its edges (``'Token F1 '`` never matches ``Token F1``).
    """
    check_header(list(available), display)  # metric names from JSON keys are headers too
    _check_distinct_ids(available, display)
    if not wanted:
        return dict(available)
    by_id = {v: k for k, v in available.items()}
    out: dict[str, str] = {}
    for key, metric in wanted.items():
        original = key if key in available else by_id.get(key)
        if original is None:
            raise missing_name(
                display,
                "metric",
                key,
                available,
                hint="the contract's 'metrics' keys are the tool's metric names or their "
                "snake_case ids",
            )
        out[original] = metric
    return out


def version_note(version: str | None) -> list[str]:
    """Say where the provenance's tool version comes from (no tool file records it)."""
    if version:
        return [f"tool version {version} as declared by the contract (the file does not record it)"]
    return ["tool version unknown: the file does not record it and the contract declares none"]


def is_value_type(t: pa.DataType) -> bool:
    """Whether an Arrow type holds metric values as they are: float, integer, boolean or null."""
    return (
        pa.types.is_floating(t)
        or pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
    )


def looks_numeric_column(table: pa.Table, name: str) -> bool:
    """Whether a column holds metric values: a numeric, boolean or all-null column, a text
    column with at least one cell that parses as a number (its other cells are then checked,
    and reported by row, by ``column_as_float``), or a text column whose every cell is empty (a
    CSV's all-null column: a metric that raised on every row, as JSON lines write ``null``)."""
    col = table.column(name)
    t = col.type
    if is_value_type(t):
        return True
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return False
    blank = True
    for cell in col.to_pylist():
        if cell is None or not cell.strip():
            continue
        blank = False
        try:
            float(cell)
        except ValueError:
            continue
        return True
    return blank
