"""Run-level gates: they hold for the whole run rather than for one candidate.

- ``hard:contract-references``: every file the contract names exists and is readable.
- ``hard:evidence-readable:<source>``: an evidence source could be read by its adapter.
- ``hard:contract-evidence:<check>``: the contract agrees with the evidence it governs
  (``contract.check_policy_ids``, ``check_splits_declared``, ``check_scales``,
  ``check_directions``, and ``check_near_misses`` as ``split-labels``, ``slice-labels``,
  ``policy-labels`` and ``metric-labels``: undeclared labels that fold to a declared one);
  present only when it fails.
- ``hard:evidence-overlap``: the examples of each operational metric a claim names and those of
  the quality metrics cover each other to ``statistics.min_pairing_coverage``; present when such
  a claim and quality evidence exist.
- ``multiplicity:holm-across-candidates``: a candidate's p-value meets its Holm level when
  several candidates are tested on the confirmatory split (Holm 1979, "A simple sequentially
  rejective multiple test procedure", Scand. J. Statist. 6:65-70).
- ``hard:publication-hygiene``: the outputs hold no credential, host path, e-mail address or
  copied evidence text.

A failed run-level hard gate BLOCKs every candidate (``decision.block_run``); a failed Holm gate
caps a candidate at INCONCLUSIVE (``decision.classify_candidate``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ragwarrant.contract import (
    NearMissKind,
    check_directions,
    check_near_misses,
    check_policy_ids,
    check_scales,
    check_splits_declared,
)
from ragwarrant.display import number, quoted
from ragwarrant.evidence import scope as evidence_scope
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.gates.hard import hard_gate
from ragwarrant.inputs import Inputs
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.stats.holm import holm_levels

HYGIENE_BLOCKER = "publication-hygiene"
"""The blocker (gate reason) of a run with hygiene findings."""


class HygieneFinding(Protocol):
    """What the publication-hygiene gate reads of a finding (``audit.hygiene.Finding``)."""

    @property
    def kind(self) -> str:
        """The finding's kind, e.g. ``api-token``."""

    def describe(self) -> str:
        """Location and kind, never the matched text."""


def gate_holm_across_candidates(
    p_values: dict[str, float | None], alpha: float
) -> dict[str, GateResult]:
    """Holm's step-down test across the candidates tested on the confirmatory split.

    Candidates are visited in increasing p-value (stable order); each passes while its p-value
    meets its Holm level ``alpha / (m - rank)`` and every smaller one passed (Holm 1979).

    Args:
        p_values: candidate → its intersection-union p-value, in testing order (None counts as 1).
        alpha: the family-wise error rate.

    Returns:
        candidate → its ``multiplicity:holm-across-candidates`` gate.
    """
    names = list(p_values)
    pvals = np.array([p if p is not None else 1.0 for p in p_values.values()])
    levels = holm_levels(pvals, alpha)
    out: dict[str, GateResult] = {}
    passed_so_far = True
    for i in np.argsort(pvals, kind="stable"):
        ok = passed_so_far and pvals[i] <= levels[i]
        passed_so_far = ok
        out[names[i]] = GateResult(
            id="multiplicity:holm-across-candidates",
            kind="multiplicity",
            status=GateStatus.PASS if ok else GateStatus.FAIL,
            p_value=float(pvals[i]),
            alpha=float(levels[i]),
            reason=(
                f"candidate p-value {pvals[i]:.4g} "
                f"{'<=' if ok else 'does not meet'} Holm level {levels[i]:.4g} "
                f"across {len(names)} candidates"
            ),
        )
    return out


def gate_publication_hygiene(
    findings: Sequence[HygieneFinding], withheld: Sequence[str] = ()
) -> GateResult:
    """The publication-hygiene gate of a scan of the outputs.

    Status ``fail`` (the run BLOCKs with reason ``publication-hygiene``) when there is any
    finding, ``pass`` otherwise. Details count findings per kind and list withheld files.
    """
    kinds = Counter(f.kind for f in findings)
    details: dict[str, str | int] = {f"findings:{k}": v for k, v in sorted(kinds.items())}
    if withheld:
        details["withheld"] = ",".join(withheld)
    if findings:
        where = "; ".join(f.describe() for f in findings[:5])
        more = f" (+{len(findings) - 5} more)" if len(findings) > 5 else ""
        reason = f"{HYGIENE_BLOCKER}: {len(findings)} finding(s): {where}{more}"
    else:
        reason = "no credentials, host paths, e-mail addresses or copied evidence text in outputs"
    return hard_gate(
        HYGIENE_BLOCKER,
        not findings,
        reason,
        statistic="findings",
        estimate=float(len(findings)),
        threshold=0.0,
        n=len(findings),
        details=details,
    )


