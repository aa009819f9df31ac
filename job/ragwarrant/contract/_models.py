"""The release contract models: what a candidate must show, declared before evaluation.

Pydantic models with ``extra="forbid"`` and strict scalar types everywhere (no string seed, no
boolean where a number belongs; enums and the scale pair are read from their plain YAML/JSON
forms); their JSON Schema is committed as ``contracts/contract.schema.json``. The parts of a
contract are here, the whole (``ReleaseContract`` and the rules that need all of it) in
``_release``; rules on single values (margins against scales, directions against metric names)
are in ``_sanity``. Validators raise ``FieldError`` so the loader can name the exact key and line.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    field_validator,
    model_validator,
)

from ragwarrant.contract._sanity import (
    FieldError,
    check_direction_family,
    check_margin,
    check_scale_ends,
    check_unit,
    did_you_mean,
)
from ragwarrant.limits import (
    CEILING_CANDIDATES,
    CEILING_EVIDENCE_ROWS,
    CEILING_PROTECTED_SLICES,
    MAX_CANDIDATES,
    MAX_EVIDENCE_ROWS,
    MAX_PROTECTED_SLICES,
    MIN_ALPHA,
    UINT64_MAX,
)
from ragwarrant.stats.bootstrap import Statistic

#: What an id (policy, metric, source, slice...) may look like: also what ``init`` accepts as a
#: policy id from an export.
IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$"
Identifier = Annotated[str, Field(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)]


class ContractModel(BaseModel):
    """Base of every contract model: unknown fields are errors, instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


class Direction(StrEnum):
    """Which way a metric is better."""

    HIGHER_IS_BETTER = "higher_is_better"
    LOWER_IS_BETTER = "lower_is_better"

    @property
    def sign(self) -> int:
        """+1 when higher is better, -1 when lower: orients deltas so that positive is better."""
        return 1 if self is Direction.HIGHER_IS_BETTER else -1


_LAX = Strict(False)
"""Enums and the scale pair accept their plain YAML/JSON forms (a string, a list)."""


class MissingValuePolicy(StrEnum):
    """What a NaN, null or error score in a metric means.

    ``fail``: the non-finite-values hard gate fails (BLOCK); the default. ``exclude``: the example
    is left out of that metric's pairing, counted, and the pairing-coverage gate applies; a
    noninferiority gate passes only if it still passes with every excluded value imputed as
    under ``worst``, on one side or on both (an example blank for both policies is excluded
    too; a tipping-point sensitivity analysis; else INCONCLUSIVE, naming how many imputed
    values flip it).
    ``worst``: the value is replaced by the end of the metric's scale least favourable to the
    candidate (the worst end for a candidate value, the best end for a baseline value), counted
    and reported, so a missing value never helps the candidate. An operational metric's scale
    is its [min_value, max_value]: ``worst`` and ``exclude`` need both, and both impute there
    (a claim has no tipping-point analysis). Under every policy, a metric that one policy has
    rows of but no observed value on any fails the non-finite-values gate (BLOCK).
    """

    FAIL = "fail"
    EXCLUDE = "exclude"
    WORST = "worst"


def _relative_path(value: str) -> str:
    # The value is never echoed: a message may be published, and a path may be private.
    path = PurePosixPath(value)
    if value.strip() == "" or path.is_absolute() or value.startswith("\\") or ":" in path.parts[0]:
        raise ValueError("expected a path relative to the input directory, found an absolute path")
    if ".." in path.parts:
        raise ValueError("expected a path inside the input directory, found one containing '..'")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("expected a path without control characters (NUL, newline, ...)")
    return value


RelativePath = Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(_relative_path)]


AdapterName = Literal[
    "generic", "ragas", "deepeval", "langsmith", "phoenix", "trulens", "otel", "auto"
]
"""The adapters the job knows (``adapters.registry.ADAPTERS``; a test keeps the two equal)."""


class PolicyRef(ContractModel):
    """A policy under comparison and its configuration file."""

    policy_id: Identifier
    config: RelativePath = Field(
        description="policies/*.json|yaml, relative to the input directory"
    )


