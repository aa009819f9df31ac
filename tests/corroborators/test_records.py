"""Tests of the JSON-record checks on hand-made business records."""

from __future__ import annotations

import json

import pytest

from ragwarrant.corroborators.records import check_record, parse_record

RECORD = {
    "name": "Cafe Lumo",
    "hours": {"Monday": "17:30-23:0", "Tuesday": "17:0-21:0", "Sunday": "9:0-14:0"},
    "attributes": {
        "OutdoorSeating": False,
        "RestaurantsReservations": True,
        "WiFi": "u'no'",
        "Music": None,
        "RestaurantsTakeOut": True,
        "Ambience": {"trendy": False, "classy": True},
    },
    "business_stars": 4.0,
    "review_info": [{"review_stars": 5.0, "review_text": "fine"}],
}


def checks(text: str, record: dict[str, object] | None = None):
    parsed = parse_record([json.dumps(RECORD if record is None else record)])
    assert parsed is not None
    return check_record(text, parsed)


def test_parse_record_needs_a_json_object_passage() -> None:
    """Prose and JSON arrays are not records; the first JSON object passage is."""
    assert parse_record(["plain prose", "[1, 2]"]) is None
    assert parse_record(["prose", json.dumps(RECORD)]) is not None


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("It offers outdoor seating.", "false_attribute", 1),
        ("It has no outdoor seating.", "false_attribute", 0),
        ("Free WiFi is available.", "false_attribute", 1),
        ("The decor is trendy.", "false_attribute", 1),
        ("It does not take reservations.", "negated_true_attribute", 1),
        ("It takes reservations.", "negated_true_attribute", 0),
        ("Enjoy live music.", "null_attribute", 1),
        ("There is no music.", "null_attribute", 1),
        ("Takeout is offered.", "false_attribute", 0),
    ],
)
def test_attribute_checks(text: str, field: str, expected: int) -> None:
    """False, negated-true and null attributes are counted per sentence; matches are word-based."""
    assert getattr(checks(text), field) == expected


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        # a correct post-posed negation of a false attribute is not a conflict
        ("WiFi is not available.", "false_attribute", 0),
        ("However, outdoor seating is not available.", "false_attribute", 0),
        ("Wi-Fi is also not available at the venue.", "false_attribute", 0),
        ("WiFi isn't offered, but takeout is.", "false_attribute", 0),
        ("The WiFi is unavailable.", "false_attribute", 0),
        ("* WiFi: Not available", "false_attribute", 0),
        ("Outdoor seating is not currently available.", "false_attribute", 0),
        # ... and of a true attribute is one
        ("Reservations are not accepted.", "negated_true_attribute", 1),
        ("Reservations are accepted.", "negated_true_attribute", 0),
        # another clause's negation is not the attribute's
        ("It offers outdoor seating, but reservations are not accepted.", "false_attribute", 1),
        ("Outdoor seating is available, but they do not play music.", "false_attribute", 1),
        # a negated quality is not a negated attribute
        ("Takeout is not particularly fast.", "negated_true_attribute", 0),
        ("WiFi is available, but it is not fast.", "false_attribute", 1),
    ],
)
def test_post_posed_negation(text: str, field: str, expected: int) -> None:
    """RAGTruth Data2txt patterns: "X is not available" negates X; nothing else after X does."""
    assert getattr(checks(text), field) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is open on Tuesday from 5 PM to 9 PM.", 0),
        ("It is open on Tuesday from 17:00 to 21:00.", 0),
        ("It is open on Monday from 5 PM to 11 PM.", 1),
        ("On Sunday it opens at 9:00 am and closes at 2 pm.", 0),
        ("It is open daily.", 1),
        ("Happy hour runs until 7 pm.", 0),
    ],
)
def test_hours_checks(text: str, expected: int) -> None:
    """Times must be opening/closing times of the named days; 'daily' needs all seven days."""
    assert checks(text).hours == expected


def test_hours_null_makes_any_time_a_conflict() -> None:
    """With hours null, a stated time cannot be supported."""
    assert checks("Opens at 9 am.", {**RECORD, "hours": None}).hours == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [("It has a 4.0-star rating.", 0), ("Rated 4.5 stars.", 1), ("Many 5-star reviews.", 0)],
)
def test_star_checks(text: str, expected: int) -> None:
    """A star rating must be the business's or a review's."""
    assert checks(text).stars == expected


def test_conflicts_sum_and_share() -> None:
    """n_conflicts sums every check; the share divides by the sentences."""
    result = checks("It offers outdoor seating. Rated 4.5 stars. It is in town.")
    assert (result.n_conflicts, result.n_sentences) == (2, 3)
    assert result.conflicts_per_sentence == pytest.approx(2 / 3)
