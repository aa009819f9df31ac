"""Deterministic per-example checks that corroborate (or contradict) an LLM judge.

Each check is matched to the failure it guards and to the leg of the RAG pipeline it blames:

- **retrieval** — ``context_relevance``: share of the question's distinct content words found in
  the context passages (light suffix folding: ``returns`` ~ ``returned`` ~ ``return``). Below the
  contract's floor the context is irrelevant to the question.
- **generation** — the lexical groundedness gate (``lexical.score_response`` at a calibrated
  threshold) and ``verify_citation``: a cited quote must occur in a passage near-verbatim
  (normalized tokens, token edit distance <= 10 % of the quote). A fabricated citation is never
  supported. ``is_honest_refusal``: a response that only declines to answer ("the documents do
  not say …") is not a hallucination, whatever its lexical score.
- **record** — when a context passage is a JSON record (``records.parse_record``), what the
  response asserts is compared with the record's fields (``records.check_record``: false or null
  attributes, opening hours, star ratings); any conflict fails the leg and makes the example
  unsupported. ``not-applicable`` when no passage is a JSON record.
- **answer** — ``expected_answer_type`` / ``answer_type_check``: a question that asks for a number,
  date or quantity is not answered by a response that has none; optionally the judge's
  answer-relevance value below its threshold.

The legs are independent: a faithful answer over an irrelevant context fails retrieval and
passes generation. Everything here is pure: strings in, frozen values out; no I/O, no logging.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragwarrant.corroborators.lexical import (
    ContextIndex,
    content_tokens,
    index_context,
    score_response,
    split_sentences,
    tokenize,
)
from ragwarrant.corroborators.records import check_record, fold_inflection, parse_record

LegStatus = Literal["pass", "fail", "not-applicable", "unknown"]
"""``unknown``: a needed input is absent; ``not-applicable``: e.g. a refusal has no answer."""

AnswerType = Literal["number", "date", "quantity"]

CITATION_MAX_EDIT_SHARE = 0.10
"""A quote is verified when its token edit distance to a passage window is at most this share."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that frame a question rather than name its topic ("how MANY", "how LONG", "TELL me").
_QUESTION_FRAME = _words(
    """
    many much long often far old big tall would could may might shall must please tell know
    get make also like want need
    """
)

_NUMBER_WORDS = _words(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million billion dozen half once twice thrice single
    double triple quarter first second third fourth fifth none
    """
)
_DATE_WORDS = _words(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday today tomorrow yesterday weekday weekend weekdays weekends
    midnight noon morning evening night spring summer autumn fall winter annually daily
    weekly monthly yearly quarterly
    """
)

_ASKS_DATE = re.compile(
    r"\b(?:what|which)\s+(?:year|date|day|month|time|week|decade|century)\b"
    r"|\bwhen\s+(?:was|were|did|is|are|will|does|do|can|should|must)\b"
    r"|\bhow\s+soon\b|\bby\s+when\b|\bsince\s+when\b|\bwhat\s+hours?\b",
    re.IGNORECASE,
)
_ASKS_NUMBER = re.compile(
    r"\bhow\s+(?:many|much|long|old|far|often|tall|big|large|heavy|fast|high|wide|deep|frequently)\b"
    r"|\bwhat\s+(?:is\s+the\s+|are\s+the\s+)?(?:number|percentage|percent|share|rate|price|cost|fee|"
    r"amount|size|weight|length|capacity|limit|maximum|minimum|temperature|speed|duration|count|total)\b",
    re.IGNORECASE,
)
_QUANTITY_HEAD = re.compile(
    r"\bhow\s+(?:long|old|far|tall|big|large|heavy|fast|high|wide|deep|often|frequently)\b",
    re.IGNORECASE,
)

