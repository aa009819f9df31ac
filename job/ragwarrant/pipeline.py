"""The promotion job: contract and evidence in; decision, validation report, report, manifest out.

``run_job`` reads like the README's steps:

1. read inputs (``inputs.read_inputs``) and the run-level gates on them (``gates.run``);
2. index evidence (``evidence.index.build_index``, ``evidence.scope``) and check the contract
   against it (``contract.check_*``: failed ``hard:contract-evidence:*`` run gates BLOCK);
3. evaluate each candidate (``gates.candidate.evaluate_candidate``; ``candidate_evaluated``
   progress events), on the development split
   first when it chooses among candidates (``selection.plan_tests``);
4. select (``selection.select``);
5. decide (``decision``: every class is assigned there);
6. publish (``audit.publish.write_outputs``: render, scan, stage, attest, commit with the manifest
   last), then the ledger entry. A retry into a volume holding a committed run of the same
   inputs and contract reuses it instead (``_reusable_run``).

User errors are raised as typed errors for ``cli`` to map to exit codes (``record_error`` writes
the ERROR decision); a decision of any class is a returned value.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import orjson
import structlog
from pydantic import ValidationError

from ragwarrant.audit.attestation import (
    ATTESTATION_FILENAME,
    key_id,
    load_private_key,
    try_load_private_key,
)
from ragwarrant.audit.hygiene import private_texts_from_tables
from ragwarrant.audit.ledger import (
    chain_break,
    earlier_looks,
    other_contract_looks,
    read_entries,
    read_look_evidence,
    record_run,
    run_lock,
)
from ragwarrant.audit.manifest import utc_timestamp
from ragwarrant.audit.publish import (
    RunRecord,
    check_output_dir,
    committed_run,
    foreign_files,
    is_inside,
    refuse_foreign_files,
    run_mounts,
    write_outputs,
)
from ragwarrant.audit.report_html import prepare_report_html
from ragwarrant.audit.verify import verify_output_dir
from ragwarrant.audit.writer import clean_stale, output_lock
from ragwarrant.contract import (
    ReleaseContract,
    check_directions,
    check_policy_ids,
    check_scales,
    check_splits_declared,
)
from ragwarrant.corroborators.corroborate import corroborate, mask_abstentions, text_records
from ragwarrant.decision import (
    CandidateVerdict,
    block_run_verdict,
    classify_candidate,
    not_selected_verdict,
    run_class,
    run_summary,
)
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, InternalError, OutputError, RagwarrantError, UsageError
from ragwarrant.evidence import scope as evidence_scope
from ragwarrant.evidence.index import EvidenceIndex, build_index
from ragwarrant.evidence.looks import decode_fingerprint, encode_fingerprint, fingerprint
from ragwarrant.evidence.roles import role_checks
from ragwarrant.evidence_class import claim_scope, claims_not_supported
from ragwarrant.exit_codes import DecisionClass, exit_code_for_class
from ragwarrant.gates.candidate import CandidateEvaluation, evaluate_candidate
from ragwarrant.gates.ceiling import gate_claim_ceiling
from ragwarrant.gates.corroboration import gate_corroboration
from ragwarrant.gates.looks import (
    EarlierLook,
    Look,
    gate_look_evidence,
    recorded_look,
    replan_hints,
    resolve_look,
)
from ragwarrant.gates.run import (
    gate_contract_evidence,
    gate_contract_references,
    gate_evidence_readable,
)
from ragwarrant.inputs import (
    Inputs,
    check_input_dir,
    config_differences,
    read_inputs,
    release_freed_memory,
    take_evidence,
)
from ragwarrant.outputs import (
    DECISION_FILE,
    MANIFEST_FILE,
    CandidateDecision,
    ContractRef,
    CorroborationSummary,
    Decision,
    ErrorRecord,
    GateResult,
    LookRecord,
    Manifest,
    Selection,
    ValidationCheck,
    ValidationReport,
)
from ragwarrant.review import HumanLabelSet
from ragwarrant.selection import ConfirmatoryPlan, multiplicity_gates, plan_tests, select
from ragwarrant.selftest import SelftestReport, SelftestRun
from ragwarrant.version import __version__

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["RunOutcome", "check_directories", "record_error", "run_job"]

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
    """Steps 2–5: each candidate's decision, the selection, what the checks found, run gates."""

    candidates: list[CandidateDecision]
    selection: Selection
    checks: list[ValidationCheck]
    run_gates: list[GateResult]
    index: EvidenceIndex | None = None
    corroboration: CorroborationSummary | None = None
    look: Look | None = None
    look_evidence: bytes | None = None


