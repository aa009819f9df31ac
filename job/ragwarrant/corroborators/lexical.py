"""Lexical groundedness scores: deterministic, local, no model.

A response is scored against its context passages by asking which of the response's *content
tokens* never occur in the context. Three scores, each a share in ``[0, 1]`` where **higher means
less grounded** (a gate flags a response when its score is at least a calibrated threshold):

- ``coverage``: share of the response's content tokens (token occurrences, not distinct types)
  that do not occur in the context;
- ``weakest_sentence``: the highest such share over the response's sentences; sentences with
  fewer than ``MIN_SENTENCE_CONTENT_TOKENS`` content tokens are ignored (0.0 when none is left);
- ``hybrid``: ``0.35 * coverage + 0.50 * weakest_sentence + 0.15 * numeric``, where ``numeric``
  is the share of the response's numeric tokens (tokens holding a digit) missing from the context
  (0.0 when the response has no numeric token).

Definitions (issue 4, section 1):

- *token*: a number written with separators, kept whole (a decimal ``4.5``, a thousands-separated
  ``12,500``, a time ``17:00``), else a maximal run of Unicode letters and digits (``[^\\W_]+``)
  in the lowercased text; ``"Walmart's 4.0-star"`` gives ``walmart``, ``s``, ``4``, ``star``.
  Numbers with separators are written in one canonical form (``number_form``): thousands
  separators dropped (``12,500`` -> ``12500``), trailing decimal zeros dropped (``4.50`` -> ``4.5``,
  ``4.0`` -> ``4``), time fields after the first as two digits (``17:0`` and ``17:00`` -> ``17:00``,
  ``09:30`` -> ``9:30``). So ``4.5`` never matches ``4.0``, and ``17:00`` matches a record's
  ``17:0``.
- *context tokens* also include the parts of CamelCase words (``RestaurantsTakeOut`` adds
  ``restaurants``, ``take``, ``out``; ``WiFi`` adds ``wi``, ``fi``), so keys of a JSON record
  support the words a response uses for them.
- *content token*: a token not in ``STOP_WORDS``, a fixed English list (the 179-word NLTK English
  list with its apostrophe forms dropped, since tokens carry no apostrophes).
- *sentence*: text split after ``.``, ``!`` or ``?`` (optionally followed by one closing quote or
  bracket, which stays with the sentence) when whitespace follows, and at every line break.
  ``"4.0"`` and ``"St.Louis"`` are not split.
- *occurs in the context*: the token is one of the tokens of any passage (stop words included).

The context side is a set, built once per example with ``index_context`` and reusable across the
responses that share it. Everything here is pure: plain strings in, frozen values out; no I/O, no
logging, no randomness.

Implementation: text is tokenised as UTF-8 bytes by one ``bytes.translate`` and ``bytes.split``
(text with letters or digits beyond ASCII lowercased first, its other non-ASCII characters as
spaces), numbers with separators cut out first by one regex pass over a digits-as-``0`` view of
the text, and only where a one-byte-per-byte class view holds digit-separator-digit; CamelCase
parts are found from the class view's case boundaries. An ASCII response is split into sentences
by one translate and five ``bytes.replace`` (no regex), and its tokens are coded one character
each so that sentences are counted with ``str.count``. Text holding a non-ASCII decimal digit, and
text where a number ends inside an alphanumeric run, take the regex tokenizer. Scores are
bit-identical to the regex-per-sentence implementation this replaced
(``bench/lexical_reference.py``; checked on every RAGTruth response by ``bench/bench_lexical.py``
and on random texts by the tests).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

# NLTK's English stop-word list (nltk_data corpora/stopwords/english, 179 words), apostrophe forms
# removed ("don't" and friends cannot be tokens here; their parts "don", "t" are in the list).
STOP_WORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom this
    that these those am is are was were be been being have has had having do does did doing a an
    the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now d ll m o re ve y ain aren
    couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
    """.split()  # noqa: SIM905 -- a word list reads better as text than as 150 quoted literals
)

MIN_SENTENCE_CONTENT_TOKENS = 5
"""Sentences with fewer content tokens than this are ignored by ``weakest_sentence``."""

