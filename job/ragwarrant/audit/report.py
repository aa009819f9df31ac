"""``report.md``: the decision for a person.

It never states more than the run's evidence class allows: the scope sentence comes from
``evidence_class.claim_scope`` and the limits from ``claims_not_supported``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragwarrant.audit._findings import is_secret_name
from ragwarrant.audit.summary import more_data_text
from ragwarrant.display import identifier, markdown, markdown_code, template, visible
from ragwarrant.evidence_class import EvidenceClass
from ragwarrant.exit_codes import DecisionClass
from ragwarrant.outputs import Decision


def signed(x: float | None) -> str:
    """A number with its sign to four significant digits (``+0.01234``), ``—`` for None."""
    return "—" if x is None else f"{x:+.4g}"


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


#: The filters of ``report.md.j2``: each value from the inputs goes through md, name or code.
MARKDOWN_FILTERS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("md", markdown),
    ("name", lambda x: markdown(identifier(str(x)))),
    ("code", lambda x, table=False: markdown_code(identifier(str(x)), table=table)),
    ("signed", signed),
    ("fmt", lambda x, spec: "—" if x is None else format(x, spec)),
    ("repr", repr),
)


def render_report(decision: Decision) -> str:
    """Render ``report.md`` from a decision (template ``report.md.j2``): the decision sentence,
    then the error, selection, run-level checks, evidence, candidates and corroboration.

    Every value from the inputs goes through ``display.markdown`` (names through
    ``display.identifier``, code spans through ``display.markdown_code``), so no value opens
    a Markdown element; the private question, response and context text never appears.
    """
    return template("report.md.j2", MARKDOWN_FILTERS).render(
        d=decision,
        decision_sentence=decision_sentence,
        more_data_text=more_data_text,
        is_secret_name=is_secret_name,
    )
