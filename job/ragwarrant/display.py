"""Escaping for every output boundary: what a value from the inputs may look like where it is shown.

Contract versions, evaluator names, slice and split values, policy ids, example ids, units and
config keys come from files other people and tools wrote, and they are shown in report.md (pasted
into ``$GITHUB_STEP_SUMMARY`` and merge requests), junit.xml, report.html, the ``run`` stdout line
and ``ragwarrant summary``. Each boundary has one function here, applied to every such value:

- ``visible``: control, format (zero-width, bidirectional), separator and non-characters become
  Python-style escapes (``\\x1b``, ``\\n``, ``\\u200b``), so a value can neither send a terminal
  sequence nor start a new line: stdout and ``summary`` show exactly one line per line they mean.
- ``identifier`` (``quoted`` in messages): a name as it is shown to a person. A name with an
  invisible character, letters from more than one script (``c\\u0430ndidate``, with a Cyrillic
  ``а``) or only Cyrillic or Greek letters drawn like Latin ones is shown as its ASCII escape in
  quotes (``'c\\u0430ndidate'``), so two names that look alike read differently.
- ``markdown``: ``visible`` plus CommonMark backslash escapes for inline text (CommonMark 0.31,
  section 2.4; entities would add word tokens and hide a copied text from the hygiene scan): no
  raw HTML (``\\<``, ``\\>``, ``\\&``), no table cell break (``\\|``), no link, image or code span
  (``\\[``, ``\\]``, ``\\```), no emphasis by ``*``, no block start (a leading ``#``, list or
  quote marker). ``_``, ``~``, ``-``, ``+``, ``/``, ``=``, ``.``, ``:`` and ``@`` are kept, so the
  publication-hygiene patterns (credentials, paths, addresses) still see a value whole.
- ``markdown_code``: ``visible`` inside a code span whose backtick fence is longer than any
  backtick run in the value (CommonMark 0.31, section 6.1); in a table, ``|`` is escaped as GFM
  requires inside cells.
- ``xml_text``: characters XML 1.0 does not allow (section 2.2: C0 controls other than tab, line
  feed and carriage return, surrogates, U+FFFE and U+FFFF) become ``visible`` escapes; markup
  characters are left to the XML writer.

HTML (report.html) is escaped by Jinja2's autoescape; values reach it through ``visible`` or
``identifier`` where they are names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

#: Unicode general categories shown as escapes: controls, format characters (zero-width space,
#: bidirectional overrides, BOM), line and paragraph separators, surrogates, unassigned code
#: points and non-characters (U+FFFE).
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})

#: Letters of these scripts mix in ordinary Japanese and Korean text: one script for the check.
_HAN_FAMILY = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC"})

#: Characters drawn like a Latin letter, mapped to it: the one table of lookalikes (a subset of
#: Unicode's confusables.txt, UTS #39 "Unicode Security Mechanisms", section 4): Cyrillic and
#: Greek letters, dotless ``ı`` and ``ɩ`` as ``i``, digit ``1``, ``|`` and ``ǀ`` as ``l``, digit
#: ``0`` as ``o``. The near-miss fold (``contract._runtime``) applies it before case folding, so an
#: upper-case form maps to the letter it looks like (Greek ``Η`` to ``H``); a capital ``I`` (also
#: Greek ``Ι``, Cyrillic ``І``) stays, read there as ``i`` or ``l``.
LATIN_OF = str.maketrans(
    "аеорсхуіјѕһԁԛԝӏүАВЕКМНОРСТХУІЈЅҮӀԚԜαικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧıɩ1|ǀ0",
    "aeopcxyijshdqwlyABEKMHOPCTXYIJSYIQWaikvoptuxABEZHIKMNOPTYXiilllo",
)
_LOOKALIKE_LETTERS = [c for c in map(chr, LATIN_OF) if not c.isascii()]
#: Cyrillic and Greek letters of ``LATIN_OF``: a name spelled only with these looks like a Latin
#: name (``сор``, ``а``).
_LATIN_LOOKALIKES = frozenset(
    c for c in _LOOKALIKE_LETTERS if not unicodedata.name(c).startswith("LATIN")
)
#: Latin letters of ``LATIN_OF`` drawn like other ASCII letters (dotless i, iota, dental click).
_ASCII_LOOKALIKES = frozenset(_LOOKALIKE_LETTERS) - _LATIN_LOOKALIKES

_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: A backslash is escaped only before ASCII punctuation or at the end (CommonMark 0.31,
#: section 2.4: elsewhere it is a literal character), so ``\x1b`` stays one backslash.
_MD_INLINE = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)|[`*\[\]|<>&]")
_MD_BLOCK_START = re.compile(r"#|[-+] ")


def visible(text: str, *, keep: str = "") -> str:
    """Return ``text`` with every invisible or line-breaking character as a visible escape.

    Args:
        text: any string (a value from the inputs, a message embedding one).
        keep: characters left as they are (``"\n"`` for multi-line text shown as such: the
            review CSV and page).

    Returns:
        The same string when it holds no such character; printable characters (including
        non-ASCII letters and the backslash) are unchanged.
    """
    if text.isprintable():  # the common case: one C-level pass, nothing to escape
        return text
    return "".join(  # Python's escape of each: \\n, \\x1b, \\u200b or \\U0001f600
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES and ch not in keep
        else ch
        for ch in text
    )


def _script(ch: str) -> str | None:
    """The script of a letter, from the first word of its Unicode name; None for a non-letter."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    word = unicodedata.name(ch, "UNNAMED").split(" ")[0]
    return "HAN" if word in _HAN_FAMILY else word


