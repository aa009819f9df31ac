"""Structured-context checks: what a response asserts against the fields of a JSON record.

When an example's context is a JSON object (a business record, a table row: RAGTruth's
Data2txt task gives the model a Yelp business record), the record says more than its words: an
attribute set to ``false`` is a fact ("no outdoor seating"), one set to ``null`` is unknown, the
opening hours are per day, the star rating is one number. A lexical overlap check cannot see a
response that mentions "outdoor seating" where the record says ``"OutdoorSeating": false``: every
word is in the context. These checks compare the response's sentences with the record's fields:

- ``false_attribute``: a sentence names an attribute whose value is false (``false``, ``"no"``,
  ``"none"``) without a negation before it ("offers outdoor seating");
- ``negated_true_attribute``: a sentence negates an attribute whose value is true
  ("does not take reservations");
- ``null_attribute``: a sentence names an attribute whose value is ``null`` (unknown: any claim
  about it is unsupported, affirmative or negative);
- ``hours``: a time of day in the response that is not an opening or closing time of the days the
  sentence names (all days when it names none; happy-hour sentences are skipped); "open daily",
  "every day" or "7 days a week" when the record lacks a day, or gives times in the same sentence
  while its hours differ between days; any time or "daily" claim when the record's ``hours`` is
  ``null``;
- ``stars``: a star rating ("4.5 stars", "4.5-star", "rated 4.5", "rating of 4.5") equal to
  neither the record's business rating nor any of its reviews' ratings.

An attribute is named by the words of its key, CamelCase split, without the generic prefixes
(``RestaurantsTakeOut`` -> ``take out``, also matched as ``takeout``; ``BusinessAcceptsCreditCards``
-> ``credit cards``); the words of a nested key are its own (``Ambience.trendy`` -> ``trendy``).
Words are compared after folding common English inflections. A negation is one of ``NEGATIONS``
among the six tokens before the attribute's first word in the same sentence, or a post-posed one
right after its mention: a copula, "not" and an availability word ("WiFi is not available",
"reservations aren't accepted", "WiFi is unavailable") or a colon and "no"/"not"
("WiFi: No"); a negation in another clause ("outdoor seating, but WiFi is not available") or of
a quality ("the lot is not particularly scenic") is not the attribute's.

Each count is a *conflict* with the record. ``RecordChecks.n_conflicts`` sums them;
``conflicts_per_sentence`` divides by the response's sentences. The checks are deterministic
corroborators: a conflict is evidence against groundedness, never evidence for it. Everything
here is pure: strings in, frozen values out; no I/O, no logging.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragwarrant.corroborators.lexical import split_sentences

NEGATIONS: frozenset[str] = frozenset((
    "no", "not", "non", "without", "lacks", "lack", "lacking", "neither", "nor", "never", "none",
    "cannot", "isn", "doesn", "don", "didn", "aren", "wasn", "weren", "hasn", "haven",
    "unavailable",
))  # fmt: skip
"""Tokens that negate an attribute named within the next six tokens of a sentence."""

_NEGATION_WINDOW = 6
_POST_NEGATION = re.compile(
    r"(?:\s+(?:is|are|was|were)(?:\s+(?:currently|also|still))?\s+"
    r"(?:unavailable|not(?:\s+(?:currently|always|yet))?\s+(?:available|offered|provided|"
    r"accepted|allowed|permitted|included|supported|an\s+option))\b"
    r"|\s*:\s*(?:not|no)\b)"
)
"""A negation right after an attribute's mention: "WiFi is not available", "WiFi: No"."""
_GENERIC_KEY_WORDS = frozenset((
    "restaurants", "restaurant", "business", "businesses", "accepts", "accept", "good", "for",
    "has", "have", "by", "only",
))  # fmt: skip
_TRUTH: dict[str, bool | None] = {
    **dict.fromkeys(("no", "none", "false", "0"), False),
    **dict.fromkeys(("null", ""), None),
    **dict.fromkeys(("true", "yes", "free", "paid"), True),
}
"""A string attribute value's truth; any other string is not a boolean attribute."""
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_ALIASES: dict[str, str] = {
    **{d: d for d in _DAYS},
    **{d + "s": d for d in _DAYS},
    **{d[:3]: d for d in _DAYS},
    "tues": "tuesday",
    "wed": "wednesday",
    "thur": "thursday",
    "thurs": "thursday",
}
_DAY_NAMES = "|".join(sorted(_DAY_ALIASES, key=len, reverse=True))
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_DAY_RANGE = re.compile(
    rf"\b({_DAY_NAMES})\b\.?\s*(?:-|–|to|through|thru|until)\s*\b({_DAY_NAMES})\b"
)
_DAY_WORD = re.compile(rf"\b({_DAY_NAMES})\b")
_WEEKDAYS = re.compile(r"\bweekdays?\b")
_WEEKENDS = re.compile(r"\bweekends?\b")
_EVERY_DAY = re.compile(
    r"\b(?:daily|every\s+day|7\s+days|seven\s+days|all\s+week|each\s+day|every\s+day\s+of\s+the\s+week)\b"
)
_TIME = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])|\b(\d{1,2}):(\d{1,2})\b|\b(noon|midnight)\b"
)
_STAR_CLAIM = re.compile(
    r"\b(\d(?:\.\d+)?)\s*(?:-|\s)?\s*stars?\b"
    r"|\b(?:rated|rating\s+of|rating\s+is|score\s+of)\s+(?:an?\s+)?(?:average\s+of\s+)?(\d(?:\.\d+)?)\b"
    r"|\b(\d(?:\.\d+)?)\s*(?:/|out\s+of)\s*5\b"
)
_HOURS_SPAN = re.compile(r"\s*(\d{1,2}):(\d{1,2})\s*-\s*(\d{1,2}):(\d{1,2})\s*")
_HOURS_WORDS = re.compile(r"\b(?:open|opens|opening|close|closes|closing|hours)\b")


