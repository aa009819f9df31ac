"""Pydantic models of every output file (a leaf module); JSON Schemas committed under contracts/.

All models forbid unknown fields and non-finite floats: "not computed" is an explicit ``null``
with a ``reason``, never NaN.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.exit_codes import DecisionClass

DECISION_FILE = "decision.json"
VALIDATION_REPORT_FILE = "validation_report.json"
REPORT_FILE = "report.md"
REPORT_HTML_FILE = "report.html"
JUNIT_FILE = "junit.xml"
MANIFEST_FILE = "manifest.json"
OUTPUT_FILES = (
    DECISION_FILE,
    VALIDATION_REPORT_FILE,
    REPORT_FILE,
    REPORT_HTML_FILE,
    JUNIT_FILE,
    MANIFEST_FILE,
)
"""The files every run writes, in writing order: the manifest (over the other ones) is last."""

Scalar = str | int | float | bool | None


class OutputModel(BaseModel):
    """Base of output models: unknown fields and NaN/Infinity are errors."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class GateStatus(StrEnum):
    """Outcome of one gate."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    NOT_APPLICABLE = "not-applicable"


class CandidateClass(StrEnum):
    """A candidate's class: a decision class, or not selected for confirmatory testing."""

    PROMOTE = "PROMOTE"
    REJECT = "REJECT"
    INCONCLUSIVE = "INCONCLUSIVE"
    BLOCK = "BLOCK"
    NOT_SELECTED = "NOT_SELECTED"


class GateResult(OutputModel):
    """One gate's result.

    Deltas are oriented so that positive is better (candidate better than baseline); bounds are
    one-sided confidence bounds at level ``alpha`` (after any Holm adjustment) in metric units,
    except for the informational ``operational`` kind (never classified), whose bounds are the
    two-sided (1 - alpha) interval.
    """

    id: str = Field(description="stable gate id, e.g. hard:duplicate-rows, noninferiority:m@slice")
    kind: Literal[
        "hard", "noninferiority", "claim", "ceiling", "multiplicity", "corroboration", "operational"
    ]
    status: GateStatus
    metric: str | None = None
    slice: str | None = None
    statistic: str | None = Field(default=None, description="what the estimate is")
    estimate: float | None = None
    lower_bound: float | None = None
    upper_bound: float | None = None
    threshold: float | None = Field(default=None, description="e.g. -margin_abs, or 0 for a claim")
    alpha: float | None = None
    p_value: float | None = None
    n: int | None = None
    reason: str
    more_paired_n: int | None = Field(
        default=None,
        description="additional units likely to resolve an inconclusive gate: paired examples, "
        "or clusters when details.units is 'clusters', or human labels when it is 'human labels'",
    )
    method: str | None = Field(
        default=None,
        description="the test or interval method that decided a statistical gate, e.g. "
        "'Tango score test for paired proportions'",
    )
    method_steps: list[str] = Field(
        default_factory=list,
        description="the named steps of the method, in the order applied (a noninferiority "
        "gate's guarded bootstrap: bound, guards, resampling scheme); empty for other gates",
    )
    details: dict[str, Scalar] = Field(default_factory=dict)


class ConfigDifference(OutputModel):
    """One leaf that differs between the baseline's and the candidate's policy config."""

    path: str
    baseline: Scalar | list[Scalar] = None
    candidate: Scalar | list[Scalar] = None


class CandidateDecision(OutputModel):
    """The decision for one candidate against the baseline."""

    policy_id: str
    decision_class: CandidateClass = Field(alias="class")
    reasons: list[str]
    tested_on: str = Field(description="which rows decided: a split value, or 'all'")
    paired_n: int | None = None
    gates: list[GateResult]
    config_sha256: str | None = None
    config_differences: list[ConfigDifference] = Field(default_factory=list)

    model_config = ConfigDict(populate_by_name=True)  # merged with OutputModel's


class Selection(OutputModel):
    """How the candidate tested on the confirmatory rows was chosen."""

    method: Literal["single-candidate", "development-split", "holm-across-candidates", "none"]
    selected_policy: str | None
    quality_only_pick: str | None = None
    cost_only_pick: str | None = None
    notes: list[str] = Field(default_factory=list)


