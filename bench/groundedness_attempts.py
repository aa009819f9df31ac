"""Within-generator ROC AUC of candidate groundedness features on RAGTruth (issue 15 attempts).

Usage (from the repository root)::

    .venv/bin/python bench/groundedness_attempts.py --ragtruth-dir ../shared/data/ragtruth

Prints one markdown table (the "What was tried" table of docs/groundedness-ragtruth.md): per task
type, the within-generator ROC AUC (``metrics.within_group_auc``, pairs of responses written by the
same model) of

- each candidate feature used as a score by itself: nothing is fitted, but the features were
  chosen and read on this same sample, so these are exploratory figures, not held-out ones;
- logistic combiners (``combiner.fit_logistic``, L2 1) scored out of fold under the benchmark's
  protocol: source-grouped 5-fold cross-validation, folds from ``sha256("0:<source_id>")``.

Candidate features (per response, each a share or a per-sentence rate, never a count, so that
length, which partly recognises the generator, does not enter):

- ``novel_capitalised``: share of capitalised words (not the first word) absent from the source;
- ``novel_number``: share of numbers absent from the source;
- ``novel_bigram`` / ``novel_trigram``: share of content-word bigrams / trigrams absent from it;
- ``weakest_overlap``: 1 − the lowest, over response sentences, of the best share of the
  sentence's content words found in one source sentence;
- ``mean_overlap``: 1 − the mean of that share over response sentences;
- ``idf_novel``: share of the response's IDF mass (IDF over the task type's sources, label-free)
  on content words absent from the source;
- ``negation_flip``: per sentence, negation present in one of (sentence, closest source
  sentence) and not the other;
- ``modality_added``: per sentence, a modal or hedge word absent from the closest source sentence.

Span-supervised attempts (``bench/groundedness_spans.py``): sentence- and token-level logistic
models fitted on RAGTruth's hallucination spans of training sources, a response scored by the
max, mean or noisy-or of its units' probabilities; the alignment features (``sequence_gap``,
``run_gap``, ``sources_to_cover``, ``recombination``, ``aligned_position``) alone, as the mean
over a response's sentences; and the response-level combiner over ``CONTENT_FEATURES`` plus the
means of all ``SENTENCE_FEATURES``.

No text is printed. One process, about a minute.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from groundedness import fold_of
from groundedness_metrics import within_group_auc
from groundedness_spans import (
    SENTENCE_FEATURES,
    TOKEN_FEATURES,
    AlignedSource,
    aggregate,
    build_units,
    span_model_aucs,
)
from ragtruth import RagtruthData, RagtruthRecord, load_ragtruth

from ragwarrant.corroborators.combiner import fit_logistic
from ragwarrant.corroborators.features import CONTENT_FEATURES, FEATURES, response_features
from ragwarrant.corroborators.lexical import STOP_WORDS, index_context, tokenize
from ragwarrant.corroborators.records import parse_record

SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d[\d.,:]*")
NUMBER = re.compile(r"\d[\d.,:]*")
NEGATION = frozenset({"not", "no", "never", "none", "nor", "cannot", "without", "n't", "neither"})
MODAL = frozenset(
    {"may", "might", "could", "would", "should", "must", "will", "can", "reportedly", "likely"}
)
CANDIDATES = (
    "novel_capitalised",
    "novel_number",
    "novel_bigram",
    "novel_trigram",
    "weakest_overlap",
    "mean_overlap",
    "idf_novel",
    "negation_flip",
    "modality_added",
)


def content(text: str) -> list[str]:
    """Content tokens (the lexical gates' tokens without stop words)."""
    return [t for t in tokenize(text) if t not in STOP_WORDS]


def _share(novel: Sequence[bool]) -> float:
    return sum(novel) / len(novel) if novel else 0.0


class Source:
    """What the candidate features need of one source text."""

    def __init__(self, text: str) -> None:
        tokens = content(text)
        self.tokens = frozenset(tokens)
        self.words = frozenset(w.lower() for w in WORD.findall(text))
        self.numbers = frozenset(n.strip(".,:") for n in NUMBER.findall(text))
        self.bigrams = frozenset(zip(tokens, tokens[1:], strict=False))
        self.trigrams = frozenset(zip(tokens, tokens[1:], tokens[2:], strict=False))
        raw = [s for s in SENTENCE.split(text) if content(s)]
        self.sentences = [(frozenset(content(s)), _lower_words(s)) for s in raw]


def _lower_words(text: str) -> frozenset[str]:
    return frozenset(text.lower().replace("n't", " n't").split())


def _sentence_features(response: str, source: Source) -> tuple[list[float], int, int]:
    """Best overlap per response sentence, negation flips and added modality."""
    overlaps: list[float] = []
    flips = added = 0
    for raw in (s for s in SENTENCE.split(response) if content(s)):
        words = frozenset(content(raw))
        if not source.sentences:
            overlaps.append(0.0)
            continue
        best = max(source.sentences, key=lambda s: len(words & s[0]))
        overlaps.append(len(words & best[0]) / len(words))
        mine = _lower_words(raw)
        flips += bool(mine & NEGATION) != bool(best[1] & NEGATION)
        added += bool(mine & MODAL) and not best[1] & MODAL
    return overlaps, flips, added


def candidate_features(response: str, source: Source, idf: Callable[[str], float]) -> list[float]:
    """The ``CANDIDATES`` of one response, in order."""
    words = WORD.findall(response)
    capitalised = [w for w in words[1:] if w[0].isupper()]
    numbers = NUMBER.findall(response)
    tokens = content(response)
    bigrams = list(zip(tokens, tokens[1:], strict=False))
    trigrams = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    overlaps, flips, added = _sentence_features(response, source)
    n_sentences = max(len(overlaps), 1)
    idf_total = sum(idf(t) for t in tokens) or 1.0
    return [
        _share([w.lower() not in source.words for w in capitalised]),
        _share([n.strip(".,:") not in source.numbers for n in numbers]),
        _share([b not in source.bigrams for b in bigrams]),
        _share([t not in source.trigrams for t in trigrams]),
        1.0 - min(overlaps) if overlaps else 0.0,
        1.0 - float(np.mean(overlaps)) if overlaps else 0.0,
        sum(idf(t) for t in tokens if t not in source.tokens) / idf_total,
        flips / n_sentences,
        added / n_sentences,
    ]


def _idf(texts: Sequence[str]) -> Callable[[str], float]:
    """Smoothed IDF over ``texts``: log((N + 1) / (df + 1)); label-free."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(content(text)))
    n = len(texts)
    return lambda token: math.log((n + 1) / (df.get(token, 0) + 1))


ALIGNMENT_ALONE = (
    "sequence_gap",
    "run_gap",
    "sources_to_cover",
    "recombination",
    "aligned_position",
)


def _span_rows(
    data: RagtruthData, records: list[RagtruthRecord], content_cols: np.ndarray
) -> list[tuple[str, str, float]]:
    """The span-supervised and alignment rows of one task type."""
    texts = {r.source_id: " ".join(data.contexts[r.source_id]) for r in records}
    sources = {sid: AlignedSource(text) for sid, text in texts.items()}
    sentences, tokens = build_units(records, sources, _idf(list(texts.values())))
    y = np.array([r.unsupported for r in records])
    models = np.array([r.model for r in records])
    means = np.column_stack(
        [
            aggregate(sentences.x[:, j], sentences.owner, len(records), "mean")
            for j in range(len(SENTENCE_FEATURES))
        ]
    )
    rows = [
        (
            f"{name} (mean over sentences)",
            "feature alone, not fitted",
            within_group_auc(means[:, SENTENCE_FEATURES.index(name)], y, models) or 0.0,
        )
        for name in ALIGNMENT_ALONE
    ]
    for unit, (units, names) in {
        "sentence": (sentences, SENTENCE_FEATURES),
        "token": (tokens, TOKEN_FEATURES),
    }.items():
        aucs = span_model_aucs(units, names, records)
        rows += [
            (f"{unit} model on spans, {how}", "5-fold out of fold", auc)
            for how, auc in aucs.items()
        ]
    both = np.hstack([content_cols, means])
    names = [*CONTENT_FEATURES, *(f"mean_{n}" for n in SENTENCE_FEATURES)]
    rows.append(
        (
            "combiner, CONTENT_FEATURES + sentence means",
            "5-fold out of fold",
            out_of_fold_auc(both, names, records),
        )
    )
    return rows


def _task_matrices(
    data: RagtruthData, task: str
) -> tuple[list[RagtruthRecord], np.ndarray, np.ndarray]:
    """The task's records, their candidate features and their ``FEATURES`` vectors."""
    records = [r for r in data.records if r.task_type == task]
    texts = {r.source_id: " ".join(data.contexts[r.source_id]) for r in records}
    sources = {sid: Source(text) for sid, text in texts.items()}
    idf = _idf(list(texts.values()))
    candidates = np.array(
        [candidate_features(r.response, sources[r.source_id], idf) for r in records]
    )
    indexes = {sid: index_context(data.contexts[sid]) for sid in texts}
    parsed = {sid: parse_record(data.contexts[sid]) for sid in texts}
    existing = np.array(
        [response_features(r.response, indexes[r.source_id], parsed[r.source_id]) for r in records]
    )
    return records, candidates, existing


def out_of_fold_auc(x: np.ndarray, names: Sequence[str], records: list[RagtruthRecord]) -> float:
    """Within-generator AUC of a logistic combiner scored out of fold (5 source-grouped folds)."""
    y = np.array([r.unsupported for r in records])
    fold = np.array([fold_of(r.source_id, 0, 5) for r in records])
    score = np.zeros(len(records))
    for f in range(5):
        train = fold != f
        if not (~train).any():
            continue
        if y[train].all() or not y[train].any():
            return float("nan")  # a training fold without both classes: nothing to fit
        model = fit_logistic(np.ascontiguousarray(x[train]), y[train], names)
        score[~train] = model.score(np.ascontiguousarray(x[~train]))
    auc = within_group_auc(score, y, np.array([r.model for r in records]))
    return float("nan") if auc is None else auc


def _rows(data: RagtruthData, task: str) -> list[tuple[str, str, float]]:
    records, candidates, existing = _task_matrices(data, task)
    y = np.array([r.unsupported for r in records])
    models = np.array([r.model for r in records])
    rows = [
        (name, "feature alone, not fitted", within_group_auc(candidates[:, j], y, models) or 0.0)
        for j, name in enumerate(CANDIDATES)
    ]
    content_cols = existing[:, [FEATURES.index(f) for f in CONTENT_FEATURES]]
    combos = {
        "combiner, all FEATURES": (existing, list(FEATURES)),
        "combiner, CONTENT_FEATURES": (content_cols, list(CONTENT_FEATURES)),
        "combiner, candidates only": (candidates, list(CANDIDATES)),
        "combiner, CONTENT_FEATURES + candidates": (
            np.hstack([content_cols, candidates]),
            [*CONTENT_FEATURES, *CANDIDATES],
        ),
    }
    rows += [
        (name, "5-fold out of fold", out_of_fold_auc(x, names, records))
        for name, (x, names) in combos.items()
    ]
    return rows + _span_rows(data, records, content_cols)


def main(argv: Sequence[str] | None = None) -> None:
    """Print the attempts table for every task type of the RAGTruth copy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ragtruth-dir", type=Path, default=Path("../shared/data/ragtruth"))
    parser.add_argument("--tasks", nargs="+", default=["QA", "Summary", "Data2txt"])
    args = parser.parse_args(argv)
    data = load_ragtruth(args.ragtruth_dir)
    print("| task | attempt | how scored | within-generator AUC |")
    print("|---|---|---|---:|")
    for task in args.tasks:
        for name, how, auc in _rows(data, task):
            print(f"| {task} | {name} | {how} | {auc:.3f} |")


if __name__ == "__main__":
    main()
