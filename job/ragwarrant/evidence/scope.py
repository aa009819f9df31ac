"""Which examples a run decides on, and the checks that say what the evidence holds beyond that.

Scopes are boolean masks over the index's examples (shape (E,)): the confirmatory split (or every
example when the contract declares no splits) and the development split. The checks are
``ValidationCheck`` notes: examples in no declared split role, example ids with white space at
either end, rows of policies and metrics the contract does not name, and missing values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragwarrant.contract import ReleaseContract, scale_tolerance
from ragwarrant.display import quoted
from ragwarrant.evidence.ids import id_spellings
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.outputs import ValidationCheck
from ragwarrant.stats.noninferiority import detect_metric_kind


@dataclass(frozen=True)
class Scopes:
    """The example sets a run decides on.

    Attributes:
        confirmatory: shape (E,) bool, the examples the decision is tested on.
        development: shape (E,) bool, the development split, or None when not declared.
        confirmatory_name: the confirmatory split's label, or ``all`` without splits.
    """

    confirmatory: np.ndarray
    development: np.ndarray | None
    confirmatory_name: str


def scopes(index: EvidenceIndex, contract: ReleaseContract) -> Scopes:
    """Return the confirmatory and development scopes the contract's splits declare."""
    if contract.splits is None:
        return Scopes(np.ones(index.n_examples, dtype=bool), None, "all")
    conf, dev = contract.splits.confirmatory, contract.splits.development
    return Scopes(index.in_split(conf), None if dev is None else index.in_split(dev), conf)


def observed_values(
    index: EvidenceIndex, metrics: list[str]
) -> tuple[dict[str, tuple[float, float]], set[str]]:
    """The finite values ``metrics`` hold in the evidence, every policy and split together.

    Returns:
        (metric → (smallest, largest) finite value, for metrics with one; ids of metrics holding
        a finite value other than 0 and 1), as ``contract.check_scales`` reads them.
    """
    observed: dict[str, tuple[float, float]] = {}
    non_binary: set[str] = set()
    for metric in metrics:
        cols = [c for (_, m), c in index.columns.items() if m == metric]
        values = np.concatenate([c.value[c.has_row & np.isfinite(c.value)] for c in cols] or [[]])
        if values.size:
            observed[metric] = (float(values.min()), float(values.max()))
            if np.any((values != 0) & (values != 1)):
                non_binary.add(metric)
    return observed, non_binary


def first_outside(index: EvidenceIndex, metric: str, low: float, high: float) -> str | None:
    """Where the first finite value of ``metric`` off the scale [low, high] is (file and row), with
    the value unrounded (``repr``), or None. Values within ``contract.scale_tolerance`` of an end
    are on the scale."""
    slack = scale_tolerance(low, high)
    low, high = low - slack, high + slack
    for (policy, m), col in sorted(index.columns.items()):
        if m != metric:
            continue
        finite = col.has_row & np.isfinite(col.value)
        with np.errstate(invalid="ignore"):
            outside = finite & ((col.value < low) | (col.value > high))
        hits = np.flatnonzero(outside)
        if hits.size:
            example = int(hits[0])
            value = float(col.value[example])
            return f"{index.locate(policy, metric, example)} (policy {policy}: {value!r})"
    return None


def split_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    """Say which examples no split role covers, and when the class assumes a held-out split."""
    if contract.splits is not None:
        roles = [
            r for r in (contract.splits.development, contract.splits.confirmatory) if r is not None
        ]
        covered = np.zeros(index.n_examples, dtype=bool)
        for role in roles:
            covered |= index.in_split(role)
        outside = int(np.sum(~covered))
        if not outside:
            return []
        labels = sorted(set(index.split_labels) - set(roles))
        shown = ", ".join(repr(x) for x in labels) or "none"
        return [
            ValidationCheck(
                id="split-unassigned",
                target="evidence",
                status="warn",
                message=f"{outside} examples are in no declared split role "
                "(their split labels: "
                f"{shown}; or no label) and are not used",
            )
        ]
    klass = contract.evidence_class
    if klass >= EvidenceClass.CONFIRMATORY and klass < EvidenceClass.DEPLOYMENT:
        return [
            ValidationCheck(
                id="evidence-class-without-split",
                target="contract",
                status="info",
                message=f"evidence class {contract.evidence_class.value} declared without a "
                "confirmatory split: the claim scope assumes the evidence was fixed before "
                "the analysis",
            )
        ]
    return []


