"""The promotion job: contract and evidence in; decision, validation report, report, manifest out.

``run_job`` is the run's steps in order; each step's work lives in the module that owns it:

1. guards: the ledger path, the run directories (``inputs``), a clean output directory
   (``audit.writer.clean_stale``, ``audit.publish.refuse_foreign_files``);
2. read the contract, policy configs and evidence (``inputs.read_inputs``), the signing key;
3. the self-test (``selftest.SelftestRun``, forked beside reading), awaited before anything is
   decided; a retry of a committed run of the same inputs reuses it (``audit.rerun``);
4. gates: run-level (``gates.run``) on the inputs, then on the evidence index (``evidence.index``,
   ``evidence.scope``), the look (``audit.looks``, ``gates.looks``), then each candidate
   (``gates.candidate``; on the development split first when it chooses among candidates);
5. decision: selection (``selection``), classes (``decision``), the record (``audit.record``);
6. publish (``audit.publish.write_outputs``: render, scan, stage, attest, commit with the
   manifest last), then the ledger entry (``audit.looks.record_look``).

User errors are raised as typed errors for ``cli`` to map to exit codes
(``audit.record.record_error`` writes the ERROR decision); a decision of any class is a
returned value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import structlog

from ragwarrant import selection
from ragwarrant.audit.looks import RunLook, record_look, run_look
from ragwarrant.audit.manifest import utc_timestamp
from ragwarrant.audit.publish import refuse_foreign_files, run_record, write_outputs
from ragwarrant.audit.record import decision_record, run_id
from ragwarrant.audit.report_html import prepare_report_html
from ragwarrant.audit.rerun import load_signing_key, record_reused, reusable_run
from ragwarrant.audit.writer import clean_stale, output_lock
from ragwarrant.corroborators.corroborate import corroborate_run
from ragwarrant.decision import block_run_verdict, classify_candidate
from ragwarrant.evidence import scope as evidence_scope
from ragwarrant.evidence.index import EvidenceIndex, build_index
from ragwarrant.evidence.roles import role_checks
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.gates import looks
from ragwarrant.gates.candidate import CandidateEvaluation, evaluate_candidate
from ragwarrant.gates.corroboration import gate_corroboration
from ragwarrant.gates.run import contract_evidence_gates, input_gates
from ragwarrant.inputs import (
    Inputs,
    check_directories,
    check_ledger_path,
    read_inputs,
    release_freed_memory,
    require_ledger_for_plan,
    take_evidence,
)
from ragwarrant.outputs import (
    CandidateDecision,
    CorroborationSummary,
    Decision,
    GateResult,
    LookRecord,
    Selection,
    ValidationCheck,
    ValidationReport,
)
from ragwarrant.selftest import SelftestRun

log = structlog.get_logger("ragwarrant")

Emit = Callable[..., None]


@dataclass(frozen=True)
class RunOutcome:
    """What a finished run decided."""

    run_id: str
    decision_class: DecisionClass
    exit_code: int
    decision: Decision
    summary: str


@dataclass(frozen=True)
class _Decided:
    """Step 4–5's result: each candidate's decision, the selection, the checks, the run gates."""

    candidates: list[CandidateDecision]
    selection: Selection
    checks: list[ValidationCheck]
    run_gates: list[GateResult]
    index: EvidenceIndex | None = None
    corroboration: CorroborationSummary | None = None
    looked: RunLook | None = None


def run_job(
    input_dir: Path,
    output_dir: Path,
    *,
    on_stage: Callable[..., None] | None = None,
    ledger: Path | None = None,
    signing_key: Path | None = None,
    replay_look: LookRecord | None = None,
) -> RunOutcome:
    """Run the promotion job once.

    Args:
        input_dir: the mounted inputs (read only; never written).
        output_dir: where ``outputs.OUTPUT_FILES`` and ``decision.intoto.json`` (not listed in
            the manifest, which it attests) are committed from a staging directory, manifest
            last (``audit.publish.write_outputs``). A committed run there that this run would
            repeat (``audit.rerun.reusable_run``) is reused: nothing is written, ``run_reused``
            is logged and its outcome returned; any other committed run is kept under
            ``history/<run_id>/``. The directory's lock (``writer.output_lock``) is held from
            cleaning what a killed attempt left to the commit and the ledger append.
        on_stage: optional callback ``(event, **fields)`` for progress events: ``source_read``
            per evidence source (``source_id, adapter, rows, elapsed_s``), ``inputs_read``,
            ``run_reused``, ``evidence_indexed``, ``candidate_evaluated`` per confirmatory candidate
            (``policy_id, index, of, gates, elapsed_s``), ``gates_evaluated``,
            ``ledger_appended``, ``run_finished``. Default: each is logged (structlog).
        ledger: an append-only evidence ledger that receives one entry for this run. No lock
            is held on it across the run: the looks are read under a short lock
            (``audit.looks.read_looks``) and the entry appended under another.
        signing_key: an Ed25519 private key (PEM) that signs the attestation as a DSSE envelope.
        replay_look: the recorded look of the run a ``verify --input`` replay reproduces (a
            replay has no ledger; ``gates.looks.recorded_look``).

    Returns:
        RunOutcome with the run's decision class and exit code.

    Raises:
        UsageError: ``ledger-inside-run-directory`` (``inputs.check_ledger_path``), exit 64.
        InputError, OutputError, ContractError: for ``cli`` to map to 66, 73 and 78
            (``ledger-look-stale``, 73: a concurrent run of the same contract version appended
            a look after this run read the ledger; its entry is not appended).
        InternalError: ``selftest-failed`` when the engine fails its self-test (exit 70, ERROR);
            it outranks any error raised while it ran.
    """
    if ledger is not None:
        check_ledger_path(ledger, input_dir, output_dir)
    started_at = utc_timestamp()
    emit = on_stage or (lambda event, **kw: log.info(event, **kw))
    with SelftestRun() as selftest_run:
        try:
            check_directories(input_dir, output_dir)
            refuse_foreign_files(output_dir)  # exit 73, before the lock: nothing written
            with output_lock(output_dir):
                clean_stale(output_dir)  # what a killed attempt left is never part of a result
                private_key = load_signing_key(signing_key)  # 66 early
                inputs = read_inputs(input_dir, emit)
                if selftest_run.forked:
                    prepare_report_html()  # while the self-test's child runs: Jinja2 compiles
                selftest = selftest_run.result()  # an unproven engine decides nothing: exit 70
                require_ledger_for_plan(inputs.contract, ledger, replay_look)
                run = run_id(started_at, inputs.contract_sha256)
                emit("inputs_read", run_id=run, contract=inputs.contract.id,
                     sources=len(inputs.results), selftest_cases=len(selftest.cases),
                     selftest_seconds=round(selftest.seconds, 4))  # fmt: skip
                decision = reusable_run(output_dir, inputs, private_key)
                if decision is not None:
                    emit("run_reused", run_id=decision.run_id, run_class=decision.run_class.value)
                    if record_reused(decision, output_dir, ledger, private_key) and ledger:
                        emit("ledger_appended", run_id=decision.run_id, ledger=ledger.name)
                    return _finished(decision, emit)
                stage_emit: Emit = lambda e, **kw: emit(e, run_id=run, **kw)  # noqa: E731
                decided = _decide(inputs, input_gates(inputs), stage_emit, ledger, replay_look)
                checks = [selftest.check(), *inputs.checks, *decided.checks]
                look = decided.looked.look.record if decided.looked is not None else None
                decision = decision_record(
                    inputs, run, started_at, decided.candidates, decided.selection,
                    run_gates=decided.run_gates, index=decided.index,
                    corroboration=decided.corroboration, look=look, checks=checks,
                )  # fmt: skip
                report = ValidationReport(run_id=run, checks=checks, sources=decision.sources,
                                          missing_values=decision.missing_values)  # fmt: skip
                record = run_record(inputs, started_at, private_key, input_dir, output_dir)
                decision = write_outputs(output_dir, decision, report, record)
                if ledger is not None:
                    record_look(ledger, output_dir, private_key, decided.looked)
                    emit("ledger_appended", run_id=run, ledger=ledger.name)
                return _finished(decision, emit)
        except Exception as exc:
            failure = selftest_run.exception()  # an unproven engine: InternalError, exit 70
            if failure is not None and failure is not exc:
                raise failure from exc
            raise


def _index_evidence(inputs: Inputs, emit: Emit) -> tuple[EvidenceIndex, list[ValidationCheck]]:
    """Index every source's rows; the checks of what the contract does not use or may mistake."""
    paths = {r.provenance.source_id: r.provenance.path for r in inputs.results}
    index = build_index(take_evidence(inputs), paths)  # the Arrow rows are released here
    emit("evidence_indexed", rows=index.n_rows, examples=index.n_examples)
    checks = evidence_scope.undeclared_checks(index, inputs.contract)
    checks += evidence_scope.split_checks(index, inputs.contract)
    checks += evidence_scope.example_id_checks(index)
    checks += evidence_scope.metric_kind_checks(index, inputs.contract)
    warnings = role_checks(index, inputs.contract)
    for w in warnings:  # likely contract mistakes: in the log too, not only in the report
        emit("contract_warning", check=w.id, target=w.target, message=w.message)
    checks += warnings
    release_freed_memory()  # the table's pages and the checks' (the allocators would keep them)
    return index, checks