def input_gates(inputs: Inputs) -> list[GateResult]:
    """Step 1's gates: ``hard:contract-references`` (fails naming each reference in
    ``inputs.unresolved``), then a failed ``hard:evidence-readable:<source>`` per evidence
    source its adapter could not read, with the error's code, message and hint."""
    unresolved = inputs.unresolved
    references = hard_gate(
        "contract-references",
        not unresolved,
        ("references that do not resolve: " + "; ".join(unresolved))
        if unresolved
        else "every file the contract names exists and is readable",
    )
    return [references] + [
        hard_gate(
            f"evidence-readable:{source_id}",
            False,
            f"{error.code}: {error.message}" + (f" (hint: {error.hint})" if error.hint else ""),
        )
        for source_id, error in inputs.unreadable
    ]


def _label_examples(
    index: EvidenceIndex,
) -> tuple[dict[NearMissKind, dict[str, int]], dict[str, str]]:
    """For splits, slices, policies and metrics: label → examples with a row under it; and
    metric label → one row that holds it (``<file> row <n>``)."""
    policy_rows: dict[str, np.ndarray] = {}  # label → examples with a row of it
    metric_rows: dict[str, np.ndarray] = {}
    located: dict[str, str] = {}
    for (policy, metric), col in index.columns.items():
        for seen, label in ((policy_rows, policy), (metric_rows, metric)):
            seen[label] = seen[label] | col.has_row if label in seen else col.has_row
        if metric not in located:
            located[metric] = index.locate(policy, metric, int(np.argmax(col.has_row)))
    examples: dict[NearMissKind, dict[str, int]] = {
        "split": {v: int(np.count_nonzero(index.in_split(v))) for v in index.split_labels},
        "slice": {
            v: int(np.count_nonzero(index.in_slice(v)))
            for v in index.slice_labels
            if isinstance(v, str)
        },
        "policy": {p: int(np.count_nonzero(has)) for p, has in policy_rows.items()},
        "metric": {m: int(np.count_nonzero(has)) for m, has in metric_rows.items()},
    }
    return examples, located


def contract_evidence_gates(inputs: Inputs, index: EvidenceIndex) -> list[GateResult]:
    """Step 2's run gates: the contract's policy ids, splits, scales and directions against the
    evidence; a failed ``hard:contract-evidence:<check>`` per check with located messages (each
    naming a contract key), none for a check that found nothing."""
    contract, source = inputs.contract, inputs.source
    observed, non_binary = evidence_scope.observed_values(
        index, [m.id for m in contract.quality_metrics]
    )
    outside = [
        f"first value of {m.id!r} outside [{number(m.scale[0])}, {number(m.scale[1])}]: {where}"
        for m in contract.quality_metrics
        if (where := evidence_scope.first_outside(index, m.id, *m.scale)) is not None
    ]
    examples, located = _label_examples(index)
    declared: dict[str, dict[str, str]] = {}  # metric → {source id → the direction it declares}
    for result in inputs.results:
        for metric, direction in result.directions.items():
            declared.setdefault(metric, {})[result.provenance.source_id] = direction
    found = {
        "policy-ids": check_policy_ids(contract, index.policies(), source=source),
        "splits": check_splits_declared(contract, index.split_labels, source=source),
        **{
            f"{kind}-labels": check_near_misses(
                contract, kind, counts, located=located if kind == "metric" else None, source=source
            )
            for kind, counts in examples.items()
        },
        "scales": check_scales(contract, observed, non_binary=non_binary, source=source),
        "directions": check_directions(contract, declared, source=source),
    }
    if found["scales"]:
        found["scales"] += outside
    overlap = gate_evidence_overlap(inputs, index)
    return [
        hard_gate(
            f"contract-evidence:{check}",
            False,
            "the contract contradicts the evidence: " + "; ".join(messages),
            n=len(messages),
        )
        for check, messages in found.items()
        if messages
    ] + ([] if overlap is None else [overlap])


