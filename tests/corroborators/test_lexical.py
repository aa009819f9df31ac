"""Closed-form tests of the lexical groundedness scores on hand-made texts."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest

from ragwarrant.corroborators import lexical
from ragwarrant.corroborators.lexical import (
    HYBRID_WEIGHTS,
    STOP_WORDS,
    content_tokens,
    index_context,
    score_response,
    split_sentences,
    tokenize,
)


def test_tokenize_lowercases_and_splits_on_non_alphanumerics() -> None:
    """Tokens are maximal runs of Unicode letters/digits of the lowercased text."""
    assert tokenize("Walmart's 4.0-star Café_bar, (NYC)!") == [
        "walmart",
        "s",
        "4",
        "star",
        "café",
        "bar",
        "nyc",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open 17:00-21:30", ["open", "17:00", "21:30"]),
        ("hours 17:0-9:0", ["hours", "17:00", "9:00"]),
        ("09:05 4.50 4.0 12,500 1.2.3", ["9:05", "4.5", "4", "12500", "1.2.3"]),
        ("in 2019. Then", ["in", "2019", "then"]),
    ],
)
def test_numbers_with_separators_stay_whole_in_one_canonical_form(
    text: str, expected: list[str]
) -> None:
    """Decimals, thousands separators and times are one token each, written canonically."""
    assert tokenize(text) == expected


def test_times_match_a_record_and_different_decimals_do_not() -> None:
    """17:00 is supported by a record's 17:0; 4.5 is not supported by 4.0."""
    assert score_response("Opens at 17:00.", '{"hours": "17:0-21:0"}').numeric == 0.0
    assert score_response("Rated 4.5 stars.", '{"stars": 4.0}').numeric == 1.0
    assert score_response("Rated 4 stars.", '{"stars": 4.0}').numeric == 0.0


def test_context_camel_case_words_support_their_parts() -> None:
    """A record key RestaurantsTakeOut supports the response words take and out."""
    assert score_response("Take out offered.", '{"RestaurantsTakeOut": true}').coverage == 0.5
    assert score_response("Take out offered.", "restaurantstakeout").coverage == 1.0


def test_content_tokens_drop_stop_words() -> None:
    """Stop words (including the parts of contractions) are not content tokens."""
    assert content_tokens("The cat didn't sit on the MAT because it was wet") == [
        "cat",
        "sit",
        "mat",
        "wet",
    ]


def test_stop_word_list_is_fixed_nltk_english_without_apostrophe_forms() -> None:
    """The list is the 179-word NLTK English list minus its 26 apostrophe forms."""
    assert len(STOP_WORDS) == 179 - 26
    assert {"the", "not", "no", "s", "t", "don", "wouldn"} <= STOP_WORDS
    assert all(w.isalnum() and w == w.lower() for w in STOP_WORDS)


def test_split_sentences_on_end_punctuation_and_line_breaks() -> None:
    """Breaks follow .!? (and closing quotes) before whitespace, and every line break."""
    text = 'One two. Three four! Five? It is 4.0 stars.\nNew line\n\n  He said "go." Then left'
    assert split_sentences(text) == [
        "One two.",
        "Three four!",
        "Five?",
        "It is 4.0 stars.",
        "New line",
        'He said "go."',
        "Then left",
    ]


def test_split_sentences_of_blank_text_is_empty() -> None:
    """Whitespace-only text has no sentence."""
    assert split_sentences(" \n\t ") == []


@pytest.mark.parametrize(
    ("token", "expected"), [("42", True), ("5pm", True), ("1990s", True), ("five", False)]
)
def test_a_numeric_token_holds_a_digit(token: str, expected: bool) -> None:
    """A numeric token holds at least one digit (and only numeric tokens count in n_numeric)."""
    assert score_response(token, "x").n_numeric == int(expected)


def test_coverage_is_share_of_content_token_occurrences_absent_from_context() -> None:
    """coverage = unsupported content tokens / content tokens, counting repeats."""
    context = ["Paris is the capital of France."]
    # content tokens: paris capital france berlin berlin -> 2 of 5 absent
    assert (
        score_response("Paris is the capital of France, not Berlin. Berlin!", context).coverage
        == 2 / 5
    )