def _decide(
    inputs: Inputs,
    run_gates: list[GateResult],
    emit: Emit,
    ledger: Path | None,
    replay_look: LookRecord | None,
) -> _Decided:
    """Steps 4–5: each run-level gate only when those before it passed (on the inputs; on the
    indexed evidence, ``contract_evidence_gates``; the look, ``hard:look-evidence``), then each
    candidate evaluated, selected and classified (``_evaluate``), or all BLOCKed untested."""
    index: EvidenceIndex | None = None
    checks: list[ValidationCheck] = []
    looked: RunLook | None = None
    if block_run_verdict(run_gates, evidence_read=bool(inputs.results)) is None:
        index, checks = _index_evidence(inputs, emit)
        run_gates = run_gates + contract_evidence_gates(inputs, index)
        if block_run_verdict(run_gates, evidence_read=True) is None:
            scopes = evidence_scope.scopes(index, inputs.contract)
            looked = run_look(inputs, index, scopes.confirmatory, ledger, replay_look)
            gate = looks.gate_look_evidence(looked.look) if looked is not None else None
            run_gates = run_gates + ([gate] if gate is not None else [])
    verdict = block_run_verdict(run_gates, evidence_read=index is not None)
    if verdict is not None:
        none = Selection(method="none", selected_policy=None, notes=["run-level hard gate failed"])
        blocked = selection.blocked_decisions(inputs, verdict)
        return _Decided(blocked, none, checks, run_gates, looked=looked)
    assert index is not None  # a run that read no evidence is BLOCKed above
    corroboration, index = corroborate_run(inputs, index, scopes.confirmatory)
    release_freed_memory()  # the checks' temporaries, before the candidates' resamples
    decisions, chosen = _evaluate(inputs, index, scopes, looked, corroboration, emit)
    checks += evidence_scope.missing_value_checks(index)
    return _Decided(decisions, chosen, checks, run_gates, index, corroboration, looked)


