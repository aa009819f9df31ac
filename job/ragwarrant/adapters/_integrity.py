"""File integrity at the evidence boundary: magic bytes, text encoding, headers, reader failures.

Every defect found here is an ``EvidenceError`` naming the file and where it failed (line, byte
offset, column); the raw content is never quoted, only its position and the bytes' hex codes.
Nothing here knows a tool's format.
"""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import orjson
import pyarrow as pa

from ragwarrant.contract import did_you_mean
from ragwarrant.errors import EvidenceError
from ragwarrant.limits import MAX_EVIDENCE_FILE_BYTES, MAX_JSON_DEPTH

T = TypeVar("T")

PARQUET_MAGIC = b"PAR1"
_CHUNK = 1 << 20

#: Signatures of binary files that are often given where a text export is expected.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (PARQUET_MAGIC, "Parquet"),
    (b"PARE", "encrypted Parquet"),
    (b"\x1f\x8b", "gzip"),
    (b"PK\x03\x04", "zip (or xlsx)"),
    (b"\xd0\xcf\x11\xe0", "an old Office document (xls)"),
    (b"SQLite format 3\x00", "SQLite"),
    (b"ARROW1", "Arrow IPC"),
)

#: Byte-order marks of encodings other than UTF-8, longest first.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "UTF-32-LE"),
    (codecs.BOM_UTF32_BE, "UTF-32-BE"),
    (codecs.BOM_UTF16_LE, "UTF-16-LE"),
    (codecs.BOM_UTF16_BE, "UTF-16-BE"),
)


def _check_parquet_magic(head: bytes, tail: bytes, display: str) -> None:
    """Refuse a Parquet file without ``PAR1`` at both ends (``head``, ``tail``: 4 bytes each)."""
    if head == PARQUET_MAGIC and tail == PARQUET_MAGIC:
        return
    where, found = ("start", head) if head != PARQUET_MAGIC else ("end", tail)
    kind = next((name for sig, name in _SIGNATURES if head.startswith(sig)), None)
    raise EvidenceError(
        "evidence-unparseable",
        f"{display} is not a complete Parquet file: the magic bytes 'PAR1' are missing at its "
        f"{where}" + (f" (it looks like {kind})" if kind and where == "start" else ""),
        hint="a Parquet file starts and ends with PAR1; a truncated copy loses its footer",
        file=display,
        expected="PAR1 at the start and the end",
        found=f"{where}: {found.hex(' ') or 'no bytes'}",
    )


def _encoding_error(display: str, line: int, offset: int, bad: bytes, hint: str) -> EvidenceError:
    return EvidenceError(
        "evidence-encoding",
        f"{display} line {line} is not UTF-8: byte offset {offset} holds "
        f"{bad.hex(' ')}, which UTF-8 does not allow",
        hint=hint,
        file=display,
        row=line,
        expected="UTF-8 text",
        found=f"bytes {bad.hex(' ')} at offset {offset}",
    )


def _check_utf8(path: Path, head: bytes, display: str) -> None:
    """Refuse a byte-order mark other than UTF-8's (``head``: the file's first bytes) and the
    first byte that is not UTF-8, by line and byte offset."""
    bom = next((name for mark, name in _BOMS if head.startswith(mark)), None)
    if bom is not None:
        raise EvidenceError(
            "evidence-encoding",
            f"{display} is encoded as {bom} (byte-order mark), not UTF-8",
            hint="re-save the file as UTF-8 (Excel: 'CSV UTF-8'; pandas: encoding='utf-8')",
            file=display,
            row=1,
            expected="UTF-8 text",
            found=bom,
        )
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            if b"\x00" in chunk:
                i = chunk.index(b"\x00")
                nul_line = line + chunk.count(b"\n", 0, i)
                raise _encoding_error(
                    display,
                    nul_line,
                    offset + i,
                    b"\x00",
                    "NUL bytes in text usually mean UTF-16 without a byte-order mark; "
                    "re-save the file as UTF-8",
                )
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                bad = chunk[exc.start : exc.start + 4]
                raise _encoding_error(
                    display,
                    line + chunk.count(b"\n", 0, exc.start),
                    offset + exc.start,
                    bad[: max(1, exc.end - exc.start)],
                    "the bytes look like Latin-1 / Windows-1252; re-save the file as UTF-8",
                ) from None
            line += chunk.count(b"\n")
            offset += len(chunk)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise _encoding_error(
            display, line, offset, b"", "the file ends inside a UTF-8 character (truncated?)"
        ) from None