def test_coverage_counts_stop_words_of_the_context_as_known() -> None:
    """Context tokens include stop words, but response stop words are never scored."""
    scores = score_response("The the the of", ["unrelated"])
    assert (scores.n_content, scores.coverage) == (0, 0.0)


def test_weakest_sentence_is_max_share_over_sentences_with_five_content_tokens() -> None:
    """Sentences under five content tokens are ignored; the weakest scored sentence wins."""
    context = "alpha beta gamma delta epsilon zeta eta theta"
    response = (
        "Alpha beta gamma delta epsilon. "  # 0/5 unsupported
        "Alpha beta gamma xray yankee. "  # 2/5
        "Zulu quebec."  # 2/2 but only two content tokens: ignored
    )
    scores = score_response(response, context)
    assert scores.weakest_sentence == 2 / 5
    assert (scores.n_sentences, scores.n_sentences_scored) == (3, 2)
    assert scores.coverage == 4 / 12


def test_weakest_sentence_is_zero_when_no_sentence_is_long_enough() -> None:
    """With every sentence under five content tokens, weakest_sentence is 0.0 by definition."""
    scores = score_response("Xray yankee. Zulu.", "alpha")
    assert (scores.coverage, scores.weakest_sentence) == (1.0, 0.0)


def test_numeric_share_counts_tokens_with_digits_missing_from_context() -> None:
    """numeric = numeric tokens absent from the context / numeric tokens."""
    context = "Founded in 1990 with 12 staff."
    # numeric tokens: 1990 (present), 42 (absent), 5pm (absent), 12 (present)
    assert score_response("In 1990 it had 42 staff, open at 5pm, then 12.", context).numeric == 0.5
    assert score_response("No numbers here at all.", context).numeric == 0.0


def test_hybrid_is_the_weighted_sum_of_the_three_shares() -> None:
    """hybrid = 0.35 coverage + 0.50 weakest sentence + 0.15 numeric, checked by hand."""
    context = "alpha beta gamma delta epsilon 1990"
    response = "Alpha beta gamma delta epsilon in 1990. Alpha beta xray yankee zulu 42."
    # content: s1 alpha beta gamma delta epsilon 1990 (0/6); s2 alpha beta xray yankee zulu 42 (4/6)
    scores = score_response(response, context)
    assert scores.coverage == 4 / 12
    assert scores.weakest_sentence == 4 / 6
    assert scores.numeric == 1 / 2
    assert HYBRID_WEIGHTS == (0.35, 0.50, 0.15)
    assert scores.hybrid == pytest.approx(0.35 * (4 / 12) + 0.50 * (4 / 6) + 0.15 * (1 / 2))


def test_fully_grounded_response_scores_zero_everywhere() -> None:
    """A response made only of context words has every share at 0."""
    context = ["The museum opened in 1990.", "It holds 12 paintings by local artists."]
    scores = score_response("The museum opened in 1990 and holds 12 paintings by artists.", context)
    assert (scores.coverage, scores.weakest_sentence, scores.numeric, scores.hybrid) == (0, 0, 0, 0)


def test_context_index_passages_list_and_joined_string_agree() -> None:
    """A reusable ContextIndex, a passage list and one joined string score the same."""
    passages = ["Alpha beta gamma.", "Delta epsilon 7."]
    response = "Alpha beta gamma delta omega 8. Epsilon zeta."
    by_index = score_response(response, index_context(passages))
    assert by_index == score_response(response, passages)
    assert by_index == score_response(response, "\n".join(passages))


def test_passages_are_not_joined_into_new_tokens() -> None:
    """Tokens never run across passage boundaries ("alp" + "ha" is not "alpha")."""
    assert score_response("alpha", ["alp", "ha"]).coverage == 1.0