HYBRID_WEIGHTS: tuple[float, float, float] = (0.35, 0.50, 0.15)
"""Weights of (coverage, weakest_sentence, numeric) in ``hybrid``; they sum to 1."""

_NUMBER_WITH_SEPARATORS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?::\d+)+|\d+(?:\.\d+)+"
_NUMBER_TOKEN = re.compile(_NUMBER_WITH_SEPARATORS + r"|[^\W_]+")
# A break is whitespace after [.!?] (or after one of them plus one closing quote or bracket), or a
# run of line breaks. Written to start with ``\s`` so the regex engine skips quickly to candidates;
# it splits exactly where ``(?:(?<=[.!?])|(?<=[.!?]["'\u201d\u2019)\]]))\s+|\n+`` does.
_SENTENCE_BREAK = re.compile(
    r"\s(?:(?:(?<=[.!?]\s)|(?<=[.!?][\"'\u201d\u2019)\]]\s))\s*|(?<=\n)\n*)"
)
_DIGITS = frozenset("0123456789")

# ---- fast path (the module docstring's "Implementation"). As UTF-8, every byte of a non-ASCII
# character is >= 0x80; a table mapping those bytes to a space makes a non-ASCII character that is
# no letter or digit separate tokens like a space does (a non-word character for ``\b``). What
# the fast path cannot reproduce exactly goes to the reference tokenizer (``_tokens``).
_SENTINEL = "\x01"  # marks sentence ends in a folded response; a response holding it goes slow
_SENTINEL_BYTE = _SENTINEL.encode()
_ASCII_BYTES = bytes(range(128))


def _byte_table(ascii_map: Callable[[str], str]) -> bytes:
    """A ``bytes.translate`` table: ASCII bytes as ``ascii_map`` says, bytes >= 0x80 to a space."""
    return "".join(map(ascii_map, map(chr, range(128)))).encode() + b" " * 128


_FOLD = _byte_table(lambda c: c.lower() if c.isalnum() else " ")
_FOLD_MARKED = _byte_table(lambda c: c.lower() if c.isalnum() or c == _SENTINEL else " ")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_NON_ASCII_ALNUM_RUN = re.compile(r"[^\W_\x00-\x7f]+")
# _NUMBER_WITH_SEPARATORS, only where a token starts (not right after a letter or digit), run on
# the text's number view (``_NUMBER_VIEW``: digits to "0", letters to "a", ". , :" kept, all else
# a space; the same length, so a match there spans the number in the text). The regex engine finds
# a literal first character far faster than a character class. The lookahead (the digit run is
# followed by a separator and a digit, as in every branch) only makes it give up sooner on plain
# numbers. Captured for re.split.
_NUMBER_AT_TOKEN_START = re.compile(
    rb"(0(?<![a0]0)(?=0*+[.,:]0)(?:0{0,2}(?:,000)+(?:\.0+)?|0*(?::0+)+|0*(?:\.0+)+))"
)
_NUMBER_VIEW = _byte_table(
    lambda c: "0" if c.isdigit() else "a" if c.isalpha() else c if c in ".,:" else " "
)
# One byte per byte of a text for the cheap tests before the regexes: ASCII letters to "a"/"A",
# digits and "_" (word characters) to "0", the separators ". , :" to ".", all else to a space. A
# text can hold a number with separators only if this view holds "0.0", and a CamelCase word only
# if it holds "aA".
_CLASSES = _byte_table(
    lambda c: (
        "a"
        if c.islower()
        else "A"
        if c.isupper()
        else "0"
        if c.isalnum() or c == "_"
        else "."
        if c in ".,:"
        else " "
    )
)
_LETTER_CLASSES = re.compile(b"[aA]*")
# a lowercase letter followed by an uppercase one, found from the (rarer) uppercase one
_CASE_BOUNDARY = re.compile(b"A(?<=aA)")
# An uppercase letter at a CamelCase boundary (after a lowercase letter, or after an uppercase one
# and before a lowercase one), captured: starting with a character class (not a lookbehind), the
# engine skips to uppercase letters instead of trying every position.
_CAMEL_PART_START = re.compile(rb"([A-Z])(?:(?<=[a-z][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]))")
# Text with letters or digits beyond ASCII is taken lowercased, as UTF-8 whose other non-ASCII
# characters are spaces (``_wide_views``): every byte >= 0x80 left is then part of a letter or
# digit, so the "wide" tables keep those bytes in tokens and the number regex treats them as
# letters. A non-ASCII decimal digit (which ``\d`` matches) sends the text to the reference.
_FOLD_WIDE = _FOLD[:128] + bytes(range(128, 256))
_FOLD_MARKED_WIDE = _FOLD_MARKED[:128] + bytes(range(128, 256))
_CLASSES_WIDE = _CLASSES[:128] + b"0" * 128
_NUMBER_VIEW_WIDE = _NUMBER_VIEW[:128] + b"a" * 128
_ASCII_DIGIT = re.compile(rb"[0-9]")