def fold_inflection(token: str) -> str:
    """Fold common English inflections (``seats``/``seating`` -> ``seat``, ``returns`` ->
    ``return``, ``cities`` -> ``city``)."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(token) - len(suffix) >= 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


@dataclass(frozen=True, slots=True)
class _Attribute:
    """One attribute of the record: the folded words that name it and its truth value."""

    words: tuple[str, ...]
    joined: str
    value: bool | None


@dataclass(frozen=True, slots=True)
class StructuredRecord:
    """The checkable fields of a JSON record.

    Attributes:
        attributes: every boolean or null attribute (nested ones flattened to their leaf key).
        hours: day -> ``(open, close)`` minutes after midnight (close mod 1440); None when the
            record has no ``hours`` field, ``{}`` when it is ``null``.
        hours_null: the record's ``hours`` is ``null``.
        stars: every star rating the record gives (the business's and its reviews').
    """

    attributes: tuple[_Attribute, ...]
    hours: Mapping[str, tuple[int, int]] | None
    hours_null: bool
    stars: frozenset[float]

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> StructuredRecord:
        """The checkable fields of one JSON object: its ``attributes`` (``_attributes``), its
        ``hours`` (``_hours``), and the business's rating with its reviews' ratings."""
        attributes = record.get("attributes")
        given = [record.get("business_stars", record.get("stars"))]
        if isinstance(reviews := record.get("review_info"), list):
            given += [r.get("review_stars") for r in reviews if isinstance(r, dict)]
        return cls(
            attributes=tuple(_attributes(attributes if isinstance(attributes, dict) else {})),
            hours=_hours(record["hours"]) if "hours" in record else None,
            hours_null="hours" in record and record["hours"] is None,
            stars=frozenset(
                float(v) for v in given if isinstance(v, int | float) and not isinstance(v, bool)
            ),
        )

    def attribute_conflicts(self, text: str, words: list[re.Match[str]]) -> tuple[int, int, int]:
        """Counts of (false, negated true, null) attributes the sentence ``text`` mentions; a
        mention is negated as the module docstring says (``NEGATIONS`` before, ``_POST_NEGATION``
        after)."""
        tokens = [w.group() for w in words]
        folded = [fold_inflection(t) for t in tokens]
        false_hits = true_negated = null_hits = 0
        for attribute in self.attributes:  # mentioned: its joined words, else each of its words
            if attribute.joined in tokens:
                first = last = tokens.index(attribute.joined)
            elif all(word in folded for word in attribute.words):
                at = [folded.index(word) for word in attribute.words]
                first, last = min(at), max(at)
            else:
                continue
            before = tokens[max(0, first - _NEGATION_WINDOW) : first]
            negated = any(t in NEGATIONS for t in before) or bool(
                _POST_NEGATION.match(text, words[last].end())
            )
            if attribute.value is None:
                null_hits += 1
            elif negated == attribute.value:
                if attribute.value:
                    true_negated += 1
                else:
                    false_hits += 1
        return false_hits, true_negated, null_hits

    def hours_conflicts(self, sentence: str) -> int:
        """Times or "daily" claims of the (lower-cased) sentence that disagree with the hours."""
        times = [] if "happy hour" in sentence else _times(sentence)
        # the sentence says "daily" (or alike) about opening hours
        every_day = bool(_EVERY_DAY.search(sentence) and (_HOURS_WORDS.search(sentence) or times))
        if self.hours_null:
            return int(bool(times) or every_day)
        if self.hours is None:
            return 0
        hours = self.hours
        conflicts = int(
            every_day and (len(hours) < 7 or (bool(times) and len(set(hours.values())) > 1))
        )
        if times:
            named = _days(sentence) & set(hours) or set(hours)
            allowed = {t for day in named for t in hours[day]}
            conflicts += sum(t not in allowed for t in times)
        return conflicts

    def star_conflicts(self, sentence: str) -> int:
        """Star ratings the sentence claims that the record does not give (none without stars)."""
        claims = (float(next(filter(None, m.groups()))) for m in _STAR_CLAIM.finditer(sentence))
        return sum(1 for v in claims if v <= 5.0 and v not in self.stars) if self.stars else 0


def _attributes(fields: Mapping[str, Any]) -> Iterable[_Attribute]:
    """Every boolean-like leaf (``true``, ``"no"``, ``"u'free'"``, ``null``, ...) of ``fields``."""
    for key, value in fields.items():
        if isinstance(value, dict):
            yield from _attributes(value)
            continue
        if isinstance(value, str):
            value = _TRUTH.get(value.strip().strip("u").strip("'\"").lower(), "other")
        names = _WORD.findall(_CAMEL.sub(" ", key).lower())
        kept = [w for w in names if w not in _GENERIC_KEY_WORDS] or names
        words = tuple(fold_inflection(w) for w in kept)
        if (value is None or isinstance(value, bool)) and words:
            yield _Attribute(words, "".join(words), value)


def _hours(value: Any) -> dict[str, tuple[int, int]]:
    """Day -> (open, close) minutes after midnight for every ``"H:MM-H:MM"`` day of ``value``."""
    out: dict[str, tuple[int, int]] = {}
    for day, span in value.items() if isinstance(value, dict) else ():
        times = _HOURS_SPAN.fullmatch(span) if isinstance(span, str) else None
        if times and isinstance(day, str) and day.lower() in _DAYS:
            h1, m1, h2, m2 = map(int, times.groups())
            out[day.lower()] = ((h1 * 60 + m1) % 1440, (h2 * 60 + m2) % 1440)
    return out


def parse_record(contexts: str | Sequence[str]) -> StructuredRecord | None:
    """Return the structured record of a context when a passage is a JSON object, else None.

    Args:
        contexts: the context passages (one string or a sequence); the first passage that parses
            as a JSON object is the record.

    Returns:
        The ``StructuredRecord``, or None when no passage is a JSON object.
    """
    for passage in (contexts,) if isinstance(contexts, str) else contexts:
        text = passage.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        return StructuredRecord.of(record)
    return None


@dataclass(frozen=True, slots=True)
class RecordChecks:
    """The conflicts between one response and its structured record (counts of sentences/claims).

    Attributes:
        false_attribute: affirmative mentions of attributes the record says are false.
        negated_true_attribute: negated mentions of attributes the record says are true.
        null_attribute: mentions of attributes the record leaves null.
        hours: times or "daily" claims that disagree with the record's opening hours.
        stars: star ratings the record does not give.
        n_sentences: sentences in the response.
    """

    false_attribute: int
    negated_true_attribute: int
    null_attribute: int
    hours: int
    stars: int
    n_sentences: int

    @property
    def counts(self) -> tuple[int, int, int, int, int]:
        """The five conflict counts, in attribute order (``n_sentences`` left out)."""
        return (
            self.false_attribute,
            self.negated_true_attribute,
            self.null_attribute,
            self.hours,
            self.stars,
        )

    @property
    def n_conflicts(self) -> int:
        """All conflicts together."""
        return sum(self.counts)

    @property
    def conflicts_per_sentence(self) -> float:
        """``n_conflicts / n_sentences`` (0.0 for an empty response)."""
        return self.n_conflicts / self.n_sentences if self.n_sentences else 0.0


def _times(sentence: str) -> list[int]:
    """Times of day in the sentence, minutes after midnight (mod 1440)."""
    found: list[int] = []
    for m in _TIME.finditer(sentence):
        if m.group(6):
            found.append(720 if m.group(6) == "noon" else 0)
        elif m.group(3):
            hour = int(m.group(1)) % 12 + (12 if m.group(3).startswith("p") else 0)
            found.append(hour * 60 + int(m.group(2) or 0))
        else:
            hour, minute = int(m.group(4)), int(m.group(5))
            if hour <= 24 and minute < 60:
                found.append((hour * 60 + minute) % 1440)
    return found


def _days(sentence: str) -> set[str]:
    """Days the sentence names (ranges expanded, weekdays/weekends included)."""
    days: set[str] = set()
    for m in _DAY_RANGE.finditer(sentence):
        a, b = _DAYS.index(_DAY_ALIASES[m.group(1)]), _DAYS.index(_DAY_ALIASES[m.group(2)])
        span = range(a, b + 1) if a <= b else [*range(a, 7), *range(0, b + 1)]
        days.update(_DAYS[i] for i in span)
    days.update(_DAY_ALIASES[m.group(1)] for m in _DAY_WORD.finditer(sentence))
    if _WEEKDAYS.search(sentence):
        days.update(_DAYS[:5])
    if _WEEKENDS.search(sentence):
        days.update(_DAYS[5:])
    return days


def check_record(response: str, record: StructuredRecord) -> RecordChecks:
    """Compare what ``response`` asserts with the fields of ``record``, sentence by sentence.

    Args:
        response: the generated text.
        record: the context's structured record, from ``parse_record``.

    Returns:
        The frozen ``RecordChecks``; see the module docstring for each count.
    """
    counts = [0, 0, 0, 0, 0]
    sentences = split_sentences(response)
    for sentence in sentences:
        lowered = sentence.lower()
        text = lowered.replace("n't", " not")
        found = (
            *record.attribute_conflicts(text, list(_WORD.finditer(text))),
            record.hours_conflicts(lowered),
            record.star_conflicts(lowered),
        )
        counts = [c + f for c, f in zip(counts, found, strict=True)]
    false_attribute, negated_true, null_attribute, hours, stars = counts
    return RecordChecks(false_attribute, negated_true, null_attribute, hours, stars, len(sentences))