class ColumnMapping(ContractModel):
    """Which column of an evidence file holds each canonical field.

    ``policy_id`` may be omitted when the source fixes ``policy``. For ``layout: long`` files,
    ``metric`` and ``value`` are required; for ``layout: wide``, ``metrics`` maps column → metric id.
    """  # noqa: E501 -- exported verbatim as the JSON Schema description; rewrapping changes it

    example_id: str = "example_id"
    policy_id: str | None = "policy_id"
    group_id: str | None = None
    slice: str | None = None
    split: str | None = None
    metric: str | None = None
    value: str | None = None
    question: str | None = Field(
        default=None, description="question text (private; never copied to outputs)"
    )
    response: str | None = Field(
        default=None, description="response text (private; never copied to outputs)"
    )
    contexts: str | None = Field(
        default=None,
        description="context passages: a list column, a JSON array string, a Python-repr list, "
        "or one plain string (one passage); private",
    )
    cited_quotes: str | None = Field(
        default=None,
        description="quotes the judge or the response cites from the context, same forms as "
        "contexts",
    )


class TelemetryReduction(ContractModel):
    """How per-request telemetry rows reduce to one value per (policy, example).

    ``how``: ``sum`` (e.g. cost), ``count`` (API calls; no column), ``max`` or ``mean``.
    """

    column: str | None = None
    how: Literal["sum", "count", "max", "mean"] = "sum"

    @model_validator(mode="after")
    def _column_needed(self) -> TelemetryReduction:
        if self.how != "count" and not self.column:
            raise ValueError(f"reduction '{self.how}' needs a column")
        return self


DOCUMENT_REDUCERS = ("mean", "max", "any")
"""``options.document_reducer``: how Phoenix DocumentEvaluations' per-document scores (one row
per retrieved document) become one value per example; ``any`` is 1 when some document scores
above 0."""


class EvidenceSource(ContractModel):
    """One evidence file and how to read it.

    ``kind: results`` files hold one value per (policy, example, metric); duplicates are a hard-gate
    failure. ``kind: telemetry`` files hold one row per request, reduced per (policy, example) by
    ``reduce`` (operational metric id → reduction) before pairing.
    """

    id: Identifier
    path: RelativePath
    format: Literal["csv", "jsonl", "parquet", "json"]
    adapter: AdapterName = Field(default="generic", description="generic, a tool adapter, or auto")
    kind: Literal["results", "telemetry"] = "results"
    layout: Literal["long", "wide"] = "wide"
    policy: Identifier | None = Field(
        default=None, description="the policy of every row, when the file holds one policy"
    )
    columns: ColumnMapping = ColumnMapping()
    metrics: dict[str, Identifier] = Field(
        default_factory=dict, description="wide layout: column name → metric id"
    )
    reduce: dict[Identifier, TelemetryReduction] = Field(default_factory=dict)
    evaluator: str = Field(default="unknown", description="name of the tool that wrote the file")
    evaluator_version: str | None = None
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="adapter-specific options, e.g. phoenix: spans (the spans file to join), "
        "document_reducer (mean, max or any: DocumentEvaluations' documents → one value per "
        "example)",
    )
    pairing: Literal["auto", "id-column", "question-hash", "span-join"] = Field(
        default="auto",
        description="how rows get their example id: the id column, sha256 of the normalized "
        "question text, or a join to a spans file; auto = the adapter's documented default",
    )

    @model_validator(mode="after")
    def _known_options(self) -> EvidenceSource:
        """Refuse an adapter option with a closed set of values outside that set."""
        how = self.options.get("document_reducer")
        if how is not None and how not in DOCUMENT_REDUCERS:
            raise FieldError(
                f"unknown document_reducer {how!r}; expected one of {', '.join(DOCUMENT_REDUCERS)}"
                + did_you_mean(str(how).lower(), DOCUMENT_REDUCERS),
                ("options", "document_reducer"),
            )
        return self

    @model_validator(mode="after")
    def _shape(self) -> EvidenceSource:
        if self.adapter != "generic":
            return self
        if self.kind == "telemetry":
            if not self.reduce:
                raise ValueError("a telemetry source needs 'reduce' (metric id → reduction)")
        elif self.layout == "long":
            if not (self.columns.metric and self.columns.value):
                raise ValueError("layout 'long' needs columns.metric and columns.value")
        elif not self.metrics:
            raise ValueError("layout 'wide' needs 'metrics' (column → metric id)")
        if self.policy is None and not self.columns.policy_id:
            raise ValueError("give 'policy' or columns.policy_id")
        return self


