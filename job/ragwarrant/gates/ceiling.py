"""The claim ceiling: evidence below the contract's promotion class cannot PROMOTE."""

from __future__ import annotations

from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.outputs import GateResult, GateStatus

__all__ = ["gate_claim_ceiling"]


def gate_claim_ceiling(
    evidence_class: EvidenceClass, promotion_min_class: EvidenceClass
) -> GateResult:
    """Pass when the run's evidence class is at or above the lowest class allowed to PROMOTE."""
    ok = evidence_class >= promotion_min_class
    return GateResult(
        id="claim-ceiling",
        kind="ceiling",
        status=GateStatus.PASS if ok else GateStatus.FAIL,
        reason=(
            f"evidence class {evidence_class.value} "
            + (">=" if ok else "is below")
            + f" the promotion class {promotion_min_class.value}"
        ),
        details={
            "evidence_class": evidence_class.value,
            "promotion_min_class": promotion_min_class.value,
        },
    )
