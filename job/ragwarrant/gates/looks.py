"""Repeated looks: which look a run is, the level it may test at, and the look-evidence gate.

A repeated look is a run of the same contract id and version, on the same baseline and candidate
configs (their behavioural content: ``inputs.behavioural_sha256`` drops a config's ``note`` and
the contract's ``non_behavioural_config_keys``), after earlier runs recorded in the ``--ledger``.
Its evidence must extend the latest earlier look's (``evidence.looks.extension_problem``);
otherwise the run gate ``hard:look-evidence`` fails and BLOCKs the run (a new contract version is
the honest way to start over, on new examples). Looks are linked by evidence, not by config text:
a first run of another contract id or version on examples that an earlier look of the same
baseline and candidate (by policy id, whatever its config, or by config content) saw is a later
look of that study, and not confirmatory. With exactly the same evidence it repeats that look
(same number and level). With more evidence:

- under a declared ``sequential`` plan the run tests at the plan's level for its look
  (``stats.sequential.look_level``), so the levels of all looks sum to at most alpha;
- without one it is refused as confirmatory evidence: the claim ceiling drops it to development
  (``gates.ceiling``), so a team cannot rerun at full alpha until the gate passes.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import orjson

from ragwarrant.contract import ReleaseContract
from ragwarrant.digests import sha256_bytes
from ragwarrant.evidence.index import EvidenceIndex
from ragwarrant.evidence.looks import (
    Fingerprint,
    encode_fingerprint,
    extension_problem,
    fingerprint,
    same_evidence,
    shared_examples,
)
from ragwarrant.gates.candidate import CandidateEvaluation
from ragwarrant.gates.ceiling import gate_claim_ceiling
from ragwarrant.gates.hard import hard_gate
from ragwarrant.inputs import Inputs, behavioural_sha256
from ragwarrant.outputs import GateResult, GateStatus, LookRecord
from ragwarrant.stats.power import feasible_hint
from ragwarrant.stats.sequential import SequentialPlan, look_level, units_for_next_look

_N = NormalDist()


@dataclass(frozen=True)
class EarlierLook:
    """What the ledger kept of an earlier look of the same contract version and configs.

    Attributes:
        record: its ``LookRecord``.
        run_id: its run id.
        fingerprint: its evidence fingerprint, or None when the ledger's copy is missing or does
            not match the recorded sha256.
        contract_sha256: sha256 of the contract file that run read (None when not recorded).
    """

    record: LookRecord
    run_id: str
    fingerprint: Fingerprint | None
    contract_sha256: str | None = None


@dataclass(frozen=True)
class Look:
    """This run's look.

    Attributes:
        record: what decision.json and the ledger record (``look``).
        alpha: the one-sided level of this run's tests.
        problem: why the evidence does not extend the earlier look's (a BLOCK), or None.
        plan: the declared plan, or None.
    """

    record: LookRecord
    alpha: float
    problem: str | None
    plan: SequentialPlan | None


def plan_of(contract: ReleaseContract) -> SequentialPlan | None:
    """The contract's ``sequential`` block as a ``SequentialPlan`` (None when not declared)."""
    seq = contract.sequential
    if seq is None:
        return None
    return SequentialPlan(
        method=seq.method,
        alpha=contract.statistics.alpha,
        spending=seq.spending,
        looks=seq.looks,
        max_units=seq.max_units,
    )


