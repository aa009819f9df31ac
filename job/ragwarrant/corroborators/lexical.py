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

Implementation: text that is ASCII (or whose non-ASCII characters are all neither letters nor
digits) is tokenised by one ``str.translate`` and ``str.split``, numbers with separators cut out
first by one regex pass, CamelCase parts found by string search, and a response's tokens coded
one character each so that sentences are counted with ``str.count``; other text takes the regex
tokenizer. Scores are bit-identical to the regex-per-sentence implementation this replaced
(``bench/lexical_reference.py``; checked on every RAGTruth response by ``bench/bench_lexical.py``
and on random texts by the tests).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "HYBRID_WEIGHTS",
    "MIN_SENTENCE_CONTENT_TOKENS",
    "STOP_WORDS",
    "ContextIndex",
    "LexicalScores",
    "content_tokens",
    "coverage_score",
    "hybrid_score",
    "index_context",
    "is_numeric_token",
    "number_form",
    "numeric_missing_score",
    "score_response",
    "split_sentences",
    "tokenize",
    "weakest_sentence_score",
]

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
_TOKEN = re.compile(r"[^\W_]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_NUMBER_TOKEN = re.compile(_NUMBER_WITH_SEPARATORS + r"|[^\W_]+")
_ASCII_NUMBER_TOKEN = re.compile(_NUMBER_WITH_SEPARATORS + r"|[a-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATED_DIGITS = re.compile(r"\d[.,:]\d")
# A break is whitespace after [.!?] (or after one of them plus one closing quote or bracket), or a
# run of line breaks. Written to start with ``\s`` so the regex engine skips quickly to candidates;
# it splits exactly where ``(?:(?<=[.!?])|(?<=[.!?]["'\u201d\u2019)\]]))\s+|\n+`` does.
_SENTENCE_BREAK = re.compile(
    r"\s(?:(?:(?<=[.!?]\s)|(?<=[.!?][\"'\u201d\u2019)\]]\s))\s*|(?<=\n)\n*)"
)
_DIGITS = frozenset("0123456789")

# ---- fast path (ASCII text, or text whose only non-ASCII characters are not letters or digits)
# Tokens are the runs left by one ``str.translate`` (A-Z lowered, every other non-alphanumeric
# ASCII character to a space) and ``str.split``; numbers with separators are cut out first by one
# regex pass that matches only where the reference tokenizer's scan would (at the start of an
# alphanumeric run). Whatever the fast path cannot reproduce exactly goes to the reference
# tokenizer (``_tokens``), so both give the same tokens on every input.
_FOLD = str.maketrans({chr(c): chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
_SENTINEL = "\x01"  # marks sentence ends in a folded response; a response holding it goes slow
_FOLD_MARKED = str.maketrans(
    {chr(c): chr(c).lower() if chr(c).isalnum() or chr(c) == _SENTINEL else " " for c in range(128)}
)
# ASCII letters to "a"/"A", digits and "_" (word characters) to "0", others to a space
_CASE_CLASS = str.maketrans(
    {
        chr(c): "a"
        if chr(c).islower()
        else "A"
        if chr(c).isupper()
        else "0"
        if chr(c).isalnum() or chr(c) == "_"
        else " "
        for c in range(128)
    }
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_NON_ASCII_ALNUM = re.compile(r"[^\W_\x00-\x7f]")
_NON_ASCII_ALNUM_RUN = re.compile(r"[^\W_\x00-\x7f]+")
# _NUMBER_WITH_SEPARATORS, only where a token starts (not right after a letter or digit), with the
# first digit outside the alternation so the engine can skip to digits; captured for re.split.
_NUMBER_AT_TOKEN_START = re.compile(
    r"([0-9](?<![A-Za-z0-9][0-9])"
    r"(?:[0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]*(?::[0-9]+)+|[0-9]*(?:\.[0-9]+)+))"
)


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


_cached_number_form = functools.lru_cache(maxsize=1 << 16)(number_form)


def _tokens(lowered: str) -> list[str]:
    # The reference tokenizer: used for text the fast path cannot take, and as its definition.
    # On ASCII text [^\W_]+ and [a-z0-9]+ match the same runs; the ASCII pattern is ~30% faster.
    ascii_text = lowered.isascii()
    if not _SEPARATED_DIGITS.search(lowered):  # the common case: the plain, faster pattern
        return (_ASCII_TOKEN if ascii_text else _TOKEN).findall(lowered)
    found = (_ASCII_NUMBER_TOKEN if ascii_text else _NUMBER_TOKEN).findall(lowered)
    # only number tokens with a separator are not alphanumeric; they are few
    return [t if t.isalnum() else number_form(t) for t in found]


def _ascii_view(text: str) -> str | None:
    """``text`` with non-ASCII characters as spaces, or None when one of them is a letter/digit.

    A non-ASCII character that is not a letter or digit separates tokens like a space does, its
    lowercase form is again such a character, and it is a non-word character for ``\\b``.
    """
    if text.isascii():
        return text
    if _NON_ASCII_ALNUM.search(text):
        return None
    return _NON_ASCII.sub(" ", text)


def _fast_tokens(text: str, table: dict[int, str]) -> list[str] | None:
    """The tokens of ASCII ``text`` in order (folded by ``table``), or None to use the reference.

    None when a number with separators ends inside an alphanumeric run (``1,2345``), where the
    reference scan would start another token mid-run.
    """
    pieces = _NUMBER_AT_TOKEN_START.split(text)
    if len(pieces) == 1:
        return text.translate(table).split()
    found: list[str] = []
    for i in range(0, len(pieces) - 1, 2):
        if i and pieces[i][:1].isalnum():
            return None
        found += pieces[i].translate(table).split()
        found.append(_cached_number_form(pieces[i + 1]))
    if pieces[-1][:1].isalnum():
        return None
    found += pieces[-1].translate(table).split()
    return found


def _fast_token_bag(text: str) -> list[str] | None:
    """The tokens of ASCII ``text`` (folded by ``_FOLD``) in no set order, or None as
    ``_fast_tokens``: the text between numbers with separators is folded and split in one go."""
    pieces = _NUMBER_AT_TOKEN_START.split(text)
    if len(pieces) == 1:
        return text.translate(_FOLD).split()
    if any(piece[:1].isalnum() for piece in pieces[2::2]):
        return None  # a number ends inside an alphanumeric run
    found = " ".join(pieces[0::2]).translate(_FOLD).split()
    found += map(_cached_number_form, pieces[1::2])
    return found


def _camel_parts(text: str) -> list[str]:
    """The lowercased parts of the CamelCase words of ASCII ``text``.

    A CamelCase word is the ASCII-letter prefix of a word-character run, when a lowercase letter
    followed by an uppercase one lies inside that prefix: what ``findall`` of
    ``\\b[A-Za-z]*?[a-z][A-Z][A-Za-z]*`` returns (``bench/lexical_reference.py``).
    """
    classes = text.translate(_CASE_CLASS)
    at = classes.find("aA")
    if at < 0:
        return []
    words = []
    while at >= 0:
        start = classes.rfind(" ", 0, at) + 1
        end = classes.find(" ", at)
        if end < 0:
            end = len(classes)
        run = classes[start:end]
        n_letters = len(run) - len(run.lstrip("aA"))
        if at + 2 <= start + n_letters:
            words.append(text[start : start + n_letters])
        at = classes.find("aA", end)
    return _CAMEL_BOUNDARY.sub(" ", " ".join(words)).lower().split()


def tokenize(text: str) -> list[str]:
    """Return the lowercased alphanumeric tokens of ``text``, in order.

    Args:
        text: any string.

    Returns:
        Numbers with separators, whole and in canonical form (``number_form``), else maximal
        runs of Unicode letters/digits of ``text.lower()`` (underscore is a separator).
    """
    view = _ascii_view(text)
    found = None if view is None else _fast_tokens(view, _FOLD)
    return _tokens(text.lower()) if found is None else found


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


def is_numeric_token(token: str) -> bool:
    """Return True when ``token`` holds an ASCII digit (``"42"``, ``"5pm"``, ``"1990s"``)."""
    return not _DIGITS.isdisjoint(token)


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
    """
    return ContextIndex(frozenset(_context_token_list(passages)))


def _context_token_list(passages: str | Iterable[str]) -> list[str]:
    """Every token of the passages, CamelCase parts included, with repeats, in no set order."""
    texts = [passages] if isinstance(passages, str) else list(passages)
    # Tokens never span a space, so the passages joined by one have the union of their tokens.
    text = " ".join(texts)
    view = _ascii_view(text)
    found = None if view is None else _fast_token_bag(view)
    if found is None:  # letters or digits beyond ASCII, or a number ending mid-run: regex tokens
        found = _tokens(text.lower())
    found += _camel_parts(_camel_view(text) if view is None else view)
    return found


def _camel_view(text: str) -> str:
    """ASCII ``text`` where ``\b`` and ``[A-Za-z]`` match where they do in ``text``.

    Non-ASCII letters and digits become ``0`` (a word character that is no ASCII letter), other
    non-ASCII characters a space (a non-word character).
    """
    return _NON_ASCII.sub(" ", _NON_ASCII_ALNUM_RUN.sub("0", text))


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


def _as_index(context: ContextIndex | str | Iterable[str]) -> ContextIndex:
    return context if isinstance(context, ContextIndex) else index_context(context)


def score_response(response: str, context: ContextIndex | str | Sequence[str]) -> LexicalScores:
    """Score one response against its context with all lexical groundedness scores.

    Args:
        response: the generated answer.
        context: the context passages (one string or a sequence of strings), or a
            ``ContextIndex`` built by ``index_context`` when several responses share a context.

    Returns:
        The frozen ``LexicalScores``; see the module docstring for definitions.
    """
    lowered = response.lower()
    sentences = split_sentences(lowered)
    tokens = _marked_tokens(sentences)
    has_digit = _HAS_DIGIT.search(lowered) is not None
    if tokens is None:
        known = _as_index(context).tokens
        counts = _reference_counts(sentences, known)
    elif isinstance(context, ContextIndex):
        lookup = _support_codes(tokens, context.tokens)
        counts = _code_counts(tokens, lookup, context.tokens, has_digit=has_digit)
    else:
        lookup = dict.fromkeys(_context_token_list(context), _SUPPORTED)
        lookup.update(_STOP_CODES)
        counts = _code_counts(tokens, lookup, lookup, has_digit=has_digit)
    return _scores(*counts, n_sentences=len(sentences))


# The fast scorer writes one character per token of a response: "" for a stop word, "k" for a
# content token occurring in the context, "u" for one that does not, "|" between sentences. Counting
# characters in that string replaces a Python loop over tokens.
_SUPPORTED, _UNSUPPORTED, _END = "k", "u", "|"
_STOP_CODES = dict.fromkeys(STOP_WORDS, "")
_STOP_CODES[_SENTINEL] = _END
_HAS_DIGIT = re.compile(r"[0-9]")


def _marked_tokens(sentences: list[str]) -> list[str] | None:
    """The tokens of the sentences in order, a sentinel token between two sentences.

    None when the fast tokenizer cannot take the text (see ``_fast_tokens``) or the text itself
    holds the sentinel character; the caller then uses the reference path.
    """
    marked = f" {_SENTINEL} ".join(sentences)
    if marked.count(_SENTINEL) != len(sentences) - 1:
        return None
    view = _ascii_view(marked)
    return None if view is None else _fast_tokens(view, _FOLD_MARKED)


def _support_codes(tokens: list[str], known: frozenset[str]) -> dict[str, str]:
    """The code of each stop word and supported token of ``tokens`` (others default to "u")."""
    lookup = dict.fromkeys(known.intersection(tokens), _SUPPORTED)
    lookup.update(_STOP_CODES)
    return lookup


_Counts = tuple[int, int, int, int, int, float]
"""(n_content, n_unsupported, n_numeric, n_numeric_missing, n_sentences_scored, weakest)."""


def _code_counts(
    tokens: list[str], lookup: dict[str, str], known: Container[str], *, has_digit: bool
) -> _Counts:
    """Counts of a response from its marked tokens and the code of each supported/stop token."""
    codes = "".join(map(lookup.get, tokens, itertools.repeat(_UNSUPPORTED)))
    n_scored = 0
    weakest = 0.0
    for sentence in codes.split(_END):
        s_content = len(sentence)
        if s_content >= MIN_SENTENCE_CONTENT_TOKENS:
            n_scored += 1
            share = sentence.count(_UNSUPPORTED) / s_content
            if share > weakest:
                weakest = share
    n_numeric = n_numeric_missing = 0
    if has_digit:
        # tokens holding a digit are the ones that are not all letters (the sentinel aside)
        numbers = [t for t in itertools.filterfalse(str.isalpha, tokens) if t != _SENTINEL]
        n_numeric = len(numbers)
        n_numeric_missing = n_numeric - sum(map(known.__contains__, numbers))
    n_content = len(codes) - codes.count(_END)
    return n_content, codes.count(_UNSUPPORTED), n_numeric, n_numeric_missing, n_scored, weakest


def _reference_counts(sentences: list[str], known: frozenset[str]) -> _Counts:
    n_content = n_unsupported = n_numeric = n_numeric_missing = n_scored = 0
    weakest = 0.0
    for sentence in sentences:
        tokens = _tokens(sentence)
        content = [t for t in tokens if t not in STOP_WORDS]
        s_content = len(content)
        s_unsupported = sum(1 for t in content if t not in known)
        for token in tokens:
            if not _DIGITS.isdisjoint(token):
                n_numeric += 1
                n_numeric_missing += token not in known
        n_content += s_content
        n_unsupported += s_unsupported
        if s_content >= MIN_SENTENCE_CONTENT_TOKENS:
            n_scored += 1
            share = s_unsupported / s_content
            if share > weakest:
                weakest = share
    return n_content, n_unsupported, n_numeric, n_numeric_missing, n_scored, weakest


def _scores(
    n_content: int,
    n_unsupported: int,
    n_numeric: int,
    n_numeric_missing: int,
    n_scored: int,
    weakest: float,
    *,
    n_sentences: int,
) -> LexicalScores:
    coverage = n_unsupported / n_content if n_content else 0.0
    numeric_share = n_numeric_missing / n_numeric if n_numeric else 0.0
    w_cov, w_weak, w_num = HYBRID_WEIGHTS
    return LexicalScores(
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


def coverage_score(response: str, context: ContextIndex | str | Sequence[str]) -> float:
    """Return the share of the response's content tokens absent from the context (0.0 if none)."""
    return score_response(response, context).coverage


def weakest_sentence_score(response: str, context: ContextIndex | str | Sequence[str]) -> float:
    """Return the highest unsupported share over sentences of >= 5 content tokens (0.0 if none)."""
    return score_response(response, context).weakest_sentence


def numeric_missing_score(response: str, context: ContextIndex | str | Sequence[str]) -> float:
    """Return the share of the response's numeric tokens absent from the context (0.0 if none)."""
    return score_response(response, context).numeric


def hybrid_score(response: str, context: ContextIndex | str | Sequence[str]) -> float:
    """Return ``0.35 * coverage + 0.50 * weakest_sentence + 0.15 * numeric``."""
    return score_response(response, context).hybrid