class ContractRef(OutputModel):
    """The contract a run decided under."""

    id: str
    version: str
    path: str
    sha256: str


class ErrorRecord(OutputModel):
    """A typed error that ended the run."""

    type: str
    code: str
    message: str
    hint: str
    fault: Literal["user", "internal"]
    exit_code: int
    option: str | None = Field(
        default=None,
        description="the command-line option whose value caused the error (e.g. --signing-key); "
        "null when it came from the inputs. verify --input cannot replay such an error",
    )
    options: list[str] = Field(
        default_factory=list,
        description="the run's options besides --input and --output, as given (flag or "
        "environment variable): a path option by its flag alone (its value may name a secret "
        "or a host path), others as --flag=value",
    )


class CorroborationRates(OutputModel):
    """Corroboration of the judge for one policy, over all its decided examples or one slice.

    Rates are shares in [0, 1]; ``null`` (with the count that would be its denominator at 0)
    when nothing could be judged. Counts only: no question, response or context text.
    """

    policy_id: str
    slice: str | None = Field(
        description="the slice value; null = every decided example of the policy"
    )
    n_examples: int = Field(description="decided examples with text or a judge value")
    n_with_text: int = Field(description="examples with question/response/context text")
    n_judged: int = Field(
        description="non-abstained examples with both a judge and a deterministic verdict"
    )
    n_disagreements: int = Field(
        description="judged examples where the judge and the deterministic checks disagree"
    )
    disagreement_rate: float | None = Field(description="n_disagreements / n_judged")
    judge_supported_lexical_unsupported: int
    judge_unsupported_lexical_supported: int
    answer_type_disagreements: int = Field(
        description=(
            "judge answer relevance high, but the response lacks the number/date/quantity asked for"
        )
    )
    n_with_samples: int = Field(description="examples with at least two finite judge samples")
    n_abstained: int = Field(
        description="examples whose judge samples disagree beyond the contract threshold"
    )
    abstention_rate: float | None = Field(description="n_abstained / n_with_samples")
    failed_retrieval: int = Field(description="context below the context-relevance floor")
    failed_generation: int = Field(
        description="unsupported by the context, or a fabricated citation"
    )
    failed_answer: int = Field(description="does not answer the question, or wrong answer type")
    fabricated_citations: int = Field(
        description="examples citing a quote that is not in the context"
    )
    honest_refusals: int = Field(
        description="responses that decline to answer (not hallucinations)"
    )


class LookRecord(OutputModel):
    """Which look at this contract version's evidence a run is, and the level it tested at.

    A repeated look is a run of the same contract id and version as an earlier run in the
    ledger; its contract file and configs must be the earlier look's and its evidence must
    extend the earlier evidence, or the run BLOCKs (``gates.looks``). A first run of another
    contract id or version on examples an earlier look of the same baseline and candidate saw
    is a later look of that study (linked by evidence, whatever the config text).
    """

    number: int = Field(
        ge=1, description="1 = the first look at these examples for this baseline and candidate"
    )
    earlier_run_ids: list[str] = Field(
        default_factory=list,
        description="run ids of the earlier looks this look is counted after (its study), "
        "oldest first, under any contract id or version",
    )
    plan: dict[str, Scalar] | None = Field(
        default=None, description="the contract's sequential block, or null when none is declared"
    )
    alpha_this_look: float = Field(ge=0, description="one-sided level of this look's tests")
    alpha_spent: float = Field(ge=0, description="cumulative level spent by looks 1..number")
    units: int = Field(ge=0, description="decided examples at this look")
    confirmatory: bool = Field(description="false when the repeated look cannot PROMOTE")
    blocked: bool = Field(
        default=False,
        description="the evidence does not extend the earlier look's (hard:look-evidence BLOCKs)",
    )
    reason: str
    repeat_of: str | None = Field(
        default=None, description="run id of an earlier look with exactly the same evidence"
    )
    evidence_sha256: str | None = Field(
        default=None, description="sha256 of the look's evidence fingerprint kept by the ledger"
    )
    configs: dict[str, str] = Field(
        default_factory=dict,
        description="policy id → sha256 of its config's behavioural content (canonical JSON "
        "without its top-level note and the contract's non_behavioural_config_keys)",
    )