def number_form(token: str) -> str:
    """Return the canonical form of a number token written with separators.

    ``12,500`` -> ``12500``; ``4.50`` -> ``4.5``; ``4.0`` -> ``4``; ``17:0`` -> ``17:00``;
    ``09:30`` -> ``9:30``; a token with several dots (``1.2.3``) is returned unchanged.
    Tokens without a separator are returned unchanged.
    """
    if ":" in token:
        head, *rest = token.split(":")
        return ":".join([str(int(head)), *(f"{int(part):02d}" for part in rest)])
    plain = token.replace(",", "")
    if plain.count(".") != 1:
        return plain
    whole, fraction = plain.split(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


@functools.lru_cache(maxsize=1 << 16)
def _number_form_bytes(token: bytes) -> bytes:
    return number_form(token.decode()).encode()


def _tokens(lowered: str) -> list[str]:
    """The reference tokenizer: for text the fast path cannot take, and its definition."""
    # only number tokens with a separator are not alphanumeric
    return [t if t.isalnum() else number_form(t) for t in _NUMBER_TOKEN.findall(lowered)]


def _wide_views(text: str) -> tuple[bytes, bytes] | None:
    """``text`` as UTF-8 with its non-ASCII characters that are no letter or digit as spaces:
    lowercased (non-ASCII letters only; the tables lower ASCII) and as it is. None when one of
    them is a decimal digit, or lowercases to other than one character or by context (capital
    sigma), where ``text.lower()`` is not the lowercase of each character."""
    lowered = data = text.encode()
    for char in set(data.translate(None, _ASCII_BYTES).decode()):
        code = char.encode()  # UTF-8 is self-synchronising: these bytes occur only where it does
        lower = char.lower()
        if not char.isalnum():
            data = data.replace(code, b" ")
            lowered = lowered.replace(code, b" ")
        elif char.isdecimal() or char == "\u03a3" or len(lower) != 1:
            return None
        elif lower != char:
            lowered = lowered.replace(code, lower.encode())
    return lowered, data


def _fast_tokens(
    data: bytes, table: bytes, number_view: bytes = _NUMBER_VIEW, classes: bytes | None = None
) -> list[bytes] | None:
    """The tokens of ``data`` in order (folded by ``table``), or None to use the reference.

    None when a number with separators ends inside an alphanumeric run (``1,2345``), where the
    reference scan would start another token mid-run.
    """
    if b"0.0" not in (data.translate(_CLASSES) if classes is None else classes):
        return data.translate(table).split()
    # text, number, text, ..., text (``re.split`` with one group), cut where the number view's are
    in_view = _NUMBER_AT_TOKEN_START.split(data.translate(number_view))
    cuts = list(itertools.accumulate(map(len, in_view)))
    pieces = list(map(data.__getitem__, map(slice, [0, *cuts[:-1]], cuts)))
    found = pieces[0].translate(table).split()
    for i in range(1, len(pieces), 2):
        if pieces[i + 1][:1].translate(table).strip():  # the number ends inside a run
            return None
        found.append(_number_form_bytes(pieces[i]))
        found += pieces[i + 1].translate(table).split()
    return found


def _camel_parts(data: bytes, classes: bytes) -> list[bytes]:
    """The lowercased parts of the CamelCase words of ``data`` (UTF-8 with no non-ASCII letter).

    A CamelCase word is the ASCII-letter prefix of a word-character run, when a lowercase letter
    followed by an uppercase one lies inside that prefix: what ``findall`` of
    ``\\b[A-Za-z]*?[a-z][A-Z][A-Za-z]*`` returns (``bench/lexical_reference.py``). ``classes`` is
    ``data.translate(_CLASSES)``.
    """
    boundary = _CASE_BOUNDARY.search(classes)
    words = []
    while boundary is not None:
        at = boundary.start() - 1  # the lowercase letter
        start = max(classes.rfind(b" ", 0, at), classes.rfind(b".", 0, at)) + 1
        end = _LETTER_CLASSES.match(classes, start).end()  # type: ignore[union-attr]
        if at + 2 <= end:
            words.append(data[start:end])
        boundary = _CASE_BOUNDARY.search(classes, max(end, at + 2))
    if not words:
        return []
    pieces = _CAMEL_PART_START.split(b" ".join(words))
    pieces[1::2] = map(b" ".__add__, pieces[1::2])  # a space at each boundary
    return b"".join(pieces).lower().split()


def tokenize(text: str) -> list[str]:
    """Return the lowercased alphanumeric tokens of ``text``, in order.

    Args:
        text: any string.

    Returns:
        Numbers with separators, whole and in canonical form (``number_form``), else maximal
        runs of Unicode letters/digits of ``text.lower()`` (underscore is a separator).

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    views = _wide_views(text)
    found = None if views is None else _fast_tokens(views[0], _FOLD_WIDE, _NUMBER_VIEW_WIDE)
    return _tokens(text.lower()) if found is None else list(map(bytes.decode, found))


def content_tokens(text: str) -> list[str]:
    """Return the tokens of ``text`` that are not in ``STOP_WORDS``, in order."""
    return [t for t in tokenize(text) if t not in STOP_WORDS]


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences on sentence-ending punctuation and line breaks.

    A break falls at whitespace that follows ``.``, ``!`` or ``?`` (or one of them plus one
    closing quote or bracket, kept with the sentence), and at every line break. Empty pieces are
    dropped; no character other than the separating whitespace is lost.

    Args:
        text: any string.

    Returns:
        The non-blank sentences, stripped, in order.
    """
    return [s for s in (p.strip() for p in _SENTENCE_BREAK.split(text)) if s]


@dataclass(frozen=True, slots=True)
class ContextIndex:
    """The set of tokens occurring in an example's context passages.

    Attributes:
        tokens: every token of every passage (stop words included), plus CamelCase parts.
    """

    tokens: frozenset[str]


def index_context(passages: str | Iterable[str]) -> ContextIndex:
    """Build the token set of the context once, to score one or many responses against it.

    Args:
        passages: one string or an iterable of passage strings.

    Returns:
        The ``ContextIndex`` of all passages together.

    Raises:
        TypeError: a passage is not a str.
    """
    # tokens never span a space: the passages joined by one have the union of their tokens
    text = passages if isinstance(passages, str) else " ".join(passages)
    found = _context_bag(text)
    if found is not None:
        return ContextIndex(frozenset(map(bytes.decode, found)))
    # a non-ASCII decimal digit: regex tokens; CamelCase parts from a view where ``\b`` and
    # ``[A-Za-z]`` match where they do in the text (non-ASCII letters and digits as "0", a word
    # character that is no ASCII letter; other non-ASCII characters as a space)
    camel = _NON_ASCII.sub(" ", _NON_ASCII_ALNUM_RUN.sub("0", text)).encode()
    parts = list(map(bytes.decode, _camel_parts(camel, camel.translate(_CLASSES))))
    return ContextIndex(frozenset(_tokens(text.lower()) + parts))


def _context_bag(text: str) -> list[bytes] | None:
    """Every token of ``text`` as UTF-8 bytes, then its CamelCase parts; None when the fast path
    cannot take the text (``index_context`` then takes the reference tokenizer)."""
    views = _wide_views(text)
    if views is None:
        return None
    lowered, data = views
    classes = data.translate(_CLASSES_WIDE)  # its "0.0" test holds for ``lowered`` too
    found = _fast_tokens(lowered, _FOLD_WIDE, _NUMBER_VIEW_WIDE, classes)
    return None if found is None else found + _camel_parts(data, classes)


# The fast scorer writes one character per token of a response: "" for a stop word, "k" for a
# content token occurring in the context, "u" for one that does not, "|" between sentences. Counting
# characters in that string replaces a Python loop over tokens.
_SUPPORTED, _UNSUPPORTED, _END = "k", "u", "|"
_STOP_CODES = dict.fromkeys(STOP_WORDS, "")
_STOP_CODES[_SENTINEL] = _END
_STOP_CODES_BYTES = {word.encode(): code for word, code in _STOP_CODES.items()}
_Token = TypeVar("_Token", str, bytes)


@dataclass(frozen=True, slots=True)
class LexicalScores:
    """The lexical groundedness scores of one response; every share is in ``[0, 1]``.

    Higher means less grounded. Counts are token occurrences.

    Attributes:
        coverage: ``n_unsupported / n_content`` (0.0 when ``n_content == 0``).
        weakest_sentence: highest unsupported share over scored sentences (0.0 when none scored).
        numeric: ``n_numeric_missing / n_numeric`` (0.0 when ``n_numeric == 0``).
        hybrid: ``0.35 * coverage + 0.50 * weakest_sentence + 0.15 * numeric``.
        n_content: content tokens in the response.
        n_unsupported: content tokens absent from the context.
        n_numeric: numeric tokens in the response.
        n_numeric_missing: numeric tokens absent from the context.
        n_sentences: sentences in the response.
        n_sentences_scored: sentences with at least ``MIN_SENTENCE_CONTENT_TOKENS`` content tokens.
    """

    coverage: float
    weakest_sentence: float
    numeric: float
    hybrid: float
    n_content: int
    n_unsupported: int
    n_numeric: int
    n_numeric_missing: int
    n_sentences: int
    n_sentences_scored: int

    @classmethod
    def of(
        cls,
        tokens: list[_Token],
        lookup: dict[_Token, str],
        numbers: list[_Token],
        n_sentences: int,
    ) -> LexicalScores:
        """The frozen scores of a response from its tokens (the sentinel between sentences), the
        code of each (``lookup``: "k", "" or "|"; any other token is "u", unsupported), its numeric
        tokens (missing when not in ``lookup``) and its number of sentences."""
        codes = "".join(map(lookup.get, tokens, itertools.repeat(_UNSUPPORTED)))
        n_scored, weakest = 0, 0.0
        for sentence in codes.split(_END):
            s_content = len(sentence)
            if s_content >= MIN_SENTENCE_CONTENT_TOKENS:
                n_scored += 1
                weakest = max(weakest, sentence.count(_UNSUPPORTED) / s_content)
        n_numeric = len(numbers)
        n_numeric_missing = n_numeric - sum(map(lookup.__contains__, numbers))
        n_content = len(codes) - codes.count(_END)
        n_unsupported = codes.count(_UNSUPPORTED)
        coverage = n_unsupported / n_content if n_content else 0.0
        numeric_share = n_numeric_missing / n_numeric if n_numeric else 0.0
        w_cov, w_weak, w_num = HYBRID_WEIGHTS
        return cls(
            coverage=coverage,
            weakest_sentence=weakest,
            numeric=numeric_share,
            hybrid=w_cov * coverage + w_weak * weakest + w_num * numeric_share,
            n_content=n_content,
            n_unsupported=n_unsupported,
            n_numeric=n_numeric,
            n_numeric_missing=n_numeric_missing,
            n_sentences=n_sentences,
            n_sentences_scored=n_scored,
        )


def score_response(response: str, context: ContextIndex | str | Sequence[str]) -> LexicalScores:
    """Score one response against its context with all lexical groundedness scores.

    Args:
        response: the generated answer.
        context: the context passages (one string or a sequence of strings), or a
            ``ContextIndex`` built by ``index_context`` when several responses share a context.

    Returns:
        The frozen ``LexicalScores``; see the module docstring for definitions.

    Raises:
        TypeError: ``response`` or a passage is not a str.
    """
    if not isinstance(response, str):
        raise TypeError(f"response must be str, not {type(response).__name__}")
    marked = _marked_response(response)
    if marked is not None and not isinstance(context, ContextIndex):
        # passages joined by a space have the union of their tokens (tokens never span a space)
        found = _context_bag(context if isinstance(context, str) else " ".join(context))
        if found is not None:  # token codes straight from the context's bytes
            lookup = dict.fromkeys(found, _SUPPORTED)
            lookup.update(_STOP_CODES_BYTES)
            return LexicalScores.of(marked[0], lookup, marked[2], marked[1])
    known = (context if isinstance(context, ContextIndex) else index_context(context)).tokens
    if marked is None:  # the fast tokenizer cannot take the response: the reference tokenizer
        sentences = split_sentences(response.lower())
        words = [t for sentence in sentences for t in (*_tokens(sentence), _SENTINEL)][:-1]
        numeric = [t for t in words if not _DIGITS.isdisjoint(t)]
        n_sentences = len(sentences)
    else:
        words, numeric = list(map(bytes.decode, marked[0])), list(map(bytes.decode, marked[2]))
        n_sentences = marked[1]
    supported = dict.fromkeys(known.intersection(words), _SUPPORTED)
    return LexicalScores.of(
        words, supported | _STOP_CODES, numeric, n_sentences
    )  # "" for a stop word


# An ASCII response is split into sentences without a regex: one translate keeps what the breaks
# and the number tokens need (letters lowered, digits, ". , :" and newlines as they are; "!" and
# "?" as "!", closing quotes and brackets as '"', other whitespace as a space, everything else as
# "#"), then a sentinel goes after every end mark followed by a space (optionally with one closer
# between) and after every newline. That cuts between the same non-blank pieces as
# ``_SENTENCE_BREAK``: two pieces are apart exactly when the whitespace run between them holds a
# newline or starts right after an end mark (or an end mark and a closer); a further cut inside
# such a run only adds a blank piece, which counts as no sentence and holds no token.
_SENTENCE_CLASS = _byte_table(
    lambda c: (
        c.lower()
        if c.isalnum()
        else c
        if c in ".,:\n"
        else "!"
        if c in "!?"
        else '"'
        if c in "\"')]"
        else " "
        if c.isspace()
        else "#"
    )
)
_SENTENCE_ENDS = tuple(
    (end, end + b" " + _SENTINEL_BYTE + b" ") for end in (b". ", b"! ", b'." ', b'!" ', b"\n")
)


def _marked_response(response: str) -> tuple[list[bytes], int, list[bytes]] | None:
    """The response's tokens in order, a sentinel token between two sentences, the number of
    sentences and the numeric tokens; None when the fast tokenizer cannot take it (see
    ``_fast_tokens``)."""
    if not response.isascii():  # the lowercased sentences joined by the sentinel, if it is new
        sentences = split_sentences(response.lower())
        text = f" {_SENTINEL} ".join(sentences)
        views = _wide_views(text) if text.count(_SENTINEL) == len(sentences) - 1 else None
        tokens = (
            None if views is None else _fast_tokens(views[1], _FOLD_MARKED_WIDE, _NUMBER_VIEW_WIDE)
        )
        if tokens is None:
            return None
        # tokens with bytes >= 0x80 are not all ASCII letters either: test them for a digit
        numbers = list(filter(_ASCII_DIGIT.search, itertools.filterfalse(bytes.isalpha, tokens)))
        return tokens, len(sentences), numbers
    marked = response.encode().translate(_SENTENCE_CLASS)
    for end, end_marked in _SENTENCE_ENDS:
        marked = marked.replace(end, end_marked)
    pieces = marked.split(_SENTINEL_BYTE)
    n_sentences = len(pieces) - pieces.count(b"") - sum(map(bytes.isspace, pieces))
    classes = marked.translate(_CLASSES)
    tokens = _fast_tokens(marked, _FOLD_MARKED, classes=classes)
    if tokens is None:
        return None
    # ASCII tokens that are not all letters hold a digit, the sentinel aside
    numbers = (
        [t for t in itertools.filterfalse(bytes.isalpha, tokens) if t != _SENTINEL_BYTE]
        if b"0" in classes
        else []
    )
    return tokens, n_sentences, numbers
