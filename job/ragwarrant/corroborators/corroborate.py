"""Corroborate an LLM judge per (policy, example) and aggregate disagreement and abstention rates.

For each decided example of each policy:

1. the deterministic checks (``checks.check_example``) give a groundedness verdict and the status
   of each leg (retrieval, generation, answer);
2. the judge's groundedness value gives its verdict: supported when ``value >= supported_threshold``
   (``<=`` for a lower-is-better metric). When the groundedness metric has no value, the mean of
   the repeated samples stands in for it;
3. repeated samples of the judgement (``sample_metrics``) whose spread (max − min, metric units)
   exceeds ``sample_disagreement_max`` make the example ABSTAIN: its judge verdict is not used;
4. a non-abstained example with both verdicts *disagrees* when they differ (judge supported vs
   deterministic unsupported, or the reverse), or when the judge rates the answer relevant
   (``>= answer_relevance_threshold``) although it lacks the number, date or quantity asked for.

Rates: ``disagreement_rate = n_disagreements / n_judged`` and
``abstention_rate = n_abstained / n_with_samples``, per policy over all its decided examples and
per (policy, slice). The output carries counts and rates only: no question, response or context
text ever leaves this module.

The lexical threshold is the calibration's threshold for the example's task type when the
calibration has per-task thresholds (``lexical-v2``) and the example's slice names a calibrated
task type (case-insensitive, e.g. slice ``qa`` -> ``QA``), or the contract's ``task_type`` names
one for every example; otherwise (no task type, or ``task_type: unknown``) the pooled threshold,
and the summary's ``warnings`` (so ``decision.json`` and the reports) say how many examples fell
back to it. A conflict with a JSON
record in the context (``checks``: the record leg) makes the deterministic verdict unsupported.
These checks only ever raise disagreement or abstention: they never make a candidate promotable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from ragwarrant.contract import Corroboration, Direction
from ragwarrant.corroborators.calibration import LexicalCalibration, load_calibration
from ragwarrant.corroborators.checks import ExampleChecks, check_example
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.inputs import Inputs
from ragwarrant.outputs import CorroborationRates, CorroborationSummary

ABSTAINED_REASON = "judge-abstained"


@dataclass(frozen=True, slots=True)
class TextRecord:
    """The private texts of one (policy, example); never written to any output."""

    question: str | None
    response: str | None
    contexts: tuple[str, ...] | None
    cited_quotes: tuple[str, ...]


def text_records(tables: Sequence[pa.Table]) -> dict[tuple[str, str], TextRecord]:
    """Key ``TEXT_SCHEMA`` rows by (policy, example); the first non-null value of each field wins.

    Long-layout files repeat an example's texts on every metric row; they collapse here.
    """
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for table in tables:
        for row in table.to_pylist():
            rec = out.setdefault((row["policy_id"], row["example_id"]), {})
            for name in ("question", "response", "contexts", "cited_quotes"):
                if rec.get(name) is None and row.get(name) is not None:
                    rec[name] = row[name]
    return {
        key: TextRecord(
            rec.get("question"),
            rec.get("response"),
            None if rec.get("contexts") is None else tuple(rec["contexts"]),
            tuple(rec.get("cited_quotes") or ()),
        )
        for key, rec in out.items()
    }


@dataclass(frozen=True, slots=True)
class ExampleCorroboration:
    """The corroboration of one (policy, example).

    Attributes:
        policy_id, example_id, slice: the example (slice None when it has none).
        checks: the deterministic checks; None when the example has no text.
        judge_value: the judge's groundedness value (or the samples' mean); None when absent.
        judge_supported: the judge's verdict; None when no value.
        sample_spread: max − min over finite samples (None with fewer than two).
        abstained: the samples disagree beyond the contract threshold.
        groundedness_disagreement: judge and deterministic groundedness verdicts differ.
        answer_disagreement: the judge rates the answer relevant but its type is wrong.
    """

    policy_id: str
    example_id: str
    slice: str | None
    checks: ExampleChecks | None
    judge_value: float | None
    judge_supported: bool | None
    sample_spread: float | None
    abstained: bool
    groundedness_disagreement: bool
    answer_disagreement: bool

    @property
    def judged(self) -> bool:
        """Not abstained, with both a judge and a deterministic groundedness verdict."""
        return (
            not self.abstained
            and self.judge_supported is not None
            and self.checks is not None
            and self.checks.supported is not None
        )

    @property
    def disagreement(self) -> bool:
        """Any disagreement between the judge and the deterministic checks."""
        return self.groundedness_disagreement or self.answer_disagreement


@dataclass(frozen=True)
class CorroborationOutcome:
    """Per-example corroboration and the summary that goes into ``decision.json``.

    Attributes:
        examples: (policy, example id) → its corroboration, for the decided examples.
        summary: counts and rates per policy and per (policy, slice); no text. Its ``warnings``
            name e.g. examples whose task type is unknown, judged at the pooled threshold.
    """

    examples: Mapping[tuple[str, str], ExampleCorroboration]
    summary: CorroborationSummary


def _check_counts(with_checks: list[ExampleChecks]) -> dict[str, int]:
    """Failed legs, fabricated citations and honest refusals over the examples with text."""
    return {
        "n_with_text": len(with_checks),
        "failed_retrieval": sum(c.retrieval == "fail" for c in with_checks),
        "failed_generation": sum(c.generation == "fail" for c in with_checks),
        "failed_answer": sum(c.answer == "fail" for c in with_checks),
        "fabricated_citations": sum(c.fabricated_citation for c in with_checks),
        "honest_refusals": sum(c.honest_refusal for c in with_checks),
    }


def _rates(
    policy: str, slice_value: str | None, items: list[ExampleCorroboration]
) -> CorroborationRates:
    """Counts and rates over ``items``: abstentions over the examples with samples,
    disagreements over the judged ones (``_check_counts`` over the ones with text)."""
    n_sampled = sum(e.sample_spread is not None for e in items)
    n_abs = sum(e.abstained for e in items)
    judged = [e for e in items if e.judged]
    n_dis = sum(e.disagreement for e in judged)
    return CorroborationRates(
        policy_id=policy,
        slice=slice_value,
        n_examples=len(items),
        n_with_samples=n_sampled,
        n_abstained=n_abs,
        abstention_rate=n_abs / n_sampled if n_sampled else None,
        n_judged=len(judged),
        n_disagreements=n_dis,
        disagreement_rate=n_dis / len(judged) if judged else None,
        judge_supported_lexical_unsupported=sum(
            e.groundedness_disagreement and bool(e.judge_supported) for e in judged
        ),
        judge_unsupported_lexical_supported=sum(
            e.groundedness_disagreement and not e.judge_supported for e in judged
        ),
        answer_type_disagreements=sum(e.answer_disagreement for e in judged),
        **_check_counts([e.checks for e in items if e.checks is not None]),
    )


@dataclass(frozen=True, slots=True)
class _Corroborator:
    """The contract's corroboration block, the calibration, the judge's sign and the evidence
    index it reads the judge's values from."""

    config: Corroboration
    calibration: LexicalCalibration
    sign: float
    index: EvidenceIndex

    def task_of(self, slice_value: str | None) -> str | None:
        """The calibrated task type whose lexical threshold judges an example, else None (pooled).

        The contract's ``task_type`` wins (``unknown``: None); without it, the example's slice
        names it. The name matches a task type of the calibration up to case, and that task type
        must have a threshold for the contract's lexical gate.
        """
        declared = self.config.task_type
        name = slice_value if declared is None else None if declared == "unknown" else declared
        wanted = None if name is None else name.casefold()
        gate = self.config.lexical_gate
        tasks = self.calibration.task_thresholds
        return next((t for t in tasks if t.casefold() == wanted and gate in tasks[t]), None)

    def threshold(self, slice_value: str | None) -> float:
        """The lexical gate's threshold for an example's slice: its task type's, else pooled."""
        task, gate = self.task_of(slice_value), self.config.lexical_gate
        if task is None:
            return self.calibration.thresholds[gate]
        return self.calibration.task_thresholds[task][gate]

    def value(self, policy: str, metric: str | None, code: int) -> float | None:
        """The finite value of ``metric`` for (policy, example ``code``), else None."""
        col = None if metric is None else self.index.columns.get((policy, metric))
        if col is None:
            return None
        v = float(col.value[code])
        return v if math.isfinite(v) else None

    def judge_values(self, policy: str, code: int) -> tuple[float | None, list[float]]:
        """Return the judge's groundedness value (else the samples' mean) and the finite samples."""
        judge = self.value(policy, self.config.groundedness_metric, code)
        samples = [
            v for m in self.config.sample_metrics if (v := self.value(policy, m, code)) is not None
        ]
        if judge is None and samples:
            judge = float(np.mean(samples))
        return judge, samples

    def answer_disagrees(self, checks: ExampleChecks, relevance: float | None) -> bool:
        """The judge rates the answer relevant although it lacks the type asked for (no
        refusal)."""
        return (
            relevance is not None
            and relevance >= self.config.answer_relevance_threshold
            and checks.answer_type is not None
            and not checks.answer_type.satisfied
            and not checks.honest_refusal
        )

    def example(
        self, policy: str, code: int, text: TextRecord | None
    ) -> ExampleCorroboration | None:
        """Corroborate one (policy, example); None when it has no text, judge value or sample."""
        config = self.config
        judge, samples = self.judge_values(policy, code)
        if text is None and judge is None:
            return None
        relevance = self.value(policy, config.answer_relevance_metric, code)
        s = self.index.slice[code]
        slice_value = None if s is None else str(s)
        checks = (
            None
            if text is None
            else check_example(
                text.question,
                text.response,
                text.contexts,
                text.cited_quotes,
                lexical_gate=config.lexical_gate,
                lexical_threshold=self.threshold(slice_value),
                context_relevance_floor=config.context_relevance_floor,
                answer_relevance=relevance,
                answer_relevance_threshold=config.answer_relevance_threshold,
            )
        )
        spread = max(samples) - min(samples) if len(samples) >= 2 else None
        abstained = spread is not None and spread > config.sample_disagreement_max
        judge_supported = (
            None if judge is None else self.sign * judge >= self.sign * config.supported_threshold
        )
        g_dis = a_dis = False
        if not abstained and judge_supported is not None and checks is not None:
            g_dis = checks.supported is not None and judge_supported != checks.supported
            a_dis = self.answer_disagrees(checks, relevance)
        return ExampleCorroboration(
            policy_id=policy,
            example_id=str(self.index.example_ids[code]),
            slice=slice_value,
            checks=checks,
            judge_value=judge,
            judge_supported=judge_supported,
            sample_spread=spread,
            abstained=abstained,
            groundedness_disagreement=g_dis,
            answer_disagreement=a_dis,
        )

    def summary(
        self,
        rows: list[CorroborationRates],
        examples: Mapping[tuple[str, str], ExampleCorroboration],
    ) -> CorroborationSummary:
        """The counts and rates, the settings and thresholds applied, and a warning when a per-task
        calibration judged some checked examples at its pooled threshold."""
        config, cal, gate = self.config, self.calibration, self.config.lexical_gate
        checked = [e for e in examples.values() if e.checks is not None]
        tasks = {t for e in checked if (t := self.task_of(e.slice)) is not None}
        pooled = [e for e in checked if self.task_of(e.slice) is None]
        warnings = []
        if cal.task_thresholds and pooled:
            calibrated = ", ".join(cal.task_thresholds)
            if config.task_type is not None:
                warnings.append(
                    f"{len(pooled)} examples judged at the pooled {gate} threshold of "
                    f"{cal.version}: "
                    f"the contract's task_type is {config.task_type!r}, which has no per-task "
                    f"calibration (calibrated: {calibrated})"
                )
            else:
                unknown = ", ".join(sorted({e.slice or "<no slice>" for e in pooled}))
                warnings.append(
                    f"{len(pooled)} examples have no calibrated task type (slices {unknown}; "
                    f"calibrated: {calibrated}): judged at the pooled {gate} threshold of "
                    f"{cal.version}"
                )
        return CorroborationSummary(
            groundedness_metric=config.groundedness_metric,
            supported_threshold=config.supported_threshold,
            answer_relevance_metric=config.answer_relevance_metric,
            sample_metrics=list(config.sample_metrics),
            sample_disagreement_max=config.sample_disagreement_max,
            context_relevance_floor=config.context_relevance_floor,
            lexical_gate=gate,
            lexical_threshold=cal.thresholds[gate],
            lexical_task_thresholds={t: cal.task_thresholds[t][gate] for t in sorted(tasks)},
            calibration_version=cal.version,
            calibration_sha256=cal.sha256,
            max_disagreement_rate=config.max_disagreement_rate,
            max_abstention_rate=config.max_abstention_rate,
            rates=rows,
            warnings=warnings,
        )


