"""The evidence-class ladder and the claim ceiling each class carries (contracts/evidence-classes.md).

A leaf module: the contract, the gates and the report all read it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EvidenceClass", "claim_scope", "claims_not_supported"]


class EvidenceClass(StrEnum):
    """How the evidence of a run was produced, weakest first.

    The order is the ladder: a run may claim no more than its class allows.
    """

    FIXTURE = "fixture"
    DEVELOPMENT = "development"
    FROZEN_OBSERVATION = "frozen-observation"
    CONFIRMATORY = "confirmatory"
    GENERATIVE = "generative"
    HUMAN_ANNOTATED = "human-annotated"
    DEPLOYMENT = "deployment"

    @property
    def rank(self) -> int:
        """Position on the ladder, 0 for ``fixture``."""
        return list(EvidenceClass).index(self)

    def __ge__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, EvidenceClass):
            return NotImplemented
        return self.rank >= other.rank

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, EvidenceClass):
            return NotImplemented
        return self.rank < other.rank


_SCOPE: dict[EvidenceClass, str] = {
    EvidenceClass.FIXTURE: (
        "the gate engine ran end to end on fixture data; nothing is claimed about any policy"
    ),
    EvidenceClass.DEVELOPMENT: (
        "a screening result on development data that may have informed the candidate's design; "
        "it can motivate a confirmatory run but not a release"
    ),
    EvidenceClass.FROZEN_OBSERVATION: (
        "a comparison on evidence frozen before the analysis, from observed (not randomized) "
        "traffic; differences may reflect the traffic as well as the policies"
    ),
    EvidenceClass.CONFIRMATORY: (
        "a pre-registered comparison on a held-out confirmatory split, scored by the declared "
        "evaluators, under the declared margins"
    ),
    EvidenceClass.GENERATIVE: (
        "a pre-registered comparison on freshly generated outputs of both policies for the same "
        "inputs, scored by the declared evaluators"
    ),
    EvidenceClass.HUMAN_ANNOTATED: (
        "a comparison whose quality labels were assigned by human annotators on outputs of both "
        "policies for the same inputs"
    ),
    EvidenceClass.DEPLOYMENT: (
        "a comparison on production traffic served by both policies under the declared margins"
    ),
}

_NOT_SUPPORTED: dict[EvidenceClass, tuple[str, ...]] = {
    EvidenceClass.FIXTURE: (
        "any statement about a policy's quality, cost or latency",
        "a release decision",
    ),
    EvidenceClass.DEVELOPMENT: (
        "a release decision",
        "generalisation beyond the development examples",
    ),
    EvidenceClass.FROZEN_OBSERVATION: (
        "a causal effect of the policy change",
        "quality judged by humans",
    ),
    EvidenceClass.CONFIRMATORY: (
        "quality judged by humans",
        "behaviour on production traffic",
    ),
    EvidenceClass.GENERATIVE: (
        "quality judged by humans",
        "behaviour on production traffic",
    ),
    EvidenceClass.HUMAN_ANNOTATED: ("behaviour on production traffic",),
    EvidenceClass.DEPLOYMENT: ("behaviour outside the observed traffic period and mix",),
}


def claim_scope(evidence_class: EvidenceClass) -> str:
    """Return the sentence stating what a run of this class supports."""
    return _SCOPE[evidence_class]


def claims_not_supported(evidence_class: EvidenceClass) -> list[str]:
    """Return what a run of this class may not be used to claim."""
    return list(_NOT_SUPPORTED[evidence_class])
