"""Hard gates: non-compensatory checks whose failure BLOCKs a candidate, whatever else holds."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ragwarrant.adapters._integrity import visible
from ragwarrant.contract import (
    HardDisqualifier,
    MissingValuePolicy,
    ReleaseContract,
    Splits,
    scale_tolerance,
)
from ragwarrant.display import number, quoted
from ragwarrant.evidence.index import EvidenceIndex, MetricColumn
from ragwarrant.gates.paired import PairedMetric
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.review import HumanLabelSet
from ragwarrant.stats.distributions import binom_cdf
from ragwarrant.stats.magnitude import max_safe_magnitude


def hard_gate(
    gate_id: str,
    passed: bool,
    reason: str,
    *,
    n: int | None = None,
    metric: str | None = None,
    slice_: str | None = None,
    details: Mapping[str, str | int | float | bool | None] | None = None,
    estimate: float | None = None,
    threshold: float | None = None,
    statistic: str | None = None,
) -> GateResult:
    """Build a hard gate's result (``hard:<gate_id>``)."""
    return GateResult(
        id=f"hard:{gate_id}",
        kind="hard",
        status=GateStatus.PASS if passed else GateStatus.FAIL,
        metric=metric,
        slice=slice_,
        n=n,
        reason=reason,
        estimate=estimate,
        threshold=threshold,
        statistic=statistic,
        details=dict(details or {}),
    )


def gate_required_evidence(
    index: EvidenceIndex, needed: list[str], baseline: str, candidate: str, scope: np.ndarray
) -> GateResult:
    """Every metric the contract needs has rows for both policies among the decided examples."""
    missing = []
    for metric in needed:
        for policy in (baseline, candidate):
            col = index.columns.get((policy, metric))
            if col is None or not np.any(col.has_row & scope):
                missing.append(f"{policy}/{metric}")
    return hard_gate(
        "required-metric-evidence",
        not missing,
        f"no evidence for {', '.join(missing[:10])}" + (" …" if len(missing) > 10 else "")
        if missing
        else f"all {len(needed)} needed metrics have evidence for both policies",
        details={"missing": len(missing)} if missing else None,
    )


def gate_provenance(index: EvidenceIndex, config_missing: list[str]) -> GateResult:
    """Every row names its source and the source's sha256; every policy config was hashed."""
    problems = []
    if index.rows_without_provenance:
        problems.append(f"{index.rows_without_provenance} evidence rows without source or sha256")
    if config_missing:
        problems.append("policy config not hashed: " + ", ".join(config_missing))
    every = f"all {index.n_rows} rows and the policy configs carry provenance"
    return hard_gate("provenance", not problems, "; ".join(problems) or every)


def gate_duplicates(index: EvidenceIndex, policies: Sequence[str]) -> GateResult:
    """No (policy, example, metric) of any policy the contract names has more than one row, and
    no two example ids differ only by case, white space or invisible characters
    (``evidence.ids.loose_example_id``; third trial: ``'q1 '`` and ``'Q1'`` beside ``'q1'``
    tripled every example and narrowed the bounds).

    Every declared policy is checked, not only the pair under test: a duplicate in a candidate
    that selection drops would otherwise change the ranking (and the pick) unseen.
    """
    if index.n_id_variants:
        seen, other = index.id_variants[0]
        return hard_gate(
            "duplicate-rows",
            False,
            f"{index.n_id_variants} example ids equal another after ignoring case, white space "
            f"and invisible characters (first: example {visible(other)} and example "
            f"{visible(seen)}): one example written two ways would count twice",
            details={"id_variants": index.n_id_variants},
        )
    count = sum(index.duplicates_by_policy.get(p, 0) for p in policies)
    if count:
        first = next(d for d in index.duplicates if d.policy_id in policies)
        return hard_gate(
            "duplicate-rows",
            False,
            f"{count} duplicated (policy, example, metric) keys; first: policy {first.policy_id}, "
            f"example {first.example_id}, metric {first.metric} appears {first.count} times "
            f"(first at {first.first_source.split(':')[0]} row {first.first_row})",
            details={"duplicated_keys": count},
        )
    return hard_gate("duplicate-rows", True, "every (policy, example, metric) has one row")


def gate_example_attributes(index: EvidenceIndex) -> GateResult:
    """An example's group and slice agree across all of its rows."""
    conflicts = index.conflicting_attributes
    return hard_gate(
        "example-attributes",
        not conflicts,
        f"{len(conflicts)} examples have rows that disagree on their {conflicts[0][0]} "
        f"(first: example {conflicts[0][1]})"
        if conflicts
        else "group and slice agree across each example's rows",
    )