def corroborate(
    texts: Mapping[tuple[str, str], TextRecord],
    index: EvidenceIndex,
    config: Corroboration,
    policies: Sequence[str],
    scope: np.ndarray,
    calibration: LexicalCalibration | None = None,
) -> CorroborationOutcome:
    """Corroborate the judge on every decided example of ``policies``.

    Args:
        texts: (policy, example id) → texts, from ``text_records``.
        index: the evidence index (judge values, slices).
        config: the contract's ``corroboration`` block.
        policies: the baseline and the candidates, in output order.
        scope: shape (E,) bool, the decided examples (e.g. the confirmatory split).
        calibration: the lexical calibration; default: the shipped one named by
            ``config.calibration``.

    Returns:
        ``CorroborationOutcome``. An example counts for a policy when it is in scope and has text
        or a judge value for that policy. The summary's ``lexical_threshold`` is the pooled one,
        ``lexical_task_thresholds`` the per-task ones applied.
    """
    cal = calibration if calibration is not None else load_calibration(version=config.calibration)
    sign = 1.0 if config.groundedness_direction is Direction.HIGHER_IS_BETTER else -1.0
    corroborator = _Corroborator(config, cal, sign, index)
    examples: dict[tuple[str, str], ExampleCorroboration] = {}
    rows: list[CorroborationRates] = []
    codes = np.flatnonzero(scope)
    slice_values = sorted({str(s) for s in index.slice[codes] if s is not None})
    for policy in policies:
        items: list[ExampleCorroboration] = []
        for code in codes:
            text = texts.get((policy, str(index.example_ids[code])))
            ec = corroborator.example(policy, int(code), text)
            if ec is None:
                continue
            examples[(policy, ec.example_id)] = ec
            items.append(ec)
        rows.append(_rates(policy, None, items))
        for sv in slice_values:
            in_slice = [e for e in items if e.slice == sv]
            if in_slice:
                rows.append(_rates(policy, sv, in_slice))
    return CorroborationOutcome(examples=examples, summary=corroborator.summary(rows, examples))