@dataclass(frozen=True)
class _Here:
    """This run's side of the comparison, beside the earlier looks of its contract id and
    version (oldest first); each method below is one kind of look this run can be."""

    contract: ReleaseContract
    earlier: Sequence[EarlierLook]
    fingerprint: Fingerprint
    units: int
    configs: dict[str, str]
    evidence_sha256: str | None

    def look(
        self, alpha: float, problem: str | None, looks: Sequence[EarlierLook], **fields: object
    ) -> Look:
        """The ``Look`` at ``alpha``; its record lists the run ids of ``looks`` and of the looks
        each was linked to (``earlier_run_ids``: oldest first, once each)."""
        plan = self.contract.sequential
        ids = (i for e in looks for i in (*e.record.earlier_run_ids, e.run_id))
        rec = LookRecord(
            plan=None if plan is None else dict(plan.model_dump(mode="json")),
            units=self.units,
            evidence_sha256=self.evidence_sha256,
            configs=self.configs,
            earlier_run_ids=list(dict.fromkeys(ids)),
            **fields,  # type: ignore[arg-type]
        )
        return Look(rec, alpha, problem, plan_of(self.contract))

    def reused(self, seen: Sequence[EarlierLook]) -> Look:
        """A first run of this contract version on evidence that earlier looks of another
        contract id or version already saw, for the same baseline and candidate: not
        confirmatory.

        A new contract version (a patch bump, a renamed contract id, a changed config) would
        otherwise start a fresh look at full alpha on the same examples (third trial); the plan
        of a new version cannot count looks made before it, so its alpha counts as spent. The
        look number follows the latest of them, and ``earlier_run_ids`` lists them all.
        """
        alpha = self.contract.statistics.alpha
        latest = max(seen, key=lambda e: e.record.number)
        reason = (
            f"the evidence repeats examples that run {latest.run_id} (look {latest.record.number} "
            "of another contract id or version) already tested for the same baseline and "
            "candidate (by policy id or config content, whatever the config text): a new "
            "contract version cannot PROMOTE on evidence already looked at (decide it on new "
            "examples)"
        )
        return self.look(
            alpha,
            None,
            seen,
            number=latest.record.number + 1,
            alpha_this_look=0.0,
            alpha_spent=alpha,
            confirmatory=False,
            reason=reason,
        )

    def repeat(self) -> Look:
        """The latest earlier look repeated at its level: the same evidence."""
        latest = self.earlier[-1]
        prev = latest.record
        return self.look(
            prev.alpha_this_look or self.contract.statistics.alpha,
            None,
            self.earlier,
            number=prev.number,
            alpha_this_look=prev.alpha_this_look,
            alpha_spent=prev.alpha_spent,
            confirmatory=prev.confirmatory,
            repeat_of=latest.run_id,
            reason=f"the same evidence as look {prev.number} (run {latest.run_id}): that look "
            "repeated at its level",
        )

    def blocked(self, reason: str) -> Look:
        """A BLOCK: the look after the latest earlier one (the first without one), spending no
        alpha."""
        prev = self.earlier[-1].record if self.earlier else None
        return self.look(
            self.contract.statistics.alpha,
            reason,
            self.earlier,
            number=prev.number + 1 if prev is not None else 1,
            alpha_this_look=0.0,
            alpha_spent=prev.alpha_spent if prev is not None else 0.0,
            confirmatory=False,
            blocked=True,
            reason=reason,
        )

    def same_comparison(self, other: EarlierLook) -> bool:
        """Whether an earlier look tested this run's baseline against one of its candidates on some
        of this run's examples: the same study, whatever the contract id, version or config text.

        A policy is the same when the earlier look recorded its policy id (whatever its config:
        a re-configured candidate under the same name on the same examples is a repeated look at
        that data) or its behavioural config identity (``inputs.behavioural_sha256``: a renamed
        policy with an unchanged config). The examples overlap when any of the earlier look's
        example-id digests is among this run's (``evidence.looks.shared_examples``).
        """
        before = other.record.configs or {}
        identities = set(before.values())
        baseline_id = self.contract.baseline.policy_id
        baseline = self.configs.get(baseline_id)

        def seen(policy_id: str, exclude: str | None = None) -> bool:
            identity = self.configs.get(policy_id)
            known = identity is not None and identity != exclude and identity in identities
            return policy_id in before or known

        if other.fingerprint is None or not seen(baseline_id):
            return False
        if not any(seen(c.policy_id, exclude=baseline) for c in self.contract.candidates):
            return False
        return shared_examples(other.fingerprint, self.fingerprint) > 0

    def next_look(self) -> Look:
        """The look after the latest earlier one (look 1 without one) at its level: the plan's
        for this look; without a plan, alpha for look 1 and nothing (not confirmatory) after it."""
        contract = self.contract
        prev, plan = (self.earlier[-1].record if self.earlier else None), plan_of(contract)
        number, before = (1, 0.0) if prev is None else (prev.number + 1, prev.alpha_spent)
        alpha = contract.statistics.alpha
        if plan is None:
            this, spent = (alpha, alpha) if prev is None else (0.0, before)
            reason = (
                "look 1: the first run of this contract version"
                if prev is None
                else f"look {number} of contract {contract.id} v{contract.version} without a "
                "sequential plan: a repeated look cannot PROMOTE as confirmatory evidence (declare "
                "sequential: in a new contract version decided on new examples)"
            )
        else:
            level = look_level(plan, number, self.units, before)
            this, spent = level.alpha_this_look, level.alpha_spent
            reason = f"look {number} of the sequential plan: one-sided level {this:.4g}"
            if prev is not None and this <= 0:
                reason = (
                    f"look {number}: the sequential plan's alpha is spent; this look cannot PROMOTE"
                )
            elif prev is not None:
                reason += f" (spent {spent:.4g} of {plan.alpha:g})"
        return self.look(
            this or alpha,
            None,
            self.earlier,
            number=number,
            alpha_this_look=this,
            alpha_spent=spent,
            confirmatory=this > 0,
            reason=reason,
        )

    def changed(self, contract_sha256: str | None) -> str | None:
        """Why the contract differs from an earlier look's under the same id and version, or the
        policies or their configs from the latest look's; None when neither does.

        A renamed, added or re-configured policy under the same contract id and version would
        otherwise start a fresh look at full alpha (fresh-user trial): it is a BLOCK instead.
        Configs are compared by behavioural content (``inputs.behavioural_sha256``), so a changed
        ``note`` or non-behavioural key is the same config and the run is the study's next look.
        """
        for e in self.earlier:
            if contract_sha256 is not None and e.contract_sha256 not in (None, contract_sha256):
                return (
                    f"the contract file differs from the one look {e.record.number} (run "
                    f"{e.run_id}) read under the same id and version (margins, slices or rules "
                    "may have changed)"
                )
        before, now = self.earlier[-1].record.configs or {}, self.configs
        if before == now:
            return None
        n = len(set(before) ^ set(now)) + sum(before[p] != now[p] for p in set(before) & set(now))
        return (
            f"the policies or their configs differ from look {self.earlier[-1].record.number}'s "
            f"under the same contract id and version ({n} polic{'y' if n == 1 else 'ies'} added, "
            "removed or changed in a behavioural key)"
        )


