"""``report.md``: the decision for a person.

It never states more than the run's evidence class allows: the scope sentence comes from
``evidence_class.claim_scope`` and the limits from ``claims_not_supported``.
"""

from __future__ import annotations

from ragwarrant.audit._findings import is_secret_name
from ragwarrant.audit.summary import more_data_text
from ragwarrant.display import identifier, markdown, markdown_code, visible
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import (
    CandidateClass,
    CandidateDecision,
    CorroborationRates,
    CorroborationSummary,
    Decision,
    GateResult,
    GateStatus,
)


def signed(x: float | None) -> str:
    """A number with its sign to four significant digits (``+0.01234``), ``—`` for None."""
    return "—" if x is None else f"{x:+.4g}"


def _name(x: object) -> str:
    """A name from the inputs (policy, metric, slice, contract id), as Markdown inline text."""
    return markdown(identifier(str(x)))


def _code(x: object, *, table: bool = False) -> str:
    """A name from the inputs as a Markdown code span."""
    return markdown_code(identifier(str(x)), table=table)


def decision_sentence(decision: Decision) -> str:
    """One sentence stating the run's decision, in plain text (names as ``display.identifier``
    shows them; the caller escapes it for its format)."""
    c = decision.contract
    under = f" under contract {identifier(c.id)} v{visible(c.version)}" if c else ""
    chosen = identifier(str(decision.selected_policy))
    if decision.run_class is DecisionClass.ERROR:
        err = decision.error
        return (
            f"ERROR: the job stopped before deciding ({visible(err.code) if err else 'unknown'}): "
            "nothing is decided."
        )
    if decision.run_class is DecisionClass.PROMOTE and (
        decision.evidence_class is not None
        and decision.evidence_class < EvidenceClass.FROZEN_OBSERVATION
    ):
        return (
            f"PROMOTE (engine check only): candidate {chosen} passed every gate"
            f"{under}, but {decision.evidence_class.value} evidence supports no release decision."
        )
    if decision.run_class is DecisionClass.PROMOTE:
        return (
            f"PROMOTE: candidate {chosen} may replace the baseline{under}, "
            "within the scope of "
            f"{decision.evidence_class.value if decision.evidence_class else 'its'} evidence."
        )
    verb = {
        DecisionClass.REJECT: (
            "REJECT: no candidate may replace the baseline; "
            "the evidence goes against each tested candidate"
        ),
        DecisionClass.INCONCLUSIVE: (
            "INCONCLUSIVE: no candidate may replace the baseline yet; "
            "the evidence does not settle it"
        ),
        DecisionClass.BLOCK: (
            "BLOCK: no candidate may replace the baseline; "
            "the evidence failed a hard gate and was not weighed"
        ),
    }[decision.run_class]
    return f"{verb}{under}."


def _gate_row(g: GateResult) -> str:
    status = g.status.value.upper() if g.status is not GateStatus.PASS else "pass"
    n = "—" if g.n is None else str(g.n)
    return (
        f"| {_code(g.id, table=True)} | {status} | {signed(g.estimate)} | {signed(g.lower_bound)} "
        f"| {signed(g.upper_bound)} | {signed(g.threshold)} | {n} | {markdown(g.reason)} |"
    )


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def _rate_row(c: CorroborationSummary, r: CorroborationRates) -> str:
    """One table row; a rate above the contract's limit is in bold."""
    over_d = r.disagreement_rate is not None and r.disagreement_rate > c.max_disagreement_rate
    over_a = r.abstention_rate is not None and r.abstention_rate > c.max_abstention_rate
    dr = f"**{_rate(r.disagreement_rate)}**" if over_d else _rate(r.disagreement_rate)
    ar = f"**{_rate(r.abstention_rate)}**" if over_a else _rate(r.abstention_rate)
    return (
        f"| {_name(r.policy_id)} | {_name(r.slice) if r.slice is not None else 'all'} "
        f"| {r.n_judged} | {r.n_disagreements} "
        f"| {dr} | {r.judge_supported_lexical_unsupported} "
        f"| {r.judge_unsupported_lexical_supported} "
        f"| {r.answer_type_disagreements} | {r.n_with_samples} | {r.n_abstained} | {ar} "
        f"| {r.failed_retrieval} "
        f"| {r.failed_generation} | {r.failed_answer} | {r.fabricated_citations} "
        f"| {r.honest_refusals} |"
    )


