"""Reference: the lexical scorer as it was before the fast path (ragwarrant 9d182fa), verbatim.

Kept so that ``bench/bench_lexical.py`` and ``tests/corroborators/test_lexical.py`` can check the
shipped scorer (``ragwarrant.corroborators.lexical``) against it score for score, and measure it in
the same run. Do not edit: it is the definition the fast path must reproduce bit for bit.

The original module docstring follows.

Lexical groundedness scores: deterministic, local, no model.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
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
_HAS_CAMEL = re.compile(r"[a-z][A-Z]")
_CAMEL_WORD = re.compile(r"\b[A-Za-z]*?[a-z][A-Z][A-Za-z]*")
_SEPARATED_DIGITS = re.compile(r"\d[.,:]\d")
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)\]]))\s+|\n+")
_DIGITS = frozenset("0123456789")


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


def _tokens(lowered: str) -> list[str]:
    # On ASCII text [^\W_]+ and [a-z0-9]+ match the same runs; the ASCII pattern is ~30% faster.
    ascii_text = lowered.isascii()
    if not _SEPARATED_DIGITS.search(lowered):  # the common case: the plain, faster pattern
        return (_ASCII_TOKEN if ascii_text else _TOKEN).findall(lowered)
    found = (_ASCII_NUMBER_TOKEN if ascii_text else _NUMBER_TOKEN).findall(lowered)
    # only number tokens with a separator are not alphanumeric; they are few
    return [t if t.isalnum() else number_form(t) for t in found]


def _context_tokens(passage: str) -> list[str]:
    """Tokens of a context passage, plus the parts of its CamelCase words."""
    found = _tokens(passage.lower())
    if _HAS_CAMEL.search(passage):
        for word in _CAMEL_WORD.findall(passage):
            found += _tokens(_CAMEL_BOUNDARY.sub(" ", word).lower())
    return found


def tokenize(text: str) -> list[str]:
    """Return the lowercased alphanumeric tokens of ``text``, in order.

    Args:
        text: any string.

    Returns:
        Numbers with separators, whole and in canonical form (``number_form``), else maximal
        runs of Unicode letters/digits of ``text.lower()`` (underscore is a separator).
    """
    return _tokens(text.lower())


def content_tokens(text: str) -> list[str]:
    """Return the tokens of ``text`` that are not in ``STOP_WORDS``, in order."""
    return [t for t in _tokens(text.lower()) if t not in STOP_WORDS]


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
    if isinstance(passages, str):
        return ContextIndex(frozenset(_context_tokens(passages)))
    found: set[str] = set()
    for passage in passages:
        found.update(_context_tokens(passage))
    return ContextIndex(frozenset(found))


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
    known = _as_index(context).tokens
    n_content = n_unsupported = n_numeric = n_numeric_missing = 0
    n_sentences = n_scored = 0
    weakest = 0.0
    for sentence in split_sentences(response.lower()):
        tokens = _tokens(sentence)
        n_sentences += 1
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
