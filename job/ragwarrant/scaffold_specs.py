"""What ``ragwarrant init`` knows of each tool's exports: ``SPECS`` and the column vocabularies.

One row per adapter says where its pairing key and policy may be, how rows pair without a key
and which metrics the tool documents as lower-is-better; the name lists below say which columns
are slices, splits, models, units and never metrics. ``scaffold`` drafts a contract from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragwarrant.adapters.ragas import ECHO_COLUMNS

Direction = Literal["higher_is_better", "lower_is_better"]
Pairing = Literal["id-column", "question-hash", "span-join"]
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet", ".json": "json"}

_IDS = ("example_id", "question_id", "sample_id", "id")


@dataclass(frozen=True)
class ToolSpec:
    """Where one tool's export keeps its pairing key and policy, and how rows pair without a key.

    Attributes:
        id_columns: columns (or ``metadata.<key>`` paths) that hold an example id, first wins.
        policy_columns: columns that hold the policy, first wins.
        without_id: the pairing when no id column is found.
        lower_is_better: metric id prefixes the tool documents as lower-is-better; every other
            named metric of a tool scores higher-is-better (``generic``: unknown, declare it).
    """

    id_columns: tuple[str, ...]
    policy_columns: tuple[str, ...]
    without_id: Pairing = "question-hash"
    lower_is_better: tuple[str, ...] | None = ()


#: One row per adapter. TruLens' ``record_id`` and LangSmith's ``id`` are one UUID per record
#: (run): they never pair, so they are not id columns.
SPECS: dict[str, ToolSpec] = {
    "generic": ToolSpec(_IDS, ("policy_id", "policy", "app_version", "model"), "id-column", None),
    "ragas": ToolSpec(_IDS, ("policy_id", "policy"), "question-hash", ("noise_sensitivity",)),
    "deepeval": ToolSpec(
        tuple(f"metadata.{c}" for c in _IDS),
        (),
        "question-hash",
        ("hallucination", "bias", "toxicity"),
    ),
    "langsmith": ToolSpec(("inputs.question_id", "inputs.example_id", "example_id"), ()),
    "phoenix": ToolSpec(_IDS, ("policy_id", "policy"), "span-join", ("hallucination", "toxicity")),
    "trulens": ToolSpec((), ("app_version",)),
    "otel": ToolSpec(_IDS, ("policy_id", "policy")),
}
SLICE_COLUMNS = ("slice", "task_type", "category", "topic", "segment")
SPLIT_COLUMNS = ("split",)
#: A generic table in long layout (one row per example and metric) names its metric in a text
#: column of the first list and holds the value in a column of the second.
METRIC_COLUMNS = ("metric", "metric_name", "metric_id")
VALUE_COLUMNS = ("value", "score")
CONFIRM_NAMES = ("confirm", "test", "holdout", "eval")
DEVELOP_NAMES = ("dev", "train", "tune", "valid")
#: Words of a Phoenix SpanEvaluations file name that do not name the evaluation.
PHOENIX_FILE_WORDS = frozenset(
    {"phoenix", "arize", "span", "spans", "evaluations", "evaluation", "evals", "eval", "baseline",
     "candidate"}
)  # fmt: skip
#: Words a file or folder name uses for a policy's role (``...-baseline.csv``, ``candidate/``).
ROLE_WORDS = ("baseline", "candidate")
#: Name parts of a count, a time or a cost: such a column is never proposed as a quality metric.
NOT_QUALITY = frozenset(
    {"cost", "usd", "latency", "duration", "time", "seconds", "ms", "tokens", "count", "calls"}
)
#: Unit of each operational metric id's last word (``contract.check_unit`` compares the same).
UNITS = {"usd": "usd", "ms": "ms", "calls": "calls", "latency": "ms", "duration": "ms"}
#: Columns that are never metrics (echoed inputs, ids, timings of the export itself).
NOT_METRICS = frozenset(
    {*ECHO_COLUMNS, "start_time_unix_nano", "end_time_unix_nano", "ts", "source_group"}
)
STUB_HEADER = (
    "# Policy config stub written by `ragwarrant init`. CHECK: describe this policy (model,\n"
    "# prompt, retrieval settings): the decision lists what differs between policies.\n"
    "# seen_in_exports: what the exports say about it (models, DeepEval hyperparameters).\n"
)
#: Columns naming the model a policy called (OTel GenAI, OpenInference / Phoenix, generic).
MODEL_COLUMNS = ("gen_ai.request.model", "attributes.llm.model_name", "model", "model_name")
#: Tolerance of the ``[0, 1]`` scale guess (floating-point sums such as BLEU's 1.0000000000000004).
SCALE_TOLERANCE = 1e-9


def spec_of(adapter: str) -> ToolSpec:
    """The adapter's row of ``SPECS`` (``generic``'s for an adapter without one)."""
    return SPECS.get(adapter, SPECS["generic"])


def is_quality(metric_id: str) -> bool:
    """Whether a metric id names a quality score (not a cost, time, token or call count)."""
    return not NOT_QUALITY.intersection(metric_id.lower().split("_"))


def guess_direction(adapter: str, metric_id: str) -> tuple[Direction | None, str]:
    """The direction a metric id most likely has, and why (None: the user must declare it)."""
    if not is_quality(metric_id):
        return "lower_is_better", "a cost, time, token or call count: lower is better"
    lower = spec_of(adapter).lower_is_better
    if lower is None:
        return None, f"unknown for a {adapter} metric: declare it"
    if metric_id.startswith(lower):
        return "lower_is_better", f"{adapter} documents {metric_id} as lower-is-better"
    return "higher_is_better", f"{adapter} scores its named metrics 0..1, higher is better"