def _lexical_thresholds(c: CorroborationSummary) -> str:
    """The lexical thresholds applied: per task when calibrated per task, else the pooled one."""
    if not c.lexical_task_thresholds:
        return f"{c.lexical_threshold:.4g}"
    tasks = ", ".join(f"{_name(t)} {v:.4g}" for t, v in c.lexical_task_thresholds.items())
    return f"{tasks} (per task; pooled {c.lexical_threshold:.4g} for other examples)"


def corroboration_lines(decision: Decision) -> list[str]:
    """The "Evaluator corroboration" section: disagreement and abstention rates.

    One row per policy and slice. Counts and rates only; the private question, response and
    context text never appears.
    """
    c = decision.corroboration
    if c is None:
        return []
    samples = ", ".join(_code(m) for m in c.sample_metrics) or "none"
    lines = [
        "",
        "## Evaluator corroboration",
        "",
        f"- judge groundedness metric {_code(c.groundedness_metric)} "
        f"(supported at >= {c.supported_threshold:g}); "
        "answer relevance: "
        f"{_code(c.answer_relevance_metric) if c.answer_relevance_metric else '—'}; "
        f"repeated samples: {samples} "
        f"(abstain when their spread exceeds {c.sample_disagreement_max:g})",
        f"- deterministic check: lexical gate {_code(c.lexical_gate)} "
        f"(flag at >= {_lexical_thresholds(c)}, "
        f"calibration {_code(c.calibration_version)}, "
        f"sha256 `{c.calibration_sha256[:16]}…`); "
        f"context-relevance floor {c.context_relevance_floor:g}",
        f"- limits: disagreement rate <= {c.max_disagreement_rate:.1%}, abstention rate <= "
        f"{c.max_abstention_rate:.1%}, for the baseline and each candidate, "
        "overall and in every slice; "
        "above a limit the candidate cannot PROMOTE (`evaluator-unreliable`)",
        "",
        "| policy | slice | judged | disagreements | disagreement rate "
        "| judge + / lexical − | judge − / lexical + "
        "| answer type | sampled | abstained | abstention rate "
        "| failed retrieval | failed generation "
        "| failed answer | fabricated citations | honest refusals |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_rate_row(c, r) for r in c.rates]
    lines += [
        "",
        "Rates in bold are above the contract's limit. A failed leg names where the pipeline "
        "broke: retrieval (context irrelevant to the question), generation (unsupported by the "
        "context, or a fabricated citation), answer (wrong answer type, or judged irrelevant).",
    ]
    if c.warnings:
        lines += ["", "Corroboration warnings:", "", *(f"- {markdown(w)}" for w in c.warnings)]
    return lines


def _header_lines(decision: Decision) -> list[str]:
    lines = ["# ragwarrant decision", "", markdown(decision_sentence(decision)), ""]
    lines += [f"- run: {_code(decision.run_id)}, exit code {decision.exit_code}"]
    if decision.contract:
        c = decision.contract
        lines += [f"- contract: {_code(c.id)} v{markdown(c.version)} (sha256 `{c.sha256[:16]}…`)"]
    if decision.evidence_class:
        floor = decision.promotion_min_class.value if decision.promotion_min_class else "—"
        lines += [
            f"- evidence class: **{decision.evidence_class.value}** "
            f"(lowest class allowed to promote: {floor})",
            f"- what this run supports: {markdown(str(decision.claim_scope))}",
            "- what it does not support: "
            + "; ".join(markdown(c) for c in decision.claims_not_supported),
        ]
    if decision.look is not None:
        lk = decision.look
        lines += [
            f"- look {lk.number} at this contract version's evidence "
            f"(level {lk.alpha_this_look:.4g}, spent {lk.alpha_spent:.4g}): {markdown(lk.reason)}"
        ]
    return lines


def _evidence_lines(decision: Decision) -> list[str]:
    """The evidence sources, the notes from validation and the missing values."""
    lines: list[str] = ["", "## Evidence sources", ""] if decision.sources else []
    for src in decision.sources:
        tool = src.tool + (f" {src.tool_version}" if src.tool_version else "")
        lines += [
            f"- {_code(src.path)} ({_name(src.source_id)}): adapter {markdown(src.adapter)}, "
            f"{markdown(tool)}, {src.rows_read} rows, pairing {markdown(src.pairing_method)}"
            + (f"; detected: {markdown(src.detected)}" if src.detected else "")
        ]
        lines += [f"  - {markdown(note)}" for note in src.notes]
    if decision.notes:
        lines += ["", "## Notes from validation", ""]
        lines += [f"- {markdown(n)}" for n in decision.notes]
    if decision.missing_values:
        lines += ["", "## Missing values", ""]
        lines += ["NaN, null, error and infinite scores, counted per policy and metric:", ""]
        lines += ["| policy | metric | reason | count |", "|---|---|---|---:|"]
        lines += [
            # .get: a tampered decision.json may lack a key; verify then reports the mismatch
            f"| {_name(m.get('policy_id'))} | {_name(m.get('metric'))} "
            f"| {markdown(str(m.get('reason')))} | {markdown(str(m.get('count')))} |"
            for m in decision.missing_values
        ]
    return lines


def _what_would_change(decision: Decision, cd: CandidateDecision) -> list[str]:
    """For an INCONCLUSIVE candidate: more data per inconclusive gate, or better evidence."""
    if cd.decision_class is not CandidateClass.INCONCLUSIVE:
        return []
    lines: list[str] = []
    more = [g for g in cd.gates if g.status is GateStatus.INCONCLUSIVE]
    if more:
        lines += ["", "What would change this INCONCLUSIVE:", ""]
        lines += [f"- {_code(g.id)}: {markdown(more_data_text(g))}" for g in more]
    if any(r.startswith("claim-ceiling") for r in cd.reasons):
        floor = decision.promotion_min_class.value if decision.promotion_min_class else "—"
        lines += [
            "",
            "What would change this INCONCLUSIVE: the same result on evidence of class "
            f"{floor} or higher (e.g. a confirmatory run on a split held out before "
            "evaluation).",
        ]
    return lines


def _candidate_section(decision: Decision, cd: CandidateDecision) -> list[str]:
    lines = ["", f"### {_name(cd.policy_id)}: {cd.decision_class.value}", ""]
    lines += [f"- {markdown(r)}" for r in cd.reasons]
    if cd.gates:
        lines += [
            "",
            "Deltas are oriented so that positive means the candidate is better; "
            "bounds are one-sided.",
            "",
            "| gate | status | estimate | lower | upper | threshold | n | reason |",
            "|---|---|---|---|---|---|---|---|",
            *(_gate_row(g) for g in cd.gates),
        ]
    lines += _what_would_change(decision, cd)
    if cd.config_differences:
        lines += ["", "Config differences from the baseline:", ""]
        lines += [
            f"- {_code(d.path)}: "
            + (
                "values not shown (a secret-named field)"
                if is_secret_name(d.path)
                else f"{markdown(repr(d.baseline))} → {markdown(repr(d.candidate))}"
            )
            for d in cd.config_differences
        ]
    return lines


def render_report(decision: Decision) -> str:
    """Render ``report.md`` from a decision: one section after another."""
    lines = _header_lines(decision)
    if (e := decision.error) is not None:
        lines += [
            "",
            "## Error",
            "",
            f"- code: {_code(e.code)} (exit {e.exit_code}, {e.fault} fault)",
            f"- message: {markdown(e.message)}",
        ]
        lines += [f"- hint: {markdown(e.hint)}"] if e.hint else []
    if s := decision.selection:
        lines += [
            "",
            "## Selection",
            "",
            f"- method: {markdown(s.method)}; selected: {_name(s.selected_policy or '—')}",
            f"- quality-only selection would pick: {_name(s.quality_only_pick or '—')}; "
            f"cost-only: {_name(s.cost_only_pick or '—')}",
            *(f"- {markdown(n)}" for n in s.notes),
        ]
    if decision.run_gates:
        lines += ["", "## Run-level checks", ""]
        lines += [
            f"- {_code(g.id)}: {g.status.value} — {markdown(g.reason)}" for g in decision.run_gates
        ]
    lines += _evidence_lines(decision)
    lines += [
        "",
        "## Candidates",
        "",
        "| candidate | class | tested on | paired n | first reason |",
        "|---|---|---|---|---|",
    ]
    for cd in decision.candidates:
        first = markdown(cd.reasons[0]) if cd.reasons else ""
        lines += [
            f"| {_name(cd.policy_id)} | {cd.decision_class.value} | {_name(cd.tested_on)} "
            f"| {cd.paired_n if cd.paired_n is not None else '—'} | {first} |"
        ]
    for cd in decision.candidates:
        lines += _candidate_section(decision, cd)
    lines += corroboration_lines(decision)
    lines += [
        "",
        "The machine-readable record is `decision.json`; "
        "`manifest.json` lists the sha256 of every input and output.",
        "",
    ]
    return "\n".join(lines)
