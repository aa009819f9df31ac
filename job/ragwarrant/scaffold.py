"""``ragwarrant init``: a first release contract drafted from the user's own exports.

Each file's tool is detected by the ``auto`` adapter's rules (``adapters.auto.detect``); its
columns are read once (``adapters._io.read_table``) to list the metrics, the pairing key, the
policies, slices and splits it holds. The draft names every metric with the direction known for
the tool's named metrics (or says that the direction is unknown), and leaves every
noninferiority margin **undeclared** (``margin_abs: null``): the contract does not validate until
the user writes one. There is no default margin: a margin is a release decision, not a setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal, cast

import jinja2
import orjson
import pyarrow as pa

from ragwarrant.adapters import auto
from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.adapters._io import looks_numeric_column, read_table, snake_metric_id
from ragwarrant.adapters.otel import DEFAULT_METRICS
from ragwarrant.adapters.ragas import ECHO_COLUMNS
from ragwarrant.contract import EvidenceSource, ReleaseContract
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError, InputError, UsageError

__all__ = ["ExportSummary", "MetricGuess", "describe_export", "draft_contract", "write_contract"]

Direction = Literal["higher_is_better", "lower_is_better"]
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet", ".json": "json"}

#: Column names read as the example id, policy, slice and split (first match wins).
ID_COLUMNS = ("example_id", "question_id", "sample_id", "id", "record_id")
POLICY_COLUMNS = ("policy_id", "policy", "app_version", "model")
SLICE_COLUMNS = ("slice", "task_type", "category", "topic", "segment")
SPLIT_COLUMNS = ("split",)
CONFIRM_NAMES = ("confirm", "test", "holdout", "eval")
DEVELOP_NAMES = ("dev", "train", "tune", "valid")
#: Operational metrics: lower is better (cost, latency, tokens, calls).
OPERATIONAL_MARKERS = ("cost", "latency", "duration", "tokens", "calls")
#: Named metrics whose direction is lower-is-better in the tool's own documentation;
#: every other named metric of these tools scores 0..1 with higher better.
LOWER_IS_BETTER = {
    "ragas": ("noise_sensitivity",),
    "deepeval": ("hallucination", "bias", "toxicity"),
    "phoenix": ("hallucination", "toxicity"),
    "trulens": (),
}
#: Columns that are never metrics (echoed inputs, ids, timings of the export itself).
NOT_METRICS = frozenset(
    {*ECHO_COLUMNS, "start_time_unix_nano", "end_time_unix_nano", "ts", "source_group"}
)


@dataclass(frozen=True)
class MetricGuess:
    """One metric column of an export, with what is known about it."""

    column: str
    metric_id: str
    kind: Literal["quality", "operational"]
    direction: Direction | None
    why: str


@dataclass(frozen=True)
class ExportSummary:
    """What ``init`` saw in one export file."""

    path: str
    format: str
    adapter: str
    detected: str
    rows: int
    metrics: list[MetricGuess]
    id_column: str | None
    policy_column: str | None
    policies: list[str]
    slice_column: str | None
    slices: list[str]
    split_column: str | None
    splits: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def kind(self) -> Literal["results", "telemetry"]:
        """``telemetry`` when the file holds operational metrics only (per-request rows)."""
        if self.metrics and all(m.kind == "operational" for m in self.metrics):
            return "telemetry"
        return "results"

    @property
    def pairing(self) -> str:
        """How rows get their example id: the id column, else the question-text hash."""
        return "id-column" if self.id_column else "question-hash"

    @property
    def source_id(self) -> str:
        """A contract source id derived from the file name."""
        return snake_metric_id(Path(self.path).stem).replace("_", "-")[:60] or "source"


def _detect(path: Path, fmt: str, display: str) -> tuple[str, str]:
    """The tool adapter that reads ``path`` (auto's rules), or ``generic`` with the reason."""
    source = EvidenceSource(id="init", path=path.name, format=fmt, adapter="auto")  # type: ignore[arg-type]
    digest = sha256_file(path)
    # detect reads only the source's format and the file; it never looks at the contract.
    request = AdapterRequest(source, path, display, digest, cast(ReleaseContract, None))
    try:
        return auto.detect(request)
    except EvidenceError as exc:
        if exc.code != "evidence-format-unknown":
            raise
        return "generic", "no tool's layout matched: read as a generic table"


def _direction(adapter: str, metric_id: str) -> tuple[Direction | None, str]:
    if any(marker in metric_id for marker in OPERATIONAL_MARKERS):
        return "lower_is_better", "cost, latency, tokens and calls: lower is better"
    lower = LOWER_IS_BETTER.get(adapter)
    if lower is None:
        return None, f"unknown for a {adapter} metric: declare it"
    if metric_id.startswith(lower):
        return "lower_is_better", f"{adapter} documents {metric_id} as lower-is-better"
    return "higher_is_better", f"{adapter} scores its named metrics 0..1, higher is better"


def _first(names: Sequence[str], wanted: Sequence[str]) -> str | None:
    return next((w for w in wanted if w in names), None)


def _values(table: pa.Table, column: str | None, limit: int = 50) -> list[str]:
    if column is None:
        return []
    seen = {str(v) for v in table.column(column).to_pylist() if v is not None and str(v) != ""}
    return sorted(seen)[:limit]


def _metrics(table: pa.Table, adapter: str, keys: set[str]) -> list[MetricGuess]:
    if adapter == "otel":  # the adapter derives these from the spans (otel.DEFAULT_METRICS)
        why = "derived by the otel adapter from the spans; lower is better"
        return [MetricGuess(m, m, "operational", "lower_is_better", why) for m in DEFAULT_METRICS]
    guesses = []
    for name in table.column_names:
        if (
            name in keys
            or name in NOT_METRICS
            or name.lower().endswith(("_id", ".id", "id"))
            or not looks_numeric_column(table, name)
        ):
            continue
        metric_id = snake_metric_id(name.removeprefix("feedback."))
        direction, why = _direction(adapter, metric_id)
        operational = any(marker in metric_id for marker in OPERATIONAL_MARKERS)
        guesses.append(
            MetricGuess(
                name, metric_id, "operational" if operational else "quality", direction, why
            )
        )
    return guesses


def describe_export(path: Path, display: str | None = None) -> ExportSummary:
    """Detect the tool of one export and list its metrics, keys, policies, slices and splits.

    Raises:
        InputError: the file's suffix is not .csv, .jsonl, .parquet or .json.
        EvidenceError: the file is empty or not of its format (from the adapters' readers).
    """
    display = display or path.name
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            "init-format",
            f"{display}: cannot tell the format from the suffix {path.suffix!r}",
            hint="use a .csv, .jsonl, .parquet or .json export",
        )
    adapter, detected = _detect(path, fmt, display)
    if fmt == "json":
        data = orjson.loads(path.read_bytes())
        cases = (
            (data.get("testCases") or data.get("test_results")) if isinstance(data, dict) else []
        )
        rows = len(cases) if isinstance(cases, list) else 0
        return ExportSummary(
            display, fmt, adapter, detected, rows, [], None, None, [], None, [], None, [],
            notes=["a JSON test run: the adapter reads every metric it holds; list the ones "
                   "to gate under quality_metrics"],
        )  # fmt: skip
    table = read_table(path, fmt, display)
    names = table.column_names
    id_col, policy_col = _first(names, ID_COLUMNS), _first(names, POLICY_COLUMNS)
    slice_col, split_col = _first(names, SLICE_COLUMNS), _first(names, SPLIT_COLUMNS)
    keys = {c for c in (id_col, policy_col, slice_col, split_col) if c is not None}
    return ExportSummary(
        path=display,
        format=fmt,
        adapter=adapter,
        detected=detected,
        rows=table.num_rows,
        metrics=_metrics(table, adapter, keys),
        id_column=id_col,
        policy_column=policy_col,
        policies=_values(table, policy_col),
        slice_column=slice_col,
        slices=_values(table, slice_col),
        split_column=split_col,
        splits=_values(table, split_col),
    )


