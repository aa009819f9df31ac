"""The evidence-class ladder and each class's claim ceiling (contracts/evidence-classes.md).

A leaf module: the contract, the gates and the report all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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


@dataclass(frozen=True)
class ClassClaim:
    """A kind of statement about a policy, and the weakest evidence class that supports it.

    Attributes:
        text: the claim, as listed under ``claims_not_supported`` when the class is too low.
        lowest: the weakest class that supports it; None for a claim no class supports.
        overclaim_phrases: lowercase phrases that assert the claim; a report of a lower class must
            not use them outside its "does not support" list (checked by the tests).
    """

    text: str
    lowest: EvidenceClass | None
    overclaim_phrases: tuple[str, ...] = ()


CLAIMS: tuple[ClassClaim, ...] = (
    ClassClaim(
        "any statement about a policy's quality, cost or latency",
        EvidenceClass.DEVELOPMENT,
        ("is better than", "is cheaper than", "is faster than", "quality of the candidate is"),
    ),
    ClassClaim(
        "a release decision",
        EvidenceClass.FROZEN_OBSERVATION,
        (
            "ready for release",
            "safe to release",
            "approved for release",
            "may replace the baseline under contract",
        ),
    ),
    ClassClaim(
        "generalisation beyond the examples the candidate was developed or tuned on",
        EvidenceClass.FROZEN_OBSERVATION,
        ("generalises", "generalizes", "held-out"),
    ),
    ClassClaim(
        "a causal effect of the policy change (observed differences may reflect the traffic "
        "each policy happened to serve)",
        EvidenceClass.CONFIRMATORY,
        ("causes", "caused by", "causal effect of the policy", "pre-registered"),
    ),
    ClassClaim(
        "quality judged by humans (the scores come from automated evaluators)",
        EvidenceClass.HUMAN_ANNOTATED,
        ("human annotators", "judged by humans", "human-judged", "humans prefer"),
    ),
    ClassClaim(
        "behaviour on production traffic",
        EvidenceClass.DEPLOYMENT,
        ("production traffic served by", "in production", "live traffic"),
    ),
    ClassClaim("behaviour on inputs, traffic or periods unlike those in the evidence", None),
    ClassClaim("quality on metrics, slices or margins the contract does not declare", None),
)
"""The claim ceiling: what each rung of the ladder adds. ``claims_not_supported`` lists every
claim whose lowest class is above the run's class (or that no class supports)."""


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


def claim_scope(evidence_class: EvidenceClass) -> str:
    """Return the sentence stating what a run of this class supports."""
    return _SCOPE[evidence_class]


def claims_not_supported(evidence_class: EvidenceClass) -> list[str]:
    """Return what a run of this class may not be used to claim, in ladder order."""
    return [c.text for c in CLAIMS if c.lowest is None or evidence_class < c.lowest]