def test_scores_stay_in_unit_interval_on_adversarial_text() -> None:
    """Every share is within [0, 1] for empty, symbolic and repeated text."""
    for response in ("", "!!! ??? ...", "x " * 1000, "1 2 3. 4 5 6 7 8 9."):
        s = score_response(response, "1 x")
        for value in (s.coverage, s.weakest_sentence, s.numeric, s.hybrid):
            assert 0.0 <= value <= 1.0


def test_module_is_pure_no_io_or_logging_imports() -> None:
    """The lexical module imports neither logging nor I/O libraries."""
    source = Path(lexical.__file__).read_text(encoding="utf-8")
    for forbidden in ("import logging", "import structlog", "open(", "import os", "pathlib"):
        assert forbidden not in source


def test_ascii_fast_path_tokenises_like_the_unicode_definition() -> None:
    """On random ASCII text (with _, digits, punctuation) tokens equal [^\\W_]+ of the lowercase."""
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\n_"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert tokenize(text) == re.findall(r"[^\W_]+", text.lower())
    assert tokenize("Ünïcode naïve façade") == ["ünïcode", "naïve", "façade"]


# ---------------------------------------------------------------- fast path == reference

_REFERENCE_PIECES = [
    "the",
    "of",
    "is",
    "Paris",
    "McDonald's",
    "iPhone",
    "RestaurantsTakeOut",
    "WiFi",
    "HTTPServer",
    "x2McDonald",
    "_CamelCase",
    "naïve",
    "Café",
    "über",
    "Ⅻ",
    "٣",
    "’",
    "“",
    "”",
    "—",
    "…",
    "\u00a0",
    "\u2028",
    "4.5",
    "4.50",
    "4.0",
    "12,500",
    "1,2345",
    "1,234,567.80",
    "17:00",
    "9:30",
    "09:30:5",
    "1.2.3",
    "a1.5",
    "3.",
    ".5",
    "2,5",
    "1990s",
    "5pm",
    "42",
    "0",
    "x",
    "Y",
    ".",
    ",",
    ":",
    "!",
    "?",
    '"',
    "'",
    ")",
    "]",
    "(",
    "-",
    "_",
    "\x01",
    "\n",
    "\n\n",
    " ",
    "  ",
    "\t",
    ". ",
    "! ",
    '." ',
    "?) ",
    "!] ",
    ".' ",
    ".\t",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x02",
    "ΑΣ",
    "ΟΔΟΣ.",
    "İx",
    "\u212a",
    "É",
]


#: pieces with no letter or digit beyond ASCII (nor the sentinel): mostly the fast path
_FAST_PATH_PIECES = [
    p for p in _REFERENCE_PIECES if p != "\x01" and not re.search(r"[^\W_\x00-\x7f]", p)
]


def _random_text(rng: random.Random, n_pieces: int, pool: list[str]) -> str:
    """A text glued from pieces that exercise numbers, CamelCase, non-ASCII and sentence breaks."""
    pieces = [rng.choice(pool) for _ in range(n_pieces)]
    return "".join(p + (" " if rng.random() < 0.5 else "") for p in pieces)


def test_fast_scorer_is_bit_identical_to_the_reference_implementation() -> None:
    """On tricky random texts every score and count equals the pre-optimisation implementation's."""
    from dataclasses import astuple

    from bench import lexical_reference as reference

    rng = random.Random(13)
    for i in range(3000):
        pool = _REFERENCE_PIECES if i % 4 == 0 else _FAST_PATH_PIECES  # mostly the fast path
        response = _random_text(rng, rng.randint(0, 40), pool)
        passages = [_random_text(rng, rng.randint(0, 60), pool) for _ in range(rng.randint(1, 3))]
        expected = astuple(reference.score_response(response, passages))
        assert astuple(score_response(response, passages)) == expected, (response, passages)
        assert astuple(score_response(response, index_context(passages))) == expected
        assert index_context(passages).tokens == reference.index_context(passages).tokens
        assert tokenize(response) == reference.tokenize(response)
        assert split_sentences(response) == reference.split_sentences(response)