def _mixed_with_undeclared(index: EvidenceIndex, splits: Splits) -> list[str]:
    """Example ids with a row in the confirmatory split and a row in a split the contract does
    not name (a 'train' row beside a 'holdout' row would otherwise be paired and decided)."""
    declared = {splits.confirmatory, splits.development}
    undeclared = [label for label in index.split_labels if label not in declared]
    if not undeclared:
        return []
    other = np.zeros(index.n_examples, dtype=bool)
    for label in undeclared:
        other |= index.in_split(label)
    return [str(x) for x in index.example_ids[index.in_split(splits.confirmatory) & other]]


def gate_leakage(index: EvidenceIndex, contract: ReleaseContract) -> GateResult:
    """No example id is in both the development and the confirmatory split, nor in the
    confirmatory split and a split value the contract does not name."""
    splits = contract.splits
    if splits is not None and (mixed := _mixed_with_undeclared(index, splits)):
        return hard_gate(
            "split-leakage",
            False,
            f"{len(mixed)} example ids are in the {quoted(splits.confirmatory)} split and in "
            "another split value that the contract does not name "
            f"(first: {quoted(str(mixed[0]))}); every row of a confirmatory example must be in "
            "the confirmatory split",
            details={"leaked_examples": len(mixed)},
        )
    if splits is None or splits.development is None:
        return GateResult(
            id="hard:split-leakage",
            kind="hard",
            status=GateStatus.NOT_APPLICABLE,
            reason="the contract declares no development split",
        )
    both = index.example_ids[
        index.in_split(splits.development) & index.in_split(splits.confirmatory)
    ].tolist()
    if both:
        return hard_gate(
            "split-leakage",
            False,
            f"{len(both)} example ids are in both the {quoted(splits.development)} and "
            f"{quoted(splits.confirmatory)} splits (first: {quoted(str(both[0]))})",
            details={"leaked_examples": len(both)},
        )
    return hard_gate(
        "split-leakage", True, "no example id is in both the development and confirmatory splits"
    )


def _unobserved(
    index: EvidenceIndex, metric: str, policies: tuple[str, str], scope: np.ndarray
) -> str | None:
    """Which of ``policies`` have rows of ``metric`` in ``scope`` but no finite value there
    (every row missing or infinite: the evaluator failed), as a sentence; None when none."""
    empty = []
    for p in policies:
        col = index.columns.get((p, metric))
        rows = np.zeros(0, bool) if col is None else col.has_row & scope
        if col is not None and rows.any() and not np.any(rows & ~col.missing & ~col.infinite):
            first = index.locate(p, metric, int(np.flatnonzero(rows)[0]))
            empty.append(f"policy {p}: all {int(rows.sum())} rows (first: {first})")
    return "no observed value for " + " and ".join(empty) if empty else None


def gate_non_finite(
    contract: ReleaseContract,
    pairs: Mapping[str, PairedMetric],
    baseline: str,
    candidate: str,
    index: EvidenceIndex,
    scope: np.ndarray,
) -> GateResult:
    """Count missing or infinite values in metrics whose ``on_missing`` policy is ``fail``.

    Any such value fails the gate; so does, whatever ``on_missing`` says, a metric one policy
    has rows of but no finite value (the evaluator failed on every row): ``worst`` would
    impute every value and report a loss nobody measured, ``exclude`` would test nothing.
    """
    policy = {m.id: m.on_missing for m in contract.quality_metrics}
    policy.update({m.id: m.on_missing for m in contract.operational_metrics})
    details: dict[str, str | int | float | bool | None] = {}
    failing, unobserved = [], []
    for metric, pm in pairs.items():
        total = pm.missing_candidate + pm.missing_baseline
        details[f"{metric}.missing.{baseline}"] = pm.missing_baseline
        details[f"{metric}.missing.{candidate}"] = pm.missing_candidate
        if (none := _unobserved(index, metric, (baseline, candidate), scope)) is not None:
            unobserved.append(f"{metric}: {none}")
        elif total and policy.get(metric, MissingValuePolicy.FAIL) is MissingValuePolicy.FAIL:
            where = ""
            for p in (baseline, candidate):
                col = index.columns.get((p, metric))
                if col is None:
                    continue
                bad = np.flatnonzero((col.missing | col.infinite) & scope)
                if bad.size:
                    where = f" (first: {index.locate(p, metric, int(bad[0]))}, policy {p})"
                    break
            failing.append(
                f"{metric}: {pm.missing_baseline} baseline, {pm.missing_candidate} candidate{where}"
            )
    reasons = []
    if unobserved:
        reasons.append(
            "a metric without any observed value (nothing to impute or exclude around: did "
            "its evaluator fail?) — " + "; ".join(unobserved)
        )
    if failing:
        reasons.append(
            "missing, NaN or infinite values in metrics whose contract says on_missing: fail — "
            + "; ".join(failing)
        )
    return hard_gate(
        "non-finite-values",
        not reasons,
        "; ".join(reasons) or "no missing values where the contract forbids them",
        details=details,
    )