class _TwiceGiven(Exception):
    """A JSON object holds ``key`` twice (raised by ``_pairs_once``)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs_once(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` that refuses a key given twice in one object."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _TwiceGiven(key)
        seen.add(key)
    return dict(pairs)


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def json_depth(doc: bytes) -> int:
    """The nesting depth of a JSON text (0 for a scalar), counted without parsing it.

    Brackets inside strings do not count; text that is not JSON gets some depth, left to the
    parser to refuse.
    """
    opened = doc.count(b"[") + doc.count(b"{")
    if opened <= MAX_JSON_DEPTH:
        return opened  # a bound is enough
    text = np.frombuffer(_JSON_STRING.sub(b'""', doc), dtype=np.uint8)
    opens = (text == ord("[")) | (text == ord("{"))
    closes = (text == ord("]")) | (text == ord("}"))
    steps = opens.astype(np.int64) - closes
    return int(np.cumsum(steps).max(initial=0))


def _check_json_keys(path: Path, fmt: str, display: str) -> None:
    """Refuse a JSON document nested past ``limits.MAX_JSON_DEPTH`` (before any parser sees it:
    Arrow's JSON reader overflows its stack on deep nesting) or an object that holds a key
    twice (parsers silently keep one of the values).

    Each non-blank line of JSON Lines is a document, or the whole file of JSON. A document that
    is not JSON is left to the adapter, which says so in its own words.
    """
    with path.open("rb") as fh:
        lines = ((n, line) for n, line in enumerate(fh, start=1) if line.strip())
        for lineno, doc in [(None, fh.read())] if fmt == "json" else lines:
            where = f"{display} line {lineno}" if lineno is not None else display
            depth = json_depth(doc)
            if depth > MAX_JSON_DEPTH:
                raise EvidenceError(
                    "evidence-limit",
                    f"{where}: JSON nested {depth:,} levels deep; the limit is {MAX_JSON_DEPTH:,}",
                    hint="flatten the export: no evaluation record nests this deep",
                    file=display,
                    row=lineno,
                    expected=f"at most {MAX_JSON_DEPTH} levels of nesting",
                    found=f"{depth} levels",
                )
            try:
                orjson.loads(doc)
            except orjson.JSONDecodeError:
                continue  # not JSON: left to the adapter
            try:
                json.loads(doc, object_pairs_hook=_pairs_once)
            except _TwiceGiven as twice:
                raise EvidenceError(
                    "evidence-duplicate-key",
                    f"{where}: key {visible(twice.key)!r} appears twice in one object; which "
                    "value holds cannot be told (JSON parsers silently keep one)",
                    hint="give each key once per object",
                    file=display,
                    row=lineno,
                    column=twice.key,
                    expected="each key once in an object",
                    found="the key twice",
                ) from None
            except ValueError:
                return


def check_file(path: Path, fmt: str, display: str) -> None:
    """Refuse a file whose bytes cannot be its declared format before any parser sees it.

    Parquet must start and end with the magic bytes ``PAR1``; text formats (csv, jsonl, json)
    must not be a known binary format and must be UTF-8 (a UTF-8 byte-order mark is allowed),
    with the first invalid byte located by line and byte offset; no JSON object may hold a key
    twice.

    Raises:
        EvidenceError: ``evidence-limit`` (larger than ``limits.MAX_EVIDENCE_FILE_BYTES``),
            ``evidence-unparseable`` (wrong magic bytes), ``evidence-encoding`` or
            ``evidence-duplicate-key``.
    """
    size = path.stat().st_size
    if size == 0:
        return  # the adapters say "empty" in their own words
    if size > MAX_EVIDENCE_FILE_BYTES:
        raise EvidenceError(
            "evidence-limit",
            f"{display} holds {size:,} bytes, over the limit of {MAX_EVIDENCE_FILE_BYTES:,} "
            "bytes for one evidence file",
            hint="split the export into a dataset directory of smaller part files",
            file=display,
            expected=f"at most {MAX_EVIDENCE_FILE_BYTES:,} bytes",
            found=f"{size:,} bytes",
        )
    with path.open("rb") as fh:
        head = fh.read(16)
        fh.seek(max(0, size - 16))
        tail = fh.read(16)
    if fmt == "parquet":
        _check_parquet_magic(head[:4], tail[-4:], display)
        return
    kind = next((name for sig, name in _SIGNATURES if head.startswith(sig)), None)
    if kind is not None:
        raise EvidenceError(
            "evidence-unparseable",
            f"{display} is {kind}, not {fmt}",
            hint=f"give the file as {fmt}, or declare its real format",
            file=display,
            expected=fmt,
            found=f"{kind} (first bytes {head[:8].hex(' ')})",
        )
    _check_utf8(path, head, display)
    if fmt in ("json", "jsonl"):
        _check_json_keys(path, fmt, display)


def json_ref(display: str, pointer: str) -> str:
    """``file.json#/a/0/b``: the value at JSON pointer ``pointer`` (RFC 6901) in file ``display``,
    written as a URI fragment (RFC 6901 section 6) glued to the file's name.

    Messages and ``column`` name a JSON value this way: the publication-hygiene scan reads a
    bare ``/a/0/b`` as a host path (and withholds the message), a glued fragment as a pointer.
    """
    return f"{display}#{pointer}"


def wrong_json_type(
    display: str, line: int, pointer: str, expected: str, found: object
) -> EvidenceError:
    """The ``evidence-wrong-type`` error of a JSON-lines value at ``pointer`` (a JSON pointer into
    line ``line``'s object) that is not what the writer puts there; names the type, never the
    value. Located as ``json_ref`` writes it."""
    return EvidenceError(
        "evidence-wrong-type",
        f"{json_ref(display, pointer)} (line {line}): expected {expected}, found a JSON "
        f"{type(found).__name__}",
        file=display,
        row=line,
        column=json_ref(display, pointer),
        expected=expected,
        found=type(found).__name__,
    )


def dataset_unsupported(display: str) -> EvidenceError:
    """The error for a dataset directory given to a reader of single files."""
    return EvidenceError(
        "evidence-dataset-unsupported",
        f"{display} is a directory of part files; this adapter reads one file",
        hint="read the dataset with adapter generic, or export it as one file",
        file=display,
        expected="one file",
        found="a directory",
    )


def no_rows(display: str, expected: str = "at least one row") -> EvidenceError:
    """The ``evidence-empty`` error of a file that has a header (or schema) but no rows."""
    return EvidenceError(
        "evidence-empty",
        f"{display} has no rows",
        file=display,
        expected=expected,
        found="0 rows",
    )


def require_columns(present: list[str], wanted: list[str], display: str) -> None:
    """Raise unless every ``wanted`` column is in ``present``, without a case or NFC/NFD twin.

    Raises:
        EvidenceError: ``evidence-missing-column``, naming the column and the columns found;
            ``evidence-ambiguous-column`` when another column's name equals a wanted one up to
            letter case or Unicode normalisation (``correct`` and ``Correct``).
    """
    by_fold: dict[str, list[str]] = {}
    for n in present:
        by_fold.setdefault(unicodedata.normalize("NFC", n).casefold(), []).append(n)
    for name in wanted:
        twins = [
            n for n in by_fold.get(unicodedata.normalize("NFC", name).casefold(), []) if n != name
        ]
        if twins:
            raise EvidenceError(
                "evidence-ambiguous-column",
                f"{display}: column {name!r} has a twin {twins[0]!r} that differs only in letter "
                "case or Unicode normalisation; which one holds the values cannot be told",
                hint="rename or drop the other column",
                file=display,
                column=name,
                expected=f"one column named like {name!r}",
                found=f"also {twins[0]!r}",
            )
    for name in wanted:
        if name not in present:
            raise missing_name(
                display,
                "column",
                name,
                present,
                hint="fix the column mapping in the contract or the export",
            )


def missing_name(
    display: str, what: str, name: str, present: Iterable[str], *, hint: str
) -> EvidenceError:
    """The ``evidence-missing-column`` error of a column or metric ``name`` a file lacks.

    The message lists the names the file holds (the first 20, then "…") and the closest one
    (``contract.did_you_mean``): ``f.csv has no column 'qid'; did you mean 'q_id'? (columns
    found: q_id, ...)``. Names are headers, never cell values.

    Args:
        display: the file as the contract names it.
        what: ``column`` or ``metric``.
        name: the name wanted.
        present: the names the file holds.
        hint: the error's hint.
    """
    names = list(present)
    shown = ", ".join(visible(n) for n in names[:20]) + (" …" if len(names) > 20 else "")
    return EvidenceError(
        "evidence-missing-column",
        f"{display} has no {what} {name!r}{did_you_mean(name, names)} "
        f"({what}s found: {shown or 'none'})",
        hint=hint,
        file=display,
        column=name,
        expected=f"a {what} named {name!r}",
        found=f"{what}s: {shown or 'none'}",
    )


def visible(name: str) -> str:
    """``name`` with white space and invisible characters spelled out: ``'id<U+00A0>'``.

    Ordinary inner spaces stay; leading or trailing spaces, tabs, no-break spaces, zero-width
    characters, byte-order marks and control characters become ``<U+XXXX>``.
    """
    out = []
    for i, ch in enumerate(name):
        edge = i == 0 or i == len(name) - 1
        if is_invisible(ch) or (ch == " " and edge):
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out)


def is_invisible(ch: str) -> bool:
    """Whether ``ch`` is a control, format, line/paragraph separator or non-ASCII space."""
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Zl", "Zp") or (cat == "Zs" and ch != " ")


def check_header(names: Iterable[str], display: str) -> None:
    """Refuse duplicated column names and names with invisible characters.

    Headers are compared exactly, never trimmed: ``'example_id '`` is not ``'example_id'``.

    Raises:
        EvidenceError: ``evidence-duplicate-column`` naming the column and both positions;
            ``evidence-header-invisible`` naming the column with its invisible characters shown.
    """
    seen: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        if name in seen:
            raise EvidenceError(
                "evidence-duplicate-column",
                f"{display}: column {visible(name)!r} appears twice (columns {seen[name]} and {i})",
                hint="rename or drop one of them: which one holds the values cannot be told",
                file=display,
                column=visible(name),
                expected="unique column names",
                found=f"columns {seen[name]} and {i}",
            )
        seen[name] = i
        if name != name.strip() or any(is_invisible(ch) for ch in name):
            raise EvidenceError(
                "evidence-header-invisible",
                f"{display}: column {i} is named {visible(name)!r}, with white space or "
                "invisible characters (shown as <U+XXXX>)",
                hint="headers are compared exactly; remove the characters shown as <U+XXXX>",
                file=display,
                column=visible(name),
                expected=repr(name.strip()),
                found=repr(visible(name)),
            )


def reader_error(exc: BaseException, fmt: str, display: str, message: str) -> EvidenceError:
    """Classify a reader library's failure by what it means.

    Args:
        exc: what pyarrow (or the codec beneath it: snappy, zstd, thrift) raised.
        message: the parser's message, cleaned for the outputs (host paths and control
            characters removed).

    Returns:
        ``evidence-checksum`` for a Parquet page whose CRC does not match (the values would be
        wrong); ``evidence-corrupt`` for damaged Parquet pages, footer or compression
        (``OSError``, thrift and codec errors); ``evidence-encoding`` for text that is not UTF-8;
        else ``evidence-unparseable``.
    """
    if "checksum" in message.lower() or "crc" in message.lower():
        return EvidenceError(
            "evidence-checksum",
            f"{display}: a Parquet page fails its checksum: {message}",
            hint="the file was damaged after it was written; export it again",
            file=display,
            expected="pages whose CRC matches",
            found="a page checksum mismatch",
        )
    if isinstance(exc, UnicodeDecodeError):
        return EvidenceError(
            "evidence-encoding",
            f"{display} is not UTF-8 (byte offset {exc.start})",
            hint="re-save the file as UTF-8",
            file=display,
            expected="UTF-8 text",
            found=f"bytes {exc.object[exc.start : exc.end].hex(' ')}",
        )
    if fmt == "parquet" and (isinstance(exc, OSError) or not isinstance(exc, pa.ArrowInvalid)):
        return EvidenceError(
            "evidence-corrupt",
            f"{display}: Parquet pages or footer are damaged: {message}",
            hint="the file is truncated or corrupted; export it again",
            file=display,
            expected="a readable Parquet file",
            found=type(exc).__name__,
        )
    return EvidenceError(
        "evidence-unparseable",
        f"{display} is not valid {fmt}: {message}",
        hint=f"check that the file really is {fmt}",
        file=display,
        expected=fmt,
    )


#: What a reader library raises on a damaged or malformed file (never our own bugs).
READER_FAILURES: tuple[type[BaseException], ...] = (
    pa.ArrowInvalid,
    pa.ArrowNotImplementedError,
    pa.ArrowTypeError,
    pa.ArrowKeyError,
    pa.ArrowIndexError,
    pa.ArrowCapacityError,
    OSError,
    UnicodeDecodeError,
)


def guarded(batches: Iterable[T], path: Path, fmt: str, display: str) -> Iterator[T]:
    """Yield from a lazy reader, turning a reader failure mid-file into an ``EvidenceError``.

    Parquet pages are decoded (and their checksums verified) only when a batch is read, so a
    damaged page shows up here, after the file opened fine. Each batch is also validated in
    full, so a damaged page without a checksum (out-of-range dictionary indices or offsets,
    invalid UTF-8) is refused here instead of failing in a later computation.

    Raises:
        EvidenceError: as ``reader_error``.
    """
    try:
        for batch in batches:
            if isinstance(batch, pa.RecordBatch | pa.Table):
                batch.validate(full=True)  # offsets, dictionary indices, UTF-8 of damaged pages
            yield batch
    except READER_FAILURES as exc:
        raise reader_error(exc, fmt, display, parser_message(exc, path, display)) from exc


def parser_message(exc: BaseException, path: Path, display: str, limit: int = 120) -> str:
    """A parser's error message fit for the outputs.

    The host path becomes the contract's relative path, control and non-printable characters
    (binary content read as text) become ``?``, and the message is cut at ``limit`` characters,
    so at most a short excerpt of the offending row reaches decision.json.
    """
    text = str(exc).replace(str(path), display)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