_REFUSAL = re.compile(
    r"\b(?:i|we)\s+(?:do\s+not|don'?t|cannot|can'?t|could\s+not|couldn'?t|am\s+unable\s+to|"
    r"was\s+unable\s+to|'m\s+unable\s+to|are\s+unable\s+to)\s+(?:know|find|answer|determine|tell|say|confirm)\b"
    r"|\b(?:i'?m|i\s+am)\s+(?:not\s+sure|unable\s+to)\b"
    r"|\b(?:the\s+)?(?:provided\s+|given\s+|available\s+)?(?:context|contexts|document|documents|passage|passages|"
    r"information|sources?|text|faq|articles?|excerpts?)\s+(?:does|do|did)\s*(?:not|n'?t)\s+"
    r"(?:say|state|mention|specify|contain|include|provide|cover|give|describe|answer|address|list)\b"
    r"|\b(?:is|are)\s+not\s+(?:mentioned|specified|stated|provided|given|covered|described|listed|included)\s+in\s+"
    r"(?:the\s+)?(?:provided\s+|given\s+)?(?:context|document|documents|passages?|information|sources?|text|faq)\b"
    r"|\b(?:there\s+is|there'?s)\s+no\s+(?:information|mention|detail|details|data)\b"
    r"|\bno\s+information\s+(?:about|on|regarding)\b"
    r"|\b(?:insufficient|not\s+enough)\s+information\b"
    r"|\bcannot\s+be\s+(?:determined|answered)\s+from\b",
    re.IGNORECASE,
)
_QUOTE_CHARS = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)


def context_relevance(question: str, context: ContextIndex | str | Sequence[str]) -> float | None:
    """Share of the question's distinct topic words that occur in the context.

    Topic words are the question's content tokens (``lexical.content_tokens``) minus question
    framing words (``how MANY``, ``can you TELL``); tokens are compared after folding common
    suffixes on both sides.

    Args:
        question: the question text.
        context: the passages (a string, a sequence of strings, or a ``ContextIndex``).

    Returns:
        A share in [0, 1]; ``None`` when the question has no topic word (relevance undefined).
    """
    wanted = {fold_inflection(t) for t in content_tokens(question) if t not in _QUESTION_FRAME}
    if not wanted:
        return None
    index = context if isinstance(context, ContextIndex) else index_context(context)
    known = {fold_inflection(t) for t in index.tokens}
    return sum(1 for t in wanted if t in known) / len(wanted)


def expected_answer_type(question: str) -> AnswerType | None:
    """Return the answer type a question asks for, or ``None`` when it asks for none in particular.

    ``date`` for "when was …", "what year …", "what time …"; ``quantity`` for "how long/old/far/…"
    (a number with a unit); ``number`` for "how many/much", "what is the price/percentage/…".
    """
    if _ASKS_DATE.search(question):
        return "date"
    if _QUANTITY_HEAD.search(question):
        return "quantity"
    if _ASKS_NUMBER.search(question):
        return "number"
    return None


@dataclass(frozen=True, slots=True)
class AnswerTypeCheck:
    """Whether a response carries the type of value its question asks for.

    Attributes:
        expected: ``number``, ``date``, ``quantity``, or ``None`` (the question asks for no type).
        satisfied: True when nothing is expected or the response has such a value.
    """

    expected: AnswerType | None
    satisfied: bool


def answer_type_check(question: str, response: str) -> AnswerTypeCheck:
    """Check that a question asking for a number, date or quantity gets a response with one.

    A digit or a number word ("two", "dozen", "twice") satisfies every type; a month, weekday or
    relative-day word ("Monday", "tomorrow", "weekends") also satisfies ``date``.
    """
    kind = expected_answer_type(question)
    if kind is None:
        return AnswerTypeCheck(None, True)
    tokens = tokenize(response)
    return AnswerTypeCheck(
        kind,
        any(any(ch.isdigit() for ch in t) or t in _NUMBER_WORDS for t in tokens)
        or (kind == "date" and any(t in _DATE_WORDS for t in tokens)),
    )


def normalize_tokens(text: str) -> list[str]:
    """Tokens for near-verbatim comparison: NFKC, quotes and dashes folded, lowercased."""
    return tokenize(unicodedata.normalize("NFKC", text).translate(_QUOTE_CHARS))


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """The verification of one cited quote.

    Attributes:
        verified: the quote occurs in some passage near-verbatim.
        edits: the smallest token edit distance to a window of a passage (0 = verbatim after
            normalization); ``None`` when the quote was rejected without alignment.
        n_tokens: tokens in the normalized quote (0: an empty quote, never verified).
    """

    verified: bool
    edits: int | None
    n_tokens: int