def _run_id(started_at: str, contract_sha256: str) -> str:
    stamp = started_at.replace("-", "").replace(":", "").rstrip("Z")
    return f"{stamp}Z-{contract_sha256[:12]}"


def check_directories(input_dir: Path, output_dir: Path) -> None:
    """Check the input directory is readable and the output directory writable, in that order.

    Raises:
        InputError: the input directory is missing or unreadable (exit 66).
        UsageError: the output directory lies inside the input directory (exit 64).
        OutputError: the output directory cannot be created or written (exit 73).
    """
    check_input_dir(input_dir)
    check_output_dir(output_dir, input_dir)


def inside_run_dirs(path: Path, input_dir: Path, output_dir: Path) -> str | None:
    """``"input"`` or ``"output"`` when ``path``'s directory lies inside that run directory."""
    for root, what in ((input_dir, "input"), (output_dir, "output")):
        if is_inside(path.parent, root):
            return what
    return None


def refuse_inside_run_dirs(
    path: Path,
    input_dir: Path,
    output_dir: Path,
    *,
    code: str,
    name: str,
    hint: str,
    option: str | None = None,
) -> None:
    """Refuse a file the run writes beside its outputs (``name``, e.g. "the ledger") when it
    lies inside the input (never written to) or the output directory (every file there must be
    in its manifest, and a later run would find it foreign).

    Args:
        option: the command-line option that gave ``path`` (recorded in the error: ``verify``
            cannot replay it from the inputs).

    Raises:
        UsageError: ``code`` (exit 64), before anything is written.
    """
    what = inside_run_dirs(path, input_dir, output_dir)
    if what is not None:
        raise UsageError(
            code, f"{name} {path} is inside the {what} directory", hint=hint, option=option
        )


def check_ledger_path(ledger: Path, input_dir: Path, output_dir: Path) -> None:
    """``refuse_inside_run_dirs`` for ``--ledger``.

    Raises:
        UsageError: ``ledger-inside-run-directory`` (exit 64), before anything is written.
    """
    refuse_inside_run_dirs(
        ledger,
        input_dir,
        output_dir,
        code="ledger-inside-run-directory",
        name="the ledger",
        hint="keep the ledger on its own volume, outside --input and --output",
        option="--ledger",
    )


def _run_gates(inputs: Inputs) -> list[GateResult]:
    """Step 1's gates: the contract's references, then each evidence source that was unreadable."""
    return [gate_contract_references(inputs.unresolved)] + [
        gate_evidence_readable(source_id, exc) for source_id, exc in inputs.unreadable
    ]


def _index_evidence(inputs: Inputs, emit: Emit) -> tuple[EvidenceIndex, list[ValidationCheck]]:
    """Step 2: index every source's rows; note what the contract does not use."""
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


def _declared_directions(inputs: Inputs) -> dict[str, dict[str, str]]:
    """metric id → {evidence source id → the direction that export declares for it}."""
    declared: dict[str, dict[str, str]] = {}
    for result in inputs.results:
        for metric, direction in result.directions.items():
            declared.setdefault(metric, {})[result.provenance.source_id] = direction
    return declared


def _contract_evidence_gates(inputs: Inputs, index: EvidenceIndex) -> list[GateResult]:
    """Step 2's run gates: the contract's policy ids, splits, scales and directions against the
    evidence."""
    contract, source = inputs.contract, inputs.source
    observed, non_binary = evidence_scope.observed_values(
        index, [m.id for m in contract.quality_metrics]
    )
    outside = [
        f"first value of {m.id!r} outside [{m.scale[0]:g}, {m.scale[1]:g}]: {where}"
        for m in contract.quality_metrics
        if (where := evidence_scope.first_outside(index, m.id, *m.scale)) is not None
    ]
    found = {
        "policy-ids": check_policy_ids(contract, index.policies(), source=source),
        "splits": check_splits_declared(contract, index.split_labels, source=source),
        "scales": check_scales(contract, observed, non_binary=non_binary, source=source),
        "directions": check_directions(contract, _declared_directions(inputs), source=source),
    }
    if found["scales"]:
        found["scales"] += outside
    gates = [gate_contract_evidence(check, messages) for check, messages in found.items()]
    return [g for g in gates if g is not None]


