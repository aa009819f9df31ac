"""Reading a decision for people and pipelines: the machine summary, the one line, the next step.

Nothing here classifies: every class, reason and hint comes from ``decision.json`` as the engine
wrote it (``decision.py`` is the one place that classifies). These functions only choose what to
show first and say what would change an outcome, from the gates' own ``more_paired_n``.
"""

from __future__ import annotations

from typing import TypedDict

from ragwarrant.display import cut, identifier, quoted, visible
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import CandidateClass, CandidateDecision, Decision, GateResult, GateStatus

#: Gate kinds that carry a statistical test (an estimate and confidence bounds).
STATISTICAL_KINDS = ("noninferiority", "claim")


#: One candidate in the machine summary (``class`` is a keyword, hence the functional form).
CandidateSummary = TypedDict(
    "CandidateSummary",
    {"policy_id": str, "class": str, "reason": str, "more_needed": int | None},
)


class SummaryDocument(TypedDict):
    """The machine summary of a run (``summary --json``, ``run --summary-json``)."""

    run_class: str
    exit_code: int
    next_step: str
    candidates: list[CandidateSummary]


def tested_candidates(decision: Decision) -> list[CandidateDecision]:
    """The candidates that decided the run (not NOT_SELECTED), in order: those tested on the
    confirmatory rows, and any BLOCKed on the development split."""
    return [c for c in decision.candidates if c.decision_class is not CandidateClass.NOT_SELECTED]


def deciding_gates(candidate: CandidateDecision) -> list[GateResult]:
    """The gates that decided a candidate's class, in the order its reasons cite them.

    A reason written by ``decision.py`` cites its gate as ``"<code>: <gate id> — <why>"``. Reasons
    that cite no id (the claim ceiling, multiplicity) stand for the failed gates of that kind;
    a PROMOTE ("every gate passed") rests on its statistical and ceiling gates.
    """
    cited = [g for r in candidate.reasons for g in candidate.gates if f": {g.id} — " in r]
    if not cited:
        cited = [
            g
            for g in candidate.gates
            if g.kind in ("ceiling", "multiplicity") and g.status is GateStatus.FAIL
        ]
    if not cited and candidate.decision_class is CandidateClass.PROMOTE:
        cited = [g for g in candidate.gates if g.kind in (*STATISTICAL_KINDS, "ceiling")]
    return list({g.id: g for g in cited}.values())


def unit_noun(g: GateResult) -> str:
    """What ``g.more_paired_n`` counts: clusters, paired examples or human labels (gates.ppi)."""
    units = str((g.details or {}).get("units"))
    return units if units in ("clusters", "human labels") else "paired examples"


def more_data_text(g: GateResult) -> str:
    """The "more data" hint of one unresolved gate, in its own unit; one home for every report.

    A count when the gate's power calculation gave one; otherwise why no count is useful: the
    estimate is at or beyond the threshold (more data would more likely confirm the loss), or
    it is so close to the threshold that no feasible sample resolves it
    (``stats.power.feasible_hint``). A gate made INCONCLUSIVE by values excluded as missing
    (``on_missing: exclude``, its tipping point in ``details``) asks for those values instead.
    A gate whose bound clears its threshold but whose p-value exceeds alpha (an alpha below the
    smallest p-value its resampling can show, ``details["p_floor"]``) needs a larger alpha, not
    more data. Never a count of 0.
    """
    details = g.details or {}
    if (tipping := details.get("missing_tipping_point")) is not None:
        return (
            f"supply the {details.get('missing_sensitivity_imputed')} values excluded as missing "
            f"(with {tipping} of them imputed adversarially the gate does not pass), or declare "
            "on_missing: worst"
        )
    if g.more_paired_n:
        return (
            f"about {g.more_paired_n} more {unit_noun(g)} "
            f"(at the observed effect, alpha {g.alpha:g}, 80 % power)"
        )
    if (floor := details.get("p_floor")) is not None:
        return (
            f"alpha {g.alpha:g} is below the smallest p-value the bootstrap can show ({floor:.2g}):"
            " more data would not resolve it; declare statistics.alpha of at least that"
        )
    cleared = g.lower_bound is not None and g.threshold is not None and g.lower_bound > g.threshold
    if cleared and g.p_value is not None and g.alpha is not None and g.p_value > g.alpha:
        return (
            f"the bound clears the threshold but p {g.p_value:.3g} > alpha {g.alpha:g}: not "
            "every check of the test rejects yet (no count is given)"
        )
    if g.estimate is not None and g.threshold is not None and g.estimate <= g.threshold:
        return (
            "the estimate is at or beyond the threshold: more data would more likely confirm "
            "the loss than resolve it"
        )
    return (
        "the estimate is too close to the threshold for a feasible sample to resolve it "
        "(no count is given)"
    )