def _declared_ranges(contract: ReleaseContract) -> dict[str, tuple[float, float, str]]:
    """Metric id → (lowest, highest, label) of its declared range (scale or min/max value,
    -inf or inf where none is set).

    A quality scale is widened by ``contract.scale_tolerance`` at each end (float rounding).
    """
    ranges: dict[str, tuple[float, float, str]] = {}
    for m in contract.quality_metrics:
        low, high = m.scale
        slack = scale_tolerance(low, high)  # float rounding at the ends is on the scale
        ranges[m.id] = (low - slack, high + slack, f"the scale [{number(low)}, {number(high)}]")
    for om in contract.operational_metrics:
        lo = -math.inf if om.min_value is None else om.min_value
        hi = math.inf if om.max_value is None else om.max_value
        ranges[om.id] = (lo, hi, f"the range [{lo:g}, {hi:g}]")
    return ranges


def gate_value_range(
    index: EvidenceIndex,
    contract: ReleaseContract,
    policies: tuple[str, str],
    scope: np.ndarray,
) -> GateResult:
    """Every value lies in its metric's declared range, and is small enough to aggregate.

    Quality metrics must lie on their ``scale``; operational metrics within ``min_value`` and
    ``max_value`` (costs, latencies and calls are >= 0 unless the contract says otherwise). An
    out-of-range value would otherwise shift a mean: 3.0 on a [0, 1] scale, or a negative cost,
    can turn a loss into a win. Every value must also have ``|x| <= max_safe_magnitude(n)`` for
    the ``n`` examples in scope: beyond it the statistics' sums of squares overflow float64 (a cost
    of 1e300 gave a numpy overflow warning and a bound contradicting its own estimate).
    """
    limit = max_safe_magnitude(int(np.sum(scope)))
    count = huge = 0
    first: tuple[str, str, np.ndarray, str] | None = None  # (policy, metric, flags, what)
    first_huge: tuple[str, str, np.ndarray, str] | None = None
    huge_what = f"exceeds {limit:.3g} in magnitude"
    details: dict[str, str | int | float | bool | None] = {}
    for metric, (lo, hi, label) in _declared_ranges(contract).items():
        for policy in policies:
            col = index.columns.get((policy, metric))
            if col is None:
                continue
            finite = scope & np.isfinite(col.raw)
            bad = finite & ((col.raw < lo) | (col.raw > hi))
            too_big = finite & (np.abs(col.raw) > limit)  # max_safe_magnitude, above
            n_bad, n_big = int(np.sum(bad)), int(np.sum(too_big))
            if n_bad:
                details[f"{metric}.out_of_range.{policy}"] = n_bad
                count += n_bad
                first = first or (policy, metric, bad, f"is outside {label}")
            if n_big:
                details[f"{metric}.too_large.{policy}"] = n_big
                huge += n_big
                first_huge = first_huge or (policy, metric, too_big, huge_what)
    flagged = first_huge or first
    if flagged is None:
        return hard_gate("value-range", True, "every value lies in its metric's declared range")
    # the first flagged example: <file> row <n>: <metric> = <value> for policy <p> <what>
    p, m, flags, what = flagged
    i = int(np.flatnonzero(flags)[0])
    value = float(index.columns[(p, m)].raw[i])
    at = f"{index.locate(p, m, i)}: {m} = {value!r} for policy {p} {what}"
    reason = (
        f"{huge} values too large to aggregate over {int(np.sum(scope))} examples without "
        f"overflow; first: {at}"
        if huge
        else f"{count} values outside their declared range; first: {at}"
    )
    return hard_gate("value-range", False, reason, details=details)


