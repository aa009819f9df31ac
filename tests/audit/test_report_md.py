"""report.md (template ``report.md.j2``): each optional section appears, whole, when its part of the
decision is there; every value escaped for Markdown."""

from __future__ import annotations

import pytest

from ragwarrant.audit.report import render_report
from ragwarrant.outputs import Decision, ErrorRecord, LookRecord

from .conftest import Run
from .decisions import load_decision


@pytest.fixture
def decision(pristine_run: Run) -> Decision:
    """The shipped example's decision."""
    return load_decision(pristine_run.output_dir)


def test_error_section_lists_code_message_and_hint(decision: Decision) -> None:
    """An error record is its own section: code, exit and fault, message, and the hint if any."""
    error = ErrorRecord(
        type="InputError",
        code="bad-input",
        message="row 3: *not* a number",
        hint="fix row 3",
        fault="user",
        exit_code=65,
    )
    report = render_report(decision.model_copy(update={"error": error}))
    assert (
        "\n\n## Error\n\n- code: `bad-input` (exit 65, user fault)\n"
        "- message: row 3: \\*not\\* a number\n- hint: fix row 3\n" in report
    )
    hintless = render_report(
        decision.model_copy(update={"error": error.model_copy(update={"hint": ""})})
    )
    assert "- message: row 3: \\*not\\* a number\n\n## Selection" in hintless


def test_missing_values_and_source_details_are_listed(decision: Decision) -> None:
    """Missing values make a table (a key absent from a tampered record reads None); a source
    shows what was detected and its notes, indented under it."""
    source = decision.sources[0].model_copy(
        update={"detected": "ragas 0.2 | csv", "notes": ["read <2> files"]}
    )
    missing = [{"policy_id": "cand|x", "metric": "faith", "reason": "nan", "count": 3}, {}]
    report = render_report(
        decision.model_copy(update={"sources": [source], "missing_values": missing})
    )
    assert "; detected: ragas 0.2 \\| csv\n  - read \\<2\\> files\n" in report
    assert (
        "\n\n## Missing values\n\nNaN, null, error and infinite scores, counted per policy and "
        "metric:\n\n| policy | metric | reason | count |\n|---|---|---|---:|\n"
        "| cand\\|x | faith | nan | 3 |\n| None | None | None | None |\n" in report
    )


def test_look_and_run_level_checks(decision: Decision) -> None:
    """A repeated look is named in the header with its level; run-level checks are listed."""
    look = LookRecord(
        number=2,
        earlier_run_ids=["r1"],
        alpha_this_look=0.0123456,
        alpha_spent=0.04,
        units=10,
        confirmatory=True,
        reason="second look",
    )
    report = render_report(decision.model_copy(update={"look": look}))
    assert (
        "\n- look 2 at this contract version's evidence (level 0.01235, spent 0.04): "
        "second look\n" in report
    )
    gate = decision.run_gates[0]
    assert f"\n\n## Run-level checks\n\n- `{gate.id}`: {gate.status.value} — " in report
