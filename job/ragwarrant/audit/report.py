"""``report.md``: the decision for a person.

It never states more than the run's evidence class allows: the scope sentence comes from
``evidence_class.claim_scope`` and the limits from ``claims_not_supported``.
"""

from __future__ import annotations

from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import CandidateClass, Decision, GateResult, GateStatus

__all__ = ["decision_sentence", "render_report"]


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:+.4g}"


def decision_sentence(decision: Decision) -> str:
    """One sentence stating the run's decision."""
    c = decision.contract
    under = f" under contract {c.id} v{c.version}" if c else ""
    if decision.run_class is DecisionClass.ERROR:
        err = decision.error
        return f"ERROR: the job stopped before deciding ({err.code if err else 'unknown'}): nothing is decided."
    if decision.run_class is DecisionClass.PROMOTE:
        return (
            f"PROMOTE: candidate {decision.selected_policy} may replace the baseline{under}, "
            f"within the scope of {decision.evidence_class.value if decision.evidence_class else 'its'} evidence."
        )
    verb = {
        DecisionClass.REJECT: "REJECT: no candidate may replace the baseline; the evidence goes against each tested candidate",
        DecisionClass.INCONCLUSIVE: "INCONCLUSIVE: no candidate may replace the baseline yet; the evidence does not settle it",
        DecisionClass.BLOCK: "BLOCK: no candidate may replace the baseline; the evidence failed a hard gate and was not weighed",
    }[decision.run_class]
    return f"{verb}{under}."


def _gate_row(g: GateResult) -> str:
    status = g.status.value.upper() if g.status is not GateStatus.PASS else "pass"
    n = "—" if g.n is None else str(g.n)
    return (
        f"| `{g.id}` | {status} | {_fmt(g.estimate)} | {_fmt(g.lower_bound)} | {_fmt(g.upper_bound)} "
        f"| {_fmt(g.threshold)} | {n} | {g.reason.replace('|', '/')} |"
    )


def render_report(decision: Decision) -> str:
    """Render ``report.md`` from a decision."""
    lines = ["# ragwarrant decision", "", decision_sentence(decision), ""]
    lines += [f"- run: `{decision.run_id}`, exit code {decision.exit_code}"]
    if decision.contract:
        c = decision.contract
        lines += [f"- contract: `{c.id}` v{c.version} (sha256 `{c.sha256[:16]}…`)"]
    if decision.evidence_class:
        lines += [
            f"- evidence class: **{decision.evidence_class.value}** "
            f"(lowest class allowed to promote: {decision.promotion_min_class.value if decision.promotion_min_class else '—'})",
            f"- what this run supports: {decision.claim_scope}",
            "- what it does not support: " + "; ".join(decision.claims_not_supported),
        ]
    if decision.error:
        e = decision.error
        lines += ["", "## Error", "", f"- code: `{e.code}` (exit {e.exit_code}, {e.fault} fault)", f"- message: {e.message}"]
        if e.hint:
            lines += [f"- hint: {e.hint}"]
    if decision.selection:
        s = decision.selection
        lines += ["", "## Selection", "", f"- method: {s.method}; selected: {s.selected_policy or '—'}"]
        lines += [f"- quality-only selection would pick: {s.quality_only_pick or '—'}; cost-only: {s.cost_only_pick or '—'}"]
        lines += [f"- {n}" for n in s.notes]
    if decision.run_gates:
        lines += ["", "## Run-level checks", ""]
        lines += [f"- `{g.id}`: {g.status.value} — {g.reason}" for g in decision.run_gates]
    lines += ["", "## Candidates", ""]
    lines += ["| candidate | class | tested on | paired n | first reason |", "|---|---|---|---|---|"]
    for cd in decision.candidates:
        first = cd.reasons[0].replace("|", "/") if cd.reasons else ""
        lines += [f"| {cd.policy_id} | {cd.decision_class.value} | {cd.tested_on} | {cd.paired_n if cd.paired_n is not None else '—'} | {first} |"]
    for cd in decision.candidates:
        lines += ["", f"### {cd.policy_id}: {cd.decision_class.value}", ""]
        lines += [f"- {r}" for r in cd.reasons]
        if cd.gates:
            lines += [
                "",
                "Deltas are oriented so that positive means the candidate is better; bounds are one-sided.",
                "",
                "| gate | status | estimate | lower | upper | threshold | n | reason |",
                "|---|---|---|---|---|---|---|---|",
            ]
            lines += [_gate_row(g) for g in cd.gates]
        more = [g for g in cd.gates if g.status is GateStatus.INCONCLUSIVE]
        if more and cd.decision_class is CandidateClass.INCONCLUSIVE:
            lines += ["", "What would change this INCONCLUSIVE:", ""]
            for g in more:
                if g.more_paired_n is not None:
                    lines += [f"- `{g.id}`: about {g.more_paired_n} more paired examples (at the observed effect, alpha {g.alpha}, 80 % power)"]
                else:
                    lines += [f"- `{g.id}`: the observed effect sits on the threshold; more data at this effect would not resolve it"]
        if cd.config_differences:
            lines += ["", "Config differences from the baseline:", ""]
            lines += [f"- `{d.path}`: {d.baseline!r} → {d.candidate!r}" for d in cd.config_differences]
    lines += ["", "The machine-readable record is `decision.json`; `manifest.json` lists the sha256 of every input and output.", ""]
    return "\n".join(lines)