def _hint_gate(candidate: CandidateDecision) -> GateResult | None:
    """The inconclusive gate that needs the most additional units (every one must resolve);
    None when one needs something other than units (missing values supplied)."""
    unresolved = [g for g in candidate.gates if g.status is GateStatus.INCONCLUSIVE]
    if any((g.details or {}).get("missing_tipping_point") is not None for g in unresolved):
        return None
    gates = [g for g in unresolved if g.more_paired_n]
    return max(gates, key=lambda g: g.more_paired_n or 0) if gates else None


def more_needed(candidate: CandidateDecision) -> int | None:
    """Additional units (paired examples or clusters) likely to resolve an INCONCLUSIVE candidate.

    The largest ``more_paired_n`` over its inconclusive gates (each gate's own power
    calculation, ``stats.power.additional_pairs_needed``): every unresolved gate must resolve.
    None when the candidate is not INCONCLUSIVE or no inconclusive gate gives a number.
    """
    if candidate.decision_class is not CandidateClass.INCONCLUSIVE:
        return None
    gate = _hint_gate(candidate)
    return None if gate is None else gate.more_paired_n


def next_step(decision: Decision, candidate: CandidateDecision | None = None) -> str:
    """What a person should do next, for the run (``candidate`` None) or for one candidate.

    Always a non-empty sentence: there is a next step for every class.
    """
    if candidate is None:
        return _run_next_step(decision)
    klass = candidate.decision_class
    if klass is CandidateClass.PROMOTE:
        return f"release {identifier(candidate.policy_id)} within the run's claim scope"
    if klass is CandidateClass.BLOCK:
        return _block_step(candidate)
    if klass is CandidateClass.REJECT:
        return "keep the baseline; a new candidate is needed to change this"
    if klass is CandidateClass.NOT_SELECTED:
        return "none: another candidate ranked first on the development split"
    return _inconclusive_step(decision, candidate)


#: How a value withheld by publication hygiene starts in a published record
#: (``audit.hygiene.REDACTED``; not imported, which would load the scanner; a test ties them).
WITHHELD_PREFIX = "[withheld: "


def _withheld_config_keys(candidate: CandidateDecision) -> dict[str, list[str]]:
    """Whose policy config holds a value publication hygiene withheld → its key paths."""
    where: dict[str, list[str]] = {}
    for d in candidate.config_differences:
        named = quoted(candidate.policy_id)
        owners = (("the baseline", d.baseline), (f"candidate {named}", d.candidate))
        for owner, value in owners:
            if isinstance(value, str) and value.startswith(WITHHELD_PREFIX):
                where.setdefault(owner, []).append(d.path)
    return where


def _block_step(candidate: CandidateDecision) -> str:
    """The next step of a BLOCKed candidate: a credential in a policy config is the config's to
    fix, not the evidence's. Key paths are named, never the withheld values."""
    keys = _withheld_config_keys(candidate)
    if keys:
        where = "; ".join(f"{', '.join(paths)} of {owner}" for owner, paths in keys.items())
        return (
            f"remove the credential from the policy config (key {where}): reference the secret by "
            "name instead (e.g. an environment variable), rotate it (it was in the inputs), "
            "and run again"
        )
    if any(r.startswith("blocked: publication-hygiene") for r in candidate.reasons):
        return (
            "remove the credential, host path or e-mail address that validation_report.json's "
            "hygiene checks locate from the inputs, and run again"
        )
    gates = [g.id for g in candidate.gates if g.kind == "hard" and g.status is GateStatus.FAIL]
    if not gates:  # a run-level BLOCK records its gate only in "blocked: <gate id> — <why>"
        cited = (r.removeprefix("blocked: ").split(" — ")[0] for r in candidate.reasons)
        gates = [c for c in cited if c.startswith("hard:")]
    named = f" ({', '.join(gates)})" if gates else ""
    where = f" on split {quoted(candidate.tested_on)}" if candidate.tested_on != "none" else ""
    return f"fix the evidence named by the failed hard gate{named}{where} and run again"


