"""Deterministic corroborator checks: answer type, context relevance, citations, refusals, legs."""

from __future__ import annotations

import numpy as np
import pytest

from ragwarrant.corroborators.checks import (
    answer_type_check,
    check_example,
    context_relevance,
    expected_answer_type,
    is_honest_refusal,
    verify_citation,
)

CTX = [
    "The Lumo kettle carries a two-year warranty that covers the heating element and the lid hinge."
]
LONG_CTX = [
    "Refunds for the Lumo kettle are issued to the original payment card within five business days "
    "after the returned item reaches the Leeds warehouse and passes inspection."
]
HYBRID = 0.43333333333333335


def run(question, response, contexts=CTX, quotes=(), relevance=None):
    return check_example(
        question,
        response,
        contexts,
        quotes,
        lexical_gate="hybrid",
        lexical_threshold=HYBRID,
        context_relevance_floor=0.25,
        answer_relevance=relevance,
        answer_relevance_threshold=0.5,
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many days do I have to return the kettle?", "number"),
        ("How much does the descaling kit cost?", "number"),
        ("What is the price of the travel case?", "number"),
        ("How long does the battery last?", "quantity"),
        ("How often should I descale it?", "quantity"),
        ("When was the Lumo kettle first released?", "date"),
        ("What year did the warranty policy change?", "date"),
        ("Which colour options exist for the kettle?", None),
        ("Does the kettle switch off automatically?", None),
    ],
)
def test_expected_answer_type(question, expected):
    """Questions asking for a number, date or quantity are recognised; others ask for no type."""
    assert expected_answer_type(question) == expected


def test_answer_type_needs_a_value_of_that_type():
    """A how-many question is answered by a digit or number word, not by prose without one."""
    q = "How many days do I have to return the kettle?"
    assert answer_type_check(q, "You can return it within 30 days.").satisfied
    assert answer_type_check(q, "You have fourteen days.").satisfied
    assert not answer_type_check(
        q, "Returns are accepted for unused kettles in their box."
    ).satisfied
    when = "When was the Lumo kettle first released?"
    assert answer_type_check(when, "It launched in March.").satisfied
    assert not answer_type_check(when, "It launched after the Aurora lamp.").satisfied
    assert answer_type_check("Which colours exist?", "Red and grey.").satisfied


def test_context_relevance_counts_question_topic_words_in_context():
    """Relevance is the share of the question's topic words (folded) found in the passages."""
    assert context_relevance("How long is the kettle warranty?", CTX) == 1.0
    # topic words: hours, battery, aurora, reading, lamp -> none in the kettle context
    assert (
        context_relevance("How many hours does the battery of the Aurora reading lamp last?", CTX)
        == 0.0
    )
    # "warranties" folds to "warranty"; "covered" folds to "cover" like "covers"
    assert context_relevance("Which warranties are covered?", CTX) == 1.0
    assert context_relevance("How is it?", CTX) is None


def test_verbatim_citation_is_verified_after_normalization():
    """Case, punctuation, curly quotes and spacing do not matter; the run must be contiguous."""
    c = verify_citation("the LUMO kettle carries a two\u2011year   warranty", CTX)
    assert c.verified and c.edits == 0
    assert not verify_citation("kettle carries a warranty", CTX).verified  # a gap: not contiguous


def test_near_verbatim_citation_allows_ten_percent_edits():
    """A long quote with one changed token is verified; three changes, or a short quote, are not."""
    one = (
        "Refunds for the Lumo kettle are issued to the original payment card within five "
        "working days after the returned item reaches the Leeds warehouse"
    )
    c = verify_citation(one, LONG_CTX)
    assert c.verified and c.edits == 1 and c.n_tokens == 24
    two = one.replace("payment card", "bank account")
    assert not verify_citation(two, LONG_CTX).verified
    assert not verify_citation("issued to the original bank card", LONG_CTX).verified


def test_fabricated_citation_is_not_supported():
    """A grounded response citing a quote absent from the context is unsupported."""
    ch = run(
        "How long is the warranty on the Lumo kettle?",
        "The Lumo kettle carries a two-year warranty that covers the heating element.",
        quotes=["The warranty also covers accidental drops and water damage for five full years."],
    )
    assert ch.lexical_flagged is False
    assert ch.fabricated_citation and ch.citations[0].verified is False
    assert ch.supported is False
    assert (ch.retrieval, ch.generation, ch.answer, ch.record) == (
        "pass",
        "fail",
        "pass",
        "not-applicable",
    )