def _evaluate(
    inputs: Inputs,
    index: EvidenceIndex,
    scopes: evidence_scope.Scopes,
    looked: RunLook | None,
    corroboration: CorroborationSummary | None,
    emit: Emit,
) -> tuple[list[CandidateDecision], Selection]:
    """Evaluate each candidate at the look's level, select, and classify."""
    look = looked.look if looked is not None else None
    contract = looks.at_level(inputs.contract, look)
    known = contract.policy_ids
    config_missing = [p for p in known if p not in inputs.config_sha]

    def evaluate(policy: str, scope: np.ndarray, name: str) -> CandidateEvaluation:
        return evaluate_candidate(index, contract, policy, scope, config_missing=config_missing,
                                  scope_name=name, labels=inputs.labels)  # fmt: skip

    plan = selection.plan_tests(known[1:], scopes.development, evaluate, contract)
    conf_name = scopes.confirmatory_name
    evaluations: dict[str, CandidateEvaluation] = {}
    for i, p in enumerate(plan.to_test, start=1):
        started = time.perf_counter()
        evaluation = evaluate(p, scopes.confirmatory, conf_name)
        evaluations[p] = looks.replanned(evaluation, look, contract)
        elapsed_s = round(time.perf_counter() - started, 3)
        gates = len(evaluations[p].gates)
        emit("candidate_evaluated", policy_id=p, index=i, of=len(plan.to_test), gates=gates,
             elapsed_s=elapsed_s)  # fmt: skip
    emit("gates_evaluated", candidates=len(plan.to_test))
    extra = selection.multiplicity_gates(plan, evaluations, contract.statistics.alpha)
    ceiling = looks.ceiling_gate(contract, look)
    for p in plan.to_test:
        extra[p].append(ceiling)
        if corroboration is not None:
            pair = (contract.baseline.policy_id, p)
            extra[p] += gate_corroboration(
                corroboration, pair, contract.statistics.alpha, candidate_gates=evaluations[p].gates
            )
    verdicts = {p: classify_candidate(evaluations[p], contract, extra[p]) for p in plan.to_test}
    chosen = selection.select(plan, evaluations, verdicts)
    decisions = [
        selection.candidate_decision(
            inputs, p, verdicts[p], evaluations[p], conf_name, evaluations[p].gates + extra[p]
        )
        if p in evaluations
        else selection.untested_decision(inputs, plan, p, chosen.selected_policy)
        for p in known[1:]
    ]
    return decisions, chosen


def _finished(decision: Decision, emit: Emit) -> RunOutcome:
    klass, code, summary = decision.run_class, decision.exit_code, decision.summary
    emit("run_finished", run_id=decision.run_id, run_class=klass.value, exit_code=code,
         summary=summary)  # fmt: skip
    return RunOutcome(decision.run_id, klass, code, decision, summary)
