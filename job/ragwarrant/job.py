"""The promotion job: contract and evidence in; decision, validation report, report, manifest out.

``run_job`` is the whole pipeline: adapters → evidence → stats → gates → decision → audit.
User errors are raised as typed errors for ``cli`` to map to exit codes (``record_error`` writes
the ERROR decision); a decision of any class is a returned value.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
import orjson
import pyarrow as pa
import structlog
import yaml

from ragwarrant.adapters import AdapterResult, load_source
from ragwarrant.audit.attestation import (
    load_private_key,
    signing_check,
    try_load_private_key,
    write_attestation,
)
from ragwarrant.audit.hygiene import private_texts_from_tables, publish_outputs
from ragwarrant.audit.ledger import record_run
from ragwarrant.audit.manifest import build_manifest, digest_bytes
from ragwarrant.audit.writer import write_atomic, write_model
from ragwarrant.contract import (
    ReleaseContract,
    find_contract,
    is_readable_file,
    load_contract,
    resolve_inside,
)
from ragwarrant.corroborators.corroborate import corroborate, text_records
from ragwarrant.decision import CandidateVerdict, classify_candidate, rank_key, run_class
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError, InputError, OutputError, RagwarrantError, UsageError
from ragwarrant.evidence.index import EvidenceIndex, build_index
from ragwarrant.evidence_class import EvidenceClass, claim_scope, claims_not_supported
from ragwarrant.exit_codes import DecisionClass, exit_code_for_class
from ragwarrant.gates.candidate import CandidateEvaluation, evaluate_candidate
from ragwarrant.gates.ceiling import gate_claim_ceiling
from ragwarrant.gates.corroboration import gate_corroboration
from ragwarrant.outputs import (
    CandidateClass,
    CandidateDecision,
    ConfigDifference,
    ContractRef,
    CorroborationSummary,
    Decision,
    ErrorRecord,
    FileDigest,
    GateResult,
    GateStatus,
    Selection,
    ValidationCheck,
    ValidationReport,
)
from ragwarrant.selftest import require_selftest
from ragwarrant.stats.holm import holm_levels

__all__ = ["OUTPUT_FILES", "RunOutcome", "record_error", "run_job"]

OUTPUT_FILES = ("decision.json", "validation_report.json", "report.md", "manifest.json")

log = structlog.get_logger("ragwarrant")


@dataclass(frozen=True)
class RunOutcome:
    """What a finished run decided."""

    run_id: str
    decision_class: DecisionClass
    exit_code: int
    decision: Decision
    summary: str


@dataclass
class _Inputs:
    """Everything read from the input directory, with the checks made while reading."""

    contract: ReleaseContract
    contract_path: str
    contract_sha256: str
    digests: list[FileDigest] = field(default_factory=list)
    config_sha: dict[str, str] = field(default_factory=dict)
    configs: dict[str, object] = field(default_factory=dict)
    results: list[AdapterResult] = field(default_factory=list)
    checks: list[ValidationCheck] = field(default_factory=list)
    run_gates: list[GateResult] = field(default_factory=list)
    corroboration: CorroborationSummary | None = None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _run_id(started_at: str, contract_sha256: str) -> str:
    stamp = started_at.replace("-", "").replace(":", "").rstrip("Z")
    return f"{stamp}Z-{contract_sha256[:12]}"


def check_directories(input_dir: Path, output_dir: Path) -> None:
    """Check the input directory is readable and the output directory writable.

    Raises:
        InputError: the input directory is missing or unreadable (exit 66).
        OutputError: the output directory cannot be created or written (exit 73).
    """
    try:
        is_dir = input_dir.is_dir()
    except OSError as exc:
        raise InputError(
            "input-unreadable",
            f"input directory {input_dir} cannot be reached: {exc.strerror}",
            hint="check the volume's permissions: the job runs as uid 65532",
        ) from exc
    if not is_dir:
        raise InputError(
            "input-missing",
            f"input directory {input_dir} does not exist or is not a directory",
            hint="mount the evidence at /in, or pass --input DIR",
        )
    if not os.access(input_dir, os.R_OK | os.X_OK):
        raise InputError(
            "input-unreadable",
            f"input directory {input_dir} is not readable",
            hint="check the volume's permissions: the job runs as uid 65532",
        )
    if _inside(output_dir, input_dir):
        raise UsageError(
            "output-inside-input",
            f"the output directory {output_dir} is inside the input directory {input_dir}",
            hint="the input is never written to: choose an output directory outside it",
        )
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            "output-not-writable",
            f"cannot create output directory {output_dir}: {exc.strerror}",
            hint="mount a writable volume at /out, or pass --output DIR",
        ) from exc
    if not os.access(output_dir, os.W_OK | os.X_OK):
        raise OutputError(
            "output-not-writable",
            f"output directory {output_dir} is not writable",
            hint=(
                "mount a writable volume at /out (the job runs as uid 65532), or pass --output DIR"
            ),
        )


def _load_config(path: Path) -> object:
    raw = path.read_bytes()
    return orjson.loads(raw) if path.suffix == ".json" else yaml.safe_load(raw)


def _read_inputs(input_dir: Path) -> _Inputs:
    contract_file = find_contract(input_dir)
    contract = load_contract(contract_file)
    contract_bytes = contract_file.read_bytes()
    inputs = _Inputs(
        contract=contract,
        contract_path=contract_file.name,
        contract_sha256=hashlib.sha256(contract_bytes).hexdigest(),
    )
    inputs.digests.append(digest_bytes(contract_file.name, contract_bytes))
    inputs.checks.append(
        ValidationCheck(
            id="contract-schema",
            target=contract_file.name,
            status="pass",
            message="the release contract validates against contracts/contract.schema.json",
        )
    )
    unresolved: list[str] = []
    for policy in [contract.baseline, *contract.candidates]:
        path = resolve_inside(input_dir, policy.config)
        if not is_readable_file(path):
            unresolved.append(f"policy config {policy.config} ({policy.policy_id})")
            continue
        sha = sha256_file(path)
        inputs.config_sha[policy.policy_id] = sha
        inputs.digests.append(FileDigest(path=policy.config, sha256=sha, bytes=path.stat().st_size))
        try:
            inputs.configs[policy.policy_id] = _load_config(path)
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            inputs.checks.append(
                ValidationCheck(
                    id="policy-config-parse",
                    target=policy.config,
                    status="warn",
                    file=policy.config,
                    message=f"cannot parse the policy config, so differences are not shown: {exc}",
                )
            )
    for source in contract.evidence:
        path = resolve_inside(input_dir, source.path)
        if not is_readable_file(path):
            unresolved.append(f"evidence {source.path} ({source.id})")
            continue
        sha = sha256_file(path)
        inputs.digests.append(FileDigest(path=source.path, sha256=sha, bytes=path.stat().st_size))
        try:
            result = load_source(source, path, sha, contract)
        except EvidenceError as exc:
            inputs.checks.append(
                ValidationCheck(
                    id=f"evidence-readable:{source.id}",
                    target=source.path,
                    status="fail",
                    message=f"{exc.code}: {exc.message}",
                    file=exc.file or source.path,
                    row=exc.row,
                    column=exc.column,
                    expected=exc.expected,
                    found=None if exc.found is None else str(exc.found)[:200],
                )
            )
            inputs.run_gates.append(
                GateResult(
                    id=f"hard:evidence-readable:{source.id}",
                    kind="hard",
                    status=GateStatus.FAIL,
                    reason=f"{exc.code}: {exc.message}"
                    + (f" (hint: {exc.hint})" if exc.hint else ""),
                )
            )
            continue
        inputs.results.append(result)
        inputs.checks.append(
            ValidationCheck(
                id=f"evidence-readable:{source.id}",
                target=source.path,
                status="pass",
                message=(
                    f"read {result.provenance.rows_read} rows "
                    f"with adapter {result.provenance.adapter}"
                ),
            )
        )
    inputs.run_gates.insert(
        0,
        GateResult(
            id="hard:contract-references",
            kind="hard",
            status=GateStatus.FAIL if unresolved else GateStatus.PASS,
            reason=("references that do not resolve: " + "; ".join(unresolved))
            if unresolved
            else "every file the contract names exists and is readable",
        ),
    )
    for u in unresolved:
        inputs.checks.append(
            ValidationCheck(
                id="contract-reference",
                target=u,
                status="fail",
                message=f"{u} does not exist or is not readable",
            )
        )
    return inputs


def _flatten(obj: object, prefix: str = "") -> dict[str, object]:
    if isinstance(obj, dict):
        out: dict[str, object] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix or "(root)": obj}


def _config_differences(baseline: object, candidate: object) -> list[ConfigDifference]:
    fb, fc = _flatten(baseline), _flatten(candidate)
    diffs = []
    for key in sorted(set(fb) | set(fc)):
        b, c = fb.get(key), fc.get(key)
        if b != c:
            norm = [
                v
                if isinstance(v, str | int | float | bool) or v is None
                else orjson.dumps(v).decode()
                for v in (b, c)
            ]
            diffs.append(ConfigDifference(path=key, baseline=norm[0], candidate=norm[1]))
    return diffs


def _scopes(
    index: EvidenceIndex, contract: ReleaseContract
) -> tuple[np.ndarray, np.ndarray | None, str]:
    if contract.splits is None:
        return np.ones(index.n_examples, dtype=bool), None, "all"
    conf = index.in_split(contract.splits.confirmatory)
    dev = None
    if contract.splits.development is not None:
        dev = index.in_split(contract.splits.development)
    return conf, dev, contract.splits.confirmatory


def _split_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    """Say which examples no split role covers, and when the class assumes a held-out split."""
    checks = []
    if contract.splits is not None:
        roles = [
            r for r in (contract.splits.development, contract.splits.confirmatory) if r is not None
        ]
        covered = np.zeros(index.n_examples, dtype=bool)
        for role in roles:
            covered |= index.in_split(role)
        outside = int(np.sum(~covered))
        if outside:
            labels = sorted(set(index.split_labels) - set(roles))
            shown = ", ".join(repr(x) for x in labels) or "none"
            checks.append(
                ValidationCheck(
                    id="split-unassigned",
                    target="evidence",
                    status="warn",
                    message=f"{outside} examples are in no declared split role "
                    "(their split labels: "
                    f"{shown}; or no label) and are not used",
                )
            )
    elif (
        contract.evidence_class >= EvidenceClass.CONFIRMATORY
        and contract.evidence_class < EvidenceClass.DEPLOYMENT
    ):
        checks.append(
            ValidationCheck(
                id="evidence-class-without-split",
                target="contract",
                status="info",
                message=f"evidence class {contract.evidence_class.value} declared without a "
                "confirmatory split: the claim scope assumes the evidence was fixed before "
                "the analysis",
            )
        )
    return checks


def _decide(
    inputs: _Inputs, seed_log: Callable[..., None]
) -> tuple[
    list[CandidateDecision], Selection, str | None, list[ValidationCheck], EvidenceIndex | None
]:
    contract = inputs.contract
    candidates = [c.policy_id for c in contract.candidates]
    checks: list[ValidationCheck] = []
    blocked_run = [g for g in inputs.run_gates if g.status is GateStatus.FAIL]
    if blocked_run or not inputs.results:
        reasons = [f"blocked: {g.id} — {g.reason}" for g in blocked_run] or [
            "blocked: no evidence was read"
        ]
        decisions = [
            CandidateDecision(
                policy_id=p,
                decision_class=CandidateClass.BLOCK,
                reasons=reasons,
                tested_on="none",
                gates=[],
                config_sha256=inputs.config_sha.get(p),
            )
            for p in candidates
        ]
        return (
            decisions,
            Selection(method="none", selected_policy=None, notes=["run-level hard gate failed"]),
            None,
            checks,
            None,
        )

    table = pa.concat_tables([r.evidence for r in inputs.results])
    index = build_index(table, {r.provenance.source_id: r.provenance.path for r in inputs.results})
    seed_log("evidence_indexed", rows=index.n_rows, examples=index.n_examples)
    known = {contract.baseline.policy_id, *candidates}
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
    undeclared = sorted({m for p, m in index.columns} - declared)
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
    conf, dev, conf_name = _scopes(index, contract)
    checks += _split_checks(index, contract)
    padded = [e for e in index.example_ids.tolist() if e != e.strip()]
    if padded:
        checks.append(
            ValidationCheck(
                id="example-id-whitespace",
                target="evidence",
                status="warn",
                message=f"{len(padded)} example ids start or end with white space; they pair only "
                "with ids spelled the same way (ids are compared exactly, never trimmed)",
            )
        )
    config_missing = [p for p in known if p not in inputs.config_sha]
    ceiling = gate_claim_ceiling(contract.evidence_class, contract.promotion_min_class)
    if (
        contract.corroboration is not None
    ):  # judge corroboration on the decided examples (issue 4 §2)
        texts = text_records([r.texts for r in inputs.results if r.texts is not None])
        inputs.corroboration = corroborate(
            texts, index, contract.corroboration, [contract.baseline.policy_id, *candidates], conf
        ).summary

    def evaluate(policy: str, scope: np.ndarray, name: str) -> CandidateEvaluation:
        return evaluate_candidate(
            index, contract, policy, scope, config_missing=config_missing, scope_name=name
        )

    selection_notes: list[str] = []
    if len(candidates) > 1 and dev is not None and np.any(dev):
        dev_evals = {p: evaluate(p, dev, "development") for p in candidates}
        dev_verdicts = {p: classify_candidate(dev_evals[p], contract, []) for p in candidates}
        order = sorted(candidates, key=lambda p: (rank_key(dev_verdicts[p], dev_evals[p]), p))
        chosen = order[0]
        method: Literal["single-candidate", "development-split", "holm-across-candidates"] = (
            "development-split"
        )
        for p in candidates:
            e = dev_evals[p]
            selection_notes.append(
                f"{p} on the development split: {dev_verdicts[p].decision_class.value}"
                + (
                    f", quality delta {e.quality_estimate:+.4g}"
                    if e.quality_estimate is not None
                    else ""
                )
                + (
                    f", cost delta {e.cost_estimate:+.4g} (positive = cheaper)"
                    if e.cost_estimate is not None
                    else ""
                )
            )
        picks = dev_evals
        to_test = [chosen]
    else:
        method = "single-candidate" if len(candidates) == 1 else "holm-across-candidates"
        picks = {}
        to_test = candidates
    evaluations = {p: evaluate(p, conf, conf_name) for p in to_test}
    if not picks:
        picks = evaluations
    seed_log("gates_evaluated", candidates=len(to_test))

    extra_gates: dict[str, list[GateResult]] = {p: [] for p in to_test}
    if method == "holm-across-candidates":
        pvals = np.array(
            [
                evaluations[p].candidate_p_value
                if evaluations[p].candidate_p_value is not None
                else 1.0
                for p in to_test
            ]
        )
        levels = holm_levels(pvals, contract.statistics.alpha)
        passed_so_far = True
        for i in np.argsort(pvals, kind="stable"):
            p = to_test[i]
            ok = passed_so_far and pvals[i] <= levels[i]
            passed_so_far = ok
            extra_gates[p].append(
                GateResult(
                    id="multiplicity:holm-across-candidates",
                    kind="multiplicity",
                    status=GateStatus.PASS if ok else GateStatus.FAIL,
                    p_value=float(pvals[i]),
                    alpha=float(levels[i]),
                    reason=(
                        f"candidate p-value {pvals[i]:.4g} "
                        f"{'<=' if ok else 'does not meet'} Holm level {levels[i]:.4g} "
                        f"across {len(to_test)} candidates"
                    ),
                )
            )
    for p in to_test:
        extra_gates[p].append(ceiling)
        if inputs.corroboration is not None:
            extra_gates[p] += gate_corroboration(
                inputs.corroboration, (contract.baseline.policy_id, p)
            )
    verdicts: dict[str, CandidateVerdict] = {
        p: classify_candidate(evaluations[p], contract, extra_gates[p]) for p in to_test
    }

    promoted = sorted(
        (p for p in to_test if verdicts[p].decision_class is CandidateClass.PROMOTE),
        key=lambda p: (rank_key(verdicts[p], evaluations[p]), p),
    )
    selected = promoted[0] if promoted else (to_test[0] if method == "development-split" else None)
    quality_pick = max(
        (p for p in picks if picks[p].quality_estimate is not None),
        key=lambda p: (picks[p].quality_estimate, p),
        default=None,
    )
    cost_pick = max(
        (p for p in picks if picks[p].cost_estimate is not None),
        key=lambda p: (picks[p].cost_estimate, p),
        default=None,
    )
    selection = Selection(
        method=method,
        selected_policy=selected,
        quality_only_pick=quality_pick,
        cost_only_pick=cost_pick,
        notes=selection_notes,
    )
    decisions = []
    base_cfg = inputs.configs.get(contract.baseline.policy_id)
    for p in candidates:
        cfg = inputs.configs.get(p)
        diffs = (
            _config_differences(base_cfg, cfg) if base_cfg is not None and cfg is not None else []
        )
        if p in evaluations:
            ev, vd = evaluations[p], verdicts[p]
            decisions.append(
                CandidateDecision(
                    policy_id=p,
                    decision_class=vd.decision_class,
                    reasons=vd.reasons,
                    tested_on=conf_name,
                    paired_n=ev.paired_n,
                    gates=ev.gates + extra_gates[p],
                    config_sha256=inputs.config_sha.get(p),
                    config_differences=diffs,
                )
            )
        else:
            decisions.append(
                CandidateDecision(
                    policy_id=p,
                    decision_class=CandidateClass.NOT_SELECTED,
                    reasons=[
                        f"not-selected: {selection.selected_policy} "
                        "ranked first on the development split"
                    ],
                    tested_on="none",
                    paired_n=None,
                    gates=[],
                    config_sha256=inputs.config_sha.get(p),
                    config_differences=diffs,
                )
            )
    for row in _missing_value_table(index):
        checks.append(
            ValidationCheck(
                id="missing-values",
                target=f"{row['policy_id']}/{row['metric']}",
                status="warn",
                message=(
                    f"{row['count']} {row['reason']} values in {row['metric']} "
                    f"for {row['policy_id']}"
                ),
            )
        )
    return decisions, selection, selected, checks, index


def _missing_value_table(
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


def run_job(
    input_dir: Path,
    output_dir: Path,
    *,
    on_stage: Callable[..., None] | None = None,
    ledger: Path | None = None,
    signing_key: Path | None = None,
) -> RunOutcome:
    """Run the promotion job once.

    Args:
        input_dir: the mounted inputs (read only; never written).
        output_dir: where the four output files are written (atomically, manifest last), then
            ``decision.intoto.json`` (not listed in the manifest, which it attests).
        on_stage: optional callback ``(event, **fields)`` for progress events.
        ledger: an append-only evidence ledger that receives one entry for this run.
        signing_key: an Ed25519 private key (PEM) that signs the attestation as a DSSE envelope.

    Returns:
        RunOutcome with the run's decision class and exit code.

    Raises:
        InputError, OutputError, ContractError: for ``cli`` to map to 66, 73 and 78.
        InternalError: ``selftest-failed`` when the engine fails its self-test (exit 70, ERROR).
    """
    started_at = _now()
    emit = on_stage or (lambda event, **kw: log.info(event, **kw))
    selftest = require_selftest()  # an unproven engine decides nothing: InternalError, exit 70
    check_directories(input_dir, output_dir)
    private_key = (
        load_private_key(signing_key) if signing_key is not None else None
    )  # 66 before any work
    inputs = _read_inputs(input_dir)
    contract = inputs.contract
    run_id = _run_id(started_at, inputs.contract_sha256)
    emit(
        "inputs_read",
        run_id=run_id,
        contract=contract.id,
        sources=len(inputs.results),
        selftest_cases=len(selftest.cases),
        selftest_seconds=round(selftest.seconds, 4),
    )

    candidates, selection, selected, decide_checks, index = _decide(
        inputs, lambda e, **kw: emit(e, run_id=run_id, **kw)
    )
    klass = run_class([c.decision_class for c in candidates])
    exit_code = int(exit_code_for_class(klass))
    summary = (
        f"{klass.value}: "
        + ", ".join(f"{c.policy_id}={c.decision_class.value}" for c in candidates)
        + f" (contract {contract.id} v{contract.version})"
    )
    contract_ref = ContractRef(
        id=contract.id,
        version=contract.version,
        path=inputs.contract_path,
        sha256=inputs.contract_sha256,
    )
    checks = (
        [
            ValidationCheck(
                id="engine-selftest",
                target="engine",
                status="pass",
                message=(
                    f"{len(selftest.cases)} planted cases passed in {selftest.seconds:.3f} s "
                    "(ragwarrant selftest)"
                ),
            )
        ]
        + inputs.checks
        + decide_checks
    )
    finished_at = _now()
    sources = [r.provenance for r in inputs.results]
    decision = Decision(
        run_id=run_id,
        started_at=started_at,
        finished_at=finished_at,
        contract=contract_ref,
        run_class=klass,
        exit_code=exit_code,
        summary=summary,
        evidence_class=contract.evidence_class,
        promotion_min_class=contract.promotion_min_class,
        claim_scope=claim_scope(contract.evidence_class),
        claims_not_supported=claims_not_supported(contract.evidence_class),
        selection=selection,
        selected_policy=selected if klass is DecisionClass.PROMOTE else None,
        run_gates=inputs.run_gates,
        sources=sources,
        missing_values=_missing_value_table(index),
        notes=[
            c.message for c in checks if c.status in ("warn", "info") and c.id != "missing-values"
        ],
        candidates=candidates,
        corroboration=inputs.corroboration,
    )
    report = ValidationReport(
        run_id=run_id, checks=checks, sources=sources, missing_values=_missing_value_table(index)
    )
    texts = [r.texts for r in inputs.results if r.texts is not None]
    decision = _write_outputs(
        output_dir,
        decision,
        report,
        inputs.digests,
        contract.statistics.seed,
        started_at,
        private_texts=lambda: private_texts_from_tables(texts),
        signing=signing_check(private_key),
    )
    klass, exit_code, summary = decision.run_class, decision.exit_code, decision.summary
    subjects = [inputs.contract_path] + [
        p.config
        for p in [contract.baseline, *contract.candidates]
        if p.policy_id in inputs.config_sha
    ]
    write_attestation(output_dir, subjects, private_key)
    if ledger is not None:
        record_run(ledger, output_dir, private_key=private_key)
        emit("ledger_appended", run_id=run_id, ledger=ledger.name)
    emit("run_finished", run_id=run_id, run_class=klass.value, exit_code=exit_code, summary=summary)
    return RunOutcome(
        run_id=run_id, decision_class=klass, exit_code=exit_code, decision=decision, summary=summary
    )


def _write_outputs(
    output_dir: Path,
    decision: Decision,
    report: ValidationReport,
    input_digests: list[FileDigest],
    seed: int | None,
    started_at: str,
    private_texts: Callable[[], Iterable[str]] = tuple,
    signing: ValidationCheck | None = None,
) -> Decision:
    """Scan, write and hash the outputs, manifest last; return the decision as published.

    Publication hygiene runs first: a finding BLOCKs the run and redacts or withholds the
    offending content (``audit.hygiene.publish_outputs``). ``signing`` (``signing_check``)
    records in the validation report whether the attestation written next is signed.
    """
    schema_check = ValidationCheck(
        id="output-schemas",
        target="outputs",
        status="pass",
        message="decision.json and validation_report.json were built by the models whose JSON "
        "Schemas are committed under contracts/ (unknown fields and non-finite numbers refused)",
    )
    extra = [schema_check] if signing is None else [schema_check, signing]
    report = report.model_copy(update={"checks": [*report.checks, *extra]})
    publication = publish_outputs(decision, report, private_texts)
    (output_dir / "decision.intoto.json").unlink(missing_ok=True)  # never leave a stale attestation
    outputs: list[FileDigest] = []
    for name, data in publication.files.items():
        write_atomic(output_dir / name, data)
        outputs.append(digest_bytes(name, data))
    manifest = build_manifest(
        run_id=decision.run_id,
        seed=seed,
        started_at=started_at,
        finished_at=_now(),
        exit_code=publication.decision.exit_code,
        inputs=input_digests,
        outputs=outputs,
    )
    write_model(output_dir / "manifest.json", manifest)
    return publication.decision


def _inside(path: Path, root: Path) -> bool:
    try:
        p, r = path.resolve(), root.resolve()
    except OSError:
        return False
    return p == r or r in p.parents


def record_error(
    output_dir: Path,
    error: RagwarrantError,
    started_at: str | None = None,
    input_dir: Path | None = None,
    signing_key: Path | None = None,
) -> bool:
    """Write an ERROR decision (report, manifest, attestation) for a run that stopped on ``error``.

    The attestation's subject is the record's own ``decision.json`` (there are no inputs); it is
    signed with ``signing_key`` when that key can be loaded (the error may be the key itself).

    Returns:
        Whether the record was written: False when the output directory is not writable, or
        lies inside ``input_dir`` (the input is never written to).
    """
    if input_dir is not None and _inside(output_dir, input_dir):
        return False
    started = started_at or _now()
    record = ErrorRecord(**error.to_record())  # type: ignore[arg-type]
    decision = Decision(
        run_id=_run_id(started, hashlib.sha256(record.code.encode()).hexdigest()),
        started_at=started,
        finished_at=_now(),
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
    private_key = try_load_private_key(signing_key)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        _write_outputs(
            output_dir, decision, report, [], None, started, signing=signing_check(private_key)
        )
        write_attestation(output_dir, ["decision.json"], private_key)
    except (OSError, OutputError):
        return False
    return True