def test_lexical_gate_flags_a_score_at_least_its_threshold():
    """A lexical score equal to the threshold is flagged; a threshold just above it is not."""
    response = "The Lumo kettle ships with a velvet pouch and a two-year warranty."
    score = run(None, response).lexical_score
    assert score is not None and 0 < score < 1
    at = check_example(
        None,
        response,
        CTX,
        lexical_gate="hybrid",
        lexical_threshold=score,
        context_relevance_floor=0.25,
    )
    above = check_example(
        None,
        response,
        CTX,
        lexical_gate="hybrid",
        lexical_threshold=float(np.nextafter(score, 1.0)),
        context_relevance_floor=0.25,
    )
    assert (at.lexical_flagged, at.supported) == (True, False)
    assert (above.lexical_flagged, above.supported) == (False, True)


def test_empty_quote_is_never_verified():
    """A quote with no tokens verifies nothing."""
    assert verify_citation(" .. ", CTX).verified is False


def test_faithful_answer_over_irrelevant_context_fails_retrieval_and_answer_only():
    """The legs are independent: retrieval and answer fail while generation passes."""
    ch = run(
        "How many hours does the battery of the Aurora reading lamp last?",
        "The Lumo kettle warranty covers the heating element and the lid hinge.",
        relevance=0.1,
    )
    assert ch.context_relevance == 0.0
    assert ch.supported is True
    assert (ch.retrieval, ch.generation, ch.answer, ch.record) == (
        "fail",
        "pass",
        "fail",
        "not-applicable",
    )


def test_answer_type_fails_whatever_the_judge_relevance():
    """A high judge answer relevance does not rescue a response without the number asked for."""
    ch = run(
        "How many years does the kettle warranty last?",
        "The kettle warranty covers the heating element.",
        relevance=0.95,
    )
    assert ch.answer_type is not None and not ch.answer_type.satisfied
    assert ch.answer == "fail"


@pytest.mark.parametrize(
    "response",
    [
        "The provided documents do not say what the maximum brewing temperature is.",
        "I don't know.",
        "There is no information about the brewing temperature in the context.",
        "The maximum temperature is not mentioned in the documents.",
    ],
)
def test_honest_refusals(response):
    """Declining to answer is recognised in its common forms."""
    assert is_honest_refusal(response)


def test_refusal_padded_with_claims_is_not_a_refusal():
    """A refusal followed by an unsupported claim is judged as a claim."""
    assert not is_honest_refusal(
        "The documents do not say. It probably brews at 98 degrees with the turbo boil "
        "setting enabled."
    )
    assert not is_honest_refusal("The kettle carries a two-year warranty.")


def test_honest_refusal_is_not_a_hallucination():
    """A refusal whose words are absent from the context is supported; its answer is not judged."""
    ch = run(
        "What is the maximum brewing temperature of the Lumo kettle?",
        "The provided documents do not say what the maximum brewing temperature is.",
    )
    assert ch.honest_refusal
    assert ch.lexical_flagged is True  # lexically, the refusal's words are not in the context
    assert ch.supported is True
    assert (ch.generation, ch.answer) == ("pass", "not-applicable")


def test_unsupported_response_fails_generation():
    """A response mostly made of words absent from the context is flagged unsupported."""
    ch = run(
        "How long is the kettle warranty?",
        "The kettle ships with a lifetime guarantee, free descaling tablets and a velvet "
        "travel pouch.",
    )
    assert ch.lexical_flagged is True and ch.supported is False
    assert ch.generation == "fail"


def test_missing_text_gives_unknown_legs():
    """Without context or question the legs that need them are unknown, not passed."""
    ch = check_example(
        None,
        "Some answer.",
        None,
        lexical_gate="hybrid",
        lexical_threshold=HYBRID,
        context_relevance_floor=0.25,
    )
    assert (ch.retrieval, ch.generation, ch.answer) == ("unknown", "unknown", "unknown")
    assert ch.supported is None
