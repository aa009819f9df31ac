#!/usr/bin/env python3
"""Derive ``examples/ragtruth-generators/`` from the RAGTruth sample in ``../shared/data/ragtruth``.

The example asks: may one of five generator models replace ``gpt-4-0613`` as the generator of a
RAG system, judged on RAGTruth's human hallucination annotations and on modeled cost?

Inputs (read-only): ``sample_response.jsonl.gz`` and ``sample_source_info.jsonl.gz`` (see that
folder's README for their provenance; RAGTruth is MIT-licensed, the passages carry their own terms).

Outputs (the example directory; only hashes, labels, counts and metrics — no passage, question or
response text):

- ``contract.yaml``: the release contract.
- ``evidence/quality.csv``: one row per response (policy × example), wide layout.
- ``evidence/telemetry.parquet``: one row per request (one request per response), modeled cost.
- ``policies/<model>.json``: one small config per policy.
- ``DERIVATION.json``: input hashes, counts, pairing coverage, per-model rates, prices and sources.

Rules (all documented again in ``examples/README.md``):

- ``example_id`` = first 16 hex chars of ``sha256("ragtruth:" + source_id)``; ``source_group`` is
  the same value (the source is the cluster); the slice is RAGTruth's ``task_type``.
- split: ``int(sha256("split:" + source_id), 16) % 2 == 0`` → ``development``, else
  ``confirmatory``.
- ``no_hallucination`` = 1.0 when the response has no label whose ``implicit_true`` is false, else
  0.0; ``hallucinated_spans`` counts those labels. ``implicit_true`` spans (correct but not in the
  context) are not hallucinations; ``due_to_null`` spans (hallucinations caused by a null field in
  the Data2txt JSON) are kept as hallucinations, as RAGTruth's own response-level counts do.
- tokens (estimated, never stored as text): ``ceil(len(text) / 4)`` characters per token, OpenAI's
  rule of thumb for English, of the prompt rebuilt from RAGTruth's published templates and of the
  response. ``cost_usd`` = tokens × published list price per 1M tokens: modeled, not billed.

Run from the repository root::

    .venv/bin/python scripts/derive_ragtruth_example.py \
        --ragtruth-dir ../shared/data/ragtruth --output examples/ragtruth-generators

Two runs give byte-identical files (same pyarrow version for the Parquet file).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RAGTRUTH_DIR = REPO_ROOT.parent / "shared" / "data" / "ragtruth"
DEFAULT_OUTPUT = REPO_ROOT / "examples" / "ragtruth-generators"

RESPONSE_FILE = "sample_response.jsonl.gz"
SOURCE_FILE = "sample_source_info.jsonl.gz"

CONTRACT_ID = "ragtruth-generators"
CONTRACT_VERSION = "1.0.0"
SEED = 20261129

BASELINE = "gpt-4-0613"
MODELS: tuple[str, ...] = (
    "gpt-4-0613",
    "gpt-3.5-turbo-0613",
    "mistral-7B-instruct",
    "llama-2-7b-chat",
    "llama-2-13b-chat",
    "llama-2-70b-chat",
)
TASKS: tuple[str, ...] = ("QA", "Summary", "Data2txt")
SPLITS: tuple[str, ...] = ("development", "confirmatory")

CHARS_PER_TOKEN = 4
TOKEN_RULE = (
    "tokens_est = ceil(characters / 4): OpenAI's rule of thumb that one token is about four "
    "characters of English text (OpenAI pricing FAQ, https://openai.com/api/pricing/: 'For English "
    "text, 1 token is approximately 4 characters or 0.75 words'; OpenAI Help Center, 'What are "
    "tokens and how to count them?')"
)

_OPENAI_GPT4 = (
    "OpenAI, 'GPT-4' (2023-03-14, https://openai.com/research/gpt-4): gpt-4 8K context "
    "$0.03 per 1K prompt tokens, $0.06 per 1K completion tokens; unchanged for gpt-4-0613 on "
    "https://openai.com/pricing through 2023"
)
_OPENAI_GPT35 = (
    "OpenAI, 'Function calling and other API updates' (2023-06-13, "
    "https://openai.com/index/function-calling-and-other-api-updates/): gpt-3.5-turbo (4K) "
    "$0.0015 per 1K input tokens, $0.002 per 1K output tokens, the price of gpt-3.5-turbo-0613"
)
_TOGETHER = (
    "Together AI serverless inference list prices by model size, https://www.together.ai/pricing, "
    "as of January-February 2024 (same price for input and output tokens): 4.1B-8B $0.20, "
    "8.1B-21B $0.30, 41.1B-80B $0.90 per 1M tokens; captured in the public snapshots "
    "hlydecker/llm-cost-calculator llm_data.csv (Hugging Face Space) and "
    "bardsai/performance-llm-board data/2024-02-05 model_costs.csv (llama-2-70b-chat $0.9 / 1M)"
)


@dataclass(frozen=True)
class PolicyConfig:
    """The configuration of one generator policy.

    Attributes:
        model: RAGTruth's model id (the policy id).
        model_id: the provider's model identifier.
        provider: who serves it at the modeled price.
        prompt_template: the RAGTruth prompt template id (``ragtruth-v1``, optionally wrapped in
            the Llama/Mistral ``[INST]`` chat format).
        input_usd_per_1m_tokens, output_usd_per_1m_tokens: list prices, USD per 1M tokens.
        price_source: where the prices come from, with a date.
    """

    model: str
    model_id: str
    provider: str
    prompt_template: str
    input_usd_per_1m_tokens: float
    output_usd_per_1m_tokens: float
    price_source: str


POLICIES: dict[str, PolicyConfig] = {
    "gpt-4-0613": PolicyConfig(
        "gpt-4-0613", "gpt-4-0613", "OpenAI API", "ragtruth-v1", 30.0, 60.0, _OPENAI_GPT4
    ),
    "gpt-3.5-turbo-0613": PolicyConfig(
        "gpt-3.5-turbo-0613",
        "gpt-3.5-turbo-0613",
        "OpenAI API",
        "ragtruth-v1",
        1.5,
        2.0,
        _OPENAI_GPT35,
    ),
    "mistral-7B-instruct": PolicyConfig(
        "mistral-7B-instruct",
        "mistralai/Mistral-7B-Instruct-v0.1",
        "Together AI",
        "ragtruth-v1+inst",
        0.2,
        0.2,
        _TOGETHER,
    ),
    "llama-2-7b-chat": PolicyConfig(
        "llama-2-7b-chat",
        "meta-llama/Llama-2-7b-chat-hf",
        "Together AI",
        "ragtruth-v1+inst",
        0.2,
        0.2,
        _TOGETHER,
    ),
    "llama-2-13b-chat": PolicyConfig(
        "llama-2-13b-chat",
        "meta-llama/Llama-2-13b-chat-hf",
        "Together AI",
        "ragtruth-v1+inst",
        0.3,
        0.3,
        _TOGETHER,
    ),
    "llama-2-70b-chat": PolicyConfig(
        "llama-2-70b-chat",
        "meta-llama/Llama-2-70b-chat-hf",
        "Together AI",
        "ragtruth-v1+inst",
        0.9,
        0.9,
        _TOGETHER,
    ),
}

# One-line price citations for policies/*.json (the full ones are in DERIVATION.json).
_SHORT_SOURCE: dict[str, str] = {
    "gpt-4-0613": "OpenAI, openai.com/research/gpt-4 (2023-03-14): $0.03/1K in, $0.06/1K out",
    "gpt-3.5-turbo-0613": (
        "OpenAI, 'Function calling and other API updates' (2023-06-13): "
        "$0.0015/1K in, $0.002/1K out"
    ),
    "mistral-7B-instruct": "Together AI list price, 4.1B-8B tier, Jan-Feb 2024",
    "llama-2-7b-chat": "Together AI list price, 4.1B-8B tier, Jan-Feb 2024",
    "llama-2-13b-chat": "Together AI list price, 8.1B-21B tier, Jan-Feb 2024",
    "llama-2-70b-chat": "Together AI list price, 41.1B-80B tier, Jan-Feb 2024",
}

# RAGTruth's prompt templates, from ParticleMedia/RAGTruth README.md (source_info.jsonl `prompt`
# samples). Used only to count characters; the prompt text is never written anywhere.
_QA_TEMPLATE = (
    "Briefly answer the following question:\n{question}\n"
    "Bear in mind that your response should be strictly based on the following {n} passages:\n"
    "{passages}"
    "In case the passages do not contain the necessary information to answer the question, "
    'please reply with: "Unable to answer based on given passages."\noutput:'
)
# The word limit N differs per source upstream and is not in the sample; a 3-digit placeholder
# keeps the character count within a few characters of the real prompt.
_SUMMARY_TEMPLATE = "Summarize the following news within {n} words:\n{article}\n\noutput:"
_SUMMARY_WORD_LIMIT_PLACEHOLDER = "100"
_DATA2TXT_TEMPLATE = (
    "Instruction:\nWrite an objective overview about the following local business based only on "
    "the provided structured data in the JSON format. You should include details and cover the "
    "information mentioned in the customers' review. The overview should be 100 - 200 words. "
    "Don't make up information. Structured data:\n{data}\nOverview:"
)
_INST_WRAPPER = "<s>[INST] {prompt} [/INST]"
_NUMBER_WORDS = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
}


def sha256_hex(text: str) -> str:
    """Return the hex sha256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def example_id_of(source_id: str) -> str:
    """Return the example id of a RAGTruth source: ``sha256("ragtruth:" + source_id)[:16]``."""
    return sha256_hex("ragtruth:" + source_id)[:16]