def _semi_global_edits(quote: list[str], passage: list[str]) -> int:
    """Smallest edit distance between ``quote`` and any substring of ``passage`` (Sellers 1980)."""
    prev = [0] * (len(passage) + 1)
    for i, q in enumerate(quote, start=1):
        cur = [i] + [0] * len(passage)
        for j, p in enumerate(passage, start=1):
            cur[j] = min(prev[j - 1] + (q != p), prev[j] + 1, cur[j - 1] + 1)
        prev = cur
    return min(prev)


def verify_citation(quote: str, contexts: Sequence[str]) -> CitationCheck:
    """Verify that ``quote`` occurs in one of ``contexts`` verbatim or near-verbatim.

    Both sides are normalized by ``normalize_tokens`` (case, punctuation, whitespace, curly quotes
    and Unicode compatibility forms do not matter). Verbatim: the quote's tokens are a contiguous
    run of a passage's tokens. Near-verbatim: token edit distance (insertions, deletions,
    substitutions) to the best window of one passage is at most ``CITATION_MAX_EDIT_SHARE`` of
    the quote's tokens, rounded down: quotes under 10 tokens must be verbatim. A quote cannot be
    stitched across passages.

    Args:
        quote: the cited text.
        contexts: the example's context passages.

    Returns:
        The frozen ``CitationCheck``.
    """
    q = normalize_tokens(quote)
    if not q:
        return CitationCheck(False, None, 0)
    needle = " " + " ".join(q) + " "
    passages = [normalize_tokens(c) for c in contexts]
    if any(needle in " " + " ".join(p) + " " for p in passages):
        return CitationCheck(True, 0, len(q))
    budget = int(CITATION_MAX_EDIT_SHARE * len(q))
    best: int | None = None
    for p in passages:
        present = set(p)
        if budget == 0 or sum(1 for t in q if t not in present) > budget:
            continue  # more quote tokens absent from the passage than edits allowed
        edits = _semi_global_edits(q, p)
        best = edits if best is None else min(best, edits)
    return CitationCheck(best is not None and best <= budget, best, len(q))


def is_honest_refusal(response: str) -> bool:
    """Return whether ``response`` declines to answer rather than asserting anything.

    True when a sentence says the answer is not known or not in the sources ("I don't know",
    "the documents do not say …", "there is no information about …") and no other sentence has
    five or more content tokens (a refusal padded with claims is judged as a claim).
    """
    sentences = split_sentences(response)
    refusing = [bool(_REFUSAL.search(s.translate(_QUOTE_CHARS))) for s in sentences]
    if not any(refusing):
        return False
    return all(r or len(content_tokens(s)) < 5 for s, r in zip(sentences, refusing, strict=True))


@dataclass(frozen=True, slots=True)
class ExampleChecks:
    """Every deterministic check of one (policy, example), and which leg failed.

    Attributes:
        lexical_score: the contract's lexical gate score (higher = less grounded); None
            without text.
        lexical_flagged: ``lexical_score >= threshold``.
        context_relevance: share of question topic words in the context; None when undefined.
        answer_type: the answer-type check; None without question or response.
        citations: one check per cited quote.
        honest_refusal: the response only declines to answer.
        supported: the deterministic groundedness verdict: not flagged (or an honest refusal),
            no fabricated citation and no conflict with a JSON record; None when it cannot be
            computed.
        retrieval, generation, answer: each leg's status.
        record_conflicts: conflicts with the context's JSON record; None without one.
        record: the record leg's status (``not-applicable`` without a JSON record).
    """

    lexical_score: float | None
    lexical_flagged: bool | None
    context_relevance: float | None
    answer_type: AnswerTypeCheck | None
    citations: tuple[CitationCheck, ...]
    honest_refusal: bool
    supported: bool | None
    retrieval: LegStatus
    generation: LegStatus
    answer: LegStatus
    record_conflicts: int | None = None
    record: LegStatus = "not-applicable"

    @property
    def fabricated_citation(self) -> bool:
        """Whether any cited quote failed verification."""
        return any(not c.verified for c in self.citations)


_STATUS: dict[bool | None, LegStatus] = {None: "unknown", True: "pass", False: "fail"}
"""A leg's status from whether it passed (None: not known)."""


