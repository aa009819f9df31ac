"""Span-supervised groundedness attempts on RAGTruth (issue 15, Summary AUC target).

Imported by ``bench/groundedness_attempts.py``; not a product module. RAGTruth marks each
hallucination as a character span of the response (``RagtruthRecord.unsupported_spans``), so a
sentence or a token can be labelled "inside an unsupported span" and a model fitted on those
labels, which gives far more training rows than one label per response. Two such models:

- **sentence level**: per response sentence (``SENTENCE_FEATURES``, each a share or a position,
  not a count except ``sources_to_cover``): novelty against the source, the best single source
  sentence (overlap share, ``difflib.SequenceMatcher`` ratio of content-token sequences, its
  position in the source), the longest run of content tokens found contiguously in the source,
  how many source sentences a greedy cover needs and how far apart the two best are (facts
  recombined from distant sentences), the spread of the first source occurrences of its words,
  negation flips and added modality against the best source sentence;
- **token level**: per response content token (``TOKEN_FEATURES``): in the source, in a source
  bigram with its left or right neighbour, in the sentence's best source sentence, distance (in
  source sentences, over the source's sentence count) from its nearest source occurrence to that
  best sentence, IDF (over the task type's sources, label-free), IDF when novel, capitalised and
  novel, numeric, novelty of its 7-token window.

A response's score aggregates its units' fitted probabilities (``max``, ``mean``, or noisy-or
``1 - prod(1 - p)``). Fitting uses ``combiner.fit_logistic`` (L2 1) on the units of training
sources only (source-grouped folds from ``benchmark.fold_of``), so each response is scored by a
model that never saw its source. No text is printed.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence

import numpy as np
from groundedness import fold_of
from groundedness_metrics import within_group_auc
from ragtruth import RagtruthRecord

from ragwarrant.corroborators.combiner import fit_logistic
from ragwarrant.corroborators.lexical import STOP_WORDS, tokenize

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'.,:-]*")
CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z]+")
NUMBER = re.compile(r"\d[\d.,:]*")
NEGATION = frozenset({"not", "no", "never", "none", "nor", "cannot", "without", "n't"})
MODAL = frozenset(
    {"may", "might", "could", "would", "should", "must", "will", "can", "reportedly", "likely"}
)
SENTENCE_FEATURES = (
    "novel",
    "idf_novel",
    "best_gap",
    "two_best_gap",
    "sources_to_cover",
    "aligned_position",
    "run_gap",
    "sequence_gap",
    "novel_bigram",
    "novel_capitalised",
    "novel_number",
    "source_spread",
    "recombination",
    "negation_flip",
    "modality_added",
)
"""Per-sentence features; ``*_gap`` = 1 − a match share, so every feature grows with novelty."""
TOKEN_FEATURES = (
    "in_source",
    "left_bigram",
    "right_bigram",
    "in_best_sentence",
    "best_distance",
    "idf",
    "idf_novel",
    "capitalised_novel",
    "numeric",
    "window_novel",
)
AGGREGATES = ("max", "mean", "noisy_or")
_MAX_COVER = 10

Idf = Callable[[str], float]


def content(text: str) -> list[str]:
    """Content tokens (the lexical gates' tokens without stop words)."""
    return [t for t in tokenize(text) if t not in STOP_WORDS]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the sentences of ``text`` that hold a content token."""
    spans, start = [], 0
    for match in SENTENCE_END.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if content(text[a:b])]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.lower().replace("n't", " n't").split())


class AlignedSource:
    """One source text indexed for alignment: its content tokens, sentences and positions."""

    def __init__(self, text: str) -> None:
        self.sequence = content(text)
        self.tokens = frozenset(self.sequence)
        self.bigrams = frozenset(zip(self.sequence, self.sequence[1:], strict=False))
        raw = [text[a:b] for a, b in sentence_spans(text)]
        self.sentences = [frozenset(content(s)) for s in raw]
        self.sentence_tokens = [content(s) for s in raw]
        self.sentence_words = [_words(s) for s in raw]
        self.lower_words = frozenset(w.lower() for w in WORD.findall(text))
        self.numbers = frozenset(n.strip(".,:") for n in NUMBER.findall(text))
        self.where: dict[str, list[int]] = {}
        for i, sentence in enumerate(self.sentences):
            for token in sentence:
                self.where.setdefault(token, []).append(i)
        self.at: dict[str, list[int]] = {}
        for i, token in enumerate(self.sequence):
            self.at.setdefault(token, []).append(i)

    def best_sentence(self, tokens: set[str]) -> tuple[int, int]:
        """Index of the source sentence sharing most of ``tokens``, and that count."""
        overlaps = [len(tokens & s) for s in self.sentences] or [0]
        best = int(np.argmax(overlaps))
        return best, overlaps[best]

    def longest_run(self, tokens: Sequence[str]) -> int:
        """Longest run of consecutive ``tokens`` found consecutively in the source."""
        best = 0
        for i, token in enumerate(tokens):
            for j in self.at.get(token, ()):
                k = 1
                while (
                    i + k < len(tokens)
                    and j + k < len(self.sequence)
                    and tokens[i + k] == self.sequence[j + k]
                ):
                    k += 1
                best = max(best, k)
        return best

    def cover_count(self, tokens: set[str]) -> int:
        """Source sentences a greedy set cover needs for the sentence's supported tokens."""
        need, count = tokens & self.tokens, 0
        while need and count < _MAX_COVER:
            need -= max(self.sentences, key=lambda s: len(need & s))
            count += 1
        return count


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _alignment(tokens: list[str], source: AlignedSource) -> list[float]:
    """best_gap .. recombination for one sentence's content tokens."""
    unique = set(tokens)
    n_sources = max(len(source.sentences), 1)
    best, overlap = source.best_sentence(unique)
    rest = unique - (source.sentences[best] if source.sentences else frozenset())
    second, extra = source.best_sentence(rest)
    best_tokens = source.sentence_tokens[best] if source.sentences else []
    ratio = difflib.SequenceMatcher(None, tokens, best_tokens, autojunk=False).ratio()
    firsts = [source.where[t][0] for t in unique if t in source.where]
    spread = float(np.std(firsts)) / n_sources if len(firsts) > 1 else 0.0
    return [
        1.0 - overlap / len(unique),
        1.0 - (overlap + extra) / len(unique),
        float(source.cover_count(unique)),
        best / max(n_sources - 1, 1),
        1.0 - source.longest_run(tokens) / len(tokens),
        1.0 - ratio,
        spread,
        abs(best - second) / n_sources if extra else 0.0,
    ]


def sentence_features(text: str, source: AlignedSource, idf: Idf) -> list[float]:
    """The ``SENTENCE_FEATURES`` of one response sentence (which holds a content token)."""
    tokens = content(text)
    novel = [t not in source.tokens for t in tokens]
    idf_total = sum(idf(t) for t in tokens) or 1.0
    capitalised = CAPITALISED.findall(text)[1:]
    best, _ = source.best_sentence(set(tokens))
    mine = _words(text)
    theirs = source.sentence_words[best] if source.sentences else frozenset()
    aligned = _alignment(tokens, source)
    return [
        _share(novel),
        sum(idf(t) for t, n in zip(tokens, novel, strict=True) if n) / idf_total,
        *aligned[:6],
        _share([b not in source.bigrams for b in zip(tokens, tokens[1:], strict=False)]),
        _share([w.lower() not in source.lower_words for w in capitalised]),
        _share([n.strip(".,:") not in source.numbers for n in NUMBER.findall(text)]),
        *aligned[6:],
        float(bool(mine & NEGATION) != bool(theirs & NEGATION)),
        float(bool(mine & MODAL) and not theirs & MODAL),
    ]


def _word_tokens(text: str) -> list[tuple[str, int, int, bool]]:
    """(first content token, start, end, capitalised) of each word of ``text`` with one."""
    out = []
    for match in WORD.finditer(text):
        tokens = content(match.group())
        if tokens:
            out.append((tokens[0], match.start(), match.end(), match.group()[0].isupper()))
    return out


def token_rows(
    text: str, offset: int, source: AlignedSource, idf: Idf
) -> list[tuple[list[float], tuple[int, int]]]:
    """``(TOKEN_FEATURES, absolute span)`` of each content word of one response sentence."""
    words = _word_tokens(text)
    sequence = [w[0] for w in words]
    best, _ = source.best_sentence(set(sequence))
    n_sources = max(len(source.sentences), 1)
    rows = []
    for i, (token, start, end, capitalised) in enumerate(words):
        known = token in source.tokens
        window = sequence[max(0, i - 3) : i + 4]
        distance = min((abs(j - best) for j in source.where.get(token, ())), default=n_sources)
        features = [
            float(known),
            float(i > 0 and (sequence[i - 1], token) in source.bigrams),
            float(i + 1 < len(sequence) and (token, sequence[i + 1]) in source.bigrams),
            float(bool(source.sentences) and token in source.sentences[best]),
            distance / n_sources,
            idf(token),
            idf(token) * (not known),
            float(capitalised and not known),
            float(any(c.isdigit() for c in token)),
            _share([w not in source.tokens for w in window]),
        ]
        rows.append((features, (offset + start, offset + end)))
    return rows


def _inside(span: tuple[int, int], labels: Sequence[tuple[int, int]]) -> bool:
    return any(a < span[1] and b > span[0] for a, b in labels)


class Units:
    """Sentence or token rows of a task's responses, with their span labels and response index."""

    def __init__(self, x: list[list[float]], y: list[bool], owner: list[int]) -> None:
        self.x = np.asarray(x, dtype=np.float64)
        self.y = np.asarray(y, dtype=bool)
        self.owner = np.asarray(owner, dtype=np.int64)


def build_units(
    records: Sequence[RagtruthRecord], sources: dict[str, AlignedSource], idf: Idf
) -> tuple[Units, Units]:
    """Sentence units and token units of ``records`` (labels: overlap with an unsupported span)."""
    sx: list[list[float]] = []
    sy: list[bool] = []
    so: list[int] = []
    tx: list[list[float]] = []
    ty: list[bool] = []
    to: list[int] = []
    for i, record in enumerate(records):
        source = sources[record.source_id]
        for start, end in sentence_spans(record.response):
            text = record.response[start:end]
            sx.append(sentence_features(text, source, idf))
            sy.append(_inside((start, end), record.unsupported_spans))
            so.append(i)
            for features, span in token_rows(text, start, source, idf):
                tx.append(features)
                ty.append(_inside(span, record.unsupported_spans))
                to.append(i)
    return Units(sx, sy, so), Units(tx, ty, to)


def aggregate(values: np.ndarray, owner: np.ndarray, n: int, how: str) -> np.ndarray:
    """Per-response ``max``, ``mean`` or ``noisy_or`` of unit values (0 for a response without)."""
    if how == "max":
        out = np.full(n, -np.inf)
        np.maximum.at(out, owner, values)
        out[np.isinf(out)] = 0.0
        return out
    out = np.zeros(n)
    if how == "mean":
        np.add.at(out, owner, values)
        return out / np.maximum(np.bincount(owner, minlength=n), 1)
    np.add.at(out, owner, np.log1p(-np.clip(values, 0.0, 1.0 - 1e-12)))
    return 1.0 - np.exp(out)


def span_model_aucs(
    units: Units, names: Sequence[str], records: Sequence[RagtruthRecord]
) -> dict[str, float]:
    """Within-generator AUC per aggregate of a unit-level logistic model scored out of fold."""
    fold = np.array([fold_of(r.source_id, 0, 5) for r in records])
    unit_fold = fold[units.owner]
    probability = np.zeros(len(units.y))
    for f in range(5):
        train = unit_fold != f
        if not (~train).any():
            continue
        if units.y[train].all() or not units.y[train].any():
            return dict.fromkeys(AGGREGATES, math.nan)  # a training fold with one class
        model = fit_logistic(units.x[train], units.y[train], names)
        probability[~train] = model.score(units.x[~train])
    y = np.array([r.unsupported for r in records])
    models = np.array([r.model for r in records])
    return {
        how: within_group_auc(aggregate(probability, units.owner, len(records), how), y, models)
        or math.nan
        for how in AGGREGATES
    }
