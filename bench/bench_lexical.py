"""Throughput of the lexical groundedness gates on RAGTruth-length texts, on one core.

Usage (from the repository root)::

    .venv/bin/python bench/bench_lexical.py [--ragtruth-dir DIR] [--repeats 5]

Texts: the shared RAGTruth sample (``../shared/data/ragtruth`` beside the clone, or
``--ragtruth-dir``) when present; otherwise synthetic texts whose word counts follow the sample's
length distribution (log-normal fitted to RAGTruth: responses ~120 words, contexts ~320 words).

Printed, each as responses per CPU-second (``time.process_time``; the best of ``--repeats``
passes over all responses, so a loaded machine inflates the figures less than wall time would),
and as a ratio to the reference implementation measured in the same run:

- ``ragwarrant score_response (python), uncached context``: the shipped scorer; every response
  re-tokenises its context, the cost inside the job where each example has its own context.
  **Target: >= 15,000/s** (not met in pure Python; docs/benchmarks.md).
- ``ragwarrant score_response (python), ContextIndex reused``: the context token set is built once
  per source (RAGTruth has six responses per source).
- ``reference: ragwarrant before, uncached`` / ``ContextIndex reused``: the implementation this
  one replaced (``bench/lexical_reference.py``, a verbatim copy). Before timing, every score and
  count of every response, by each implementation, is compared with it; the script fails unless
  all are bit-identical.
- ``reference: naive three-pass``: a straightforward implementation measured in the same run:
  each of the three scores tokenises response and context on its own (as three independent gates
  would) with ``str.split``-and-strip tokens, giving the same kind of scores.
- ``reference: str.split floor``: only ``set(context.lower().split())`` and a membership test of
  each whitespace token of the response; no sentence split, no stop words. Nothing correct can be
  much faster in pure Python.
- ``reference: str.split floor, pyarrow batch``: the same counts for all responses in one batch,
  lowercasing, splitting and membership vectorised (``arrow_batch_floor``; every context
  tokenised, nothing shared between responses; its counts are checked against the floor's).
  What a vectorised batch path could at best reach before any of the real token rules.

The process is pinned to one CPU where the OS allows (``os.sched_setaffinity``).

With ``--variants`` it instead prints the accuracy of candidate improvements beyond the three
scores (numbers and units, named entities, negation, stemming, distinct types, bigrams, per-task
thresholds), under the same protocol as ``bench/groundedness.py`` on the shared sample
(source-grouped 5-fold cross-validation, seed 0, max-F1 thresholds): response-level F1 (%) per
task type and pooled, beside the always-flag floor and the shipped ``hybrid`` gate. A variant is
worth adopting only if it beats ``hybrid`` by more than fold noise on every task type.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple
from pathlib import Path

import lexical_reference as reference  # bench/ is on sys.path when this script runs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from groundedness import fold_of
from ragtruth import TASKS, RagtruthData, load_ragtruth

from ragwarrant.corroborators.calibration import calibrate_threshold
from ragwarrant.corroborators.lexical import (
    STOP_WORDS,
    index_context,
    score_response,
    split_sentences,
    tokenize,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RAGTRUTH = REPO.parent / "shared" / "data" / "ragtruth"

Example = tuple[str, str, tuple[str, ...]]  # (source_id, response, passages)


def load_examples(directory: Path) -> tuple[list[Example], str]:
    """Return the RAGTruth sample's (source_id, response, passages), or synthetic ones."""
    if (directory / "sample_response.jsonl.gz").is_file() or (
        directory / "response.jsonl"
    ).is_file():
        data = load_ragtruth(directory)
        examples = [(r.source_id, r.response, data.contexts[r.source_id]) for r in data.records]
        return examples, f"RAGTruth ({data.layout}) at {directory}"
    return synthetic_examples(2617, np.random.default_rng(0)), "synthetic (RAGTruth lengths)"