def mask_abstentions(
    index: EvidenceIndex, outcome: CorroborationOutcome, metric: str | None
) -> EvidenceIndex:
    """The index with ``metric`` unmeasured wherever the judge abstained (issue 10).

    A score the engine itself declared untrustworthy (its repeated samples disagree) never enters
    a test: the (policy, example) value becomes missing with reason ``judge-abstained``, handled
    by the metric's ``on_missing`` rule and counted per policy in ``missing_values``.

    Args:
        index: the evidence index; not modified.
        outcome: ``corroborate``'s outcome on it.
        metric: the judge's metric (``corroboration.groundedness_metric``); None: no change.
    """
    abstained = [e for e in outcome.examples.values() if e.abstained]
    if metric is None or not abstained:
        return index
    codes = {str(x): i for i, x in enumerate(index.example_ids)}
    columns = dict(index.columns)
    for policy in sorted({e.policy_id for e in abstained}):
        col = columns.get((policy, metric))
        if col is None:
            continue
        at = np.array([codes[e.example_id] for e in abstained if e.policy_id == policy])
        at = at[col.has_row[at] & ~col.missing[at] & ~col.infinite[at]]
        if not at.size:
            continue
        value, missing = col.value.copy(), col.missing.copy()
        value[at], missing[at] = np.nan, True
        reasons = dict(col.missing_reasons)
        reasons[ABSTAINED_REASON] = reasons.get(ABSTAINED_REASON, 0) + int(at.size)
        columns[(policy, metric)] = replace(
            col, value=value, missing=missing, missing_reasons=reasons
        )
    return replace(index, columns=columns)


def corroborate_run(
    inputs: Inputs, index: EvidenceIndex, scope: np.ndarray
) -> tuple[CorroborationSummary | None, EvidenceIndex]:
    """Judge corroboration on the decided examples, when the contract asks for it.

    Returns the summary and the index with the judge's metric unmeasured where it abstained.
    """
    contract = inputs.contract
    if contract.corroboration is None:
        return None, index
    texts = text_records([r.texts for r in inputs.results if r.texts is not None])
    outcome = corroborate(texts, index, contract.corroboration, contract.policy_ids, scope)
    masked = mask_abstentions(index, outcome, contract.corroboration.groundedness_metric)
    return outcome.summary, masked