def _corroboration(
    inputs: Inputs, index: EvidenceIndex, scope: np.ndarray
) -> tuple[CorroborationSummary | None, EvidenceIndex]:
    """Judge corroboration on the decided examples, when the contract asks for it.

    Returns the summary and the index with the judge's metric unmeasured where it abstained.
    """
    contract = inputs.contract
    if contract.corroboration is None:
        return None, index
    texts = text_records([r.texts for r in inputs.results if r.texts is not None])
    policies = [contract.baseline.policy_id, *(c.policy_id for c in contract.candidates)]
    outcome = corroborate(texts, index, contract.corroboration, policies, scope)
    masked = mask_abstentions(index, outcome, contract.corroboration.groundedness_metric)
    return outcome.summary, masked


def _candidate_decision(
    inputs: Inputs,
    policy: str,
    verdict: CandidateVerdict,
    evaluation: CandidateEvaluation | None = None,
    tested_on: str = "none",
    gates: list[GateResult] | None = None,
) -> CandidateDecision:
    """One candidate's record: its verdict, its gates, and its config's differences."""
    base_cfg = inputs.configs.get(inputs.contract.baseline.policy_id)
    cfg = inputs.configs.get(policy)
    diffs = config_differences(base_cfg, cfg) if base_cfg is not None and cfg is not None else []
    return CandidateDecision(
        policy_id=policy,
        decision_class=verdict.decision_class,
        reasons=verdict.reasons,
        tested_on=tested_on,
        paired_n=evaluation.paired_n if evaluation is not None else None,
        gates=gates or [],
        config_sha256=inputs.config_sha.get(policy),
        config_differences=diffs,
    )


def _untested_decision(
    inputs: Inputs, plan: ConfirmatoryPlan, policy: str, selected: str | None
) -> CandidateDecision:
    """A candidate not tested on the confirmatory split: BLOCK with its development-split gates
    when a hard gate failed there (defective evidence is shown, never hidden), else NOT_SELECTED."""
    verdict = plan.blocked.get(policy)
    if verdict is None:
        return _candidate_decision(inputs, policy, not_selected_verdict(selected))
    evaluation = plan.development[policy]
    splits = inputs.contract.splits
    label = splits.development if splits is not None and splits.development else "development"
    return _candidate_decision(inputs, policy, verdict, evaluation, label, evaluation.gates)


def _blocked_run(
    inputs: Inputs,
    verdict: CandidateVerdict,
    run_gates: list[GateResult],
    checks: list[ValidationCheck] | None = None,
    look: tuple[Look, bytes] | None = None,
) -> _Decided:
    """Steps 2–5 when a run-level hard gate failed: every candidate is BLOCKed untested."""
    decisions = [
        CandidateDecision(
            policy_id=c.policy_id,
            decision_class=verdict.decision_class,
            reasons=verdict.reasons,
            tested_on="none",
            gates=[],
            config_sha256=inputs.config_sha.get(c.policy_id),
        )
        for c in inputs.contract.candidates
    ]
    selection = Selection(method="none", selected_policy=None, notes=["run-level hard gate failed"])
    if look is None:
        return _Decided(decisions, selection, checks or [], run_gates)
    return _Decided(
        decisions, selection, checks or [], run_gates, look=look[0], look_evidence=look[1]
    )


def _earlier_look(ledger: Path, entry: dict[str, object]) -> EarlierLook | None:
    """An earlier look from its ledger entry and its kept fingerprint (None: no look record)."""
    try:
        record = LookRecord.model_validate(entry.get("look"))
    except ValidationError:
        return None
    run_id = str(entry.get("run_id"))
    data = read_look_evidence(ledger, run_id, record.evidence_sha256)
    try:
        fp = decode_fingerprint(orjson.loads(data)["digests"]) if data is not None else None
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        fp = None
    contract = entry.get("contract")
    sha = contract.get("sha256") if isinstance(contract, dict) else None
    return EarlierLook(record, run_id, fp, sha if isinstance(sha, str) and sha else None)


def _earlier_looks(
    ledger: Path | None, contract: ReleaseContract, configs: dict[str, str]
) -> list[EarlierLook]:
    """Earlier looks of this contract version and configs in the ledger, oldest first."""
    if ledger is None:
        return []
    entries = earlier_looks(ledger, contract.id, contract.version, configs)
    return [e for e in (_earlier_look(ledger, x) for x in entries) if e is not None]


