"""One cell at a time: numbers, booleans, NaN and list or Python literals, with located errors.

One rule for every number (``parse_number``), which the column readers in ``_columns`` share.
"""

from __future__ import annotations

import ast
import math
import re

import orjson

from ragwarrant.adapters._integrity import json_ref
from ragwarrant.errors import EvidenceError

NAN_STRINGS = {"nan", "NaN", "NAN", "-nan"}
_ASCII_SPACE = " \t\n\r\x0b\x0c"
NULL_STRINGS = {"", "null", "None", "NULL", "NA", "N/A"}


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
        if text in NULL_STRINGS or text in NAN_STRINGS:
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


def _repr_value(node: ast.expr) -> object:
    """A literal like ``ast.literal_eval``'s, plus datetime / Timestamp / UUID calls (kept as
    their source text) and ``nan`` / ``NaT``; nothing is ever executed."""
    if isinstance(node, ast.Call) and ast.unparse(node.func) in _REPR_CALLS:
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


def not_a_number(display: str, row: int, column: str, cell: object) -> EvidenceError:
    text = str(cell)
    why = ""
    if _is_bool(cell):
        why = " (a boolean, where this format's numbers are decimals: write 1 or 0)"
    elif isinstance(cell, str):
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


def given_twice(
    display: str, row: int | None, pointer: str, first: str, what: str
) -> EvidenceError:
    """The error of a JSON value given twice in one record (a metric's second result, a second
    spelling of one key): which of the two holds cannot be told, so neither is read.

    Args:
        display: the file as the contract names it.
        row: the record's 1-based number (test case, line); None for the whole file.
        pointer: the JSON pointer of the second value, within the record or the file.
        first: the JSON pointer of the first one.
        what: what is given twice, e.g. ``"metric 'Token F1'"`` (never a private value).

    Returns:
        ``EvidenceError`` ``evidence-duplicate-metric`` naming both values as ``json_ref`` does
        (a bare ``/testCases/...`` would be withheld by the publication-hygiene scan).
    """
    both = f"{json_ref(display, first)} and {json_ref(display, pointer)}"
    return EvidenceError(
        "evidence-duplicate-metric",
        f"{display}{f' row {row}' if row else ''}: {what} is given twice ({both}); which one "
        "holds cannot be told",
        hint="give each metric once per record (remove or rename the repeated entry)",
        file=display,
        row=row,
        column=json_ref(display, pointer),
        expected=f"{what} once",
        found=both,
    )


def float_cell(
    value: object, display: str, row: int, column: str, *, booleans: bool = False
) -> tuple[float | None, str | None]:
    """Turn one JSON-native cell into ``(value, missing_reason)``.

    ``None`` → ``(None, "null")``; NaN → ``(None, "nan")``; booleans (``true``, or the strings
    true/false) → 1.0/0.0 only when ``booleans`` says the tool writes them; numbers kept
    (infinities too, for the non-finite gate); numeric strings parsed by ``parse_number`` (the
    rule CSV cells follow); "nan"/"" strings as above.

    Raises:
        EvidenceError: ``evidence-wrong-type`` for anything else, naming file, row and column.
    """
    if value is None:
        return None, "null"
    if isinstance(value, bool) and booleans:
        return (1.0 if value else 0.0), None
    if isinstance(value, int | float) and not isinstance(value, bool):
        f = float(value)
        return (None, "nan") if math.isnan(f) else (f, None)
    cell = _text_cell(value, booleans) if isinstance(value, str) else None
    if cell is not None:
        return cell
    raise EvidenceError(
        "evidence-wrong-type",
        f"{display} row {row}: {column!r} is not a number"
        + (" (a boolean, where this format's numbers are decimals)" if _is_bool(value) else ""),
        hint="metric values are numbers, null or NaN",
        file=display,
        row=row,
        column=column,
        expected="a number",
        found=_shape_of(value) if isinstance(value, str) else type(value).__name__,
    )


def _is_bool(value: object) -> bool:
    return isinstance(value, bool) or (
        isinstance(value, str) and value.strip(_ASCII_SPACE).lower() in ("true", "false")
    )


def _text_cell(value: str, booleans: bool) -> tuple[float | None, str | None] | None:
    """``float_cell`` of a string, or None when it is not a number (nor null, NaN, or a boolean
    where ``booleans``)."""
    text = value.strip(_ASCII_SPACE)
    if text in NULL_STRINGS:
        return None, "null"
    if text in NAN_STRINGS:
        return None, "nan"
    if booleans and text.lower() in ("true", "false"):
        return (1.0 if text.lower() == "true" else 0.0), None
    number = parse_number(text)
    return None if number is None else (number, None)
