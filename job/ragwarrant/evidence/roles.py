"""Warnings of likely mistakes a contract can make without breaking a rule: a direction the
metric's name contradicts, policy roles named the wrong way round, and evidence in which the
baseline beats the "new" policy on every quality metric by far (the roles are probably swapped).

Each is a ``warn`` check of the validation report (and a note of ``decision.json``), never a
BLOCK: the contract may be right. Messages repeat declared ids and numbers, never evidence text.
"""

from __future__ import annotations

import numpy as np

from ragwarrant.contract import ReleaseContract, name_words
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.outputs import ValidationCheck

HIGHER_IS_BETTER_NAMES = ("f1", "exact_match", "bleu", "rouge", "ndcg", "mrr")
"""Metric-name parts that are better when higher and that the contract's name families
(``contract.HIGHER_IS_BETTER_WORDS``: recall, precision, faithfulness..., a contract error when
contradicted) do not cover: a metric whose id contains one, declared ``lower_is_better`` without
``direction_confirmed: true``, is warned about."""

BASELINE_ROLE_WORDS = frozenset({"baseline", "old", "current", "control", "prod", "production"})
"""Words of a policy id that name the policy in place: warned about on a candidate."""

CANDIDATE_ROLE_WORDS = frozenset({"candidate", "new", "challenger", "treatment", "next"})
"""Words of a policy id that name the policy proposed: warned about on the baseline."""

MIN_SWAP_METRICS = 2
"""Quality metrics that must all favour the baseline (most of them by more than their margin)
before the roles are called probably swapped (with one metric, that is an ordinary REJECT)."""


def _swap_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    baseline = contract.baseline.policy_id
    checks = []
    for c in contract.candidates:
        # (metric, the baseline's paired mean minus the candidate's oriented so that positive
        # favours the baseline, margin) over the quality metrics both policies have values of
        gaps: list[tuple[str, float, float]] = []
        for m in contract.quality_metrics:
            base, cand = index.columns.get((baseline, m.id)), index.columns.get((c.policy_id, m.id))
            if base is None or cand is None:
                continue
            both = np.isfinite(base.value) & np.isfinite(cand.value)
            if both.any():
                gap = m.direction.sign * float(np.mean(base.value[both] - cand.value[both]))
                gaps.append((m.id, gap, m.margin_abs))
        far = sum(gap > margin for _, gap, margin in gaps)
        if len(gaps) < MIN_SWAP_METRICS or min(g for _, g, _ in gaps) <= 0 or 2 * far <= len(gaps):
            continue
        favoured = [f"{metric} +{gap:.3g}" for metric, gap, _ in gaps]
        checks.append(
            ValidationCheck(
                id="evidence-roles-swapped",
                target=c.policy_id,
                status="warn",
                message=f"the baseline {baseline!r} beats candidate {c.policy_id!r} on every "
                f"quality metric, most by more than the margin ({', '.join(favoured)}; paired "
                f"means, baseline minus candidate, oriented so + favours the baseline): if "
                f"{c.policy_id!r} is the policy in place and {baseline!r} the new one, swap "
                "baseline and candidate in the contract",
            )
        )
    return checks


def role_checks(index: EvidenceIndex, contract: ReleaseContract) -> list[ValidationCheck]:
    """``warn`` checks of likely contract mistakes (see the module docstring).

    - ``contract-direction-implausible``: a quality metric whose id contains one of
      ``HIGHER_IS_BETTER_NAMES`` declared ``lower_is_better`` without ``direction_confirmed``;
    - ``contract-role-name``: a candidate whose id has a word of ``BASELINE_ROLE_WORDS``, or a
      baseline whose id has a word of ``CANDIDATE_ROLE_WORDS``;
    - ``evidence-roles-swapped``: the baseline's paired mean (examples where both are finite)
      beats a candidate's on every quality metric with data (``MIN_SWAP_METRICS`` at least), and
      by more than ``margin_abs`` on most of them.

    Returns:
        The checks, in that order; empty when nothing looks wrong.
    """
    checks: list[ValidationCheck] = []
    for i, m in enumerate(contract.quality_metrics):
        if m.direction.value != "lower_is_better" or m.direction_confirmed:
            continue
        snake = f"_{'_'.join(name_words(m.id))}_"
        hit = next((n for n in HIGHER_IS_BETTER_NAMES if f"_{n}_" in snake), None)
        if hit is None:
            continue
        checks.append(
            ValidationCheck(
                id="contract-direction-implausible",
                target=m.id,
                status="warn",
                column=f"quality_metrics[{i}].direction",
                message=f"quality_metrics[{i}].direction: {m.id!r} is declared lower_is_better, "
                f"but {hit} metrics are better when higher: a worse candidate would pass as "
                "better; did you mean direction: higher_is_better? (if lower really is better, "
                "add direction_confirmed: true)",
            )
        )
    roles = [("baseline", contract.baseline.policy_id, CANDIDATE_ROLE_WORDS, "candidate")]
    roles += [
        (f"candidates[{i}]", c.policy_id, BASELINE_ROLE_WORDS, "baseline")
        for i, c in enumerate(contract.candidates)
    ]
    for key, policy, wrong, named_as in roles:
        words = sorted(set(name_words(policy)) & wrong)
        if not words:
            continue
        role = "the baseline" if key == "baseline" else "a candidate"
        checks.append(
            ValidationCheck(
                id="contract-role-name",
                target=policy,
                status="warn",
                column=f"{key}.policy_id",
                message=f"{key}.policy_id: policy {policy!r} is {role} but its name says "
                f"{named_as} ({', '.join(words)}): if it is the {named_as}, swap the roles, or "
                "every 'keep the baseline' / 'promote' reads backwards",
            )
        )
    return checks + _swap_checks(index, contract)