def _lookalike(name: str) -> bool:
    """Letters of more than one script, or only letters drawn like Latin ones (UTS #39's
    mixed-script and whole-script confusables, approximated)."""
    if name.isascii():
        return False
    if any(ch in _ASCII_LOOKALIKES for ch in name):
        return True
    letters = [ch for ch in name if unicodedata.category(ch).startswith("L")]
    if letters and all(ch in _LATIN_LOOKALIKES for ch in letters):
        return True
    return len({s for s in map(_script, letters) if s is not None}) > 1


def identifier(name: str, *, quoted: bool = False) -> str:
    """Return a name (policy id, metric, slice value, key) as it is shown to a person.

    A name holding an invisible character, letters of more than one script, or only Cyrillic
    or Greek letters drawn like Latin ones (``а``, ``сор``) is always shown as its quoted ASCII
    escape (Python's ``ascii``: ``'c\\u0430ndidate'``). Other names are shown
    as they are, in quotes (``repr``) when ``quoted``.

    Args:
        name: the name as read from the inputs.
        quoted: quote a plain name too (messages such as "did you mean 'x'?").
    """
    if not name.isprintable() or _lookalike(name):
        return ascii(name)
    return repr(name) if quoted else name


def number(x: float) -> str:
    """``x`` in a message: as short as ``format(x, "g")`` when that reads back as ``x``, else
    Python's shortest round-trip ``repr`` (a scale [1e15, 1e15 + 1] must not print as
    [1e+15, 1e+15])."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def quoted(name: str) -> str:
    """``identifier(name, quoted=True)``: a name in a message, as ``repr`` or its ASCII escape."""
    return identifier(name, quoted=True)


def markdown(text: str) -> str:
    """Return ``text`` safe to place inline in Markdown (CommonMark with GFM tables).

    The result renders as ``visible(text)`` and can open no HTML element, link, image, code
    span, table cell or block. See the module docstring for what is kept.
    """
    out = _MD_INLINE.sub(lambda m: "\\" + m.group(0), visible(text))
    return "\\" + out if _MD_BLOCK_START.match(out) else out


def markdown_code(text: str, *, table: bool = False) -> str:
    """Return ``text`` as a Markdown code span that renders as ``visible(text)``.

    Args:
        text: the value (an id, a path).
        table: the span is inside a GFM table cell: ``|`` is escaped (GFM 0.29, section 4.10).
    """
    body = visible(text)
    if table:
        body = body.replace("|", "\\|")
    runs = re.findall(r"`+", body)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def cut(text: str, width: int, marker: str) -> str:
    """``text`` whole when it has at most ``width`` characters; else its start and ``marker``
    (a format string whose ``{}`` is the count of characters cut), ``width`` long in all
    (the marker alone when it is longer than ``width``)."""
    if len(text) <= width:
        return text
    keep = max(width - len(marker.format(len(text))), 0)
    return text[:keep] + marker.format(len(text) - keep)


def xml_text(text: str) -> str:
    """Return ``text`` with every character XML 1.0 does not allow as a ``visible`` escape.

    Markup characters (``<``, ``&``, quotes) are left for the XML writer to escape.
    """
    return _XML_ILLEGAL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


Filters = tuple[tuple[str, Callable[..., Any]], ...]


@cache
def template(name: str, filters: Filters = (), **options: Any) -> jinja2.Template:
    """A Jinja2 template shipped as package data (``ragwarrant/data/templates/<name>``), compiled
    once per process: undefined names raise; by default block tags take their line with them and
    the file's last newline is kept. ``filters`` are (name, function) pairs; ``options`` are
    further ``jinja2.Environment`` arguments (``autoescape``, ``finalize``) or override those
    defaults (the review page drops the last newline)."""
    import jinja2

    defaults = {"keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True}
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ragwarrant", "data/templates"),
        undefined=jinja2.StrictUndefined,
        **(defaults | options),
    )
    env.filters.update(filters)
    return env.get_template(name)