def resolve_look(
    contract: ReleaseContract,
    earlier: Sequence[EarlierLook],
    fingerprint: Fingerprint,
    units: int,
    configs: Mapping[str, str],
    evidence_sha256: str | None = None,
    contract_sha256: str | None = None,
    others: Sequence[EarlierLook] = (),
    ledger_break: str | None = None,
) -> Look:
    """Which look this run is and the level its tests use.

    Args:
        contract: the run's contract.
        earlier: earlier looks of the same contract id, version and configs, oldest first (runs
            that were not BLOCKed or in ERROR).
        fingerprint: this run's evidence fingerprint (``evidence.looks.fingerprint``).
        units: the examples this run decides on (information fraction numerator).
        configs: policy id → behavioural config identity (recorded).
        evidence_sha256: sha256 of the encoded fingerprint (recorded).
        contract_sha256: sha256 of this run's contract file: an earlier look under the same id
            and version but another contract (a changed margin, a dropped protected slice...)
            is a BLOCK, never a repeat or a first look.
        others: looks under other contract ids or versions, oldest first. A first run of
            this version is a later look of theirs, not confirmatory, when any of them tested
            the same baseline and candidate (``_Here.same_comparison``: by policy id or config
            content) on some of this run's examples; ``earlier_run_ids`` lists them.
        ledger_break: where the ledger's hash chain is broken (``line <n> (<kind>)``,
            ``audit.ledger.read_under_lock``), or None: a broken chain is a BLOCK, since a deleted
            or edited entry may have been an earlier look.

    Returns:
        The ``Look``: first look, a repeat of the latest look (same evidence), a next look at the
        plan's level (or refused as confirmatory without a plan, or once the plan is spent), or
        a BLOCK when the evidence does not extend the latest look's.
    """
    here = _Here(contract, earlier, fingerprint, units, dict(configs), evidence_sha256)
    if ledger_break is not None:
        return here.blocked(
            f"the ledger's hash chain is broken at {ledger_break}: an earlier look of this "
            "contract version may have been deleted or changed, so this run's look cannot be "
            "counted (check the ledger with `ragwarrant ledger verify`, restore it from a copy "
            "and run again)",
        )
    if not earlier:
        seen = [o for o in others if here.same_comparison(o)]
        return here.reused(seen) if seen else here.next_look()
    latest, number = earlier[-1], earlier[-1].record.number
    why = here.changed(contract_sha256)
    before = latest.fingerprint
    if why is None and before is None:
        why = (
            f"the evidence fingerprint of look {number} (run {latest.run_id}) is missing from "
            "the ledger or does not match its sha256, so this evidence cannot be shown to extend it"
        )
    elif why is None and before is not None:
        if same_evidence(before, fingerprint):
            return here.repeat()
        problem = extension_problem(before, fingerprint)
        why = (
            None if problem is None else f"the evidence does not extend look {number}'s: {problem}"
        )
    if why is not None:
        honest = "a new contract version decided on new examples is the honest way to start over"
        return here.blocked(f"look {number + 1}: {why}; {honest}")
    return here.next_look()