def _other_contract_looks(ledger: Path | None, contract: ReleaseContract) -> list[EarlierLook]:
    """Looks under other contract ids or versions in the ledger, oldest first."""
    if ledger is None:
        return []
    entries = other_contract_looks(ledger, contract.id, contract.version)
    return [e for e in (_earlier_look(ledger, x) for x in entries) if e is not None]


def _config_identity(inputs: Inputs, policy: str) -> str:
    """A policy config's identity for look recognition: the sha256 of its parsed content in
    canonical JSON (sorted keys), so reformatting a config does not make a run a first look;
    the file's sha256 when it could not be parsed."""
    parsed = inputs.configs.get(policy)
    if parsed is None:
        return inputs.config_sha[policy]
    try:
        return sha256_bytes(orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS))
    except TypeError:  # a YAML value JSON cannot hold: the file's bytes decide
        return inputs.config_sha[policy]


def _look(
    inputs: Inputs,
    index: EvidenceIndex,
    scope: np.ndarray,
    ledger: Path | None,
    replay_look: LookRecord | None = None,
) -> tuple[Look | None, bytes | None]:
    """Step 2's look: which look at this contract version this run is (``gates.looks``).

    Returns the look and the run's encoded evidence fingerprint, for the ledger to keep; (None,
    None) when the run has neither a ledger nor a sequential plan (nothing to count looks with).
    """
    contract = inputs.contract
    if ledger is None and contract.sequential is None and replay_look is None:
        return None, None
    policies = [contract.baseline.policy_id, *(c.policy_id for c in contract.candidates)]
    fp = fingerprint(index, scope, policies)
    data = orjson.dumps(
        {"schema": 1, "digests": encode_fingerprint(fp)}, option=orjson.OPT_SORT_KEYS
    )
    configs = {p: _config_identity(inputs, p) for p in policies if p in inputs.config_sha}
    units, sha = int(scope.sum()), sha256_bytes(data)
    if replay_look is not None:
        return recorded_look(contract, replay_look, units, configs, sha), data
    earlier = _earlier_looks(ledger, contract, configs)
    others = _other_contract_looks(ledger, contract) if not earlier else []
    broken = chain_break(ledger) if ledger is not None else None
    where = f"line {broken.line} ({broken.kind})" if broken is not None else None
    look = resolve_look(
        contract,
        earlier,
        fp,
        units,
        configs,
        sha,
        inputs.contract_sha256,
        others=others,
        ledger_break=where,
    )
    return look, data


def _look_blocked(
    inputs: Inputs,
    run_gates: list[GateResult],
    checks: list[ValidationCheck],
    looked: tuple[Look, bytes],
) -> _Decided:
    """Steps 2–5 when a repeated look's evidence does not extend the earlier look's: BLOCK."""
    gate = gate_look_evidence(looked[0])
    run_gates = run_gates + ([gate] if gate is not None else [])
    verdict = block_run_verdict(run_gates, evidence_read=True)
    if verdict is None:  # unreachable: the look gate failed
        raise InternalError("look-gate", "a look with a problem produced no failed gate")
    return _blocked_run(inputs, verdict, run_gates, checks, looked)


def _at_level(contract: ReleaseContract, look: Look | None) -> ReleaseContract:
    """The contract with ``statistics.alpha`` set to the look's level (its own without a look)."""
    if look is None or look.alpha == contract.statistics.alpha:
        return contract
    stats = contract.statistics.model_copy(update={"alpha": look.alpha})
    return contract.model_copy(update={"statistics": stats})


def _replanned(
    evaluation: CandidateEvaluation, look: Look | None, contract: ReleaseContract
) -> CandidateEvaluation:
    """The evaluation with its "more units" hints counted for the plan's next look."""
    if look is None or look.plan is None:
        return evaluation
    gates = replan_hints(evaluation.gates, look, contract.statistics.power)
    return dataclasses.replace(evaluation, gates=gates)


def _ceiling(contract: ReleaseContract, look: Look | None) -> GateResult:
    refusal = None if look is None or look.record.confirmatory else look.record.reason
    return gate_claim_ceiling(contract.evidence_class, contract.promotion_min_class, refusal)


def _evaluator(
    index: EvidenceIndex,
    contract: ReleaseContract,
    config_missing: list[str],
    labels: Mapping[str, HumanLabelSet],
) -> Callable[[str, np.ndarray, str], CandidateEvaluation]:
    """``evaluate(policy, scope, scope_name)``: every gate of one candidate on one scope."""

    def evaluate(policy: str, scope: np.ndarray, name: str) -> CandidateEvaluation:
        return evaluate_candidate(
            index,
            contract,
            policy,
            scope,
            config_missing=config_missing,
            scope_name=name,
            labels=labels,
        )

    return evaluate