def _groundedness(
    response: str | None,
    index: ContextIndex | None,
    citations: tuple[CitationCheck, ...],
    refusal: bool,
    lexical_gate: str,
    lexical_threshold: float,
) -> tuple[float | None, bool | None, bool | None]:
    """Return (lexical score, flagged, deterministic verdict supported); None where undefined.

    Supported: not flagged (or an honest refusal) and no fabricated citation. Without response or
    context, a fabricated citation still makes the example unsupported.
    """
    fabricated = any(not c.verified for c in citations)
    if response is not None and index is not None:
        scores = score_response(response, index)
        score = float(getattr(scores, lexical_gate))
        flagged = score >= lexical_threshold
        return score, flagged, (refusal or not flagged) and not fabricated
    if fabricated:
        return None, None, False
    return None, None, None


def _answer_status(
    refusal: bool,
    answer_type: AnswerTypeCheck | None,
    answer_relevance: float | None,
    answer_relevance_threshold: float,
) -> LegStatus:
    """Not applicable for a refusal; fail on a wrong type or low judge relevance; else pass."""
    if refusal:
        return "not-applicable"
    if (answer_type is not None and not answer_type.satisfied) or (
        answer_relevance is not None and answer_relevance < answer_relevance_threshold
    ):
        return "fail"
    if answer_type is None and answer_relevance is None:
        return "unknown"
    return "pass"


def _record_conflicts(response: str | None, contexts: Sequence[str] | None) -> int | None:
    """Conflicts between the response and the context's JSON record; None without either."""
    record = parse_record(contexts) if contexts is not None and response is not None else None
    return None if record is None else check_record(response or "", record).n_conflicts


def check_example(
    question: str | None,
    response: str | None,
    contexts: Sequence[str] | None,
    cited_quotes: Sequence[str] | None = None,
    *,
    lexical_gate: str,
    lexical_threshold: float,
    context_relevance_floor: float,
    answer_relevance: float | None = None,
    answer_relevance_threshold: float = 0.5,
) -> ExampleChecks:
    """Run every deterministic check on one (policy, example) and assign each leg a status.

    Args:
        question, response: the texts, or None when absent.
        contexts: the context passages, or None when absent (an empty list is an empty context).
        cited_quotes: quotes cited as evidence (by the judge or the response); empty/None = none.
        lexical_gate: ``coverage``, ``weakest_sentence`` or ``hybrid``.
        lexical_threshold: flag as unsupported when the gate's score is ``>=`` this.
        context_relevance_floor: retrieval fails when relevance is below this.
        answer_relevance: the judge's answer-relevance value, if any (higher = more relevant).
        answer_relevance_threshold: the answer leg fails when ``answer_relevance`` is below this.

    Returns:
        The frozen ``ExampleChecks``. Retrieval: fail below the floor. Generation: fail when the
        deterministic verdict is unsupported. Record: fail on any conflict with a JSON record.
        Answer: not-applicable for an honest refusal; fail on a wrong answer type or a judge
        answer relevance below its threshold.
    """
    index = index_context(contexts) if contexts is not None else None
    conflicts = _record_conflicts(response, contexts)
    relevance = context_relevance(question, index) if question and index is not None else None
    refusal = bool(response) and is_honest_refusal(response or "")
    citations = tuple(verify_citation(q, contexts or []) for q in (cited_quotes or []))
    score, flagged, supported = _groundedness(
        response, index, citations, refusal, lexical_gate, lexical_threshold
    )
    if conflicts:
        supported = False
    answer_type = (
        answer_type_check(question, response) if question and response is not None else None
    )
    return ExampleChecks(
        lexical_score=score,
        lexical_flagged=flagged,
        context_relevance=relevance,
        answer_type=answer_type,
        citations=citations,
        honest_refusal=refusal,
        supported=supported,
        retrieval=_STATUS[None if relevance is None else relevance >= context_relevance_floor],
        generation=_STATUS[supported],
        answer=_answer_status(refusal, answer_type, answer_relevance, answer_relevance_threshold),
        record_conflicts=conflicts,
        record="not-applicable" if conflicts is None else _STATUS[conflicts == 0],
    )