class CorroborationSummary(OutputModel):
    """How the LLM judge was corroborated, and the rates per policy and slice."""

    groundedness_metric: str
    supported_threshold: float
    answer_relevance_metric: str | None
    sample_metrics: list[str]
    sample_disagreement_max: float
    context_relevance_floor: float
    lexical_gate: str
    lexical_threshold: float
    lexical_task_thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="task type → the lexical gate's threshold applied to the judged examples of "
        "that task (per-task calibration); examples of no calibrated task use lexical_threshold, "
        "the pooled one",
    )
    calibration_version: str
    calibration_sha256: str
    max_disagreement_rate: float
    max_abstention_rate: float
    rates: list[CorroborationRates]
    warnings: list[str] = Field(
        default_factory=list,
        description="e.g. examples judged at the pooled threshold because their task type is "
        "unknown; no text of any example",
    )


class SourceRecord(OutputModel):
    """How one evidence source was read."""

    source_id: str
    path: str
    sha256: str
    adapter: str
    tool: str
    tool_version: str | None
    metric_names: dict[str, str]
    pairing_method: str
    rows_read: int
    detected: str | None = None
    notes: list[str] = Field(default_factory=list)


class Decision(OutputModel):
    """``decision.json``: the run's decision and everything it rests on."""

    schema_version: Literal["1"] = "1"
    run_id: str
    started_at: str
    finished_at: str
    contract: ContractRef | None
    run_class: DecisionClass
    exit_code: int
    summary: str
    evidence_class: EvidenceClass | None = None
    promotion_min_class: EvidenceClass | None = None
    claim_scope: str | None = None
    claims_not_supported: list[str] = Field(default_factory=list)
    selection: Selection | None = None
    selected_policy: str | None = None
    run_gates: list[GateResult] = Field(default_factory=list)
    candidates: list[CandidateDecision] = Field(default_factory=list)
    corroboration: CorroborationSummary | None = Field(
        default=None,
        description="judge corroboration rates, when the contract declares corroboration",
    )
    sources: list[SourceRecord] = Field(
        default_factory=list,
        description="how each evidence source was read (as in validation_report)",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="validation findings a reader of the decision must see (warn/info checks)",
    )
    missing_values: list[dict[str, Scalar]] = Field(
        default_factory=list,
        description="per (policy, metric, reason): count of missing values "
        "(as in validation_report)",
    )
    error: ErrorRecord | None = None
    look: LookRecord | None = Field(
        default=None, description="the look this run is, when a ledger or a sequential plan is used"
    )


class ValidationCheck(OutputModel):
    """One check made on an input or an output."""

    id: str
    target: str
    status: Literal["pass", "fail", "warn", "info"]
    message: str
    file: str | None = None
    row: int | None = None
    column: str | None = None
    expected: str | None = None
    found: str | None = None


class ValidationReport(OutputModel):
    """``validation_report.json``: every check made on inputs and outputs."""

    schema_version: Literal["1"] = "1"
    run_id: str
    checks: list[ValidationCheck]
    sources: list[SourceRecord] = Field(default_factory=list)
    missing_values: list[dict[str, Scalar]] = Field(
        default_factory=list, description="per (policy, metric, reason): count of missing values"
    )


class FileDigest(OutputModel):
    """A file and its sha256."""

    path: str
    sha256: str
    bytes: int


class Manifest(OutputModel):
    """``manifest.json``: written last; its presence means the run completed."""

    schema_version: Literal["1"] = "1"
    run_id: str
    ragwarrant_version: str
    python_version: str
    dependencies: dict[str, str]
    seed: int | None
    started_at: str
    finished_at: str
    exit_code: int
    inputs: list[FileDigest]
    outputs: list[FileDigest]