class HumanLabels(ContractModel):
    """Human labels on a random draw of examples, for a judge-corrected (PPI++) bound.

    ``queue`` is the draw record ``ragwarrant review sample`` wrote (seed, item ids, the
    evidence's sha256); ``file`` is the reviewers' CSV (``item_id``, ``label_a``, ``label_b``,
    on the metric's scale; an empty cell is a missing label). Both are hashed into the manifest.
    """

    file: RelativePath = Field(description="the reviewers' labels CSV, relative to the input")
    queue: RelativePath = Field(description="the review queue JSON the labels answer")


class QualityMetric(ContractModel):
    """A quality metric tested for noninferiority on paired per-example deltas."""

    id: Identifier
    direction: Annotated[Direction, _LAX] = Direction.HIGHER_IS_BETTER
    direction_confirmed: bool = Field(
        default=False,
        description="true accepts a direction that contradicts the metric's name family "
        "(README, 'Metric name families')",
    )
    scale: Annotated[tuple[float, float], _LAX] = Field(
        default=(0.0, 1.0), description="[worst..best] range, in metric units"
    )
    margin_abs: float = Field(
        gt=0, description="absolute noninferiority margin, in metric units; narrower than the scale"
    )
    metric_kind: MetricKind | None = Field(
        default=None,
        description="binary, ordinal or continuous; null = detected from the data at run time",
    )
    required: bool = True
    on_missing: Annotated[MissingValuePolicy, _LAX] = MissingValuePolicy.FAIL
    human_labels: HumanLabels | None = Field(
        default=None,
        description="human labels on a random draw: the gate then decides on the PPI++ "
        "judge-corrected bound (docs/contract.md, 'Human labels')",
    )

    @field_validator("scale")
    @classmethod
    def _scale_order(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not v[0] < v[1]:
            raise ValueError(f"expected [low, high] with low < high, found {list(v)}")
        check_scale_ends(v)
        return v

    @model_validator(mode="after")
    def _sane(self) -> QualityMetric:
        check_margin(self.margin_abs, self.scale, ("margin_abs",))
        check_direction_family(self.id, self.direction, self.direction_confirmed)
        return self


class OperationalMetric(ContractModel):
    """A cost, latency or call-count metric, compared on a declared statistic."""

    id: Identifier
    unit: str = Field(min_length=1, description="e.g. usd, ms, calls")
    direction: Annotated[Direction, _LAX] = Direction.LOWER_IS_BETTER
    direction_confirmed: bool = Field(
        default=False,
        description="true accepts a direction that contradicts the metric's name family",
    )
    statistic: Statistic = "mean"
    on_missing: Annotated[MissingValuePolicy, _LAX] = MissingValuePolicy.FAIL
    min_value: float | None = Field(
        default=0.0, description="smallest valid value (costs, latencies and calls are >= 0)"
    )
    max_value: float | None = Field(default=None, description="largest valid value, if any")

    @model_validator(mode="after")
    def _sane(self) -> OperationalMetric:
        check_direction_family(self.id, self.direction, self.direction_confirmed)
        check_unit(self.id, self.unit)
        if self.on_missing is not MissingValuePolicy.FAIL and None in self.scale:
            # no scale, no least favourable end: a missing cost would be left out (a fresh-user
            # trial: 7 blank candidate costs, really 5x the rest, PROMOTEd a cost reduction)
            raise FieldError(
                f"on_missing: {self.on_missing} on an operational metric imputes a missing "
                "value at the bound least favourable to the candidate, and this metric has no "
                "max_value (or no min_value; it defaults to 0): declare them (e.g. the cost of a "
                "request that times out), or leave on_missing at fail",
                ("on_missing",),
            )
        return self

    @property
    def scale(self) -> tuple[float | None, float | None]:
        """(min_value, max_value): the [low, high] ends ``on_missing: worst|exclude`` imputes."""
        return (self.min_value, self.max_value)


class ClaimKind(StrEnum):
    """An improvement the candidate must support."""

    COST_REDUCTION = "cost-reduction"
    LATENCY_REDUCTION = "latency-reduction"
    QUALITY_IMPROVEMENT = "quality-improvement"


class Claim(ContractModel):
    """One declared claim and the metric that must support it."""

    kind: Annotated[ClaimKind, _LAX]
    metric: Identifier


class ClaimSet(ContractModel):
    """Claims joined by ``any`` (a union, Holm-controlled) or ``all`` (an intersection)."""

    join: Literal["any", "all"] = "any"
    items: list[Claim] = Field(min_length=1)


class HardDisqualifier(ContractModel):
    """A metric that must stay within a limit for the candidate, whatever else improves.

    The candidate's ``statistic`` of the metric over all its examples must be ``<= max_value``
    (and ``>= min_value`` when given).
    """

    metric: Identifier
    statistic: Literal["sum", "max", "mean"] = "sum"
    max_value: float | None = None
    min_value: float | None = None

    @model_validator(mode="after")
    def _has_limit(self) -> HardDisqualifier:
        if self.max_value is None and self.min_value is None:
            raise ValueError("give max_value or min_value")
        return self


class ProtectedSlice(ContractModel):
    """A slice (e.g. one task type) that must be noninferior on its own."""

    value: str = Field(min_length=1, description="the slice value in the evidence's slice column")
    margin_abs: float | None = Field(
        default=None, gt=0, description="absolute margin for this slice; the metric's when omitted"
    )
    min_paired_n: int = Field(default=30, ge=2)
    metrics: list[Identifier] | None = Field(
        default=None,
        description="quality metrics tested on this slice; every required one when omitted",
    )


class Statistics(ContractModel):
    """Settings of the statistical tests."""

    alpha: float = Field(
        default=0.05, ge=MIN_ALPHA, lt=0.5, description="one-sided significance level"
    )
    resamples: int = Field(default=2000, ge=2000, le=100_000)
    seed: int = Field(default=20261129, ge=0, le=UINT64_MAX, description="an unsigned 64-bit int")
    min_paired_n: int = Field(default=30, ge=2)
    min_pairing_coverage: float = Field(default=0.95, gt=0, le=1)
    power: float = Field(default=0.8, gt=0.5, lt=1, description="power for the sample-size hints")


class Sequential(ContractModel):
    """A plan for rerunning this contract version on growing evidence (repeated looks).

    A rerun of the same contract id and version on the same configs, with evidence that extends
    an earlier run's, is a repeated look (found in the ``--ledger``). Without this block a
    repeated look cannot PROMOTE (its claim ceiling drops to development). With it, look k tests
    at the level the plan gives it and the levels of all looks sum to at most
    ``statistics.alpha`` (Bonferroni over looks): ``alpha_spending`` follows the Lan-DeMets
    spending function (Lan & DeMets 1983, Biometrika 70:659-663) at information fraction
    units / ``max_units``; ``open`` spends alpha 6 / (pi^2 k^2) at look k, for any number of looks.
    """

    method: Literal["alpha_spending", "open"] = Field(
        description="alpha_spending: a planned number of looks; open: any number of looks"
    )
    spending: Literal["obrien_fleming", "pocock"] = Field(
        default="obrien_fleming",
        description="the Lan-DeMets spending function of alpha_spending",
    )
    looks: int | None = Field(
        default=None,
        ge=1,
        le=50,
        description="planned looks (alpha_spending; the last spends the rest)",
    )
    max_units: int | None = Field(
        default=None,
        ge=2,
        description="decided examples at the last look (information fraction = n / max_units)",
    )

    @model_validator(mode="after")
    def _planned(self) -> Sequential:
        for key in ("looks", "max_units"):
            if self.method == "alpha_spending" and getattr(self, key) is None:
                raise FieldError(f"method alpha_spending needs {key}", (key,))
            if self.method == "open" and getattr(self, key) is not None:
                raise FieldError(f"method open takes no {key} (the looks are open)", (key,))
        return self


class Splits(ContractModel):
    """Which split values play which role.

    Rows whose split is ``development`` are used only to choose among several candidates;
    rows whose split is ``confirmatory`` are used for the decision. An example id present in both
    is leakage (a hard gate).
    """

    development: str | None = None
    confirmatory: str


class Corroboration(ContractModel):
    """Deterministic corroboration of an LLM judge, and when its verdicts are too unreliable to promote.

    Needs question/response/context text in the evidence (``columns.question`` etc.). Per
    (policy, example): the judge says *supported* when its groundedness value is
    ``>= supported_threshold`` (``<=`` for ``lower_is_better``); the deterministic verdict is the
    lexical gate ``lexical_gate`` at calibration ``calibration`` (an honest refusal counts as
    supported, a fabricated citation as unsupported). The two disagreeing is a disagreement; so is
    a judge answer-relevance ``>= answer_relevance_threshold`` for a response that lacks the
    number, date or quantity its question asks for. When ``sample_metrics`` are repeated samples of
    one judgement and their spread (max − min) exceeds ``sample_disagreement_max``, the example
    ABSTAINs. A disagreement or abstention rate above its maximum, for the baseline or the
    candidate, overall or in any slice, caps the candidate at INCONCLUSIVE (``evaluator-unreliable``).
    """  # noqa: E501 -- exported verbatim as the JSON Schema description; rewrapping changes it

    groundedness_metric: Identifier = Field(
        description="the judge's groundedness/faithfulness metric id"
    )
    groundedness_direction: Annotated[Direction, _LAX] = Direction.HIGHER_IS_BETTER
    supported_threshold: float = Field(
        default=0.5, description="judge value at which a response counts as supported"
    )
    answer_relevance_metric: Identifier | None = Field(
        default=None, description="the judge's answer-relevance metric id"
    )
    answer_relevance_threshold: float = Field(
        default=0.5, description="judge answer relevance >= this = relevant"
    )
    sample_metrics: list[Identifier] = Field(
        default_factory=list,
        description="metric ids holding repeated samples of the groundedness judgement",
    )
    sample_disagreement_max: float = Field(
        default=0.5,
        ge=0,
        description="an example ABSTAINs when its samples' max − min exceeds this (metric units)",
    )
    context_relevance_floor: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="share of the question's content words found in the context "
        "below which retrieval failed",
    )
    lexical_gate: Literal["coverage", "weakest_sentence", "hybrid"] = "hybrid"
    calibration: Literal["lexical-v1", "lexical-v2"] = Field(
        default="lexical-v1",
        description="calibration version: lexical-v1 (one pooled threshold per gate) or "
        "lexical-v2 (per task type, fitted on the shared RAGTruth sample)",
    )
    task_type: Literal["qa", "summary", "data2txt", "unknown"] | None = Field(
        default=None,
        description="the task type of every judged example, choosing lexical-v2's per-task "
        "thresholds; unknown: the pooled thresholds, with a warning; unset: the example's slice "
        "when it names a task type, else the pooled thresholds with a warning",
    )
    max_abstention_rate: float = Field(
        default=0.1, ge=0, le=1, description="per policy and per slice"
    )
    max_disagreement_rate: float = Field(
        default=0.2, ge=0, le=1, description="per policy and per slice"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Corroboration:
        if len(set(self.sample_metrics)) != len(self.sample_metrics):
            raise ValueError(f"sample_metrics must be distinct, found {self.sample_metrics}")
        if len(self.sample_metrics) == 1:
            raise ValueError("sample_metrics needs at least two repeated samples (or none)")
        if self.task_type not in (None, "unknown") and self.calibration == "lexical-v1":
            raise ValueError(
                f"task_type {self.task_type!r} needs a per-task calibration: lexical-v1 has one "
                "pooled threshold per gate; set calibration: lexical-v2 (or task_type: unknown)"
            )
        return self


MetricKind = Literal["binary", "ordinal", "continuous"]
"""The measurement level of a quality metric, which chooses its statistical test (issue 10)."""

FindingKind = Literal["ip-address", "phone-number", "national-id", "private-path"]
"""Publication-hygiene finding kinds a contract may allow; secrets (keys, tokens) never are."""


class Limits(ContractModel):
    """Limits a large evaluation may raise, each up to a hard ceiling (docs/contract.md)."""

    candidates: int = Field(default=MAX_CANDIDATES, ge=1, le=CEILING_CANDIDATES)
    protected_slices: int = Field(default=MAX_PROTECTED_SLICES, ge=0, le=CEILING_PROTECTED_SLICES)
    evidence_rows: int = Field(
        default=MAX_EVIDENCE_ROWS,
        ge=1,
        le=CEILING_EVIDENCE_ROWS,
        description="canonical rows (policy x example x metric) of one evidence source",
    )


class Publication(ContractModel):
    """Publication-hygiene switches.

    Findings of a kind listed in ``allow_finding_kinds`` are reported but neither redacted nor
    BLOCKing (e.g. public IP addresses of a documented test service). Secrets can never be allowed.
    """

    allow_finding_kinds: list[FindingKind] = Field(
        default_factory=list,
        description="finding kinds published as they are: ip-address, phone-number, "
        "national-id, private-path",
    )