def recorded_look(
    contract: ReleaseContract,
    record: LookRecord,
    units: int,
    configs: Mapping[str, str],
    evidence_sha256: str | None,
) -> Look:
    """The look a replay (``ragwarrant verify --input``) reproduces from the recorded decision.

    A replay has no ledger, so it takes the look's number, level and verdict from the record
    and recomputes what the inputs determine (units, configs, the fingerprint's sha256): when
    the inputs differ, those fields differ from the record and verify reports the mismatch.
    """
    rec = record.model_copy(
        update={"units": units, "configs": dict(configs), "evidence_sha256": evidence_sha256}
    )
    alpha = rec.alpha_this_look or contract.statistics.alpha
    return Look(rec, alpha, rec.reason if rec.blocked else None, plan_of(contract))


def gate_look_evidence(look: Look) -> GateResult | None:
    """The run gate ``hard:look-evidence``: present (failed) only when the evidence of a
    repeated look shrank, changed its pairing or changed earlier values, or when the ledger's
    chain is broken so the earlier looks cannot be counted."""
    if look.problem is None:
        return None
    return hard_gate("look-evidence", False, look.problem, details={"look": look.record.number})


_MORE = re.compile(r"about \d+ more (clusters|paired examples) would likely resolve it")


def _replanned(gate: GateResult, look: Look, plan: SequentialPlan, power: float) -> GateResult:
    """One inconclusive noninferiority gate with its hint counted at the plan's next look.

    The bounds are estimate -/+ z_{1-alpha} SE under the normal approximation, so the standard
    error is (upper - lower) / (2 z_{1-alpha}), over the gate's resampled units.
    """
    units, alpha = gate.details.get("resampled_units"), gate.alpha
    lower, upper = gate.lower_bound, gate.upper_bound
    if not isinstance(units, int) or units < 2 or alpha is None or not 0 < alpha < 0.5:
        return gate
    if lower is None or upper is None or gate.estimate is None:
        return gate
    se = (upper - lower) / (2.0 * _N.inv_cdf(1.0 - alpha))
    rec, k = look.record, look.record.number + 1
    scale = rec.units / units if units else 1.0

    def level_at(total_units: int) -> float:
        return look_level(plan, k, round(total_units * scale), rec.alpha_spent).alpha_this_look

    threshold = gate.threshold if gate.threshold is not None else 0.0
    limit = 100 * max(units, 30)
    more = units_for_next_look(
        gate.estimate, threshold, se * math.sqrt(units), units, power, level_at, limit
    )
    if more is not None:
        more = feasible_hint(more, gate.estimate - threshold, units)
    if gate.details.get("degenerate_reason") is not None and gate.more_paired_n is not None:
        more = max(more or 0, gate.more_paired_n)  # the exact guard's minimum still applies
    if more is None:
        text = f"the plan's look {k} would not likely resolve it with a feasible sample"
        return gate.model_copy(
            update={"more_paired_n": None, "reason": _MORE.sub(text, gate.reason)}
        )
    text = (
        f"about {more} more \\1 would likely resolve it at look {k} "
        f"(one-sided level {level_at(units + more):.4g})"
    )
    return gate.model_copy(update={"more_paired_n": more, "reason": _MORE.sub(text, gate.reason)})