def synthetic_examples(n: int, rng: np.random.Generator) -> list[Example]:
    """Synthetic texts with RAGTruth-like word counts: six responses per context, 5% numbers."""
    vocabulary = [f"w{i}" for i in range(5000)] + sorted(STOP_WORDS)
    examples: list[Example] = []
    for i in range(n):
        if i % 6 == 0:
            n_ctx = int(np.clip(rng.lognormal(np.log(320), 0.55), 50, 2500))
            context = _sentences(rng, vocabulary, n_ctx)
        n_resp = int(np.clip(rng.lognormal(np.log(120), 0.45), 5, 500))
        examples.append((str(i // 6), _sentences(rng, vocabulary, n_resp), (context,)))
    return examples


def _sentences(rng: np.random.Generator, vocabulary: Sequence[str], n_words: int) -> str:
    words = [
        str(int(rng.integers(0, 2000))) if rng.random() < 0.05 else vocabulary[int(k)]
        for k in rng.zipf(1.3, n_words) % len(vocabulary)
    ]
    for j in range(14, len(words), 15):
        words[j] += "."
    return " ".join(words) + "."


# ---------------------------------------------------------------- references

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_STRIP = ".,;:!?\"'()[]{}"


def _naive_tokens(text: str) -> list[str]:
    return [t.strip(_STRIP) for t in text.lower().split() if t.strip(_STRIP)]


def naive_three_pass(response: str, passages: Sequence[str]) -> tuple[float, float, float]:
    """Coverage, weakest sentence and numeric share, each computed in its own pass."""

    def coverage() -> float:
        known = {t for p in passages for t in _naive_tokens(p)}
        content = [t for t in _naive_tokens(response) if t not in STOP_WORDS]
        return sum(t not in known for t in content) / len(content) if content else 0.0

    def weakest() -> float:
        known = {t for p in passages for t in _naive_tokens(p)}
        worst = 0.0
        for sentence in _SPLIT.split(response):
            content = [t for t in _naive_tokens(sentence) if t not in STOP_WORDS]
            if len(content) >= 5:
                worst = max(worst, sum(t not in known for t in content) / len(content))
        return worst

    def numeric() -> float:
        known = {t for p in passages for t in _naive_tokens(p)}
        numbers = [t for t in _naive_tokens(response) if any(c.isdigit() for c in t)]
        return sum(t not in known for t in numbers) / len(numbers) if numbers else 0.0

    return coverage(), weakest(), numeric()


def split_floor(response: str, passages: Sequence[str]) -> int:
    """Only whitespace tokens and a set: the floor cost of any lexical overlap check."""
    known = set(" ".join(passages).lower().split())
    return sum(t not in known for t in response.lower().split())


def arrow_batch_floor(examples: Sequence[Example]) -> np.ndarray:
    """``split_floor`` for every response at once: lowercasing, whitespace split and membership
    in vectorised C++ and numpy (pyarrow ``dictionary_encode`` gives each distinct token an id;
    a boolean table indexed by (response, id) holds each context's ids). Every context is
    tokenised; nothing is shared between responses. Returns the counts, shape (n,)."""
    n = len(examples)
    texts = [" ".join(c) for _, _, c in examples] + [r for _, r, _ in examples]
    tokens = pc.utf8_split_whitespace(pc.utf8_lower(pa.array(texts, pa.string())))
    owner = pc.list_parent_indices(tokens).to_numpy()
    ids = pc.dictionary_encode(pc.list_flatten(tokens)).indices.to_numpy().astype(np.int64)
    n_ids = int(ids.max()) + 1 if len(ids) else 1
    split = int(np.searchsorted(owner, n))
    c_owner, c_ids, r_owner, r_ids = owner[:split], ids[:split], owner[split:] - n, ids[split:]
    supported = np.empty(len(r_ids), dtype=bool)
    step = max(1, 20_000_000 // n_ids)  # responses per chunk: a table of at most 20 MB
    c_cut = np.searchsorted(c_owner, np.arange(0, n + step, step))
    r_cut = np.searchsorted(r_owner, np.arange(0, n + step, step))
    for k in range(len(c_cut) - 1):
        table = np.zeros(step * n_ids, dtype=bool)
        c, r = slice(c_cut[k], c_cut[k + 1]), slice(r_cut[k], r_cut[k + 1])
        table[(c_owner[c] - k * step) * n_ids + c_ids[c]] = True
        supported[r] = table[(r_owner[r] - k * step) * n_ids + r_ids[r]]
    return np.bincount(r_owner, weights=~supported, minlength=n).astype(np.int64)


# ---------------------------------------------------------------- candidate improvements

_NEGATIONS = frozenset({"not", "no", "never", "nor", "none", "nothing", "neither", "without", "t"})
_CAPITALISED = re.compile(r"(?<=[a-z0-9,;:] )([A-Z][a-zA-Z]+)")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def _norm_number(token: str) -> str:
    return (token.lstrip("0") or "0") if token.isdigit() else token


def _stem(token: str) -> str:
    for suffix in _SUFFIXES:
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _variant_scores(response: str, passages: Sequence[str]) -> dict[str, float]:
    ctx = [t for p in passages for t in tokenize(p)]
    known = set(ctx)
    known_num = {_norm_number(t) for t in ctx}
    known_stem = {_stem(_norm_number(t)) for t in ctx}
    tokens = tokenize(response)
    content = [t for t in tokens if t not in STOP_WORDS]
    ctx_content = [t for t in ctx if t not in STOP_WORDS]
    ctx_bigrams = set(zip(ctx_content, ctx_content[1:], strict=False))
    base = score_response(response, passages)
    numbers = [_norm_number(t) for t in tokens if any(c.isdigit() for c in t)]
    numeric_normalised = _share([t not in known_num for t in numbers])
    entities = [w.lower() for w in _CAPITALISED.findall(response)]
    entity_share = _share([e not in known for e in entities])
    negated = any(t in _NEGATIONS for t in tokens) and not any(t in _NEGATIONS for t in ctx)
    return {
        "coverage, numbers normalised (leading zeros)": _share(
            [_norm_number(t) not in known_num for t in content]
        ),
        "coverage, light stemming (-s -es -ed -ing -ly)": _share(
            [_stem(_norm_number(t)) not in known_stem for t in content]
        ),
        "coverage over distinct token types": _share([t not in known for t in set(content)]),
        "count of unsupported content tokens": float(base.n_unsupported),
        "content bigrams absent from context (share)": _share(
            [b not in ctx_bigrams for b in zip(content, content[1:], strict=False)]
        ),
        "named entities (capitalised words) absent (share)": entity_share,
        "negation in response, none in context (0/1)": float(negated),
        "hybrid with numbers normalised": 0.35 * base.coverage
        + 0.50 * base.weakest_sentence
        + 0.15 * numeric_normalised,
        "hybrid + 0.15 x entity share": base.hybrid + 0.15 * entity_share,
        "hybrid + 0.10 x negation flag": base.hybrid + 0.10 * float(negated),
        "max(hybrid, weakest sentence, stemmed)": max(
            base.hybrid,
            max(
                (
                    _share([_stem(_norm_number(t)) not in known_stem for t in c])
                    for c in (
                        [t for t in tokenize(s) if t not in STOP_WORDS]
                        for s in split_sentences(response)
                    )
                    if len(c) >= 5
                ),
                default=0.0,
            ),
        ),
    }


def _cv_f1(
    scores: np.ndarray,
    labels: np.ndarray,
    tasks: np.ndarray,
    folds: np.ndarray,
    k: int,
    per_task: bool = False,
) -> dict[str, float]:
    flags = np.zeros(len(scores), dtype=bool)
    groups = [tasks == t for t in TASKS] if per_task else [np.ones(len(scores), dtype=bool)]
    for group in groups:
        for f in range(k):
            test, train = group & (folds == f), group & (folds != f)
            if test.any():
                threshold = calibrate_threshold(scores[train], labels[train])
                flags[test] = scores[test] >= threshold
    out = {}
    for task in (*TASKS, "all"):
        mask = tasks == task if task != "all" else np.ones(len(scores), dtype=bool)
        tp, k_flagged, p = (
            (flags & labels & mask).sum(),
            (flags & mask).sum(),
            (labels & mask).sum(),
        )
        out[task] = 200.0 * tp / (k_flagged + p)
    return out


def run_variants(data: RagtruthData, k: int = 5, seed: int = 0) -> None:
    """Print the cross-validated F1 of each candidate improvement beside the shipped gates."""
    records = data.records
    labels = np.array([r.unsupported for r in records], dtype=bool)
    tasks = np.array([r.task_type for r in records])
    folds = np.array([fold_of(r.source_id, seed, k) for r in records])
    base = [score_response(r.response, data.contexts[r.source_id]) for r in records]
    table: dict[str, np.ndarray] = {
        g: np.array([getattr(b, g) for b in base])
        for g in ("coverage", "weakest_sentence", "hybrid")
    }
    extra = [_variant_scores(r.response, data.contexts[r.source_id]) for r in records]
    for name in extra[0]:
        table[name] = np.array([e[name] for e in extra])
    print(
        f"{data.layout} layout, {len(records)} responses; source-grouped {k}-fold CV, seed {seed}"
    )
    print("response-level F1 (%); NOT the official RAGTruth test split\n")
    print(f"| variant | {' | '.join(TASKS)} | all |")
    print(f"|---|{'---:|' * (len(TASKS) + 1)}")
    always = {
        t: 200.0 * (labels & m).sum() / (m.sum() + (labels & m).sum())
        for t, m in [(t, tasks == t) for t in TASKS] + [("all", np.ones(len(labels), bool))]
    }
    print("| always-flag floor | " + " | ".join(f"{always[t]:.1f}" for t in (*TASKS, "all")) + " |")
    rows = [(name, scores, False) for name, scores in table.items()]
    rows.append(("hybrid, one threshold per task type", table["hybrid"], True))
    for name, scores, per_task in rows:
        f1 = _cv_f1(scores, labels, tasks, folds, k, per_task)
        print(f"| {name} | " + " | ".join(f"{f1[t]:.1f}" for t in (*TASKS, "all")) + " |")


# ---------------------------------------------------------------- timing


def _rate(fn: Callable[[], object], n: int, repeats: int) -> float:
    """Responses per CPU-second, best of ``repeats`` passes (the least disturbed by other load)."""
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        rates.append(n / max(time.process_time() - start, 1e-9))
    return max(rates)


Scorer = tuple[Callable[..., object], Callable[..., object]]  # (score_response, index_context)


def scorers() -> dict[str, Scorer]:
    """The shipped scorer, by name (one: the pure-Python scorer)."""
    return {"python": (score_response, index_context)}


def count_differences(examples: Sequence[Example], scorer: Scorer) -> int:
    """Responses whose scores (any field, uncached or indexed) differ from the reference's."""
    score, index = scorer
    differ = 0
    for _, response, passages in examples:
        expected = astuple(reference.score_response(response, passages))
        uncached = astuple(score(response, passages))  # type: ignore[arg-type]
        cached = astuple(score(response, index(passages)))  # type: ignore[arg-type]
        differ += uncached != expected or cached != expected
    return differ


def pin_to_one_cpu() -> str:
    """Pin this process to one CPU where the OS allows; say which."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def timed_passes(examples: Sequence[Example]) -> list[tuple[str, Callable[[], object]]]:
    """(name, one pass over all responses) for the scorer and each reference, in print order."""
    reference_indexes = {sid: reference.index_context(c) for sid, _, c in examples}
    passes: list[tuple[str, Callable[[], object]]] = []
    for name, (score, index) in scorers().items():
        indexes = {sid: index(c) for sid, _, c in examples}
        passes += [
            (
                f"ragwarrant score_response ({name}), uncached context",
                lambda score=score: [score(r, c) for _, r, c in examples],
            ),
            (
                f"ragwarrant score_response ({name}), ContextIndex reused",
                lambda score=score, indexes=indexes: [
                    score(r, indexes[sid]) for sid, r, _ in examples
                ],
            ),
        ]
    return [
        *passes,
        (
            "reference: ragwarrant before, uncached",
            lambda: [reference.score_response(r, c) for _, r, c in examples],
        ),
        (
            "reference: ragwarrant before, ContextIndex reused",
            lambda: [reference.score_response(r, reference_indexes[sid]) for sid, r, _ in examples],
        ),
        ("reference: naive three-pass", lambda: [naive_three_pass(r, c) for _, r, c in examples]),
        ("reference: str.split floor", lambda: [split_floor(r, c) for _, r, c in examples]),
        ("reference: str.split floor, pyarrow batch", lambda: arrow_batch_floor(examples)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Print responses per second of the lexical gates beside the references."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--ragtruth-dir", type=Path, default=DEFAULT_RAGTRUTH)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--variants", action="store_true", help="print the accuracy of candidate improvements"
    )
    args = parser.parse_args(argv)
    if args.variants:
        run_variants(load_ragtruth(args.ragtruth_dir))
        return 0

    pinned = pin_to_one_cpu()
    examples, origin = load_examples(args.ragtruth_dir)
    n = len(examples)
    response_words = [len(r.split()) for _, r, _ in examples]
    context_words = [sum(len(p.split()) for p in c) for _, _, c in examples]
    differ = {name: count_differences(examples, scorer) for name, scorer in scorers().items()}
    floors = [split_floor(r, c) for _, r, c in examples]
    arrow_agree = int(np.sum(arrow_batch_floor(examples) == floors))
    print(f"texts: {origin}; {n} responses")
    print(
        f"words per response median {statistics.median(response_words):.0f}, "
        f"per context median {statistics.median(context_words):.0f}"
    )
    print(
        f"python {platform.python_version()} on {platform.machine()}, {pinned}, "
        f"best of {args.repeats} passes, CPU time"
    )
    for name, count in differ.items():
        print(
            f"{name} scores bit-identical to the reference implementation on {n - count}/{n} "
            "responses (every field, uncached and with a ContextIndex)"
        )
    print(f"pyarrow batch floor agrees with the str.split floor on {arrow_agree}/{n} responses")
    print()
    print(f"{'implementation':56s} {'responses/CPU-s':>15s} {'x ref':>6s}")
    results = timed_passes(examples)
    rates = {name: _rate(fn, n, args.repeats) for name, fn in results}
    base = rates["reference: ragwarrant before, uncached"]
    for name, _ in results:
        print(f"{name:56s} {rates[name]:15,.0f} {rates[name] / base:6.2f}")
    target = 15_000
    headline = rates[results[0][0]]
    print()
    print(
        f"target >= {target:,}/s on one core (uncached): "
        f"{'met' if headline >= target else 'NOT met'} "
        f"({headline / base:.2f}x the implementation it replaced, "
        f"{headline / rates['reference: str.split floor']:.2f}x the str.split floor)"
    )
    return 1 if any(differ.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