def example_id_checks(index: EvidenceIndex) -> list[ValidationCheck]:
    """Warn about example ids with white space at either end, and about ids spelled two ways.

    Ids are compared exactly, never trimmed or normalised: ``q1`` and ``Q1``, or ``café`` in NFC
    and in NFD, are different examples and do not pair. Such spellings are counted and the first
    pair is named, so a pairing-coverage BLOCK can be traced to them.
    """
    checks = []
    padded, n_variants, pair = id_spellings(index.id_array)
    if padded:
        checks.append(
            ValidationCheck(
                id="example-id-whitespace",
                target="evidence",
                status="warn",
                message=f"{padded} example ids start or end with white space; they pair only "
                "with ids spelled the same way (ids are compared exactly, never trimmed)",
            )
        )
    if pair is not None:
        a, b = pair
        checks.append(
            ValidationCheck(
                id="example-id-spelling",
                target="evidence",
                status="warn",
                message=f"{n_variants} example ids differ from another only in letter case, "
                f"Unicode normalisation (NFC/NFD) or white space, e.g. {a!r} and {b!r}; they are "
                "different examples and do not pair (re-export with one spelling)",
            )
        )
    return checks


def declared_metrics(contract: ReleaseContract) -> set[str]:
    """Every metric id the contract tests or reads (quality, operational, disqualifiers, judge)."""
    declared = (
        {m.id for m in contract.quality_metrics}
        | {m.id for m in contract.operational_metrics}
        | {d.metric for d in contract.hard_disqualifiers}
    )
    if contract.corroboration is not None:  # the judge metrics corroboration reads are declared too
        cb = contract.corroboration
        declared |= {
            cb.groundedness_metric,
            *cb.sample_metrics,
            *filter(None, [cb.answer_relevance_metric]),
        }
    return declared


def undeclared_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    """Note rows of policies, and metrics, that were read but that the contract does not name."""
    checks = []
    known = set(contract.policy_ids)
    extra = sorted(index.policies() - known)
    if extra:
        checks.append(
            ValidationCheck(
                id="undeclared-policies",
                target="evidence",
                status="info",
                message=(
                    "rows of policies the contract does not name were read and not used: "
                    f"{', '.join(extra)}"
                ),
            )
        )
    undeclared = sorted({m for p, m in index.columns} - declared_metrics(contract))
    if undeclared:
        checks.append(
            ValidationCheck(
                id="undeclared-metrics",
                target="evidence",
                status="info",
                message=(
                    "metrics in the evidence that the contract does not test: "
                    f"{', '.join(undeclared[:30])}"
                ),
            )
        )
    return checks


def missing_value_table(
    index: EvidenceIndex | None,
) -> list[dict[str, str | int | float | bool | None]]:
    """One row per (policy, metric, reason) with the count of missing values."""
    if index is None:
        return []
    return [
        {"policy_id": policy, "metric": metric, "reason": reason, "count": count}
        for (policy, metric), col in sorted(index.columns.items())
        for reason, count in sorted(col.missing_reasons.items())
    ]


def missing_value_checks(index: EvidenceIndex) -> list[ValidationCheck]:
    """One warning per (policy, metric, reason) with missing values."""
    return [
        ValidationCheck(
            id="missing-values",
            target=f"{row['policy_id']}/{row['metric']}",
            status="warn",
            message=(
                f"{row['count']} {row['reason']} values in {row['metric']} for {row['policy_id']}"
            ),
        )
        for row in missing_value_table(index)
    ]


def metric_kind_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    """One info check per quality metric: its declared ``metric_kind``, or the kind detected.

    Detection (``stats.noninferiority.detect_metric_kind``) reads every finite value of every
    policy; each noninferiority gate detects again on its own pairs and records the kind it
    used in ``details.metric_kind``. A declared binary metric holding other values is the
    ``hard:contract-evidence:scales`` gate's BLOCK, not this check's.
    """
    checks = []
    for m in contract.quality_metrics:
        cols = [c for (_, metric), c in index.columns.items() if metric == m.id]
        values = np.concatenate([c.value[c.has_row & np.isfinite(c.value)] for c in cols] or [[]])
        if m.metric_kind is not None:
            message = f"{quoted(m.id)} is declared {m.metric_kind}"
        elif values.size:
            kind = detect_metric_kind(values, m.scale)
            message = (
                f"{quoted(m.id)} has metric_kind null; detected {kind} from {values.size} values"
            )
        else:
            message = f"{quoted(m.id)} has metric_kind null and no finite value to detect it from"
        checks.append(
            ValidationCheck(id="metric-kind", target=m.id, status="info", message=message)
        )
    return checks
