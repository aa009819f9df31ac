"""Validate the validator: planted cases the engine must catch before it may decide anything.

Two tables hold the cases: ``ENGINE_CASES`` (what is planted; the status of every gate of the
candidate, its class and first reason) and ``TEXT_CASES`` (a planted text; its legs and verdict);
a last case checks that an unreliable judge caps PROMOTE. Each goes through the job's own index,
gates, decision and corroborators, and passes only when every leg and the class match, so a
gate that disappears, appears or flips fails it. ``run`` requires the self-test first: a failure
is an ``InternalError`` (``selftest-failed``, exit 70, class ERROR): an unproven engine decides
nothing. With 2000 resamples and 40–180 pairs per case it takes a fraction of a second.
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
from dataclasses import dataclass, field
from typing import Any

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
from ragwarrant.gates.corroboration import ABSTENTION_GATE_ID, DISAGREEMENT_GATE_ID
from ragwarrant.outputs import ValidationCheck
from ragwarrant.review import HumanLabelSet

_SEED = 20261129
_Values = Mapping[str, Mapping[str, np.ndarray]]  # policy → metric → shape (n,) values
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


def _contract(**update: Any) -> ReleaseContract:
    """The planted contract: one quality metric (margin 0.05), a cost claim; ``update`` on top."""
    data: dict[str, Any] = {
        "id": "selftest", "version": "1", "evidence_class": "confirmatory",
        "baseline": {"policy_id": "base", "config": "base.json"},
        "candidates": [{"policy_id": "cand", "config": "cand.json"}],
        "evidence": [{"id": "e", "path": "e.csv", "format": "csv",
                      "metrics": {"correct": "correct"}}],
        "quality_metrics": [{"id": "correct", "margin_abs": 0.05}],
        "operational_metrics": [{"id": "cost_usd", "unit": "usd"}],
        "claims": {"items": [{"kind": "cost-reduction", "metric": "cost_usd"}]},
        "statistics": {"resamples": 2000, "seed": _SEED, "min_paired_n": 30},
    }  # fmt: skip
    return ReleaseContract.model_validate(data | update)


def _table(values: _Values, slices: np.ndarray | None = None, split: str | None = None) -> pa.Table:
    """Canonical rows from policy → metric → values; example i is ``ex<i>``, in ``slices[i]``."""
    cols: dict[str, list[Any]] = {f.name: [] for f in EVIDENCE_SCHEMA}
    for policy, metrics in values.items():
        for metric, arr in metrics.items():
            n = len(arr)
            cols["policy_id"] += [policy] * n
            cols["metric"] += [metric] * n
            cols["example_id"] += [f"ex{i}" for i in range(n)]
            cols["slice"] += [None] * n if slices is None else [str(s) for s in slices[:n]]
            cols["value"] += [float(v) for v in arr]
            cols["source_row"] += list(range(1, n + 1))
    n = len(cols["value"])
    cols |= {"group_id": [None] * n, "split": [split] * n, "missing_reason": [None] * n,
             "source": ["selftest:planted@1"] * n, "source_sha256": ["0" * 64] * n}  # fmt: skip
    return make_evidence_table(cols)


def _compare(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """``leg: expected X, found Y`` for each leg where they differ (``absent``: no such leg)."""
    legs = [(leg, expected.get(leg, "absent"), actual.get(leg, "absent")) for leg in expected]
    legs += [(leg, "absent", actual[leg]) for leg in actual if leg not in expected]
    return [f"{leg}: expected {e}, found {a}" for leg, e, a in sorted(legs) if e != a]


# --------------------------------------------------------------------------------------------
# Engine cases: one row per planted defect, one runner (``Planted.run``)

#: Every hard gate of the planted contract, passing (split leakage: not applicable without
#: splits). Each case states the status of every gate: a new hard gate goes here.
HARD_GATES = {
    "hard:required-metric-evidence": _PASS, "hard:provenance": _PASS,
    "hard:duplicate-rows": _PASS, "hard:example-attributes": _PASS, "hard:split-leakage": _NA,
    "hard:non-finite-values": _PASS, "hard:value-range": _PASS, "hard:pairing-coverage": _PASS,
    "hard:paired-n": _PASS, "hard:constant-quality-signal:correct": _PASS,
    "hard:missing-balance:correct": _PASS, "hard:missing-balance:cost_usd": _PASS,
}  # fmt: skip
_NI = "noninferiority:correct"
#: The gates after the hard gates when none fails (the operational one never decides).
_DECIDED = {"claim:cost-reduction:cost_usd": _PASS, "operational:cost_usd": _NA}

_Scores = tuple[np.ndarray, np.ndarray]  # shape (n,) baseline and candidate scores
_I = np.arange(180)
_EIGHTY = (_I % 5 != 0).astype(float)  # 80 % right: every fifth example wrong
_SEVENTY = (_I % 10 < 7).astype(float)  # 70 % right
_SLICES = np.array(["a", "b", "c"])[_I % 3]


def _changed(base: np.ndarray, *, lose: int = 0, gain: int = 0, to: float = 1.0) -> _Scores:
    """``base`` and a candidate that gets its first ``lose`` right answers wrong and scores
    ``to`` on its first ``gain`` wrong ones."""
    cand = base.copy()
    cand[np.flatnonzero(base == 1)[:lose]] = 0.0
    cand[np.flatnonzero(base == 0)[:gain]] = to
    return base, cand


def _loss_in_slice_a() -> _Scores:
    """180 examples in slices a, b, c: the candidate is right everywhere but a, where it gets
    20 of the baseline's right answers wrong."""
    base = ((_I // 3) % 2 == 0).astype(float)
    cand = np.where(_SLICES == "a", base, 1.0)
    cand[np.flatnonzero((_SLICES == "a") & (base == 1))[:20]] = 0.0
    return base, cand


def _labels_seeing_a_loss() -> dict[str, HumanLabelSet]:
    """Reviewers' labels on every other example of the judge-bias case: 30 of the candidate's
    right answers (as judged) are wrong."""
    base, judged = _changed(_EIGHTY[:120], lose=2, gain=2)
    human = judged.copy()
    human[np.flatnonzero(judged == 1)[2:32]] = 0.0
    ids = np.arange(0, 120, 2)
    examples = tuple(f"ex{i}" for i in ids)
    labels = HumanLabelSet("correct", "base", "cand", examples, human[ids], base[ids], 60, 0)
    return {"correct": labels}


@dataclass(frozen=True)
class Planted:
    """One planted engine case: a row of ``ENGINE_CASES``.

    Attributes:
        name: stable case id, ``<expected class>-<what is planted>``.
        plants: what is planted, and why the class follows.
        decision, reason: the candidate's expected decision class and start of its first reason.
        gates: the expected status of each gate other than ``HARD_GATES`` (all passing unless
            named here).
        scores: shape (n,) ``correct`` of the baseline and the candidate; example i is ``ex<i>``.
        cost_ratio: the candidate's ``cost_usd`` over the baseline's, on every example.
        contract: fields of ``_contract()`` replaced.
        slices: the slice of each example (None: no slices).
        split: the split of every row, and the scope evaluated (None: no split).
        extra: rows appended to the evidence table, given that table.
        labels: human labels per quality metric.
    """

    name: str
    plants: str
    decision: str
    reason: str
    gates: Mapping[str, str]
    scores: _Scores
    cost_ratio: float = 0.5
    contract: Mapping[str, Any] = field(default_factory=dict)
    slices: np.ndarray | None = None
    split: str | None = None
    extra: Callable[[pa.Table], pa.Table] | None = None
    labels: Mapping[str, HumanLabelSet] | None = None

    def run(self) -> tuple[CaseResult, Any]:
        """The case through the job's own index, gates and decision; and what the gates saw."""
        t0 = time.perf_counter()
        contract = _contract(**self.contract)
        base, cand = self.scores
        cost = 0.010 + 0.001 * (np.arange(base.size) % 7)
        values = {
            "base": {"correct": base, "cost_usd": cost},
            "cand": {"correct": cand, "cost_usd": cost * self.cost_ratio},
        }
        table = _table(values, self.slices, self.split)
        if self.extra is not None:
            table = pa.concat_tables([table, self.extra(table)])
        idx = _index.build_index(table)
        scope = np.ones(idx.n_examples, bool) if self.split is None else idx.in_split(self.split)
        ev = _candidate.evaluate_candidate(
            idx, contract, "cand", scope, config_missing=[], scope_name=self.split or "all",
            labels=self.labels,
        )  # fmt: skip
        verdict = _decision.classify_candidate(ev, contract, [])
        expected = {**HARD_GATES, **self.gates}
        mismatches = _compare(expected, {g.id: g.status.value for g in ev.gates})
        if not (verdict.reasons and verdict.reasons[0].startswith(self.reason)):
            mismatches.append(f"reason: expected {self.reason!r}…, found {verdict.reasons[:1]!r}")
        seconds = time.perf_counter() - t0
        found, legs = verdict.decision_class.value, len(expected) + 1
        result = CaseResult(self.name, self.decision, found, legs, tuple(mismatches), seconds)
        return result, (ev, contract)


#: The planted engine cases, in report order.
ENGINE_CASES = (
    Planted("reject-quality-loss",
            "a cheaper candidate whose quality loss (-0.25) exceeds the margin (0.05)",
            "REJECT", "noninferiority-loss", {**_DECIDED, _NI: _FAIL},
            _changed(_EIGHTY[:120], lose=30), cost_ratio=0.3),
    Planted("reject-protected-slice-loss",
            "a loss confined to protected slice 'a' while the aggregate improves",
            "REJECT", "noninferiority-loss",
            {**_DECIDED, "hard:slice-paired-n:correct@a": _PASS, _NI: _PASS, f"{_NI}@a": _FAIL},
            _loss_in_slice_a(), slices=_SLICES,
            contract={"protected_slices": [{"value": "a", "margin_abs": 0.1, "min_paired_n": 30}]}),
    Planted("inconclusive-straddles-margin",
            "a loss of exactly the margin on 60 pairs: the interval straddles -margin",
            "INCONCLUSIVE", "unresolved", {**_DECIDED, _NI: _INC},
            _changed(_EIGHTY[:60], lose=3)),
    Planted("inconclusive-tie-at-margin",
            "60 pairs, 2 better and 2 worse: a percentile bound lands on -margin (p > alpha); the "
            "first landing passed on LCB == -margin with p = 0.10 (issue 10)",
            "INCONCLUSIVE", "unresolved", {**_DECIDED, _NI: _INC},
            _changed(_SEVENTY[:60], lose=2, gain=2)),
    Planted("inconclusive-all-tied",
            "40 all-tied pairs: a [0, 0] bootstrap interval cannot rule out a 5-point loss (with "
            "no discordant pair, Tango's bound excludes -0.05 only from 52 pairs; issue 10)",
            "INCONCLUSIVE", "unresolved", {**_DECIDED, _NI: _INC},
            _changed(_SEVENTY[:40])),
    Planted("block-constant-quality-signal",
            "a constant quality signal cannot tell the policies apart",
            "BLOCK", "blocked", {"hard:constant-quality-signal:correct": _FAIL},
            _changed(np.ones(120))),
    Planted("block-duplicated-rows",
            "a duplicated (policy, example, metric) row",
            "BLOCK", "blocked", {"hard:duplicate-rows": _FAIL},
            _changed(_SEVENTY[:120]), extra=lambda table: table.slice(5, 1)),
    Planted("block-value-out-of-scale",
            "out-of-scale quality values (3.0 on a [0, 1] scale) that would turn a loss into a win",
            "BLOCK", "blocked", {"hard:value-range": _FAIL},
            _changed(_SEVENTY[:120], lose=20, gain=4, to=3.0)),
    Planted("block-split-leakage",
            "an example in both the development and the confirmatory split",
            "BLOCK", "blocked", {"hard:split-leakage": _FAIL},
            _changed(_SEVENTY[:120]), split="conf",
            contract={"splits": {"development": "dev", "confirmatory": "conf"}},
            extra=lambda _: _table({"base": {"dev_only_score": np.ones(1)}}, split="dev")),
    Planted("promote-better-and-cheaper",
            "a genuinely better and cheaper candidate (guards against blocking everything)",
            "PROMOTE", "every gate passed", {**_DECIDED, _NI: _PASS},
            _changed(_SEVENTY[:120], gain=12)),
    Planted("reject-judge-bias-on-labels",
            "a judge that sees a tie (120 pairs, 2 better and 2 worse) where reviewers see a "
            "25-point loss: the gate decides on the labels' PPI++ bound (issue 32)",
            "REJECT", "noninferiority-loss",
            {**_DECIDED, _NI: _FAIL, "hard:constant-human-labels:correct": _PASS},
            _changed(_EIGHTY[:120], lose=2, gain=2), labels=_labels_seeing_a_loss(),
            contract={"quality_metrics": [{"id": "correct", "margin_abs": 0.05,
                                           "human_labels": {"file": "l", "queue": "q"}}]}),
)  # fmt: skip


# --------------------------------------------------------------------------------------------
# Text cases: fictional texts written for the self-test (no external data), all of policy cand

_WARRANTY = (
    "The Lumo kettle carries a two-year warranty that covers the heating element and the lid "
    "hinge.",
)
_SHIPPING = (
    "Orders of the Lumo desk lamp ship from the Leeds warehouse and arrive within three "
    "working days.",
)
#: The judge's metrics of each text case: groundedness, answer relevance, three sampled
#: groundedness values (the ``sample_metrics`` whose spread makes the judge abstain).
_JUDGE_METRICS = ("faithfulness", "answer_relevancy", *(f"faithfulness_s{j}" for j in (1, 2, 3)))
_CORROBORATION = {
    "groundedness_metric": "faithfulness", "answer_relevance_metric": "answer_relevancy",
    "sample_metrics": list(_JUDGE_METRICS[2:]), "sample_disagreement_max": 0.5,
    "max_disagreement_rate": 0.2, "max_abstention_rate": 0.1,
}  # fmt: skip
_GROUNDED = TextRecord(
    "How many working days does delivery of the Lumo desk lamp take?",
    "The Lumo desk lamp arrives within three working days of the order.",
    _SHIPPING,
    ("orders of the Lumo desk lamp ship from the Leeds warehouse",),
)
#: The legs of a text case, in the order of its row's expected legs.
TEXT_LEGS = ("retrieval", "generation", "answer", "citation", "refusal", "judge", "comparison")

#: The planted texts of policy ``cand`` (example i is row i), in report order. Columns: case
#: name; the text (question, response, contexts, cited quotes); the judge's value of each of
#: ``_JUDGE_METRICS``; the expected value of each of ``TEXT_LEGS``; the expected verdict.
TEXT_CASES: tuple[tuple[str, TextRecord, tuple[float, ...], tuple[str, ...], str], ...] = (
    ("fabricated-citation",
     TextRecord("How long is the warranty on the Lumo kettle?",
                "The Lumo kettle carries a two-year warranty that covers the heating element.",
                _WARRANTY,
                ("The warranty also covers accidental drops and water damage for five full "
                 "years.",)),
     (0.9, 0.9, 0.9, 0.9, 0.9),
     (_PASS, _FAIL, _PASS, "fabricated", "no", "supported", "disagree"), "unsupported"),
    ("faithful-answer-irrelevant-context",
     TextRecord("How many hours does the battery of the Aurora reading lamp last?",
                "The Lumo kettle warranty covers the heating element and the lid hinge.",
                _WARRANTY, ()),
     (0.95, 0.1, 0.95, 0.95, 0.95),
     (_FAIL, _PASS, _FAIL, "none", "no", "supported", "agree"), "supported"),
    ("honest-refusal",
     TextRecord("What is the maximum brewing temperature of the Lumo kettle?",
                "The provided documents do not say what the maximum brewing temperature is.",
                _WARRANTY, ()),
     (0.0, 0.2, 0.0, 0.0, 0.0),
     (_PASS, _PASS, _NA, "none", "yes", "unsupported", "disagree"), "supported"),
    ("grounded-answer-verified-citation", _GROUNDED,
     (1.0, 0.9, 1.0, 1.0, 1.0),
     (_PASS, _PASS, _PASS, "verified", "no", "supported", "agree"), "supported"),
    ("sample-disagreement-abstains",
     TextRecord("Where do orders of the Lumo desk lamp ship from?",
                "Orders of the Lumo desk lamp ship from the Leeds warehouse.",
                _SHIPPING, ()),
     (0.5, 0.9, 0.1, 0.9, 0.5),
     (_PASS, _PASS, _PASS, "none", "no", "supported", "abstain"), "supported"),
)  # fmt: skip
#: The candidate's rates, then its reliability gates: 2 disagreements in 4 judged examples
#: (0.5 > 0.2) and 1 abstention in 5 sampled (0.2 > 0.1) make the judge unreliable; each leg
#: fails once.
_RATES = {
    "n_judged": "4", "n_disagreements": "2", "n_abstained": "1", "failed_retrieval": "1",
    "failed_generation": "1", "failed_answer": "1", "fabricated_citations": "1",
    "honest_refusals": "1",
}  # fmt: skip
_RELIABILITY = {**_RATES, DISAGREEMENT_GATE_ID: _FAIL, ABSTENTION_GATE_ID: _FAIL}


def _run_text_cases(promote: tuple[Any, ReleaseContract] | None) -> list[CaseResult]:
    """Corroborate the planted texts beside one clean baseline example (so the gate has both
    policies to rate) and check each; then the rates and the reliability gates, which must cap
    the PROMOTE case (``promote``: its evaluation and contract) at INCONCLUSIVE."""
    t0 = time.perf_counter()
    judged = np.array([judge for _, _, judge, _, _ in TEXT_CASES]).T
    values = {
        "cand": dict(zip(_JUDGE_METRICS, judged, strict=True)),
        "base": {m: np.ones(1) for m in _JUDGE_METRICS if m != "answer_relevancy"},
    }
    texts = {("cand", f"ex{i}"): case[1] for i, case in enumerate(TEXT_CASES)}
    texts[("base", "ex0")] = _GROUNDED  # the baseline's one clean example
    contract = _contract(corroboration=_CORROBORATION)
    assert contract.corroboration is not None
    idx = _index.build_index(_table(values))
    outcome = _corroborate.corroborate(
        texts, idx, contract.corroboration, ["base", "cand"], np.ones(idx.n_examples, dtype=bool)
    )
    elapsed = (time.perf_counter() - t0) / (len(TEXT_CASES) + 1)
    results = [
        _run_text_case(case, outcome.examples[("cand", f"ex{i}")], elapsed)
        for i, case in enumerate(TEXT_CASES)
    ]
    t1 = time.perf_counter()
    row = next(r for r in outcome.summary.rates if r.policy_id == "cand" and r.slice is None)
    gates = _corroboration.gate_corroboration(outcome.summary, ("base", "cand"))
    actual = {name: str(getattr(row, name)) for name in _RATES}
    actual |= {g.id: g.status.value for g in gates}
    expected, klass = dict(_RELIABILITY), "absent"
    if promote is not None:
        capped = _decision.classify_candidate(*promote, gates)
        klass = capped.decision_class.value
        if not capped.reasons or not capped.reasons[0].startswith("evaluator-unreliable"):
            actual["reason"] = repr(capped.reasons[:1])
            expected["reason"] = "'evaluator-unreliable…'"
    missed, seconds = tuple(_compare(expected, actual)), time.perf_counter() - t1 + elapsed
    capping = "unreliable-judge-caps-promote"
    return [*results, CaseResult(capping, "INCONCLUSIVE", klass, len(expected), missed, seconds)]


def _run_text_case(case: tuple[Any, ...], ec: Any, seconds: float) -> CaseResult:
    """One row of ``TEXT_CASES`` against its corroboration ``ec``."""
    name, _, _, legs, verdict = case
    ch = ec.checks
    cited = "fabricated" if ch.fabricated_citation else "verified"
    found = (ch.retrieval, ch.generation, ch.answer, cited if ch.citations else "none",
             "yes" if ch.honest_refusal else "no",
             "supported" if ec.judge_supported else "unsupported",
             "abstain" if ec.abstained else "disagree" if ec.disagreement else "agree")  # fmt: skip
    mismatches = _compare(dict(zip(TEXT_LEGS, legs)), dict(zip(TEXT_LEGS, found)))  # noqa: B905
    supported = "supported" if ch.supported else "unsupported"
    return CaseResult(name, verdict, supported, len(TEXT_LEGS), tuple(mismatches), seconds)


def run_selftest() -> SelftestReport:
    """Run every planted case through the engine and report each one.

    Returns:
        The ``SelftestReport``; it does not raise on a failed case (``require_passed`` does).
    """
    t0 = time.perf_counter()
    engine = [case.run() for case in ENGINE_CASES]
    promote = next((seen for r, seen in engine if r.name == "promote-better-and-cheaper"), None)
    results = [result for result, _ in engine] + _run_text_cases(promote)
    return SelftestReport(tuple(results), time.perf_counter() - t0)


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
            "case. Nothing was decided.",
        )
    return report


# --------------------------------------------------------------------------------------------
# The self-test beside the job

#: Seconds a forked self-test may take before it is abandoned and run again in this process.
CHILD_TIMEOUT_S = 600.0


class SelftestRun:
    """The self-test started beside the caller's work; ``result`` waits for it.

    When ``can_fork``, the cases run in a forked child (POSIX ``fork``: it starts with every
    module imported; it shares no lock or GIL with this process), whose pickled
    ``SelftestReport`` comes back through a pipe and is judged here (``require_passed``). A
    child that raises, dies or exceeds ``CHILD_TIMEOUT_S`` sends none: the cases then run here,
    so what is raised is what the in-process self-test raises. Without fork (another platform, a
    refused ``fork``, other threads) they run here when first awaited. Leaving the context
    reaps the child.
    """

    def __init__(self, *, fork: bool | None = None) -> None:
        """Start the self-test: in a forked child when ``fork`` (None: when ``can_fork()``)."""
        self._pid, self._read_fd = 0, -1
        self._outcome: SelftestReport | BaseException | None = None
        if fork if fork is not None else can_fork():
            with contextlib.suppress(OSError):  # e.g. EAGAIN under a process limit: run here
                self._fork()

    @property
    def forked(self) -> bool:
        """The cases run (or ran) in a child process."""
        return self._pid > 0

    def _fork(self) -> None:
        """Fork the child: it runs the cases, writes the pickled report to the pipe and exits
        (``os._exit``: the parent's buffers, exit handlers and files are left alone); anything it
        raises sends nothing."""
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
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                data = pickle.dumps(run_selftest())
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(data)
            finally:
                os._exit(0)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def _child_report(self) -> SelftestReport | None:
        """The child's report (None when it sent none in ``CHILD_TIMEOUT_S``), the child reaped."""
        data, chunks, fd = b"", list[bytes](), self._read_fd
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        try:
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([fd], [], [], left)[0]:
                    break
                if not (chunk := os.read(fd, 1 << 16)):  # the child closed the pipe: all sent
                    data = b"".join(chunks)
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
            if not data:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        try:
            report = pickle.loads(data)  # from our own child, through our own pipe
        except Exception:  # nothing, or a report cut short
            return None
        return report if isinstance(report, SelftestReport) else None

    def _finish(self) -> SelftestReport | BaseException:
        """Wait for the report once (the child's, else one run here) and judge it
        (``require_passed``); or what was raised."""
        if self._outcome is None:
            try:
                report = (self._child_report() if self.forked else None) or run_selftest()
                self._outcome = require_passed(report)
            except Exception as exc:
                self._outcome = exc
        return self._outcome

    def result(self) -> SelftestReport:
        """Wait for the self-test and return its report.

        Raises:
            InternalError: ``selftest-failed`` when a case failed (``require_passed``); whatever
                the self-test itself raised.
        """
        if isinstance(outcome := self._finish(), BaseException):
            raise outcome
        return outcome

    def exception(self) -> BaseException | None:
        """Wait for the self-test; what ``result`` would raise, or None."""
        outcome = self._finish()
        return outcome if isinstance(outcome, BaseException) else None

    def __enter__(self) -> SelftestRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._finish()


def can_fork() -> bool:
    """This process may fork a child for the self-test: POSIX ``fork`` and no other thread.

    Forking a process with several threads copies only the calling one; a lock another thread
    held at that moment stays locked in the child forever (POSIX ``fork``, "Application Usage").
    """
    return hasattr(os, "fork") and threading.active_count() == 1