def _decide(
    inputs: Inputs,
    run_gates: list[GateResult],
    emit: Emit,
    ledger: Path | None = None,
    replay_look: LookRecord | None = None,
) -> _Decided:
    """Steps 2–5: index, evaluate each candidate, select and classify."""
    blocked = block_run_verdict(run_gates, evidence_read=bool(inputs.results))
    if blocked is not None:
        return _blocked_run(inputs, blocked, run_gates)
    contract = inputs.contract
    index, checks = _index_evidence(inputs, emit)
    run_gates = run_gates + _contract_evidence_gates(inputs, index)
    blocked = block_run_verdict(run_gates, evidence_read=True)
    if blocked is not None:
        return _blocked_run(inputs, blocked, run_gates, checks)
    scopes = evidence_scope.scopes(index, contract)
    look, look_data = _look(inputs, index, scopes.confirmatory, ledger, replay_look)
    if look is not None and look.problem is not None:
        return _look_blocked(inputs, run_gates, checks, (look, look_data or b""))
    contract = _at_level(contract, look)
    known = [contract.baseline.policy_id, *(c.policy_id for c in contract.candidates)]
    config_missing = [p for p in known if p not in inputs.config_sha]
    corroboration, index = _corroboration(inputs, index, scopes.confirmatory)
    release_freed_memory()  # the checks' temporaries, before the candidates' resamples

    evaluate = _evaluator(index, contract, config_missing, inputs.labels)
    candidates = known[1:]
    plan = plan_tests(candidates, scopes.development, evaluate, contract)
    conf_name = scopes.confirmatory_name
    evaluations: dict[str, CandidateEvaluation] = {}
    for i, p in enumerate(plan.to_test, start=1):
        started = time.perf_counter()
        evaluations[p] = _replanned(evaluate(p, scopes.confirmatory, conf_name), look, contract)
        emit(
            "candidate_evaluated",
            policy_id=p,
            index=i,
            of=len(plan.to_test),
            gates=len(evaluations[p].gates),
            elapsed_s=round(time.perf_counter() - started, 3),
        )
    emit("gates_evaluated", candidates=len(plan.to_test))
    extra = multiplicity_gates(plan, evaluations, contract.statistics.alpha)
    ceiling = _ceiling(contract, look)
    for p in plan.to_test:
        extra[p].append(ceiling)
        if corroboration is not None:
            extra[p] += gate_corroboration(
                corroboration,
                (contract.baseline.policy_id, p),
                contract.statistics.alpha,
                candidate_gates=evaluations[p].gates,
            )
    verdicts = {p: classify_candidate(evaluations[p], contract, extra[p]) for p in plan.to_test}
    selection = select(plan, evaluations, verdicts)
    decisions = [
        _candidate_decision(
            inputs,
            p,
            verdicts[p],
            evaluations[p],
            conf_name,
            evaluations[p].gates + extra[p],
        )
        if p in evaluations
        else _untested_decision(inputs, plan, p, selection.selected_policy)
        for p in candidates
    ]
    checks += evidence_scope.missing_value_checks(index)
    return _Decided(
        decisions,
        selection,
        checks,
        run_gates,
        index,
        corroboration,
        look,
        look_data,
    )


def _selftest_check(selftest: SelftestReport) -> ValidationCheck:
    return ValidationCheck(
        id="engine-selftest",
        target="engine",
        status="pass",
        message=(
            f"{len(selftest.cases)} planted cases passed in {selftest.seconds:.3f} s "
            "(ragwarrant selftest)"
        ),
    )


def _decision_record(
    inputs: Inputs,
    run_id: str,
    started_at: str,
    decided: _Decided,
    checks: list[ValidationCheck],
) -> Decision:
    """Step 5's record: the run's class from its candidates', and everything that explains it."""
    contract = inputs.contract
    klass = run_class([c.decision_class for c in decided.candidates])
    return Decision(
        run_id=run_id,
        started_at=started_at,
        finished_at=utc_timestamp(),
        contract=ContractRef(
            id=contract.id,
            version=contract.version,
            path=inputs.contract_path,
            sha256=inputs.contract_sha256,
        ),
        run_class=klass,
        exit_code=int(exit_code_for_class(klass)),
        summary=run_summary(klass, decided.candidates, f"{contract.id} v{contract.version}"),
        evidence_class=contract.evidence_class,
        promotion_min_class=contract.promotion_min_class,
        claim_scope=claim_scope(contract.evidence_class),
        claims_not_supported=claims_not_supported(contract.evidence_class),
        selection=decided.selection,
        selected_policy=decided.selection.selected_policy
        if klass is DecisionClass.PROMOTE
        else None,
        run_gates=decided.run_gates,
        sources=[r.provenance for r in inputs.results],
        missing_values=evidence_scope.missing_value_table(decided.index),
        notes=[
            c.message for c in checks if c.status in ("warn", "info") and c.id != "missing-values"
        ],
        candidates=decided.candidates,
        corroboration=decided.corroboration,
        look=decided.look.record if decided.look is not None else None,
    )