def gate_pairing_coverage(pairs: Mapping[str, PairedMetric], floor: float) -> GateResult:
    """Paired examples over examples seen for either policy reach the contract's floor."""
    details: dict[str, str | int | float | bool | None] = {
        f"{m}.coverage": round(p.coverage, 6) for m, p in pairs.items()
    }
    low = {m: p.coverage for m, p in pairs.items() if p.coverage < floor}
    if low:
        worst = min(low, key=lambda m: low[m])
        return hard_gate(
            "pairing-coverage",
            False,
            f"pairing coverage {low[worst]:.3f} for {worst} is below the floor {floor}",
            metric=worst,
            estimate=low[worst],
            threshold=floor,
            statistic="paired / examples with a row for either policy",
            details=details,
        )
    lowest = min((p.coverage for p in pairs.values()), default=1.0)
    return hard_gate(
        "pairing-coverage",
        True,
        f"lowest pairing coverage {lowest:.3f} >= {floor}",
        estimate=lowest,
        threshold=floor,
        details=details,
    )


def gate_paired_n(pairs: Mapping[str, PairedMetric], minimum: int) -> GateResult:
    """Every tested metric has at least the contract's minimum paired n."""
    lowest_metric = min(pairs, key=lambda m: pairs[m].n)
    n = pairs[lowest_metric].n
    return hard_gate(
        "paired-n",
        n >= minimum,
        f"paired n {n} for {lowest_metric} "
        f"{'>=' if n >= minimum else 'is below the minimum'} {minimum}",
        n=n,
        metric=lowest_metric,
    )


def gate_slice_paired_n(
    slice_value: str, metric: str, n: int, minimum: int, present: Sequence[str] = ()
) -> GateResult:
    """A protected slice the evidence has, or (FAIL) one it lacks, named with the slices it has.

    A slice the evidence has but with fewer than ``minimum`` pairs is not a defect: its
    noninferiority gate is INCONCLUSIVE (``gates.noninferiority.gate_too_few_pairs``).
    """
    found = n > 0 or slice_value in present
    shown = ", ".join(quoted(s) for s in sorted(present)[:20]) or "none"
    if not found:
        tail = f" (the evidence has no slice {quoted(slice_value)}; its slices: {shown})"
    elif n < minimum:
        tail = ": its noninferiority gate is INCONCLUSIVE, not tested"
    else:
        tail = ""
    return hard_gate(
        f"slice-paired-n:{metric}@{slice_value}",
        found,
        f"protected slice {quoted(slice_value)}: paired n {n} for {metric} "
        f"{'>=' if n >= minimum else 'is below the minimum'} {minimum}{tail}",
        n=n,
        metric=metric,
        slice_=slice_value,
    )


def gate_missing_balance(
    metric: str,
    pm: PairedMetric,
    alpha: float,
    notes: Mapping[str, tuple[str, float]] | None = None,
) -> GateResult:
    """Examples unpaired because one policy lacks a value fall evenly on both policies.

    ``notes``: side ("candidate", "baseline") -> (sentence, p-value) of
    ``gates.paired.missingness_notes``, a diagnostic under ``on_missing: exclude``: appended to
    the reason and kept in ``details`` (``missingness_<side>``, ``missingness_<side>_p``);
    it does not decide.

    Under ``exclude`` (or absent rows under any rule) an example whose candidate value is
    missing leaves the test; when the candidate is missing where it fails, the test sees only its
    successes (third trial: a candidate blank on its failures, 4.9 % of 1,500 examples, PROMOTEd
    with a true loss of 0.061 beyond the margin 0.05). Under H0 "missingness does not depend on
    the policy", each one-sided unpaired example is the candidate's with probability 1/2; the
    gate fails when the exact two-sided binomial test rejects at ``alpha``: the distribution is
    symmetric, so the "as likely or less likely" rule of ``scipy.stats.binomtest`` is twice the
    smaller tail, min(1, 2 min(P(X <= k), P(X >= k))) (1 when no example is unpaired).
    """
    k_c, k_b = pm.unpaired_candidate, pm.unpaired_baseline
    n = k_c + k_b
    low = binom_cdf(k_c, n, 0.5) if n else 1.0
    high = 1.0 - binom_cdf(k_c - 1, n, 0.5) if k_c > 0 else 1.0
    p = min(1.0, 2.0 * min(low, high))
    details: dict[str, str | int | float | bool | None] = {
        "unpaired_candidate": k_c,
        "unpaired_baseline": k_b,
        "p_value": p,
    }
    for side, (text, p_side) in (notes or {}).items():
        details |= {f"missingness_{side}": text, f"missingness_{side}_p": p_side}
    seen = "".join(f"; {text}" for text, _ in (notes or {}).values())
    arm = "candidate" if k_c > k_b else "baseline"
    reason = (
        f"{metric}: the {arm} lacks a value on {max(k_c, k_b)} examples where the other "
        f"policy has one, against {min(k_c, k_b)} the other way (binomial p {p:.3g} <= "
        f"alpha {alpha:g}): values missing on one policy only can hide its failures; give "
        "both policies the same examples (on_missing: worst imputes a blank value, never "
        "a row that is absent)"
        if p <= alpha
        else f"{metric}: unpaired examples fall on both policies alike ({k_c} candidate, {k_b} "
        "baseline)"
    )
    gid = f"missing-balance:{metric}"
    return hard_gate(gid, p > alpha, reason + seen, metric=metric, details=details)


