"""The release contract as a whole: ``ReleaseContract`` and the rules that need all of it.

Its parts are the models of ``_models``; the rules on single values (metric names, units, margins)
are in ``_sanity``. The rules here (distinct ids, references to declared metrics, limits, distinct
configs) raise ``FieldError`` at the key of the first broken rule, so the loader names its line.
"""

from __future__ import annotations

import posixpath
from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator, model_validator

from ragwarrant.contract._models import (
    ClaimSet,
    ContractModel,
    Corroboration,
    EvidenceSource,
    HardDisqualifier,
    Identifier,
    Limits,
    OperationalMetric,
    PolicyRef,
    ProtectedSlice,
    Publication,
    QualityMetric,
    Sequential,
    Splits,
    Statistics,
)
from ragwarrant.contract._sanity import FieldError, check_margin, did_you_mean
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.limits import (
    CEILING_CANDIDATES,
    CEILING_PROTECTED_SLICES,
    MAX_EVIDENCE_SOURCES,
    MAX_METRICS,
)

Loc = tuple[str | int, ...]
"""A key path relative to the contract (``FieldError.loc``)."""
LabelKind = Literal["split", "slice", "policy", "metric", "source"]
"""A kind of label a contract declares (``ReleaseContract.declared_labels``)."""


class ReleaseContract(ContractModel):
    """The release contract, declared before evaluation."""

    schema_version: Literal["1"] = "1"
    id: Identifier
    version: str = Field(min_length=1, max_length=100)
    description: str = ""
    baseline: PolicyRef
    candidates: list[PolicyRef] = Field(min_length=1, max_length=CEILING_CANDIDATES)
    evidence: list[EvidenceSource] = Field(min_length=1, max_length=MAX_EVIDENCE_SOURCES)
    quality_metrics: list[QualityMetric] = Field(min_length=1, max_length=MAX_METRICS)
    operational_metrics: list[OperationalMetric] = Field(
        default_factory=list, max_length=MAX_METRICS
    )
    claims: ClaimSet
    hard_disqualifiers: list[HardDisqualifier] = Field(default_factory=list)
    protected_slices: list[ProtectedSlice] = Field(
        default_factory=list, max_length=CEILING_PROTECTED_SLICES
    )
    statistics: Statistics = Statistics()
    splits: Splits | None = None
    sequential: Sequential | None = Field(
        default=None,
        description="a plan for repeated looks at growing evidence; without it a repeated look "
        "cannot PROMOTE",
    )
    non_behavioural_config_keys: list[
        Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^.]+(\.[^.]+)*$")]
    ] = Field(
        default_factory=list,
        max_length=100,
        description="dotted paths of policy config keys that do not change a policy's behaviour "
        "(owner, ticket...): a config differing from an earlier look's only there, or in its "
        "top-level 'note', is the same config for repeated looks",
    )
    evidence_class: Annotated[EvidenceClass, Strict(False)]
    promotion_min_class: Annotated[EvidenceClass, Strict(False)] = Field(
        default=EvidenceClass.CONFIRMATORY,
        description="the lowest evidence class allowed to PROMOTE; at least frozen-observation, "
        "the lowest class that supports a release decision (contracts/evidence-classes.md)",
    )
    prices: dict[str, dict[str, Annotated[float, Field(ge=0)]]] = Field(
        default_factory=dict,
        description="model → {input_usd_per_1m_tokens, output_usd_per_1m_tokens}, for modeled cost",
    )
    corroboration: Corroboration | None = None
    publication: Publication = Publication()
    limits: Limits = Field(
        default=Limits(),
        description="raise a limit (candidates, protected slices, evidence rows) up to its ceiling",
    )

    @property
    def policy_ids(self) -> list[str]:
        """The baseline's, then the candidates' policy ids (``declared_labels``'s ``policy``)."""
        return list(self.declared_labels("policy").values())

    def declared_labels(self, kind: LabelKind) -> dict[Loc, str]:
        """Contract key path → the label it declares, for one kind of label, in contract order.

        ``policy``: the baseline's, then the candidates' policy ids; ``metric``: the quality,
        then the operational metric ids; ``source``: the evidence source ids; ``split``: the
        split role values; ``slice``: the protected slice values.
        """
        if kind == "split":
            if (sp := self.splits) is None:
                return {}
            roles = {"development": sp.development, "confirmatory": sp.confirmatory}
            return {("splits", role): v for role, v in roles.items() if v is not None}
        if kind == "slice":
            return {
                ("protected_slices", i, "value"): s.value
                for i, s in enumerate(self.protected_slices)
            }
        if kind == "source":
            return {("evidence", i, "id"): s.id for i, s in enumerate(self.evidence)}
        if kind == "metric":
            return {
                (key, i, "id"): m.id
                for key in ("quality_metrics", "operational_metrics")
                for i, m in enumerate(getattr(self, key))
            }
        out: dict[Loc, str] = {("baseline", "policy_id"): self.baseline.policy_id}
        out.update(
            {("candidates", i, "policy_id"): p.policy_id for i, p in enumerate(self.candidates)}
        )
        return out

    @field_validator("promotion_min_class")
    @classmethod
    def _promotion_floor(cls, v: EvidenceClass) -> EvidenceClass:
        if v < EvidenceClass.FROZEN_OBSERVATION:
            raise ValueError(
                f"{v.value} evidence supports no release decision, so it cannot be the class "
                "allowed to PROMOTE; use frozen-observation or higher"
            )
        return v

    # The rules on the whole contract run in the order written here (pydantic applies "after"
    # model validators in definition order); the first broken one is reported.

    @model_validator(mode="after")
    def _within_limits(self) -> ReleaseContract:
        """Refuse more candidates or protected slices than ``limits`` allows."""
        for key in ("candidates", "protected_slices"):
            count, limit = len(getattr(self, key)), getattr(self.limits, key)
            if count > limit:
                raise FieldError(
                    f"{count:,} {key.replace('_', ' ')}, past the limit of {limit:,} (raise "
                    f"limits.{key} up to its ceiling if the evaluation needs them)",
                    (key,),
                )
        return self

    @model_validator(mode="after")
    def _distinct_ids(self) -> ReleaseContract:
        """Refuse a policy, metric or evidence source id given twice, at its second place."""
        kinds: tuple[tuple[LabelKind, str], ...] = (
            ("policy", "policy"),
            ("metric", "metric"),
            ("source", "evidence source"),
        )
        for kind, what in kinds:
            seen: set[str] = set()
            for loc, value in self.declared_labels(kind).items():
                if value in seen:
                    raise FieldError(f"{what} ids must be distinct, found {value!r} twice", loc)
                seen.add(value)
        return self

    @model_validator(mode="after")
    def _a_required_quality_metric(self) -> ReleaseContract:
        """Refuse a contract that would decide without any noninferiority gate."""
        if not any(m.required for m in self.quality_metrics):
            raise FieldError(
                "no quality metric is required: the candidate would be decided without any "
                "quality gate (on its claims alone); set required: true on at least one quality "
                "metric",
                ("quality_metrics",),
            )
        return self

    @model_validator(mode="after")
    def _distinct_configs(self) -> ReleaseContract:
        """Refuse a candidate whose config file is the baseline's or an earlier candidate's."""
        seen = {posixpath.normpath(self.baseline.config): "the baseline"}
        for i, p in enumerate(self.candidates):
            path = posixpath.normpath(p.config)
            if path in seen:
                raise FieldError(
                    f"candidate {p.policy_id!r} has the same config file as {seen[path]}: a "
                    "candidate's config must describe the candidate (the decision lists what "
                    "differs)",
                    ("candidates", i, "config"),
                )
            seen[path] = f"candidate {p.policy_id!r}"
        return self

    @model_validator(mode="after")
    def _claims_name_declared_metrics(self) -> ReleaseContract:
        """Refuse a claim on a metric not declared with the claim's kind."""
        declared = {
            "quality": {m.id for m in self.quality_metrics},
            "operational": {m.id for m in self.operational_metrics},
        }
        for i, claim in enumerate(self.claims.items):
            kind = "quality" if claim.kind.value == "quality-improvement" else "operational"
            wanted = declared[kind]
            if claim.metric not in wanted:
                raise FieldError(
                    f"claim {claim.kind.value} names metric {claim.metric!r}, which is not a "
                    f"declared {kind} metric (declared: {', '.join(sorted(wanted)) or 'none'})"
                    + did_you_mean(claim.metric, wanted),
                    ("claims", "items", i, "metric"),
                )
        return self

    @model_validator(mode="after")
    def _slices_name_declared_metrics(self) -> ReleaseContract:
        """Refuse a protected slice naming an unknown quality metric, or whose margin is too
        wide for a metric it tests (``check_margin``)."""
        metrics = {m.id: m for m in self.quality_metrics}
        for i, ps in enumerate(self.protected_slices):
            for j, name in enumerate(ps.metrics or []):
                if name not in metrics:
                    raise FieldError(
                        f"protected slice {ps.value!r} names unknown quality metric {name!r}"
                        + did_you_mean(name, metrics),
                        ("protected_slices", i, "metrics", j),
                    )
            if ps.margin_abs is None:
                continue
            loc = ("protected_slices", i, "margin_abs")
            for name in ps.metrics or [m.id for m in self.quality_metrics if m.required]:
                check_margin(ps.margin_abs, metrics[name].scale, loc)
        return self


def wide_margins(contract: ReleaseContract) -> list[tuple[str, float, float]]:
    """Margins at least half their metric's scale width: ``(contract key path, margin, width)``.

    Legal (``check_margin`` refuses only a margin as wide as the scale) but rarely meant: a
    noninferiority margin of half the scale accepts a candidate that lost half of it.
    """
    out: list[tuple[str, float, float]] = []
    metrics = {m.id: m for m in contract.quality_metrics}
    for i, m in enumerate(contract.quality_metrics):
        width = m.scale[1] - m.scale[0]
        if m.margin_abs >= width / 2:
            out.append((f"quality_metrics[{i}].margin_abs", m.margin_abs, width))
    for i, ps in enumerate(contract.protected_slices):
        if ps.margin_abs is None:
            continue
        names = ps.metrics or [m.id for m in contract.quality_metrics if m.required]
        width = min(metrics[n].scale[1] - metrics[n].scale[0] for n in names)
        if ps.margin_abs >= width / 2:
            out.append((f"protected_slices[{i}].margin_abs", ps.margin_abs, width))
    return out