def split_of(source_id: str) -> str:
    """Return the split of a source: ``development`` or ``confirmatory``.

    ``development`` exactly when ``int(sha256("split:" + source_id), 16)`` is even.
    """
    return "development" if int(sha256_hex("split:" + source_id), 16) % 2 == 0 else "confirmatory"


def request_id_of(source_id: str, model: str) -> str:
    """Return the request id of one response.

    ``sha256("request:" + source_id + ":" + model)[:16]``.
    """
    return sha256_hex(f"request:{source_id}:{model}")[:16]


def build_prompt(task_type: str, source_info: Any, model: str) -> str:
    """Rebuild, approximately, the prompt RAGTruth sent for one source (for counting only).

    Args:
        task_type: ``QA``, ``Summary`` or ``Data2txt``.
        source_info: ``{question, passages}`` (QA), the article (Summary), the business dict
            (Data2txt).
        model: the generator; Llama-2 and Mistral prompts are wrapped in ``<s>[INST] … [/INST]``
            as RAGTruth's README states.

    Returns:
        The prompt text. Data2txt data is rendered with Python's ``str(dict)`` as in RAGTruth's
        published prompt sample.

    Raises:
        ValueError: an unknown task type.
    """
    if task_type == "QA":
        passages = source_info["passages"]
        n = passages.count("passage ") or 1
        prompt = _QA_TEMPLATE.format(
            question=source_info["question"], n=_NUMBER_WORDS.get(n, str(n)), passages=passages
        )
    elif task_type == "Summary":
        prompt = _SUMMARY_TEMPLATE.format(n=_SUMMARY_WORD_LIMIT_PLACEHOLDER, article=source_info)
    elif task_type == "Data2txt":
        prompt = _DATA2TXT_TEMPLATE.format(data=str(source_info))
    else:
        raise ValueError(f"unknown task type {task_type!r}")
    if POLICIES[model].prompt_template.endswith("+inst"):
        prompt = _INST_WRAPPER.format(prompt=prompt)
    return prompt