def _policies(exports: Sequence[ExportSummary]) -> tuple[dict[str, str], list[str]]:
    """Policy per file without a policy column (named after the file), and every policy seen."""
    policies = sorted({p for e in exports for p in e.policies})
    per_file = {
        e.path: snake_metric_id(Path(e.path).stem).replace("_", "-")
        for e in exports
        if not e.policies
    }
    return per_file, policies + [p for p in per_file.values() if p not in policies]


def _split_roles(splits: list[str]) -> dict[str, str]:
    """Guess which split decides (confirm*/test/holdout) and which develops (dev*/train/tune)."""
    if not splits:
        return {}
    confirm = next((s for s in splits if s.lower().startswith(CONFIRM_NAMES)), splits[-1])
    rest = [s for s in splits if s != confirm]
    develop = next((s for s in rest if s.lower().startswith(DEVELOP_NAMES)), None)
    return {"confirmatory": confirm} | ({"development": develop} if develop else {})


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ragwarrant", "data/templates"),
        autoescape=False,  # YAML, not HTML: every value goes through the ``q`` filter
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["q"] = lambda v: orjson.dumps(str(v)).decode()  # a JSON string is YAML
    return env


def draft_contract(exports: Sequence[ExportSummary], contract_id: str = "my-release") -> str:
    """The commented YAML draft of a release contract for ``exports``.

    Policies come from the files' policy columns, or one per file (named after the file, to be
    checked); the first is proposed as the baseline. Quality metrics carry ``margin_abs: null``
    and a comment asking for the margin: the draft fails validation until each is declared.
    """
    per_file, all_policies = _policies(exports)
    quality = {m.metric_id: m for e in exports for m in e.metrics if m.kind == "quality"}
    operational = {m.metric_id: m for e in exports for m in e.metrics if m.kind == "operational"}
    slices = sorted({s for e in exports for s in e.slices})
    splits = _split_roles(sorted({s for e in exports for s in e.splits}))
    return (
        _environment()
        .get_template("contract.yaml.j2")
        .render(
            contract_id=contract_id,
            exports=exports,
            per_file=per_file,
            policies=all_policies,
            quality=list(quality.values()),
            operational=list(operational.values()),
            slices=slices,
            splits=splits,
        )
    )


def write_contract(text: str, output: Path, *, force: bool = False) -> None:
    """Write the draft to ``output``; never overwrite an existing file unless ``force``.

    Raises:
        UsageError: ``init-exists`` when ``output`` exists and ``force`` is False.
    """
    if output.exists() and not force:
        raise UsageError(
            "init-exists",
            f"{output} exists; not overwritten",
            hint="choose another --output, or pass --force",
        )
    output.write_text(text, encoding="utf-8")