def _attestation_subjects(inputs: Inputs) -> list[str]:
    policies = [inputs.contract.baseline, *inputs.contract.candidates]
    return [inputs.contract_path] + [p.config for p in policies if p.policy_id in inputs.config_sha]


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
            repeat (``_reusable_run``) is reused: nothing is written, ``run_reused`` is logged
            and its outcome returned; any other committed run is kept under
            ``history/<run_id>/``.
        on_stage: optional callback ``(event, **fields)`` for progress events: ``source_read``
            per evidence source (``source_id, adapter, rows, elapsed_s``), ``inputs_read``,
            ``run_reused``, ``evidence_indexed``, ``candidate_evaluated`` per confirmatory candidate
            (``policy_id, index, of, gates, elapsed_s``), ``gates_evaluated``,
            ``ledger_appended``, ``run_finished``. Default: each is logged (structlog).
        ledger: an append-only evidence ledger that receives one entry for this run.
        signing_key: an Ed25519 private key (PEM) that signs the attestation as a DSSE envelope.
        replay_look: the recorded look of the run a ``verify --input`` replay reproduces (a
            replay has no ledger; ``gates.looks.recorded_look``).

    Returns:
        RunOutcome with the run's decision class and exit code.

    Raises:
        UsageError: ``ledger-inside-run-directory`` (``check_ledger_path``), exit 64.
        InputError, OutputError, ContractError: for ``cli`` to map to 66, 73 and 78.
        InternalError: ``selftest-failed`` when the engine fails its self-test (exit 70, ERROR).
    """
    if ledger is None:
        return _run_job(input_dir, output_dir, on_stage, None, signing_key, replay_look)
    check_ledger_path(ledger, input_dir, output_dir)
    with run_lock(ledger):  # concurrent runs on one ledger see each other's looks
        return _run_job(input_dir, output_dir, on_stage, ledger, signing_key, replay_look)


def _run_job(
    input_dir: Path,
    output_dir: Path,
    on_stage: Callable[..., None] | None,
    ledger: Path | None,
    signing_key: Path | None,
    replay_look: LookRecord | None,
) -> RunOutcome:
    """``run_job``'s body (the ledger's run lock, if any, is held by the caller).

    The output directory's lock (``writer.output_lock``) is held from cleaning what a killed
    attempt left to the commit and the ledger append, so two runs into one directory are
    serialised instead of removing each other's staging directory.
    """
    started_at = utc_timestamp()
    # The self-test runs on the second core (a forked child, selftest.SelftestRun) while the
    # inputs are read; its report is awaited before anything is decided, and a failure outranks
    # any error raised meanwhile.
    with SelftestRun() as selftest:
        try:
            check_directories(input_dir, output_dir)
            with output_lock(output_dir):
                clean_stale(output_dir)  # what a killed attempt left is never part of a result
                refuse_foreign_files(output_dir)  # a run beside them could never verify: exit 73
                run = (input_dir, output_dir, on_stage, ledger, signing_key, replay_look)
                return _run_locked(*run, started_at, selftest)
        except Exception as exc:
            failure = selftest.exception()  # an unproven engine: InternalError, exit 70
            if failure is not None and failure is not exc:
                raise failure from exc
            raise


def _run_locked(
    input_dir: Path,
    output_dir: Path,
    on_stage: Callable[..., None] | None,
    ledger: Path | None,
    signing_key: Path | None,
    replay_look: LookRecord | None,
    started_at: str,
    selftest_run: SelftestRun,
) -> RunOutcome:
    """Read, decide, publish and record (the output directory's lock is held by the caller).

    ``selftest_run`` is the engine's self-test, running beside reading; its report is awaited
    (raising ``selftest-failed``) once the inputs are read, before anything is decided.
    """
    emit = on_stage or (lambda event, **kw: log.info(event, **kw))
    private_key = _signing_key(signing_key)  # 66 early
    inputs = read_inputs(input_dir, emit)
    if selftest_run.forked:
        prepare_report_html()  # while the self-test's child runs: Jinja2 compiles the page
    selftest = selftest_run.result()  # an unproven engine decides nothing: InternalError, exit 70
    _require_ledger_for_plan(inputs.contract, ledger, replay_look)
    run_gates = _run_gates(inputs)
    run_id = _run_id(started_at, inputs.contract_sha256)
    emit(
        "inputs_read",
        run_id=run_id,
        contract=inputs.contract.id,
        sources=len(inputs.results),
        selftest_cases=len(selftest.cases),
        selftest_seconds=round(selftest.seconds, 4),
    )
    reused = _reusable_run(output_dir, inputs, private_key)
    if reused is not None:
        return _reuse(reused, output_dir, ledger, private_key, emit)
    decided = _decide(
        inputs, run_gates, lambda e, **kw: emit(e, run_id=run_id, **kw), ledger, replay_look
    )
    checks = [_selftest_check(selftest), *inputs.checks, *decided.checks]
    decision = _decision_record(inputs, run_id, started_at, decided, checks)
    report = ValidationReport(
        run_id=run_id,
        checks=checks,
        sources=decision.sources,
        missing_values=decision.missing_values,
    )
    texts = [r.texts for r in inputs.results if r.texts is not None]
    record = RunRecord(
        input_digests=inputs.digests,
        seed=inputs.contract.statistics.seed,
        started_at=started_at,
        subject_paths=_attestation_subjects(inputs),
        private_texts=lambda: private_texts_from_tables(texts),
        private_key=private_key,
        allowed_kinds=_allowed_kinds(inputs),
        mounts=run_mounts(input_dir, output_dir),
    )
    decision = write_outputs(output_dir, decision, report, record)
    if ledger is not None:
        record_run(ledger, output_dir, private_key=private_key, look_evidence=decided.look_evidence)
        emit("ledger_appended", run_id=run_id, ledger=ledger.name)
    klass, code, summary = decision.run_class, decision.exit_code, decision.summary
    emit("run_finished", run_id=run_id, run_class=klass.value, exit_code=code, summary=summary)
    return RunOutcome(run_id, klass, code, decision, summary)


def _signing_key(path: Path | None) -> Ed25519PrivateKey | None:
    """The ``--signing-key`` private key, or None without one.

    Raises:
        InputError: as ``load_private_key``, with context ``option="--signing-key"`` (the record
            names the option: a replay from the inputs never signs, so cannot reproduce it).
    """
    if path is None:
        return None
    try:
        return load_private_key(path)
    except InputError as exc:
        exc.context.setdefault("option", "--signing-key")
        raise


def _require_ledger_for_plan(
    contract: ReleaseContract, ledger: Path | None, replay_look: LookRecord | None
) -> None:
    """Refuse a run of a contract with a ``sequential:`` plan that has no ledger to count with.

    A plan's looks are counted in the ledger; without ``--ledger`` every rerun would be look 1
    at the plan's first level, so a team rerunning until a pass would spend alpha again on each
    run. A ``verify --input`` replay takes its look from the record and needs no ledger.

    Raises:
        UsageError: ``sequential-plan-needs-ledger`` (exit 64).
    """
    if contract.sequential is None or ledger is not None or replay_look is not None:
        return
    raise UsageError(
        "sequential-plan-needs-ledger",
        "the contract declares a sequential plan (contract key 'sequential'), whose looks are "
        "counted in the evidence ledger, but the run was given no --ledger",
        hint="run with --ledger PATH on the volume that keeps this contract's earlier looks "
        "(the compose file and the Kubernetes overlays pass /ledger/ledger.jsonl)",
    )


_CONTRACT_KIND_NAMES = {"private-path": "absolute-path"}
"""Contract finding kinds (``contract.FindingKind``) that ``audit.hygiene`` names otherwise."""


def _allowed_kinds(inputs: Inputs) -> frozenset[str]:
    """The contract's ``publication.allow_finding_kinds`` as ``audit.hygiene`` kind names."""
    publication = getattr(inputs.contract, "publication", None)
    kinds = publication.allow_finding_kinds if publication is not None else []
    return frozenset(_CONTRACT_KIND_NAMES.get(k, k) for k in kinds)


def _signed_by(output_dir: Path, private_key: Ed25519PrivateKey | None) -> bool:
    """Whether the committed attestation is signed as this run would sign it (or unsigned)."""
    try:
        doc = orjson.loads((output_dir / ATTESTATION_FILENAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    signatures = doc.get("signatures") if isinstance(doc, dict) else None
    if private_key is None:
        return signatures is None
    wanted = key_id(private_key.public_key())
    return isinstance(signatures, list) and any(
        isinstance(s, dict) and s.get("keyid") == wanted for s in signatures
    )


def _reusable_run(
    output_dir: Path, inputs: Inputs, private_key: Ed25519PrivateKey | None
) -> Decision | None:
    """The committed run in ``output_dir`` when this run would repeat it; else None.

    Repeats it: same engine version, same contract sha256, same input digests, attestation
    signed by the same key (or unsigned, as this run), and ``verify`` passes.
    """
    if committed_run(output_dir) is None:
        return None
    try:
        manifest = Manifest.model_validate_json((output_dir / MANIFEST_FILE).read_bytes())
        decision = Decision.model_validate_json((output_dir / DECISION_FILE).read_bytes())
    except (OSError, ValidationError):
        return None
    digests = {(d.path, d.sha256) for d in inputs.digests}
    same = (
        manifest.ragwarrant_version == __version__
        and decision.contract is not None
        and decision.contract.sha256 == inputs.contract_sha256
        and {(d.path, d.sha256) for d in manifest.inputs} == digests
        and _signed_by(output_dir, private_key)
    )
    return decision if same and verify_output_dir(output_dir).ok else None


def _reuse(
    decision: Decision,
    output_dir: Path,
    ledger: Path | None,
    private_key: Ed25519PrivateKey | None,
    emit: Emit,
) -> RunOutcome:
    """Return the committed run's outcome; append its ledger entry if a kill lost it."""
    run_id = decision.run_id
    emit("run_reused", run_id=run_id, run_class=decision.run_class.value)
    if ledger is not None and not any(
        e.get("run_id") == run_id for e in (read_entries(ledger) if ledger.is_file() else [])
    ):
        record_run(ledger, output_dir, private_key=private_key)
        emit("ledger_appended", run_id=run_id, ledger=ledger.name)
    klass, code, summary = decision.run_class, decision.exit_code, decision.summary
    emit("run_finished", run_id=run_id, run_class=klass.value, exit_code=code, summary=summary)
    return RunOutcome(run_id, klass, code, decision, summary)


def record_error(
    output_dir: Path,
    error: RagwarrantError,
    started_at: str | None = None,
    input_dir: Path | None = None,
    signing_key: Path | None = None,
    options: Sequence[str] = (),
) -> bool:
    """Write an ERROR decision (report, manifest, attestation) for a run that stopped on ``error``.

    The attestation's subject is the record's own ``decision.json`` (there are no inputs); it is
    signed with ``signing_key`` when that key can be loaded (the error may be the key itself).
    ``options`` are the run's options as ``commands.run.recorded_options`` gives them (no
    secret, no path value), recorded in ``error.options`` for ``verify``.

    Returns:
        Whether the record was written: False when the output directory is not writable, holds
        files that no run wrote (``publish.foreign_files``: a record beside them could never
        verify), or lies inside ``input_dir`` (the input is never written to).
    """
    if input_dir is not None and is_inside(output_dir, input_dir):
        return False
    started = started_at or utc_timestamp()
    record = ErrorRecord(**error.to_record(), options=list(options))  # type: ignore[arg-type]
    decision = Decision(
        run_id=_run_id(started, sha256_bytes(record.code.encode())),
        started_at=started,
        finished_at=utc_timestamp(),
        contract=None,
        run_class=DecisionClass.ERROR,
        exit_code=int(error.exit_code),
        summary=f"ERROR: {error.code}: {error.message}",
        error=record,
    )
    report = ValidationReport(
        run_id=decision.run_id,
        checks=[
            ValidationCheck(
                id=f"error:{error.code}", target="run", status="fail", message=error.message
            )
        ],
    )
    run = RunRecord(
        input_digests=[],
        seed=None,
        started_at=started,
        private_key=try_load_private_key(signing_key),
        mounts=run_mounts(*(d for d in (input_dir, output_dir) if d is not None)),
    )
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        with output_lock(output_dir):
            clean_stale(output_dir)
            if foreign_files(output_dir):  # a record beside them could never verify
                return False
            write_outputs(output_dir, decision, report, run)
    except (OSError, OutputError):
        return False
    return True