def replan_hints(gates: Sequence[GateResult], look: Look, power: float) -> list[GateResult]:
    """Inconclusive noninferiority gates with the "more units" hint counted for the next look.

    Under a sequential plan the next look tests at its own level, which depends on its size;
    the hint is the smallest addition that reaches ``power`` at that level
    (``stats.sequential.units_for_next_look``, normal approximation with the standard error
    implied by the gate's one-sided bounds). A degenerate test (all ties, few worse units) keeps
    at least its own count, which includes the units the exact guard needs. Other gates, and
    every gate without a plan, are returned unchanged.
    """
    if look.plan is None:
        return list(gates)
    return [
        _replanned(g, look, look.plan, power)
        if g.kind == "noninferiority" and g.status is GateStatus.INCONCLUSIVE and g.more_paired_n
        else g
        for g in gates
    ]


# ---------------------------------------------------------------------------------------------
# A run's look: its side (``LookQuery``) against what the ledger holds (``LedgerLooks``).


@dataclass(frozen=True)
class LedgerLooks:
    """What the ledger holds about looks, as one run read it (``audit.looks.read_looks``).

    Attributes:
        earlier: earlier looks of this contract id and version, oldest first.
        others: looks under other contract ids or versions, oldest first.
        ledger_break: where the chain is broken (``line <n> (<kind>)``), or None.
    """

    earlier: list[EarlierLook]
    others: list[EarlierLook]
    ledger_break: str | None = None


@dataclass(frozen=True)
class LookQuery:
    """This run's side of look recognition: everything but the ledger.

    Attributes:
        contract: the run's contract; ``contract_sha256`` its file's sha256.
        fingerprint: the evidence fingerprint of the decided examples (``evidence.looks``).
        units: the number of decided examples.
        configs: policy id → behavioural config identity (``inputs.behavioural_sha256``).
        evidence: the encoded fingerprint the ledger keeps (``schema``, ``digests``).
    """

    contract: ReleaseContract
    contract_sha256: str
    fingerprint: Fingerprint
    units: int
    configs: dict[str, str]
    evidence: bytes

    def resolve(self, ledger: LedgerLooks) -> Look:
        """Which look this run is against ``ledger`` (``resolve_look``)."""
        return resolve_look(
            self.contract,
            ledger.earlier,
            self.fingerprint,
            self.units,
            self.configs,
            sha256_bytes(self.evidence),
            self.contract_sha256,
            others=ledger.others if not ledger.earlier else (),
            ledger_break=ledger.ledger_break,
        )

    def replayed(self, record: LookRecord) -> Look:
        """The recorded look a ``verify --input`` replay reproduces (``recorded_look``)."""
        sha = sha256_bytes(self.evidence)
        return recorded_look(self.contract, record, self.units, self.configs, sha)


def look_query(inputs: Inputs, index: EvidenceIndex, scope: np.ndarray) -> LookQuery:
    """This run's ``LookQuery`` on the decided examples ``scope`` (bool, shape (n_examples,))."""
    contract = inputs.contract
    policies = contract.policy_ids
    fp = fingerprint(index, scope, policies)
    data = orjson.dumps(
        {"schema": 1, "digests": encode_fingerprint(fp)}, option=orjson.OPT_SORT_KEYS
    )
    configs = {p: behavioural_sha256(inputs, p) for p in policies if p in inputs.config_sha}
    return LookQuery(contract, inputs.contract_sha256, fp, int(scope.sum()), configs, data)


def at_level(contract: ReleaseContract, look: Look | None) -> ReleaseContract:
    """The contract with ``statistics.alpha`` set to the look's level (its own without a look)."""
    if look is None or look.alpha == contract.statistics.alpha:
        return contract
    stats = contract.statistics.model_copy(update={"alpha": look.alpha})
    return contract.model_copy(update={"statistics": stats})


def replanned(
    evaluation: CandidateEvaluation, look: Look | None, contract: ReleaseContract
) -> CandidateEvaluation:
    """The evaluation with its "more units" hints counted for the plan's next look."""
    if look is None or look.plan is None:
        return evaluation
    gates = replan_hints(evaluation.gates, look, contract.statistics.power)
    return dataclasses.replace(evaluation, gates=gates)


def ceiling_gate(contract: ReleaseContract, look: Look | None) -> GateResult:
    """The claim-ceiling gate, refusing confirmatory claims for a non-confirmatory look."""
    refusal = None if look is None or look.record.confirmatory else look.record.reason
    return gate_claim_ceiling(contract.evidence_class, contract.promotion_min_class, refusal)