def estimate_tokens(text: str) -> int:
    """Return ``ceil(len(text) / 4)``, the estimated token count of ``text`` (``TOKEN_RULE``)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def hallucination_of(labels: Sequence[Mapping[str, Any]]) -> tuple[float, int]:
    """Return ``(no_hallucination, hallucinated_spans)`` for one response's RAGTruth labels.

    A label counts as a hallucination unless its ``implicit_true`` is true. ``due_to_null`` labels
    count (they are annotated hallucinations caused by a null value in the structured data).
    """
    spans = sum(1 for lab in labels if not lab.get("implicit_true", False))
    return (1.0 if spans == 0 else 0.0), spans


def modeled_cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """Return the modeled cost in USD: tokens × list price per 1M tokens (not a billed amount)."""
    cfg = POLICIES[model]
    return (
        input_tokens * cfg.input_usd_per_1m_tokens + output_tokens * cfg.output_usd_per_1m_tokens
    ) / 1_000_000


def _read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Row:
    """One response, reduced to what the example keeps (no text)."""

    source_id: str
    example_id: str
    policy_id: str
    task_type: str
    split: str
    no_hallucination: float
    hallucinated_spans: int
    request_id: str
    input_tokens_est: int
    output_tokens_est: int
    cost_usd: float


def derive_rows(ragtruth_dir: Path) -> list[Row]:
    """Read the RAGTruth sample and return one ``Row`` per response, in a fixed order.

    Order: task (QA, Summary, Data2txt), example id, model (``MODELS`` order).

    Raises:
        SystemExit: a response whose source is missing, an unknown model or task, or a duplicate
            (source, model).
    """
    sources = {s["source_id"]: s for s in _read_jsonl_gz(ragtruth_dir / SOURCE_FILE)}
    rows: list[Row] = []
    seen: set[tuple[str, str]] = set()
    for rec in _read_jsonl_gz(ragtruth_dir / RESPONSE_FILE):
        sid, model, task = rec["source_id"], rec["model"], rec["task_type"]
        if sid not in sources:
            raise SystemExit(f"response for source {sid} has no source record")
        if model not in POLICIES or task not in TASKS or sources[sid]["task_type"] != task:
            raise SystemExit(f"unexpected model/task {model!r}/{task!r} for source {sid}")
        if (sid, model) in seen:
            raise SystemExit(f"duplicate response for source {sid}, model {model}")
        seen.add((sid, model))
        no_hall, spans = hallucination_of(rec["labels"])
        prompt = build_prompt(task, sources[sid]["source_info"], model)
        tin, tout = estimate_tokens(prompt), estimate_tokens(rec["response"])
        rows.append(
            Row(
                source_id=sid,
                example_id=example_id_of(sid),
                policy_id=model,
                task_type=task,
                split=split_of(sid),
                no_hallucination=no_hall,
                hallucinated_spans=spans,
                request_id=request_id_of(sid, model),
                input_tokens_est=tin,
                output_tokens_est=tout,
                cost_usd=modeled_cost_usd(model, tin, tout),
            )
        )
    order = {m: i for i, m in enumerate(MODELS)}
    rows.sort(key=lambda r: (TASKS.index(r.task_type), r.example_id, order[r.policy_id]))
    ids: dict[str, str] = {}
    for r in rows:
        if ids.setdefault(r.example_id, r.source_id) != r.source_id:
            raise SystemExit(f"example id collision: {r.source_id} and {ids[r.example_id]}")
    return rows


def quality_csv(rows: Iterable[Row]) -> bytes:
    """Render ``evidence/quality.csv`` (wide layout, LF line ends, fixed float format)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "example_id",
            "policy_id",
            "source_group",
            "task_type",
            "split",
            "no_hallucination",
            "hallucinated_spans",
        ]
    )
    for r in rows:
        w.writerow(
            [
                r.example_id,
                r.policy_id,
                r.example_id,
                r.task_type,
                r.split,
                f"{r.no_hallucination:.1f}",
                r.hallucinated_spans,
            ]
        )
    return buf.getvalue().encode("utf-8")


