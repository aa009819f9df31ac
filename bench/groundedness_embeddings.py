"""Sentence-embedding groundedness attempts on RAGTruth (issue 15, Summary AUC target).

Usage (from the repository root), in two steps::

    # 1. embed: needs torch + transformers (NOT project dependencies) and the extracted
    #    all-MiniLM-L6-v2 directory; writes numeric features only (no text) to CACHE
    PYTHONPATH=job python bench/groundedness_embeddings.py embed --tasks Summary \
        --ragtruth-dir ../shared/data/ragtruth --model-dir DIR --cache CACHE.npz
    # 2. evaluate: the project's venv
    .venv/bin/python bench/groundedness_embeddings.py evaluate --tasks Summary \
        --ragtruth-dir ../shared/data/ragtruth --cache CACHE.npz
    # CPU cost per response beside the lexical scorer (same process, one thread)
    PYTHONPATH=job python bench/groundedness_embeddings.py cost \
        --ragtruth-dir ../shared/data/ragtruth --model-dir DIR

Model: ``sentence-transformers/all-MiniLM-L6-v2`` (Reimers & Gurevych 2019, Sentence-BERT,
arXiv:1908.10084; MiniLM backbone: Wang et al. 2020, arXiv:2002.10957), a 6-layer BERT with
mean pooling and L2 normalisation, 384 dimensions, inputs truncated at 256 word pieces.
Features, per response sentence (the sentences of ``groundedness_spans.sentence_spans``):

- ``emb_gap``: 1 − the best cosine of the sentence's embedding to one source sentence;
- ``emb_gap2``: 1 − the mean of the two best (support spread over two sentences);
- ``tok_gap_mean`` / ``tok_gap_min`` / ``tok_gap_p10``: BERTScore-style precision (Zhang et al.
  2020, BERTScore, arXiv:1904.09675): each word piece of the sentence (last hidden layer, the
  sentence encoded alone) takes its best cosine to any word piece of the source (the source
  encoded in packs of whole sentences of at most 250 word pieces); 1 − the mean, the min and the
  10th percentile over the sentence's word pieces (punctuation and special tokens left out);
- the pair vector ``[u * v, |u − v|]`` of the sentence embedding ``u`` and its best source
  sentence's ``v`` (InferSent-style matching features, Conneau et al. 2017, arXiv:1705.02364),
  for a sentence head fitted on the span labels.

Per response: ``doc_gap`` = 1 − cosine of the mean of its sentence embeddings to the mean of the
source's, and the max / mean over its sentences of each sentence feature.

Evaluation follows ``bench/groundedness.py``: per task type, source-grouped 5-fold
cross-validation (folds from ``benchmark.fold_of``), a logistic combiner (``fit_logistic``, L2 1)
fitted on training folds, its threshold calibrated on the training probabilities
(``calibrate_threshold``, maximum F1), the out-of-fold flags pooled; within-generator ROC AUC
(``within_group_auc``) and the F1 gain over always-flag with its source-cluster bootstrap
interval (``gain_interval``, 2000 resamples, seed 0), reported for fold seed 0, and the AUC's
mean, min and max over fold seeds 0-9. No text is printed or cached.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from groundedness import BOOTSTRAP_SEED, N_RESAMPLES, fold_of
from groundedness_metrics import gain_interval, within_group_auc
from groundedness_spans import AlignedSource, build_units, sentence_spans
from ragtruth import RagtruthData, RagtruthRecord, load_ragtruth

from ragwarrant.corroborators.calibration import calibrate_threshold
from ragwarrant.corroborators.combiner import fit_logistic
from ragwarrant.corroborators.features import CONTENT_FEATURES, FEATURES, response_features
from ragwarrant.corroborators.lexical import index_context, score_response
from ragwarrant.corroborators.records import parse_record

SENT_FEATURES = ("emb_gap", "emb_gap2", "tok_gap_mean", "tok_gap_min", "tok_gap_p10")
PUNCT = re.compile(r"^[^\w]+$")
MAX_PACK = 250
SEEDS = range(10)
PAIR_SEEDS = range(3)
"""The 773-column pair head is refitted 25 times per seed: three fold seeds only."""
PAIR_L2 = 100.0
"""Ridge of the pair head (773 standardised columns on a few thousand sentences); set before
the first run, not tuned."""

# --------------------------------------------------------------------------------------------
# step 1: embed (torch + transformers, imported here only)


class Encoder:
    """all-MiniLM-L6-v2 from a local directory: token and sentence embeddings, one CPU thread."""

    def __init__(self, model_dir: Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(1)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModel.from_pretrained(str(model_dir)).eval()

    def encode(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text: (unit sentence embedding (384,), unit token embeddings (t, 384))."""
        out: list[tuple[np.ndarray, np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            enc = self.tokenizer(
                [texts[i] for i in batch],
                padding=True,
                truncation=True,
                max_length=256,
                return_tensors="pt",
            )
            with self.torch.no_grad():
                hidden = self.model(**enc).last_hidden_state.numpy()
            mask = enc["attention_mask"].numpy().astype(bool)
            for row, i in enumerate(batch):
                ids = enc["input_ids"][row].numpy()[mask[row]]
                tokens = hidden[row][mask[row]]
                sentence = tokens.mean(axis=0)
                keep = [
                    j
                    for j, t in enumerate(self.tokenizer.convert_ids_to_tokens(ids.tolist()))
                    if t not in ("[CLS]", "[SEP]") and not PUNCT.match(t)
                ]
                kept = tokens[keep] if keep else tokens[:1]
                out[i] = (_unit(sentence), _unit(kept))
        return out


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _packs(text: str, tokenizer: Any) -> list[str]:
    """Consecutive whole sentences of ``text`` packed into chunks of at most MAX_PACK pieces."""
    packs: list[str] = []
    current: list[str] = []
    size = 0
    for a, b in sentence_spans(text):
        sentence = text[a:b]
        n = len(tokenizer.tokenize(sentence))
        if current and size + n > MAX_PACK:
            packs.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += n
    if current:
        packs.append(" ".join(current))
    return packs


def _source_side(encoder: Encoder, text: str) -> tuple[np.ndarray, np.ndarray]:
    """(source sentence embeddings (s, 384), source token embeddings (t, 384))."""
    sentences = [text[a:b] for a, b in sentence_spans(text)] or [text]
    sentence_vectors = np.stack([v for v, _ in encoder.encode(sentences)])
    tokens = np.vstack([t for _, t in encoder.encode(_packs(text, encoder.tokenizer) or [text])])
    return sentence_vectors, tokens


def _sentence_rows(
    u: np.ndarray, tokens: np.ndarray, src: tuple[np.ndarray, np.ndarray]
) -> tuple[list[float], np.ndarray]:
    """SENT_FEATURES and the pair vector of one response sentence."""
    cos = src[0] @ u
    top = np.sort(cos)[::-1]
    best = src[0][int(np.argmax(cos))]
    token_best = (tokens @ src[1].T).max(axis=1)
    features = [
        1.0 - float(top[0]),
        1.0 - float(top[:2].mean()),
        1.0 - float(token_best.mean()),
        1.0 - float(token_best.min()),
        1.0 - float(np.percentile(token_best, 10)),
    ]
    return features, np.concatenate([u * best, np.abs(u - best)])


def embed(data: RagtruthData, model_dir: Path, cache: Path, tasks: Sequence[str]) -> None:
    """Compute the embedding features of the records of ``tasks``; write numbers only to ``cache``.

    Sentence rows keep the index of their record in ``data.records`` (``owner``); ``doc`` has one
    entry per record, NaN for records of other task types.
    """
    encoder = Encoder(model_dir)
    wanted = [i for i, r in enumerate(data.records) if r.task_type in tasks]
    t0 = time.process_time()
    sources = {
        sid: _source_side(encoder, " ".join(data.contexts[sid]))
        for sid in dict.fromkeys(data.records[i].source_id for i in wanted)
    }
    t_source = time.process_time() - t0
    rows: list[list[float]] = []
    pairs: list[np.ndarray] = []
    owner: list[int] = []
    doc = np.full(len(data.records), np.nan)
    t1 = time.process_time()
    for i in wanted:
        record = data.records[i]
        src = sources[record.source_id]
        texts = [record.response[a:b] for a, b in sentence_spans(record.response)]
        encoded = encoder.encode(texts) if texts else []
        for u, tokens in encoded:
            features, pair = _sentence_rows(u, tokens, src)
            rows.append(features)
            pairs.append(pair)
            owner.append(i)
        if encoded:
            mean = _unit(np.mean([u for u, _ in encoded], axis=0))
            doc[i] = 1.0 - float(mean @ _unit(src[0].mean(axis=0)))
        else:
            doc[i] = 1.0
    t_response = time.process_time() - t1
    np.savez_compressed(
        cache,
        sentence=np.asarray(rows, dtype=np.float64),
        pair=np.asarray(pairs, dtype=np.float32),
        owner=np.asarray(owner, dtype=np.int64),
        doc=doc,
        cpu_s=np.array([t_source, t_response]),
        n_records=np.array([len(data.records)]),
    )
    print(
        f"embedded {len(wanted)} responses ({len(rows)} sentences, {len(sources)} sources): "
        f"sources {t_source:.1f} CPU-s, responses {t_response:.1f} CPU-s"
    )


def cost(data: RagtruthData, model_dir: Path, n: int) -> None:
    """CPU seconds per response (one thread), embedding features vs the lexical scorer.

    The first ``n`` Summary responses, each scored against its uncached source, both in this
    process; the lexical reference is ``index_context`` + ``score_response``.
    """
    encoder = Encoder(model_dir)
    records = [r for r in data.records if r.task_type == "Summary"][:n]
    encoder.encode(["warm up"])
    t0 = time.process_time()
    for r in records:
        src = _source_side(encoder, " ".join(data.contexts[r.source_id]))
        texts = [r.response[a:b] for a, b in sentence_spans(r.response)]
        for u, tokens in encoder.encode(texts):
            _sentence_rows(u, tokens, src)
    t_embed = time.process_time() - t0
    t1 = time.process_time()
    for _ in range(10):
        for r in records:
            score_response(r.response, index_context(data.contexts[r.source_id]))
    t_lexical = (time.process_time() - t1) / 10
    print(
        f"{len(records)} Summary responses, source uncached: embedding {1e3 * t_embed / n:.1f} "
        f"CPU-ms/response, lexical {1e3 * t_lexical / n:.2f} CPU-ms/response, "
        f"ratio {t_embed / t_lexical:.0f}"
    )


# --------------------------------------------------------------------------------------------
# step 2: evaluate (numpy only)


class Evaluation:
    """Seed-0 figures and the AUC over fold seeds of one scored variant."""

    def __init__(self, auc0: float, gain: Any, aucs: list[float]) -> None:
        self.auc0, self.gain, self.aucs = auc0, gain, aucs


def _oof(
    x: np.ndarray, y: np.ndarray, sources: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold probabilities and flags of a logistic combiner (5 source-grouped folds)."""
    fold = np.array([fold_of(s, seed, 5) for s in sources])
    score = np.zeros(len(y))
    flags = np.zeros(len(y), dtype=bool)
    names = [f"f{j}" for j in range(x.shape[1])]
    for f in range(5):
        train = fold != f
        model = fit_logistic(np.ascontiguousarray(x[train]), y[train], names)
        threshold = calibrate_threshold(model.score(np.ascontiguousarray(x[train])), y[train])
        score[~train] = model.score(np.ascontiguousarray(x[~train]))
        flags[~train] = score[~train] >= threshold
    return score, flags


def evaluate_combiner(x: np.ndarray, records: Sequence[RagtruthRecord]) -> Evaluation:
    """Within-generator AUC and F1 gain interval of a combiner over ``x`` (n, k), as the bench."""
    y = np.array([r.unsupported for r in records])
    sources = np.array([r.source_id for r in records])
    models = np.array([r.model for r in records])
    aucs = []
    gain = None
    for seed in SEEDS:
        score, flags = _oof(x, y, sources, seed)
        aucs.append(within_group_auc(score, y, models) or float("nan"))
        if seed == 0:
            rng = np.random.default_rng(BOOTSTRAP_SEED)
            gain = gain_interval(flags, y, sources, rng, n_resamples=N_RESAMPLES)
    return Evaluation(aucs[0], gain, aucs)


def _sentence_head_scores(
    x: np.ndarray, y: np.ndarray, owner: np.ndarray, records: Sequence[RagtruthRecord], seed: int
) -> np.ndarray:
    """Per-response max and mean of a sentence-level span model, out of fold, shape (n, 2)."""
    fold = np.array([fold_of(r.source_id, seed, 5) for r in records])[owner]
    p = np.zeros(len(y))
    names = [f"s{j}" for j in range(x.shape[1])]
    for f in range(5):
        train = fold != f
        model = fit_logistic(np.ascontiguousarray(x[train]), y[train], names)
        p[~train] = model.score(np.ascontiguousarray(x[~train]))
    return _aggregate(p[:, None], owner, len(records))


def _aggregate(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per-response max and mean of each column of ``values`` (u, k) -> (n, 2k)."""
    k = values.shape[1]
    top = np.full((n, k), -np.inf)
    np.maximum.at(top, owner, values)
    top[np.isinf(top)] = 0.0
    total = np.zeros((n, k))
    np.add.at(total, owner, values)
    mean = total / np.maximum(np.bincount(owner, minlength=n), 1)[:, None]
    return np.hstack([top, mean])


def _head_evaluation(
    unit_x: np.ndarray,
    unit_y: np.ndarray,
    owner: np.ndarray,
    records: Sequence[RagtruthRecord],
    extra: np.ndarray,
    l2: float = 1.0,
    seeds: Sequence[int] = SEEDS,
) -> Evaluation:
    """Stacked: sentence head (fitted on the training folds' span labels) + ``extra`` columns.

    The sentence head is refitted inside each fold seed, and the response combiner over its
    max/mean and ``extra`` is fitted on the same training folds (nested: the head's
    probabilities for the training rows come from an inner 5-fold split of the training sources).
    """
    y = np.array([r.unsupported for r in records])
    sources = np.array([r.source_id for r in records])
    models = np.array([r.model for r in records])
    aucs, gain = [], None
    for seed in seeds:
        fold = np.array([fold_of(s, seed, 5) for s in sources])
        score = np.zeros(len(y))
        flags = np.zeros(len(y), dtype=bool)
        for f in range(5):
            test = fold == f
            head = _nested_head(unit_x, unit_y, owner, records, (fold, f, seed), l2)
            x = np.hstack([head, extra])
            names = [f"f{j}" for j in range(x.shape[1])]
            model = fit_logistic(np.ascontiguousarray(x[~test]), y[~test], names)
            t = calibrate_threshold(model.score(np.ascontiguousarray(x[~test])), y[~test])
            score[test] = model.score(np.ascontiguousarray(x[test]))
            flags[test] = score[test] >= t
        aucs.append(within_group_auc(score, y, models) or float("nan"))
        if seed == 0:
            gain = gain_interval(
                flags, y, sources, np.random.default_rng(BOOTSTRAP_SEED), n_resamples=N_RESAMPLES
            )
    return Evaluation(aucs[0], gain, aucs)


def _nested_head(
    unit_x: np.ndarray,
    unit_y: np.ndarray,
    owner: np.ndarray,
    records: Sequence[RagtruthRecord],
    where: tuple[np.ndarray, int, int],
    l2: float,
) -> np.ndarray:
    """Head max/mean per response: test fold from a head fitted on all other folds; training
    rows from an inner split of the training folds (so the combiner never sees in-sample
    head probabilities)."""
    fold, f, seed = where
    unit_fold = fold[owner]
    names = [f"s{j}" for j in range(unit_x.shape[1])]
    p = np.zeros(len(unit_y))
    train_units = unit_fold != f
    model = fit_logistic(np.ascontiguousarray(unit_x[train_units]), unit_y[train_units], names, l2)
    p[~train_units] = model.score(np.ascontiguousarray(unit_x[~train_units]))
    inner = np.array([fold_of(r.source_id, 1000 + seed, 4) for r in records])[owner]
    for g in range(4):
        fit_rows = train_units & (inner != g)
        score_rows = train_units & (inner == g)
        if not score_rows.any():
            continue
        m = fit_logistic(np.ascontiguousarray(unit_x[fit_rows]), unit_y[fit_rows], names, l2)
        p[score_rows] = m.score(np.ascontiguousarray(unit_x[score_rows]))
    return _aggregate(p[:, None], owner, len(records))


def _lexical(data: RagtruthData, records: Sequence[RagtruthRecord]) -> np.ndarray:
    """CONTENT_FEATURES of ``records`` (the bench's ``combined_content`` inputs)."""
    indexes = {r.source_id: index_context(data.contexts[r.source_id]) for r in records}
    parsed = {r.source_id: parse_record(data.contexts[r.source_id]) for r in records}
    full = np.array(
        [response_features(r.response, indexes[r.source_id], parsed[r.source_id]) for r in records]
    )
    return np.ascontiguousarray(full[:, [FEATURES.index(f) for f in CONTENT_FEATURES]])


def _span_labels(records: Sequence[RagtruthRecord]) -> np.ndarray:
    labels = []
    for r in records:
        for a, b in sentence_spans(r.response):
            labels.append(any(s < b and e > a for s, e in r.unsupported_spans))
    return np.array(labels, dtype=bool)


def _lexical_sentences(data: RagtruthData, records: Sequence[RagtruthRecord]) -> np.ndarray:
    """``groundedness_spans.SENTENCE_FEATURES`` of every response sentence, in unit order."""
    from groundedness_attempts import _idf

    texts = {r.source_id: " ".join(data.contexts[r.source_id]) for r in records}
    aligned = {sid: AlignedSource(t) for sid, t in texts.items()}
    units, _ = build_units(records, aligned, _idf(list(texts.values())))
    return units.x


def task_rows(
    data: RagtruthData, cache: dict[str, np.ndarray], task: str, pair_head: bool = False
) -> list[tuple[str, Evaluation | float]]:
    """Every variant of one task type: (name, Evaluation) or (name, unfitted AUC)."""
    index = [i for i, r in enumerate(data.records) if r.task_type == task]
    records = [data.records[i] for i in index]
    if np.isnan(cache["doc"][index]).any():
        raise SystemExit(f"the cache was not embedded for {task} (embed --tasks {task})")
    where = {old: new for new, old in enumerate(index)}
    keep = np.isin(cache["owner"], index)
    owner = np.array([where[o] for o in cache["owner"][keep]])
    sent = cache["sentence"][keep]
    pair = cache["pair"][keep].astype(np.float64)
    y = np.array([r.unsupported for r in records])
    models = np.array([r.model for r in records])
    per_response = np.hstack([_aggregate(sent, owner, len(records)), cache["doc"][index][:, None]])
    names = [f"max_{n}" for n in SENT_FEATURES] + [f"mean_{n}" for n in SENT_FEATURES] + ["doc_gap"]
    rows: list[tuple[str, Evaluation | float]] = [
        (f"{name} alone (not fitted)", within_group_auc(per_response[:, j], y, models) or 0.0)
        for j, name in enumerate(names)
    ]
    content = _lexical(data, records)
    source_words = np.array([len(" ".join(data.contexts[r.source_id]).split()) for r in records])
    response_words = np.array([max(len(r.response.split()), 1) for r in records])
    lengths = np.column_stack([np.log(source_words), np.log(response_words / source_words)])
    rows.append(
        ("log source words alone (not fitted)", within_group_auc(lengths[:, 0], y, models) or 0.0)
    )
    rows.append(
        (
            "CONTENT_FEATURES + log source words + log length ratio",
            evaluate_combiner(np.hstack([content, lengths]), records),
        )
    )
    rows.append(
        ("CONTENT_FEATURES (= bench combined_content)", evaluate_combiner(content, records))
    )
    rows.append(("embedding features only", evaluate_combiner(per_response, records)))
    both = np.hstack([content, per_response])
    rows.append(("CONTENT_FEATURES + embedding features", evaluate_combiner(both, records)))
    labels = _span_labels(records)
    lexical_units = _lexical_sentences(data, records)
    assert len(labels) == len(sent) == len(lexical_units), "sentence units out of step"
    rows.append(
        (
            "sentence head (lexical sentence features only, spans) + CONTENT_FEATURES",
            _head_evaluation(lexical_units, labels, owner, records, content),
        )
    )
    head_x = np.hstack([sent, lexical_units])
    rows.append(
        (
            "sentence head (embedding + lexical sentence features, spans) + CONTENT_FEATURES",
            _head_evaluation(head_x, labels, owner, records, content),
        )
    )
    if not pair_head:
        return rows
    rows.append(
        (
            "sentence head on pair vectors [u*v, |u-v|] (spans) + CONTENT_FEATURES + embedding",
            _head_evaluation(
                np.hstack([pair, sent]), labels, owner, records, both, PAIR_L2, PAIR_SEEDS
            ),
        )
    )
    return rows


def _cell(value: Evaluation | float) -> str:
    if isinstance(value, float):
        return f"{value:.3f} | not fitted | – | – |"
    a = np.array(value.aucs)
    g = value.gain
    return (
        f"{value.auc0:.3f} | {a.mean():.3f} [{a.min():.3f}, {a.max():.3f}] | "
        f"{100 * g.gain:+.1f} | [{100 * g.lower:+.1f}, {100 * g.upper:+.1f}] |"
    )


def evaluate(data: RagtruthData, cache_path: Path, tasks: Sequence[str], pair_head: bool) -> None:
    """Print the variants table (markdown) for ``tasks``."""
    cache = dict(np.load(cache_path))
    if int(cache["n_records"][0]) != len(data.records):
        raise SystemExit(f"{cache_path}: cache is for another RAGTruth copy")
    print(
        "| task | variant | within-generator AUC (fold seed 0) | mean [min, max] over seeds 0-9 "
        "| F1 gain (seed 0) | gain 95 % CI |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for task in tasks:
        for name, value in task_rows(data, cache, task, pair_head):
            print(f"| {task} | {name} | {_cell(value)}")


def main(argv: Sequence[str] | None = None) -> None:
    """``embed`` or ``evaluate`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["embed", "evaluate", "cost"])
    parser.add_argument("--ragtruth-dir", type=Path, default=Path("../shared/data/ragtruth"))
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("groundedness-embeddings.npz"))
    parser.add_argument("--tasks", nargs="+", default=["QA", "Summary", "Data2txt"])
    parser.add_argument("--responses", type=int, default=100, help="cost: Summary responses")
    parser.add_argument(
        "--pair-head", action="store_true", help="also the 773-column pair head (slow)"
    )
    args = parser.parse_args(argv)
    data = load_ragtruth(args.ragtruth_dir)
    if args.step in ("embed", "cost") and args.model_dir is None:
        parser.error(f"{args.step} needs --model-dir")
    if args.step == "cost":
        cost(data, args.model_dir, args.responses)
    elif args.step == "embed":
        embed(data, args.model_dir, args.cache, args.tasks)
    else:
        evaluate(data, args.cache, args.tasks, args.pair_head)


if __name__ == "__main__":
    main()