def _gate_constant(
    gid: str, metric: str, subject: tuple[str, str, str], values: np.ndarray
) -> GateResult:
    """``values`` (shape (2n,): both policies' values of ``metric``) are not all one value;
    ``subject``: (what, its "is", its "varies") for the reason."""
    what, is_, varies = subject
    constant = values.size > 0 and float(np.ptp(values)) == 0.0
    return hard_gate(
        gid,
        not constant,
        f"{what} {is_} constant ({values[0]:g}) across both policies, so cannot tell them apart"
        if constant
        else f"{what} {varies}",
        metric=metric,
        n=values.size // 2,
    )


def gate_constant_signal(metric: str, pm: PairedMetric) -> GateResult:
    """A quality metric varies across the paired values of both policies."""
    values = np.concatenate([pm.candidate, pm.baseline])
    subject = (metric, "is", "varies")
    return _gate_constant(f"constant-quality-signal:{metric}", metric, subject, values)


def gate_constant_labels(metric: str, labels: HumanLabelSet, file: str) -> GateResult:
    """The human labels of ``metric`` (from ``file``) vary across both policies' labelled items.

    One value everywhere (a reviewer who marked everything alike, a broken export) carries no
    information about either policy, yet would give the judge-corrected bound no spread: it
    BLOCKs, as a constant quality signal in the evidence does.
    """
    values = np.concatenate([labels.candidate_values, labels.baseline_values])
    subject = (f"the human labels of {metric} ({file})", "are", "vary")
    return _gate_constant(f"constant-human-labels:{metric}", metric, subject, values)


_DISQUALIFIER_STATISTICS: dict[str, Callable[[np.ndarray], float]] = {
    "sum": lambda v: float(np.sum(v)),
    "max": lambda v: float(np.max(v)),
    "mean": lambda v: float(np.mean(v)),
}
"""A disqualifier's statistic over the candidate's values."""


def gate_disqualifier(
    dq: HardDisqualifier, col: MetricColumn | None, scope: np.ndarray
) -> GateResult:
    """A hard disqualifier's statistic over the candidate's values ``col`` on ``scope`` (shape
    (E,) bool) stays within its limits: fails without evidence, with missing values, or beyond
    them."""
    gid = f"disqualifier:{dq.metric}"
    if col is None or not np.any(col.has_row & scope):
        return hard_gate(
            gid,
            False,
            f"no evidence for {dq.metric}: the limit cannot be checked",
            metric=dq.metric,
        )
    rows = col.has_row & scope
    n_missing = int(np.sum((col.missing | col.infinite) & rows))
    if n_missing:
        return hard_gate(
            gid,
            False,
            f"{n_missing} missing values in {dq.metric}: the limit cannot be checked",
            metric=dq.metric,
        )
    values = col.value[rows]
    stat = _DISQUALIFIER_STATISTICS[dq.statistic](values)
    over = (dq.max_value is not None and stat > dq.max_value) or (
        dq.min_value is not None and stat < dq.min_value
    )
    limits = [f">= {dq.min_value:g}"] if dq.min_value is not None else []
    limits += [f"<= {dq.max_value:g}"] if dq.max_value is not None else []
    return hard_gate(
        gid,
        not over,
        f"candidate {dq.statistic} of {dq.metric} is {stat:g}; the limit is {' and '.join(limits)}",
        metric=dq.metric,
        estimate=stat,
        threshold=dq.max_value if dq.max_value is not None else dq.min_value,
        statistic=dq.statistic,
        n=int(values.size),
    )