TELEMETRY_SCHEMA = pa.schema(
    [
        pa.field("request_id", pa.string(), nullable=False),
        pa.field("example_id", pa.string(), nullable=False),
        pa.field("policy_id", pa.string(), nullable=False),
        pa.field("source_group", pa.string(), nullable=False),
        pa.field("task_type", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("input_tokens_est", pa.int64(), nullable=False),
        pa.field("output_tokens_est", pa.int64(), nullable=False),
        pa.field("cost_usd", pa.float64(), nullable=False),
    ],
    metadata={
        "ragwarrant.example": CONTRACT_ID,
        "cost_usd": "modeled, not billed: tokens_est x list price per 1M tokens "
        "(see policies/*.json)",
        "tokens_est": TOKEN_RULE,
    },
)


def telemetry_table(rows: Sequence[Row]) -> pa.Table:
    """Return the per-request telemetry table (one request per response)."""
    return pa.Table.from_pydict(
        {
            "request_id": [r.request_id for r in rows],
            "example_id": [r.example_id for r in rows],
            "policy_id": [r.policy_id for r in rows],
            "source_group": [r.example_id for r in rows],
            "task_type": [r.task_type for r in rows],
            "split": [r.split for r in rows],
            "input_tokens_est": [r.input_tokens_est for r in rows],
            "output_tokens_est": [r.output_tokens_est for r in rows],
            "cost_usd": [r.cost_usd for r in rows],
        },
        schema=TELEMETRY_SCHEMA,
    )


def telemetry_parquet(rows: Sequence[Row]) -> bytes:
    """Render ``evidence/telemetry.parquet``: one row group, zstd, no timestamps.

    The only varying metadata pyarrow writes is its own ``created_by`` version string, so the
    bytes are identical across runs with the same pyarrow.
    """
    sink = pa.BufferOutputStream()
    pq.write_table(
        telemetry_table(rows),
        sink,
        compression="zstd",
        row_group_size=1 << 20,
        use_dictionary=True,
        write_statistics=True,
    )
    return sink.getvalue().to_pybytes()


def policy_json(model: str) -> bytes:
    """Render ``policies/<model>.json`` for one policy."""
    cfg = POLICIES[model]
    doc = {
        "policy_id": cfg.model,
        "generator": {
            "model_id": cfg.model_id,
            "provider": cfg.provider,
            "prompt_template": cfg.prompt_template,
            "temperature": None,
            "temperature_note": (
                "RAGTruth records a temperature per response (e.g. 0.925 in its README sample); "
                "the sample used here does not carry it"
            ),
        },
        "retrieval": "fixed by RAGTruth: the same passages/article/structured data for every model",
        "pricing": {
            "input_usd_per_1m_tokens": cfg.input_usd_per_1m_tokens,
            "output_usd_per_1m_tokens": cfg.output_usd_per_1m_tokens,
            "source": _SHORT_SOURCE[model],
            "note": "list prices used to model cost; modeled, not billed",
        },
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def contract_yaml() -> bytes:
    """Render ``contract.yaml``: the release contract of the example."""
    candidates = "\n".join(
        f"  - policy_id: {m}\n    config: policies/{m}.json" for m in MODELS if m != BASELINE
    )
    prices = "\n".join(
        f"  {m}: {{input_usd_per_1m_tokens: {POLICIES[m].input_usd_per_1m_tokens}, "
        f"output_usd_per_1m_tokens: {POLICIES[m].output_usd_per_1m_tokens}}}"
        for m in MODELS
    )
    slices = "\n".join(f"  - value: {t}\n    margin_abs: 0.10\n    min_paired_n: 30" for t in TASKS)
    text = f"""\
# Release contract of the RAGTruth example (derived by scripts/derive_ragtruth_example.py).
# Policies are RAGTruth's six generator models answering the same sources; quality is RAGTruth's
# human hallucination annotation; cost is modeled from estimated tokens x list prices (not billed).
# See examples/README.md.
schema_version: "1"
id: {CONTRACT_ID}
version: "{CONTRACT_VERSION}"
description: >-
  May a cheaper generator replace gpt-4-0613 without losing more than 5 points of
  hallucination-free responses (10 points within any task type), while costing less?
  Evidence: RAGTruth sample (ParticleMedia/RAGTruth, MIT), human span annotations.
baseline:
  policy_id: {BASELINE}
  config: policies/{BASELINE}.json
candidates:
{candidates}
evidence:
  - id: ragtruth-annotations
    path: evidence/quality.csv
    format: csv
    adapter: generic
    kind: results
    layout: wide
    columns:
      example_id: example_id
      policy_id: policy_id
      group_id: source_group
      slice: task_type
      split: split
    metrics:
      no_hallucination: no_hallucination
    evaluator: ragtruth-human-annotation
    evaluator_version: ParticleMedia/RAGTruth@c103204b
  - id: modeled-cost
    path: evidence/telemetry.parquet
    format: parquet
    adapter: generic
    kind: telemetry
    columns:
      example_id: example_id
      policy_id: policy_id
      group_id: source_group
      slice: task_type
      split: split
    reduce:
      cost_usd: {{column: cost_usd, how: sum}}
    evaluator: ragwarrant-derive-ragtruth-example
    evaluator_version: "{CONTRACT_VERSION}"
quality_metrics:
  - id: no_hallucination
    direction: higher_is_better
    scale: [0.0, 1.0]
    margin_abs: 0.05
    required: true
operational_metrics:
  - id: cost_usd
    unit: usd
    direction: lower_is_better
    statistic: mean
claims:
  join: any
  items:
    - kind: cost-reduction
      metric: cost_usd
hard_disqualifiers: []
protected_slices:
{slices}
statistics:
  alpha: 0.05
  resamples: 2000
  seed: {SEED}
  min_paired_n: 30
  min_pairing_coverage: 0.95
splits:
  development: development
  confirmatory: confirmatory
evidence_class: human-annotated
promotion_min_class: confirmatory
prices:
{prices}
"""
    return text.encode("utf-8")


def pairing_coverage(rows: Sequence[Row]) -> dict[str, dict[str, dict[str, float | int]]]:
    """Return, per candidate and split (and split × task), the pairing with the baseline.

    Keys of the inner mapping: ``development``, ``confirmatory`` and ``<task>/<split>``.
    ``coverage_of_union`` = paired / examples answered by either policy;
    ``coverage_of_baseline`` = paired / examples answered by the baseline.
    """
    by: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        by.setdefault((r.policy_id, r.split), set()).add(r.example_id)
        by.setdefault((r.policy_id, f"{r.task_type}/{r.split}"), set()).add(r.example_id)
    cells = [*SPLITS, *(f"{t}/{s}" for t in TASKS for s in SPLITS)]
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for m in MODELS:
        if m == BASELINE:
            continue
        out[m] = {}
        for s in cells:
            base, cand = by.get((BASELINE, s), set()), by.get((m, s), set())
            paired, union = len(base & cand), len(base | cand)
            out[m][s] = {
                "paired": paired,
                "baseline_examples": len(base),
                "candidate_examples": len(cand),
                "coverage_of_union": round(paired / union, 6) if union else 0.0,
                "coverage_of_baseline": round(paired / len(base), 6) if base else 0.0,
            }
    return out


def per_model_summary(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Return per model: n, hallucination-free rate and mean modeled cost, by split and task."""
    out: dict[str, dict[str, Any]] = {}
    for m in MODELS:
        mine = [r for r in rows if r.policy_id == m]

        def stats(sel: list[Row]) -> dict[str, Any]:
            n = len(sel)
            return {
                "n": n,
                "no_hallucination_rate": round(sum(r.no_hallucination for r in sel) / n, 6),
                "mean_cost_usd": round(sum(r.cost_usd for r in sel) / n, 8),
            }

        out[m] = {"all": stats(mine)}
        for s in SPLITS:
            out[m][s] = stats([r for r in mine if r.split == s])
        for t in TASKS:
            out[m][t] = stats([r for r in mine if r.task_type == t])
            for s in SPLITS:
                out[m][f"{t}/{s}"] = stats([r for r in mine if r.task_type == t and r.split == s])
    return out


def _due_to_null_only(ragtruth_dir: Path) -> dict[str, int]:
    """Count, per model, responses whose only non-``implicit_true`` labels are ``due_to_null``.

    These are the responses whose ``no_hallucination`` would flip to 1.0 if null-value
    hallucinations were not counted (a sensitivity figure for the README).
    """
    out = {m: 0 for m in MODELS}
    for rec in _read_jsonl_gz(ragtruth_dir / RESPONSE_FILE):
        real = [lab for lab in rec["labels"] if not lab.get("implicit_true", False)]
        if real and all(lab.get("due_to_null", False) for lab in real):
            out[rec["model"]] += 1
    return out


def derivation_json(rows: Sequence[Row], ragtruth_dir: Path) -> bytes:
    """Render ``DERIVATION.json``: inputs, rules, counts, coverage, per-model summary, prices."""
    split_sources: dict[str, dict[str, int]] = {s: {t: 0 for t in TASKS} for s in SPLITS}
    for _sid, task, s in sorted({(r.source_id, r.task_type, r.split) for r in rows}):
        split_sources[s][task] += 1
    doc = {
        "example": CONTRACT_ID,
        "derived_by": "scripts/derive_ragtruth_example.py",
        "inputs": {
            name: {"sha256": _file_sha256(ragtruth_dir / name)}
            for name in (RESPONSE_FILE, SOURCE_FILE)
        },
        "upstream": "ParticleMedia/RAGTruth@c103204b (records via vectara/FaithJudge@22f7b4d5); "
        "see ../shared/data/ragtruth/README.md",
        "licence": "RAGTruth: MIT (c) 2023 Particle Media; passages derive from CNN/DailyMail, "
        "MS MARCO, Yelp Open Dataset and news sources, which carry their own terms. Only hashes, "
        "labels, counts and metrics are stored here.",
        "rules": {
            "example_id": 'sha256("ragtruth:" + source_id)[:16]',
            "source_group": "= example_id (the source is the cluster)",
            "split": 'int(sha256("split:" + source_id), 16) % 2 == 0 -> development, '
            "else confirmatory",
            "request_id": 'sha256("request:" + source_id + ":" + model)[:16]',
            "no_hallucination": "1.0 if no label has implicit_true false, else 0.0 "
            "(due_to_null labels count as hallucinations)",
            "hallucinated_spans": "number of labels with implicit_true false",
            "tokens_est": TOKEN_RULE,
            "prompt": "RAGTruth README prompt templates (QA, Summary with a 3-digit word limit "
            "placeholder, Data2txt with str(dict)); <s>[INST] ... [/INST] for Llama-2 and Mistral",
            "cost_usd": "input_tokens_est * input price + output_tokens_est * output price, per 1M "
            "tokens; modeled, not billed",
        },
        "counts": {
            "responses": len(rows),
            "sources": len({r.source_id for r in rows}),
            "sources_by_split_and_task": split_sources,
            "responses_by_model": {m: sum(1 for r in rows if r.policy_id == m) for m in MODELS},
        },
        "pairing_coverage_vs_baseline": pairing_coverage(rows),
        "responses_hallucinated_only_by_due_to_null": _due_to_null_only(ragtruth_dir),
        "per_model": per_model_summary(rows),
        "prices_usd_per_1m_tokens": {
            m: {
                "input": POLICIES[m].input_usd_per_1m_tokens,
                "output": POLICIES[m].output_usd_per_1m_tokens,
                "provider": POLICIES[m].provider,
                "source": POLICIES[m].price_source,
            }
            for m in MODELS
        },
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def render(ragtruth_dir: Path) -> dict[str, bytes]:
    """Return every file of the example as ``relative path → bytes``."""
    rows = derive_rows(ragtruth_dir)
    files = {
        "contract.yaml": contract_yaml(),
        "evidence/quality.csv": quality_csv(rows),
        "evidence/telemetry.parquet": telemetry_parquet(rows),
        "DERIVATION.json": derivation_json(rows, ragtruth_dir),
    }
    for m in MODELS:
        files[f"policies/{m}.json"] = policy_json(m)
    return files


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_example(ragtruth_dir: Path, output: Path) -> dict[str, bytes]:
    """Derive the example and write it under ``output`` (atomically, file by file)."""
    files = render(ragtruth_dir)
    for rel, data in files.items():
        _write_atomic(output / rel, data)
    return files


# --- examples/ragtruth-judge-labels: a judge on every response, human labels on a sample ---

JUDGE_OUTPUT = REPO_ROOT / "examples" / "ragtruth-judge-labels"
JUDGE_CANDIDATE = "llama-2-70b-chat"
JUDGE_ACCURACY, JUDGE_BIAS, JUDGE_SEED = 0.90, 0.70, 20261205
LABELS_N, LABELS_SEED = 100, 7


def judge_scores(rows: Sequence[Row]) -> list[float]:
    """A simulated judge's 0/1 no-hallucination score for each row (fixed order, fixed seed).

    The judge reports the human label with probability ``JUDGE_ACCURACY``, else its opposite,
    and then, favouring the candidate, turns a candidate's 0 into 1 with probability
    ``JUDGE_BIAS``: the judge of ``bench/validity_ppi.py``, here on RAGTruth's real labels.
    """
    import numpy as np

    rng = np.random.default_rng(JUDGE_SEED)
    scores = []
    for r in rows:
        wrong, lenient = rng.random(), rng.random()
        score = r.no_hallucination if wrong < JUDGE_ACCURACY else 1.0 - r.no_hallucination
        if r.policy_id == JUDGE_CANDIDATE and score == 0.0 and lenient < JUDGE_BIAS:
            score = 1.0
        scores.append(score)
    return scores


def judge_quality_csv(rows: Sequence[Row]) -> bytes:
    """``evidence/quality.csv`` of the judge example: the judge's score, not the human label."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["example_id", "policy_id", "source_group", "task_type", "split", "judge_score"])
    for r, score in zip(rows, judge_scores(rows), strict=True):
        w.writerow([r.example_id, r.policy_id, r.example_id, r.task_type, r.split, f"{score:.1f}"])
    return buf.getvalue().encode("utf-8")


def judge_contract_yaml() -> bytes:
    """The judge example's contract: the generators' one with one candidate, the judge's
    scores as the quality evidence and the reviewers' labels named on the metric."""
    text = contract_yaml().decode("utf-8")
    start, end = text.index("candidates:\n"), text.index("evidence:\n")
    text = (
        text[:start]
        + f"candidates:\n  - policy_id: {JUDGE_CANDIDATE}\n"
        + f"    config: policies/{JUDGE_CANDIDATE}.json\n"
        + text[end:]
    )
    replacements = {
        "# Release contract of the RAGTruth example": "# Judge + human-labels RAGTruth example",
        f"id: {CONTRACT_ID}\n": "id: ragtruth-judge-labels\n",
        "May a cheaper generator replace": f"May {JUDGE_CANDIDATE} replace",
        "Evidence: RAGTruth sample (ParticleMedia/RAGTruth, MIT), human span annotations.": (
            "Evidence: a simulated judge biased toward the candidate on every response of the "
            f"RAGTruth sample, and RAGTruth's human annotations on {LABELS_N} randomly drawn pairs."
        ),
        "      no_hallucination: no_hallucination\n": "      judge_score: no_hallucination\n",
        "evaluator: ragtruth-human-annotation\n"
        "    evaluator_version: ParticleMedia/RAGTruth@c103204b": (
            f"evaluator: simulated-judge-acc{JUDGE_ACCURACY}-bias{JUDGE_BIAS}\n"
            f'    evaluator_version: "{CONTRACT_VERSION}"'
        ),
        "    required: true\n": (
            "    required: true\n"
            "    human_labels: {queue: review/queue.json, file: review/labels.csv}\n"
        ),
        "evidence_class: human-annotated": "evidence_class: confirmatory",
    }
    for old, new in replacements.items():
        if old not in text:
            raise SystemExit(f"judge contract: {old!r} not in the generators' contract")
        text = text.replace(old, new, 1)
    return text.encode("utf-8")


def labels_csv(queue_json: bytes, rows: Sequence[Row]) -> bytes:
    """The reviewers' labels for a drawn queue: RAGTruth's human label of each shown output."""
    human = {(r.example_id, r.policy_id): r.no_hallucination for r in rows}
    queue = json.loads(queue_json)
    policy = {"baseline": queue["baseline"], "candidate": queue["candidate"]}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item_id", "label_a", "label_b"])
    for item in queue["items"]:
        a, b = (human[(item["example_id"], policy[role])] for role in item["shown"])
        w.writerow([item["item_id"], f"{a:.1f}", f"{b:.1f}"])
    return buf.getvalue().encode("utf-8")


def write_judge_example(ragtruth_dir: Path, output: Path) -> None:
    """Write ``examples/ragtruth-judge-labels``: contract, judge evidence, cost telemetry, then
    the queue drawn by ``ragwarrant review sample`` and the labels that answer it."""
    from ragwarrant.cli import main as ragwarrant_main

    rows = [r for r in derive_rows(ragtruth_dir) if r.policy_id in (BASELINE, JUDGE_CANDIDATE)]
    files = {
        "contract.yaml": judge_contract_yaml(),
        "evidence/quality.csv": judge_quality_csv(rows),
        "evidence/telemetry.parquet": telemetry_parquet(rows),
    }
    for m in (BASELINE, JUDGE_CANDIDATE):
        files[f"policies/{m}.json"] = policy_json(m)
    for rel, data in files.items():
        _write_atomic(output / rel, data)
    queue = output / "review" / "queue.json"
    for old in (queue, queue.with_suffix(".csv"), queue.with_suffix(".html")):
        old.unlink(missing_ok=True)
    argv = ["review", "sample", "--input", str(output), "--metric", "no_hallucination"]
    argv += ["--n", str(LABELS_N), "--seed", str(LABELS_SEED), "--output", str(queue)]
    if ragwarrant_main(argv) != 0:
        raise SystemExit("ragwarrant review sample failed")
    _write_atomic(output / "review" / "labels.csv", labels_csv(queue.read_bytes(), rows))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code (0 ok, 66 input missing)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ragtruth-dir",
        type=Path,
        default=DEFAULT_RAGTRUTH_DIR,
        help=f"folder holding {RESPONSE_FILE} and {SOURCE_FILE} (default: %(default)s)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="example directory to write (default: %(default)s)",
    )
    parser.add_argument(
        "--judge-labels-output",
        type=Path,
        default=None,
        help=f"also write the judge + human-labels example there (e.g. {JUDGE_OUTPUT})",
    )
    args = parser.parse_args(argv)
    missing = [n for n in (RESPONSE_FILE, SOURCE_FILE) if not (args.ragtruth_dir / n).is_file()]
    if missing:
        print(f"error: {args.ragtruth_dir} lacks {', '.join(missing)}", file=sys.stderr)
        return 66
    files = write_example(args.ragtruth_dir, args.output)
    if args.judge_labels_output is not None:
        write_judge_example(args.ragtruth_dir, args.judge_labels_output)
    for rel in sorted(files):
        print(f"{hashlib.sha256(files[rel]).hexdigest()}  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