def _inconclusive_step(decision: Decision, candidate: CandidateDecision) -> str:
    gate = _hint_gate(candidate)
    if gate is not None:
        return (
            f"gather about {gate.more_paired_n} more {unit_noun(gate)} (confirmatory split) "
            f"for {identifier(candidate.policy_id)}"
        )
    if any(r.startswith("claim-ceiling") for r in candidate.reasons):
        floor = decision.promotion_min_class.value if decision.promotion_min_class else "higher"
        return f"repeat the comparison on evidence of class {floor} or higher"
    if any(r.startswith("evaluator-unreliable") for r in candidate.reasons):
        return "corroborate or replace the judge: its disagreement or abstention is too high"
    if any(r.startswith("multiplicity") for r in candidate.reasons):
        return "test fewer candidates, or gather more evidence for each"
    unresolved = [g for g in candidate.gates if g.status is GateStatus.INCONCLUSIVE]
    unresolved.sort(key=lambda g: (g.details or {}).get("missing_tipping_point") is None)
    if unresolved:
        return f"{unresolved[0].id}: {more_data_text(unresolved[0])}"
    return "no unresolved gate gives a count: see the reasons above"


def _run_next_step(decision: Decision) -> str:
    if decision.run_class is DecisionClass.ERROR:
        err = decision.error
        hint = err.hint if err is not None and err.hint else "see decision.json's error"
        return f"fix the error and run again: {hint}"
    tested = tested_candidates(decision)
    promoted = [c for c in tested if c.decision_class is CandidateClass.PROMOTE]
    if promoted:
        # A PROMOTE stands, but another candidate's defective evidence is still named.
        blocked = [c for c in tested if c.decision_class is CandidateClass.BLOCK]
        also = "".join(
            f"; also {identifier(c.policy_id)}: {next_step(decision, c)}" for c in blocked
        )
        return next_step(decision, promoted[0]) + also
    steps = [f"{identifier(c.policy_id)}: {next_step(decision, c)}" for c in tested]
    return "; ".join(steps) if steps else "fix the evidence: no candidate was tested"


def summary_document(decision: Decision) -> SummaryDocument:
    """The machine summary ``{run_class, exit_code, next_step, candidates: [...]}``.

    Each candidate carries ``policy_id``, ``class``, its first ``reason`` (whole, never cut)
    and ``more_needed`` (see ``more_needed``). Keys are stable; values come from the decision
    as written.
    """
    return {
        "run_class": decision.run_class.value,
        "exit_code": decision.exit_code,
        "next_step": next_step(decision),
        "candidates": [
            {
                "policy_id": c.policy_id,
                "class": c.decision_class.value,
                "reason": c.reasons[0] if c.reasons else "",
                "more_needed": more_needed(c),
            }
            for c in decision.candidates
        ],
    }


def summary_line(decision: Decision, width: int | None = None, *, reasons: bool = True) -> str:
    """The one-line human summary: class, exit code, each tested candidate, the next step.

    Always one line: every value from the inputs goes through ``display.visible`` (a newline or
    an escape sequence in a contract version or policy id is shown, never obeyed) and names
    through ``display.identifier``.

    Args:
        decision: the run's decision record.
        width: if given, the longest line wanted (``ragwarrant run`` prints at most
            ``STDOUT_WIDTH``); a longer line is cut with an explicit
            ``… (N more characters; see report.md)`` marker, inside the candidates when the next
            step fits whole after them, else at the end. None: never cut.
        reasons: add each non-PROMOTE candidate's first reason and the error's message.
    """
    head = f"{decision.run_class.value} (exit {decision.exit_code})"
    parts = [
        f"{identifier(c.policy_id)}={c.decision_class.value}"
        + (
            f" [{c.reasons[0]}]"
            if reasons and c.reasons and c.decision_class is not CandidateClass.PROMOTE
            else ""
        )
        for c in tested_candidates(decision)
    ]
    if decision.error is not None:
        message = f": {decision.error.message}" if reasons else ""
        parts.append(f"error {decision.error.code}{message}")
    body = visible(f"{head}: " + ("; ".join(parts) if parts else "no candidate tested"))
    tail = visible(f" — next: {next_step(decision)}")
    if width is None or len(body) + len(tail) <= width:
        return body + tail
    marker = "… ({} more characters; see report.md)"
    short = cut(body, max(width - len(tail), 0), marker)
    if short.startswith(f"{head}: "):  # the class and exit code stay whole, then the next step
        return short + tail
    return cut(body + tail, width, marker)
