"""A run's decision record: a decided run's (``decision_record``) and, for a run that stopped on a
typed error, the ERROR record written in its place (``record_error``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragwarrant.audit.attestation import try_load_private_key
from ragwarrant.audit.manifest import utc_timestamp
from ragwarrant.audit.publish import RunRecord, first_foreign_file, run_mounts, write_outputs
from ragwarrant.audit.writer import clean_stale, output_lock
from ragwarrant.decision import run_class, run_summary
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import OutputError, RagwarrantError
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.evidence.scope import missing_value_table
from ragwarrant.evidence_class import claim_scope, claims_not_supported
from ragwarrant.exit_codes import DecisionClass, exit_code_for_class
from ragwarrant.inputs import Inputs, is_inside
from ragwarrant.outputs import (
    CandidateDecision,
    ContractRef,
    CorroborationSummary,
    Decision,
    ErrorRecord,
    GateResult,
    LookRecord,
    Selection,
    ValidationCheck,
    ValidationReport,
)


def run_id(started_at: str, contract_sha256: str) -> str:
    """A run's id: its start time (``20260101T120000Z``) and the contract's sha256 prefix."""
    stamp = started_at.replace("-", "").replace(":", "").rstrip("Z")
    return f"{stamp}Z-{contract_sha256[:12]}"


def decision_record(
    inputs: Inputs,
    run: str,
    started_at: str,
    candidates: list[CandidateDecision],
    chosen: Selection,
    *,
    run_gates: list[GateResult],
    index: EvidenceIndex | None,
    corroboration: CorroborationSummary | None,
    look: LookRecord | None,
    checks: list[ValidationCheck],
) -> Decision:
    """A decided run's record: the run's class from its candidates' (``decision.run_class``), and
    everything that explains it (contract, claim scope, selection, run gates, sources, missing
    values, the ``warn``/``info`` checks as notes, corroboration, look); ``finished_at`` is now."""
    contract = inputs.contract
    klass = run_class([c.decision_class for c in candidates])
    ref = ContractRef(
        id=contract.id, version=contract.version, path=inputs.contract_path,
        sha256=inputs.contract_sha256,
    )  # fmt: skip
    notes = [c.message for c in checks if c.status in ("warn", "info") and c.id != "missing-values"]
    return Decision(
        run_id=run,
        started_at=started_at,
        finished_at=utc_timestamp(),
        contract=ref,
        run_class=klass,
        exit_code=int(exit_code_for_class(klass)),
        summary=run_summary(klass, candidates, f"{contract.id} v{contract.version}"),
        evidence_class=contract.evidence_class,
        promotion_min_class=contract.promotion_min_class,
        claim_scope=claim_scope(contract.evidence_class),
        claims_not_supported=claims_not_supported(contract.evidence_class),
        selection=chosen,
        selected_policy=chosen.selected_policy if klass is DecisionClass.PROMOTE else None,
        run_gates=run_gates,
        sources=[r.provenance for r in inputs.results],
        missing_values=missing_value_table(index),
        notes=notes,
        candidates=candidates,
        corroboration=corroboration,
        look=look,
    )


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
        files that no run wrote (``first_foreign_file``: a record beside them could never verify),
        or lies inside ``input_dir`` (the input is never written to).
    """
    if input_dir is not None and is_inside(output_dir, input_dir):
        return False
    started = started_at or utc_timestamp()
    record = ErrorRecord(**error.to_record(), options=list(options))  # type: ignore[arg-type]
    decision = Decision(
        run_id=run_id(started, sha256_bytes(record.code.encode())),
        started_at=started,
        finished_at=utc_timestamp(),
        contract=None,
        run_class=DecisionClass.ERROR,
        exit_code=int(error.exit_code),
        summary=f"ERROR: {error.code}: {error.message}",
        error=record,
    )
    check = ValidationCheck(
        id=f"error:{error.code}", target="run", status="fail", message=error.message
    )
    report = ValidationReport(run_id=decision.run_id, checks=[check])
    run = RunRecord(
        input_digests=[],
        seed=None,
        started_at=started,
        private_key=try_load_private_key(signing_key),
        mounts=run_mounts(*(d for d in (input_dir, output_dir) if d is not None)),
    )
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        if first_foreign_file(output_dir) is not None:  # a record beside them could never verify
            return False  # checked before the lock: a refused directory stays as it was
        with output_lock(output_dir):
            clean_stale(output_dir)
            write_outputs(output_dir, decision, report, run)
    except (OSError, OutputError):
        return False
    return True
