"""Validate the validator: planted cases the engine must catch before it may decide anything.

Every case is built in memory (no files) and goes through the functions the job itself uses:
``evidence.index.build_index``, ``gates.candidate.evaluate_candidate``,
``decision.classify_candidate``, ``corroborators.corroborate.corroborate`` and
``gates.corroboration.gate_corroboration``. Each case states the status of **every** leg (every
gate of the candidate; or retrieval, generation, answer and the judge comparison of an example)
and the final class; a case passes only when all of them match, so a gate that disappears,
appears or flips fails it. ``run`` calls ``require_selftest`` first: a failed self-test is an
``InternalError`` (``selftest-failed``, exit 70, class ERROR): an unproven engine decides nothing.

Engine cases use the contract minimum of 2000 bootstrap resamples and 60–180 paired examples, so
the whole self-test takes a fraction of a second (``ragwarrant selftest`` prints the time).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, cast

import numpy as np
import pyarrow as pa

from ragwarrant import decision as _decision
from ragwarrant.contract import ReleaseContract
from ragwarrant.corroborators import corroborate as _corroborate
from ragwarrant.corroborators.corroborate import TextRecord
from ragwarrant.errors import InternalError
from ragwarrant.evidence import index as _index
from ragwarrant.evidence.schema import EVIDENCE_SCHEMA, make_evidence_table
from ragwarrant.gates import candidate as _candidate
from ragwarrant.gates import corroboration as _corroboration
from ragwarrant.outputs import GateResult, ValidationCheck
from ragwarrant.review import HumanLabelSet

_SEED = 20261129
_PASS, _FAIL, _NA, _INC = "pass", "fail", "not-applicable", "inconclusive"


@dataclass(frozen=True)
class CaseResult:
    """One planted case.

    Attributes:
        name: stable case id, e.g. ``reject-quality-loss``.
        expected_class, actual_class: the final class (a decision class, or a corroboration
            verdict).
        legs: how many legs the case checked (besides the class).
        mismatches: ``leg: expected X, found Y`` for every leg that differs (empty = passed).
        seconds: wall time of the case.
    """

    name: str
    expected_class: str
    actual_class: str
    legs: int
    mismatches: tuple[str, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        """Every leg and the class matched."""
        return not self.mismatches and self.expected_class == self.actual_class


@dataclass(frozen=True)
class SelftestReport:
    """All cases and the total wall time (seconds)."""

    cases: tuple[CaseResult, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        """Every case passed."""
        return all(c.passed for c in self.cases)

    @property
    def failed(self) -> list[CaseResult]:
        """The cases that did not pass."""
        return [c for c in self.cases if not c.passed]

    def check(self) -> ValidationCheck:
        """The ``engine-selftest`` validation check a run records after its self-test passed."""
        message = (
            f"{len(self.cases)} planted cases passed in {self.seconds:.3f} s (ragwarrant selftest)"
        )
        return ValidationCheck(
            id="engine-selftest", target="engine", status="pass", message=message
        )


# --------------------------------------------------------------------------------------------
# In-memory evidence and contracts


def _contract(**update: Any) -> ReleaseContract:
    data: dict[str, Any] = {
        "id": "selftest",
        "version": "1",
        "baseline": {"policy_id": "base", "config": "base.json"},
        "candidates": [{"policy_id": "cand", "config": "cand.json"}],
        "evidence": [
            {"id": "e", "path": "e.csv", "format": "csv", "metrics": {"correct": "correct"}}
        ],
        "quality_metrics": [{"id": "correct", "margin_abs": 0.05}],
        "operational_metrics": [{"id": "cost_usd", "unit": "usd"}],
        "claims": {"items": [{"kind": "cost-reduction", "metric": "cost_usd"}]},
        "statistics": {"resamples": 2000, "seed": _SEED, "min_paired_n": 30},
        "evidence_class": "confirmatory",
    }
    data.update(update)
    return ReleaseContract.model_validate(data)


def _table(
    values: Mapping[str, Mapping[str, np.ndarray]],
    *,
    slices: np.ndarray | None = None,
    split: str | None = None,
) -> pa.Table:
    """Canonical rows from policy → metric → values; example i is ``ex<i>``."""
    cols: dict[str, list[Any]] = {f.name: [] for f in EVIDENCE_SCHEMA}
    for policy, metrics in values.items():
        for metric, arr in metrics.items():
            n = len(arr)
            cols["policy_id"] += [policy] * n
            cols["example_id"] += [f"ex{i}" for i in range(n)]
            cols["group_id"] += [None] * n
            cols["slice"] += [None] * n if slices is None else [str(s) for s in slices[:n]]
            cols["split"] += [split] * n
            cols["metric"] += [metric] * n
            cols["value"] += [float(v) for v in arr]
            cols["missing_reason"] += [None] * n
            cols["source"] += ["selftest:planted@1"] * n
            cols["source_sha256"] += ["0" * 64] * n
            cols["source_row"] += list(range(1, n + 1))
    return make_evidence_table(cols)


def _cost(n: int) -> np.ndarray:
    return 0.010 + 0.001 * (np.arange(n) % 7)


def _pair(
    base: np.ndarray, cand: np.ndarray, cost_ratio: float = 0.5
) -> dict[str, dict[str, np.ndarray]]:
    cost = _cost(base.size)
    return {
        "base": {"correct": base, "cost_usd": cost},
        "cand": {"correct": cand, "cost_usd": cost * cost_ratio},
    }


def _hard(
    overrides: Mapping[str, str] | None = None, *, leakage: str = _NA, slice_n: tuple[str, ...] = ()
) -> dict[str, str]:
    """Every hard gate of the self-test contract passing, except ``overrides`` (id → status)."""
    legs = {
        "hard:required-metric-evidence": _PASS,
        "hard:provenance": _PASS,
        "hard:duplicate-rows": _PASS,
        "hard:example-attributes": _PASS,
        "hard:split-leakage": leakage,
        "hard:non-finite-values": _PASS,
        "hard:value-range": _PASS,
        "hard:pairing-coverage": _PASS,
        "hard:paired-n": _PASS,
        "hard:constant-quality-signal:correct": _PASS,
        "hard:missing-balance:correct": _PASS,
    }
    legs.update({f"hard:slice-paired-n:correct@{s}": _PASS for s in slice_n})
    legs.update(overrides or {})
    return legs


_CLAIM = "claim:cost-reduction:cost_usd"
_OPERATIONAL = "operational:cost_usd"  # informational: never decides, always present
_NI = "noninferiority:correct"


def _compare(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    out = []
    for leg in sorted(set(expected) | set(actual)):
        e, a = expected.get(leg, "absent"), actual.get(leg, "absent")
        if e != a:
            out.append(f"{leg}: expected {e}, found {a}")
    return out


@dataclass(frozen=True)
class _EngineCase:
    name: str
    contract: ReleaseContract
    table: pa.Table
    expected_legs: dict[str, str]
    expected_class: str
    scope_split: str | None = None
    extra_gates: Callable[[], list[GateResult]] | None = None
    reason_prefix: str | None = None
    labels: Mapping[str, HumanLabelSet] | None = None


def _reject_quality_loss() -> _EngineCase:
    """A cheaper candidate whose quality loss (-0.25) exceeds the margin (0.05): REJECT."""
    n = 120
    base = (np.arange(n) % 5 != 0).astype(float)
    cand = base.copy()
    cand[np.flatnonzero(base == 1)[:30]] = 0.0
    return _EngineCase(
        "reject-quality-loss",
        _contract(),
        _table(_pair(base, cand, 0.3)),
        {**_hard(), _NI: _FAIL, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "REJECT",
        reason_prefix="noninferiority-loss",
    )


def _reject_protected_slice_loss() -> _EngineCase:
    """A loss confined to protected slice 'a' while the aggregate improves: REJECT."""
    n = 180
    sl = np.array(["a", "b", "c"])[np.arange(n) % 3]
    base = ((np.arange(n) // 3) % 2 == 0).astype(float)
    cand = base.copy()
    cand[sl != "a"] = 1.0
    cand[np.flatnonzero((sl == "a") & (base == 1))[:20]] = 0.0
    c = _contract(protected_slices=[{"value": "a", "margin_abs": 0.1, "min_paired_n": 30}])
    return _EngineCase(
        "reject-protected-slice-loss",
        c,
        _table(_pair(base, cand), slices=sl),
        {**_hard(slice_n=("a",)), _NI: _PASS, f"{_NI}@a": _FAIL, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "REJECT",
        reason_prefix="noninferiority-loss",
    )


def _inconclusive_straddles_margin() -> _EngineCase:
    """A loss of exactly the margin on 60 pairs: the interval straddles -margin: INCONCLUSIVE."""
    n = 60
    base = (np.arange(n) % 5 != 0).astype(float)
    cand = base.copy()
    cand[np.flatnonzero(base == 1)[:3]] = 0.0
    return _EngineCase(
        "inconclusive-straddles-margin",
        _contract(),
        _table(_pair(base, cand)),
        {**_hard(), _NI: _INC, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "INCONCLUSIVE",
        reason_prefix="unresolved",
    )


def _inconclusive_tie_at_margin() -> _EngineCase:
    """60 pairs, 2 better and 2 worse: a percentile bound lands on -margin (p > alpha): not PROMOTE.

    The first landing passed on LCB == -margin with p = 0.10 (issue 10); the decision must agree
    with its own test, so this is INCONCLUSIVE.
    """
    base = (np.arange(60) % 10 < 7).astype(float)
    cand = base.copy()
    cand[np.flatnonzero(base == 1)[:2]] = 0.0
    cand[np.flatnonzero(base == 0)[:2]] = 1.0
    return _EngineCase(
        "inconclusive-tie-at-margin",
        _contract(),
        _table(_pair(base, cand)),
        {**_hard(), _NI: _INC, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "INCONCLUSIVE",
        reason_prefix="unresolved",
    )


def _inconclusive_all_tied() -> _EngineCase:
    """40 all-tied pairs: a [0, 0] bootstrap interval cannot rule out a 5-point loss: not PROMOTE.

    With no discordant pair, Tango's bound excludes -0.05 only from 52 pairs (issue 10).
    """
    base = (np.arange(40) % 10 < 7).astype(float)
    return _EngineCase(
        "inconclusive-all-tied",
        _contract(),
        _table(_pair(base, base.copy())),
        {**_hard(), _NI: _INC, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "INCONCLUSIVE",
        reason_prefix="unresolved",
    )


def _block_constant_quality_signal() -> _EngineCase:
    """A constant quality signal cannot tell the policies apart: BLOCK."""
    ones = np.ones(120)
    return _EngineCase(
        "block-constant-quality-signal",
        _contract(),
        _table(_pair(ones, ones.copy())),
        _hard({"hard:constant-quality-signal:correct": _FAIL}),
        "BLOCK",
        reason_prefix="blocked",
    )


def _base_70pct() -> np.ndarray:
    """120 baseline scores, 70 % correct: the healthy baseline of the remaining cases."""
    return (np.arange(120) % 10 < 7).astype(float)


def _block_duplicated_rows() -> _EngineCase:
    """A duplicated (policy, example, metric) row: BLOCK."""
    base = _base_70pct()
    t = _table(_pair(base, base.copy()))
    return _EngineCase(
        "block-duplicated-rows",
        _contract(),
        pa.concat_tables([t, t.slice(5, 1)]),
        _hard({"hard:duplicate-rows": _FAIL}),
        "BLOCK",
        reason_prefix="blocked",
    )


def _block_value_out_of_scale() -> _EngineCase:
    """Out-of-scale quality values (3.0 on a [0, 1] scale) that would turn a loss into a win."""
    base = _base_70pct()
    lossy = base.copy()
    lossy[np.flatnonzero(base == 1)[:20]] = 0.0
    lossy[np.flatnonzero(base == 0)[:4]] = 3.0
    return _EngineCase(
        "block-value-out-of-scale",
        _contract(),
        _table(_pair(base, lossy)),
        _hard({"hard:value-range": _FAIL}),
        "BLOCK",
        reason_prefix="blocked",
    )


def _block_split_leakage() -> _EngineCase:
    """An example in both the development and the confirmatory split: BLOCK."""
    base = _base_70pct()
    dev_row = _table({"base": {"dev_only_score": np.array([1.0])}}, split="dev")
    c = _contract(splits={"development": "dev", "confirmatory": "conf"})
    return _EngineCase(
        "block-split-leakage",
        c,
        pa.concat_tables([_table(_pair(base, base.copy()), split="conf"), dev_row]),
        _hard(leakage=_FAIL),
        "BLOCK",
        scope_split="conf",
        reason_prefix="blocked",
    )


def _promote_better_and_cheaper() -> _EngineCase:
    """A genuinely better and cheaper candidate: PROMOTE (guards against blocking everything)."""
    base = _base_70pct()
    cand = base.copy()
    cand[np.flatnonzero(base == 0)[:12]] = 1.0
    return _EngineCase(
        "promote-better-and-cheaper",
        _contract(),
        _table(_pair(base, cand)),
        {**_hard(), _NI: _PASS, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "PROMOTE",
        reason_prefix="every gate passed",
    )


def _reject_judge_bias_on_labels() -> _EngineCase:
    """A judge that sees a tie where reviewers see a 25-point loss: the labels decide: REJECT.

    On the judge's scores alone (120 pairs, 2 better and 2 worse) the candidate is noninferior;
    human labels on every other example show the loss, and the gate decides on the PPI++ bound
    (issue 32).
    """
    n = 120
    base = (np.arange(n) % 5 != 0).astype(float)
    judged = base.copy()
    judged[np.flatnonzero(base == 1)[:2]] = 0.0
    judged[np.flatnonzero(base == 0)[:2]] = 1.0
    human = judged.copy()
    human[np.flatnonzero(judged == 1)[2:32]] = 0.0
    ids = np.arange(0, n, 2)
    labels = HumanLabelSet(
        "correct", "base", "cand", tuple(f"ex{i}" for i in ids), human[ids], base[ids], ids.size, 0
    )
    c = _contract(
        quality_metrics=[
            {"id": "correct", "margin_abs": 0.05, "human_labels": {"file": "l", "queue": "q"}}
        ]
    )
    return _EngineCase(
        "reject-judge-bias-on-labels",
        c,
        _table(_pair(base, judged)),
        {**_hard(), _NI: _FAIL, _CLAIM: _PASS, _OPERATIONAL: _NA},
        "REJECT",
        reason_prefix="noninferiority-loss",
        labels={"correct": labels},
    )


# The planted engine cases, in report order; each builder documents what it plants.
_ENGINE_CASES: tuple[Callable[[], _EngineCase], ...] = (
    _reject_quality_loss,
    _reject_protected_slice_loss,
    _inconclusive_straddles_margin,
    _inconclusive_tie_at_margin,
    _inconclusive_all_tied,
    _block_constant_quality_signal,
    _block_duplicated_rows,
    _block_value_out_of_scale,
    _block_split_leakage,
    _promote_better_and_cheaper,
    _reject_judge_bias_on_labels,
)


def _engine_cases() -> list[_EngineCase]:
    return [build() for build in _ENGINE_CASES]


def _run_engine_case(case: _EngineCase) -> tuple[CaseResult, Any]:
    t0 = time.perf_counter()
    idx = _index.build_index(case.table)
    if case.scope_split is None:
        scope = np.ones(idx.n_examples, dtype=bool)
    else:
        scope = idx.in_split(case.scope_split)
    ev = _candidate.evaluate_candidate(
        idx,
        case.contract,
        "cand",
        scope,
        config_missing=[],
        scope_name=case.scope_split or "all",
        labels=case.labels,
    )
    verdict = _decision.classify_candidate(ev, case.contract, [])
    mismatches = _compare(case.expected_legs, {g.id: g.status.value for g in ev.gates})
    if case.reason_prefix and not (
        verdict.reasons and verdict.reasons[0].startswith(case.reason_prefix)
    ):
        mismatches.append(
            f"reason: expected {case.reason_prefix!r}…, found {verdict.reasons[:1]!r}"
        )
    result = CaseResult(
        case.name,
        case.expected_class,
        verdict.decision_class.value,
        len(case.expected_legs) + 1,
        tuple(mismatches),
        time.perf_counter() - t0,
    )
    return result, (ev, case.contract)


# --------------------------------------------------------------------------------------------
# Corroborator cases: fictional texts written for the self-test (no external data).

_CTX_WARRANTY = [
    "The Lumo kettle carries a two-year warranty that covers the heating element and the lid hinge."
]
_CTX_SHIPPING = [
    "Orders of the Lumo desk lamp ship from the Leeds warehouse and arrive within three "
    "working days."
]

_TEXTS: dict[str, TextRecord] = {
    "fabricated-citation": TextRecord(
        question="How long is the warranty on the Lumo kettle?",
        response="The Lumo kettle carries a two-year warranty that covers the heating element.",
        contexts=tuple(_CTX_WARRANTY),
        cited_quotes=(
            "The warranty also covers accidental drops and water damage for five full years.",
        ),
    ),
    "faithful-answer-irrelevant-context": TextRecord(
        question="How many hours does the battery of the Aurora reading lamp last?",
        response="The Lumo kettle warranty covers the heating element and the lid hinge.",
        contexts=tuple(_CTX_WARRANTY),
        cited_quotes=(),
    ),
    "honest-refusal": TextRecord(
        question="What is the maximum brewing temperature of the Lumo kettle?",
        response="The provided documents do not say what the maximum brewing temperature is.",
        contexts=tuple(_CTX_WARRANTY),
        cited_quotes=(),
    ),
    "grounded-answer-verified-citation": TextRecord(
        question="How many working days does delivery of the Lumo desk lamp take?",
        response="The Lumo desk lamp arrives within three working days of the order.",
        contexts=tuple(_CTX_SHIPPING),
        cited_quotes=("orders of the Lumo desk lamp ship from the Leeds warehouse",),
    ),
    "sample-disagreement-abstains": TextRecord(
        question="Where do orders of the Lumo desk lamp ship from?",
        response="Orders of the Lumo desk lamp ship from the Leeds warehouse.",
        contexts=tuple(_CTX_SHIPPING),
        cited_quotes=(),
    ),
}
# (judge groundedness, answer relevance, samples) per case, all for policy "cand".
_JUDGE: dict[str, tuple[float, float, tuple[float, float, float]]] = {
    "fabricated-citation": (0.9, 0.9, (0.9, 0.9, 0.9)),
    "faithful-answer-irrelevant-context": (0.95, 0.1, (0.95, 0.95, 0.95)),
    "honest-refusal": (0.0, 0.2, (0.0, 0.0, 0.0)),
    "grounded-answer-verified-citation": (1.0, 0.9, (1.0, 1.0, 1.0)),
    "sample-disagreement-abstains": (0.5, 0.9, (0.1, 0.9, 0.5)),
}
# Expected legs: retrieval, generation, answer, citation, refusal, judge, agreement; and the class.
_EXPECTED: dict[str, tuple[dict[str, str], str]] = {
    "fabricated-citation": (
        {
            "retrieval": _PASS,
            "generation": _FAIL,
            "answer": _PASS,
            "citation": "fabricated",
            "refusal": "no",
            "judge": "supported",
            "comparison": "disagree",
        },
        "unsupported",
    ),
    "faithful-answer-irrelevant-context": (
        {
            "retrieval": _FAIL,
            "generation": _PASS,
            "answer": _FAIL,
            "citation": "none",
            "refusal": "no",
            "judge": "supported",
            "comparison": "agree",
        },
        "supported",
    ),
    "honest-refusal": (
        {
            "retrieval": _PASS,
            "generation": _PASS,
            "answer": _NA,
            "citation": "none",
            "refusal": "yes",
            "judge": "unsupported",
            "comparison": "disagree",
        },
        "supported",
    ),
    "grounded-answer-verified-citation": (
        {
            "retrieval": _PASS,
            "generation": _PASS,
            "answer": _PASS,
            "citation": "verified",
            "refusal": "no",
            "judge": "supported",
            "comparison": "agree",
        },
        "supported",
    ),
    "sample-disagreement-abstains": (
        {
            "retrieval": _PASS,
            "generation": _PASS,
            "answer": _PASS,
            "citation": "none",
            "refusal": "no",
            "judge": "supported",
            "comparison": "abstain",
        },
        "supported",
    ),
}
_CORROBORATION = {
    "groundedness_metric": "faithfulness",
    "answer_relevance_metric": "answer_relevancy",
    "sample_metrics": ["faithfulness_s1", "faithfulness_s2", "faithfulness_s3"],
    "sample_disagreement_max": 0.5,
    "max_disagreement_rate": 0.2,
    "max_abstention_rate": 0.1,
}


def _corroboration_legs(ec: Any) -> tuple[dict[str, str], str]:
    ch = ec.checks
    citation = (
        "none" if not ch.citations else ("fabricated" if ch.fabricated_citation else "verified")
    )
    comparison = "abstain" if ec.abstained else ("disagree" if ec.disagreement else "agree")
    legs = {
        "retrieval": ch.retrieval,
        "generation": ch.generation,
        "answer": ch.answer,
        "citation": citation,
        "refusal": "yes" if ch.honest_refusal else "no",
        "judge": "supported" if ec.judge_supported else "unsupported",
        "comparison": comparison,
    }
    return legs, "supported" if ch.supported else "unsupported"


def _corroboration_outcome(names: list[str]) -> _corroborate.CorroborationOutcome:
    """Corroborate the planted texts (candidate) beside one clean baseline example."""
    values: dict[str, dict[str, np.ndarray]] = {
        "cand": {
            "faithfulness": np.array([_JUDGE[k][0] for k in names]),
            "answer_relevancy": np.array([_JUDGE[k][1] for k in names]),
            **{
                f"faithfulness_s{j + 1}": np.array([_JUDGE[k][2][j] for k in names])
                for j in range(3)
            },
        }
    }
    # the baseline: one clean example, so the gate has both policies to rate.
    values["base"] = {
        "faithfulness": np.array([1.0]),
        "faithfulness_s1": np.array([1.0]),
        "faithfulness_s2": np.array([1.0]),
        "faithfulness_s3": np.array([1.0]),
    }
    texts = {("cand", f"ex{i}"): _TEXTS[k] for i, k in enumerate(names)}
    texts[("base", "ex0")] = _TEXTS["grounded-answer-verified-citation"]
    contract = _contract(corroboration=_CORROBORATION)
    assert contract.corroboration is not None
    idx = _index.build_index(_table(values))
    return _corroborate.corroborate(
        texts, idx, contract.corroboration, ["base", "cand"], np.ones(idx.n_examples, dtype=bool)
    )


# The candidate's rates: 2 disagreements in 4 judged examples (0.5 > 0.2) and 1 abstention in 5
# sampled (0.2 > 0.1) make the judge unreliable, and each leg fails once.
_EXPECTED_RATES = {
    "n_judged": "4",
    "n_disagreements": "2",
    "n_abstained": "1",
    "failed_retrieval": "1",
    "failed_generation": "1",
    "failed_answer": "1",
    "fabricated_citations": "1",
    "honest_refusals": "1",
}


def _reliability_case(
    outcome: _corroborate.CorroborationOutcome,
    promote: tuple[Any, ReleaseContract] | None,
    elapsed: float,
) -> CaseResult:
    """The rates and the reliability gate: an unreliable judge caps PROMOTE at INCONCLUSIVE."""
    t1 = time.perf_counter()
    row = next(r for r in outcome.summary.rates if r.policy_id == "cand" and r.slice is None)
    actual = {name: str(getattr(row, name)) for name in _EXPECTED_RATES}
    expected = dict(_EXPECTED_RATES)
    gates = _corroboration.gate_corroboration(outcome.summary, ("base", "cand"))
    actual.update({g.id: g.status.value for g in gates})
    expected.update(
        {_corroboration.DISAGREEMENT_GATE_ID: _FAIL, _corroboration.ABSTENTION_GATE_ID: _FAIL}
    )
    klass = "absent"
    if promote is not None:
        ev, pc = promote
        verdict = _decision.classify_candidate(ev, pc, gates)
        klass = verdict.decision_class.value
        if not verdict.reasons or not verdict.reasons[0].startswith("evaluator-unreliable"):
            actual["reason"] = repr(verdict.reasons[:1])
            expected["reason"] = "'evaluator-unreliable…'"
    return CaseResult(
        "unreliable-judge-caps-promote",
        "INCONCLUSIVE",
        klass,
        len(expected),
        tuple(_compare(expected, actual)),
        time.perf_counter() - t1 + elapsed,
    )


def _run_corroboration_cases(promote: tuple[Any, ReleaseContract] | None) -> list[CaseResult]:
    t0 = time.perf_counter()
    names = list(_TEXTS)
    outcome = _corroboration_outcome(names)
    elapsed = (time.perf_counter() - t0) / (len(names) + 1)
    results = []
    for i, name in enumerate(names):
        legs, klass = _corroboration_legs(outcome.examples[("cand", f"ex{i}")])
        exp_legs, exp_class = _EXPECTED[name]
        results.append(
            CaseResult(
                name, exp_class, klass, len(exp_legs), tuple(_compare(exp_legs, legs)), elapsed
            )
        )
    results.append(_reliability_case(outcome, promote, elapsed))
    return results


def run_selftest() -> SelftestReport:
    """Run every planted case through the engine and report each one.

    Returns:
        The ``SelftestReport``; it does not raise on a failed case (``require_selftest`` does).
    """
    t0 = time.perf_counter()
    results: list[CaseResult] = []
    promote: tuple[Any, ReleaseContract] | None = None
    for case in _engine_cases():
        result, evaluated = _run_engine_case(case)
        results.append(result)
        if case.name == "promote-better-and-cheaper":
            promote = evaluated
    results += _run_corroboration_cases(promote)
    return SelftestReport(tuple(results), time.perf_counter() - t0)


def require_selftest() -> SelftestReport:
    """Run the self-test and raise when any case fails.

    Raises:
        InternalError: ``selftest-failed`` naming each failed case and its first mismatch.
    """
    return require_passed(run_selftest())


def require_passed(report: SelftestReport) -> SelftestReport:
    """``report`` itself when every case passed.

    Raises:
        InternalError: ``selftest-failed`` naming each failed case and its first mismatch.
    """
    if not report.passed:
        detail = "; ".join(
            f"{c.name} (expected {c.expected_class}, found {c.actual_class}"
            + (f"; {c.mismatches[0]}" if c.mismatches else "")
            + ")"
            for c in report.failed
        )
        raise InternalError(
            "selftest-failed",
            f"the engine self-test failed {len(report.failed)} of {len(report.cases)} "
            f"planted cases: {detail}",
            hint="the engine is broken or was modified; run 'ragwarrant selftest' to see every "
            "case. "
            "Nothing was decided.",
        )
    return report


def format_report(report: SelftestReport) -> str:
    """One line per case (status, name, expected and found class, legs checked) and a total line."""
    lines = []
    for c in report.cases:
        status = "pass" if c.passed else "FAIL"
        lines.append(
            f"{status}  {c.name:<38} expected {c.expected_class:<12} found {c.actual_class:<12} "
            f"{c.legs} legs  {c.seconds * 1000:6.1f} ms"
        )
        lines += [f"      {m}" for m in c.mismatches]
    verdict = "passed" if report.passed else f"FAILED ({len(report.failed)} cases)"
    lines.append(
        f"self-test {verdict}: {len(report.cases)} planted cases in {report.seconds:.3f} s"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The self-test beside the job

#: Seconds a forked self-test may take before it is abandoned and run again in this process.
CHILD_TIMEOUT_S = 600.0


class SelftestRun:
    """The self-test started beside the caller's work; ``result`` waits for it.

    Where the platform can fork and the caller is single-threaded (``can_fork``), the planted
    cases run in a forked child process (POSIX ``fork``: the child starts with every module the
    parent imported, so no import is repeated), and only the finished ``SelftestReport`` comes
    back, pickled through a pipe; it is judged here by ``require_passed``, as in-process. The
    child shares no lock or interpreter with the parent, so the two use two cores truly (a thread
    would share the parent's GIL). A child that raises, dies, or exceeds ``CHILD_TIMEOUT_S``
    sends no report: the self-test is then run again in this process, so what it raises (or
    reports) is what ``require_selftest`` would. Without fork (another platform, a refused
    ``fork``, other threads running) the cases run in a thread, as before.

    Use as a context manager: leaving it reaps the child (or joins the thread).
    """

    def __init__(self, *, fork: bool | None = None) -> None:
        """Start the self-test.

        Args:
            fork: run it in a forked child (None: when ``can_fork()``).
        """
        self._pid = 0
        self._read_fd = -1
        self._outcome: SelftestReport | BaseException | None = None
        self._thread: Any = None
        if fork if fork is not None else can_fork():
            try:
                self._fork()
                return
            except OSError:  # e.g. EAGAIN under a process limit: run beside us in a thread
                pass
        self._start_thread()

    @property
    def forked(self) -> bool:
        """The cases run (or ran) in a child process."""
        return self._pid > 0

    def _fork(self) -> None:
        from ragwarrant.stats.distributions import load_special

        load_special()  # imported once, before the fork: the child and this process share it
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            raise
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _report_from_child(write_fd)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def _start_thread(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="selftest")
        self._thread = (pool, pool.submit(run_selftest))

    def _collect(self) -> SelftestReport:
        if self._thread is not None:
            pool, future = self._thread
            pool.shutdown(wait=True)
            self._thread = None
            return cast(SelftestReport, future.result())
        report = self._child_report() if self.forked else None
        return report if report is not None else run_selftest()

    def _child_report(self) -> SelftestReport | None:
        """The child's report (None when it sent none), the child reaped."""
        data = b""
        try:
            data = _read_until_eof(self._read_fd, CHILD_TIMEOUT_S)
        finally:
            os.close(self._read_fd)
            if not data:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._read_fd = -1
        try:
            report = pickle.loads(data)  # from our own child, through our own pipe
        except Exception:  # nothing, or a report cut short
            return None
        return report if isinstance(report, SelftestReport) else None

    def _finish(self) -> SelftestReport | BaseException:
        if self._outcome is None:
            try:
                self._outcome = require_passed(self._collect())
            except Exception as exc:
                self._outcome = exc
        return self._outcome

    def result(self) -> SelftestReport:
        """Wait for the self-test and return its report.

        Raises:
            InternalError: ``selftest-failed`` when a case failed (``require_passed``); whatever
                the self-test itself raised.
        """
        outcome = self._finish()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def exception(self) -> BaseException | None:
        """Wait for the self-test; what ``result`` would raise, or None."""
        outcome = self._finish()
        return outcome if isinstance(outcome, BaseException) else None

    def __enter__(self) -> SelftestRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._thread is not None or self._read_fd >= 0:
            self._finish()


def can_fork() -> bool:
    """This process may fork a child for the self-test: POSIX ``fork`` and no other thread.

    Forking a process with several threads copies only the calling one; a lock another thread
    held at that moment stays locked in the child forever (POSIX ``fork``, "Application Usage").
    """
    return hasattr(os, "fork") and threading.active_count() == 1


def _read_until_eof(fd: int, timeout_s: float) -> bytes:
    """Everything written to ``fd`` until its writer closes it; b"" after ``timeout_s``."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return b""
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _report_from_child(write_fd: int) -> NoReturn:
    """In the forked child: run the cases, write the pickled report to ``write_fd``, exit.

    Anything raised sends nothing (the parent runs the self-test itself). ``os._exit`` leaves
    the parent's buffered output, exit handlers and files alone.
    """
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        data = pickle.dumps(run_selftest())
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)