def _examples_of(
    index: EvidenceIndex, policies: list[str], metrics: list[str]
) -> tuple[np.ndarray, str]:
    """Shape (E,) bool, examples with a row of one of ``metrics`` for one of ``policies``; and
    the evidence sources holding those rows (``<id> (<path>)``, comma-separated)."""
    seen, codes = np.zeros(index.n_examples, dtype=bool), set[int]()
    for key in ((p, m) for p in policies for m in metrics if (p, m) in index.columns):
        seen |= index.columns[key].has_row
        codes.update(int(c) for c in np.unique(index.columns[key].source) if c >= 0)
    ids, paths = sorted({index.sources[c].split(":", 1)[0] for c in codes}), index.source_paths
    return seen, ", ".join(f"{i} ({paths[i]})" if paths and i in paths else i for i in ids)


def gate_evidence_overlap(inputs: Inputs, index: EvidenceIndex) -> GateResult | None:
    """``hard:evidence-overlap``: the examples of each operational metric a claim names (a cost
    or latency claim) and those of the quality metrics cover each other.

    For such a metric with examples T (a row for the baseline or a candidate) and the quality
    metrics' examples Q, coverage is ``min(|T ∩ Q| / |Q|, |T ∩ Q| / |T|)``; below
    ``statistics.min_pairing_coverage`` the gate fails, naming both sources, the counts and the
    first example ids (escaped) on each side alone. Quality keyed by question hash beside
    telemetry keyed by ``q001`` would otherwise PROMOTE "cheaper at equal quality" on disjoint
    examples. A hard disqualifier (a ceiling on every example) and an operational gate without
    a claim are not checked: they do not pair with quality.

    Returns:
        The gate (lowest coverage), or None when no claim names an operational metric or either
        side has no evidence (``hard:required-metric-evidence`` speaks for that).
    """
    contract = inputs.contract
    quality, quality_sources = _examples_of(
        index, contract.policy_ids, [m.id for m in contract.quality_metrics]
    )
    n_q, floor = int(np.count_nonzero(quality)), contract.statistics.min_pairing_coverage
    operational = {m.id for m in contract.operational_metrics}
    rows = []  # (coverage, metric, its examples, their sources, shared examples)
    for metric in sorted({c.metric for c in contract.claims.items} & operational):
        seen, sources = _examples_of(index, contract.policy_ids, [metric])
        n_t, shared = int(np.count_nonzero(seen)), int(np.count_nonzero(seen & quality))
        if n_t and n_q:
            rows.append((min(shared / n_q, shared / n_t), metric, seen, sources, shared))
    if not rows:
        return None
    coverage, metric, seen, sources, shared = min(rows, key=lambda r: r[0])
    n_t, passed = int(np.count_nonzero(seen)), coverage >= floor
    counts = (
        f"{metric} from {sources} has {n_t} examples, the quality metrics from "
        f"{quality_sources} {n_q}, {shared} in both"
    )
    if passed:
        reason = f"{counts}: coverage {coverage:.3f} >= {floor}"
    else:
        alone = []  # the first 3 example ids (in id order) on each side alone, escaped
        for mask in (seen & ~quality, quality & ~seen):
            picked = np.flatnonzero(mask)
            picked = picked[np.argsort(index.example_rank[picked], kind="stable")[:3]]
            alone.append(", ".join(quoted(str(index.id_array[int(i)])) for i in picked) or "none")
        reason = (
            f"{counts}: coverage {coverage:.3f} is below the floor {floor}; only in {metric}: "
            f"{alone[0]}; only in quality: {alone[1]} (hint: map both sources to the same "
            "example id column; a draft of ragwarrant init pairs each export by its own key)"
        )
    return hard_gate(
        "evidence-overlap",
        passed,
        reason,
        n=shared,
        metric=metric,
        estimate=coverage,
        threshold=floor,
        statistic="shared examples / examples of each side (the smaller)",
    )
