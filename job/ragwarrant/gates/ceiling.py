"""The claim ceiling: evidence below the contract's promotion class cannot PROMOTE.

A repeated look that its contract does not plan for (``gates.looks``) is not confirmatory
evidence, whatever the contract declares: its ceiling drops to development, so a team that reruns
the same contract version on more evidence until the gate passes cannot PROMOTE that way.
"""

from __future__ import annotations

from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.outputs import GateResult, GateStatus, Scalar


def gate_claim_ceiling(
    evidence_class: EvidenceClass,
    promotion_min_class: EvidenceClass,
    look_refusal: str | None = None,
) -> GateResult:
    """Pass when the run's evidence class is at or above the lowest class allowed to PROMOTE.

    Args:
        evidence_class: the class the contract declares for its evidence.
        promotion_min_class: the lowest class allowed to PROMOTE.
        look_refusal: why this run's look is refused as confirmatory evidence (a repeated look
            without a sequential plan, or after the plan's alpha is spent); the run's evidence
            class then counts as development.
    """
    effective = EvidenceClass.DEVELOPMENT if look_refusal is not None else evidence_class
    ok = effective >= promotion_min_class
    reason = (
        f"evidence class {effective.value} "
        + (">=" if ok else "is below")
        + f" the promotion class {promotion_min_class.value}"
    )
    details: dict[str, Scalar] = {
        "evidence_class": effective.value,
        "promotion_min_class": promotion_min_class.value,
    }
    if look_refusal is not None:
        reason += f" ({look_refusal})"
        details["declared_evidence_class"] = evidence_class.value
    return GateResult(
        id="claim-ceiling",
        kind="ceiling",
        status=GateStatus.PASS if ok else GateStatus.FAIL,
        reason=reason,
        details=details,
    )
