"""Tests of the helpers shared by the tool adapters."""

from __future__ import annotations

import hashlib

import pytest

from ragwarrant.adapters._cells import float_cell, parse_list_literal
from ragwarrant.adapters._columns import column_as_float, snake_metric_id
from ragwarrant.adapters._integrity import require_columns
from ragwarrant.adapters._rows import check_policies, normalize_question, question_hash
from ragwarrant.adapters._tables import read_table
from ragwarrant.errors import EvidenceError


def test_normalize_question_nfkc_casefold_whitespace() -> None:
    """NFKC folds compatibility forms, casefold lowers (ß → ss), whitespace runs collapse."""
    assert normalize_question("  Ｗhat\u00a0is   STRASSE?\n") == "what is strasse?"
    assert normalize_question("ﬁle  size") == "file size"


def test_question_hash_is_sha256_of_normalized_text() -> None:
    """The id is qh: + the first 16 hex digits of sha256 of the normalized text."""
    expected = "qh:" + hashlib.sha256(b"how many days?").hexdigest()[:16]
    assert question_hash("How  many\tDAYS?") == expected
    assert question_hash("How many days?") != question_hash("How many day?")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Answer Relevancy", "answer_relevancy"),
        ("rouge_score(mode=fmeasure)", "rouge_score_mode_fmeasure"),
        ("context_recall@3", "context_recall_at_3"),
        ("factual_correctness(mode=f1)", "factual_correctness_mode_f1"),
        ("Token F1", "token_f1"),
    ],
)
def test_snake_metric_id(name: str, expected: str) -> None:
    """Tool metric names map to snake_case ids."""
    assert snake_metric_id(name) == expected


def test_parse_list_literal_python_repr_and_json() -> None:
    """Python reprs (as pandas writes lists to CSV) and JSON arrays both parse; empty is None."""
    assert parse_list_literal("['kb-001', \"it's\"]", "f.csv", 1, "c") == ["kb-001", "it's"]
    assert parse_list_literal('["a", "b"]', "f.csv", 1, "c") == ["a", "b"]
    assert parse_list_literal("[]", "f.csv", 1, "c") == []
    assert parse_list_literal("", "f.csv", 1, "c") is None


@pytest.mark.parametrize(
    ("cell", "found"),
    [
        ("{'a': 1}", "dict"),
        ("42", "int"),
        ("'just text'", "str"),
        ("[1, 2]", "list"),
        ("__import__('os').system('true')", "not a list literal"),
        ("['unterminated", "not a list literal"),
    ],
)
def test_parse_list_literal_rejects_non_lists_with_location(cell: str, found: str) -> None:
    """Anything but a literal list of strings is a located wrong-type error (never evaluated)."""
    with pytest.raises(EvidenceError) as err:
        parse_list_literal(cell, "f.csv", 7, "retrieved_contexts")
    assert err.value.code == "evidence-wrong-type"
    assert (err.value.file, err.value.row, err.value.column) == ("f.csv", 7, "retrieved_contexts")
    assert found in str(err.value)


def test_float_cell_reasons() -> None:
    """None → null, NaN → nan, booleans → 1/0 where the tool writes them, numeric strings
    parse, other strings fail."""
    assert float_cell(None, "f", 1, "c") == (None, "null")
    assert float_cell(float("nan"), "f", 1, "c") == (None, "nan")
    assert float_cell(True, "f", 1, "c", booleans=True) == (1.0, None)
    assert float_cell(" false ", "f", 1, "c", booleans=True) == (0.0, None)
    assert float_cell("0.25", "f", 1, "c") == (0.25, None)
    with pytest.raises(EvidenceError, match="row 3: 'c' is not a number"):
        float_cell("high", "f", 3, "c")


def test_float_cell_error_describes_the_cell_without_quoting_it() -> None:
    """A non-number cell is described by its shape; the (possibly private) text is never echoed."""
    secret = "alice@example.com wrote this answer"
    with pytest.raises(EvidenceError) as err:
        float_cell(secret, "f", 3, "c")
    assert err.value.found == f"{len(secret)} characters starting with 'a'"
    assert "alice" not in str(err.value.to_record())


def test_column_error_describes_the_cell_without_quoting_it() -> None:
    """A CSV metric cell that is not a number is described by its shape, never quoted.

    It was quoted (its first 40 characters): a secret there was withheld by publication hygiene,
    which then hid the located error behind a ``publication-hygiene`` BLOCK.
    """
    import pyarrow as pa

    secret = "sk-proj-SECRETSECRET1234567890abcdefXYZ"
    table = pa.table({"score": ["0.5", secret]})
    with pytest.raises(EvidenceError) as err:
        column_as_float(table, "score", "f.csv")
    assert err.value.found == f"{len(secret)} characters starting with 's'"
    assert "SECRET" not in str(err.value.to_record())


def test_check_policies_declared_and_multi() -> None:
    """A declared policy fills unnamed rows; a multi-policy file must name known policies."""
    assert check_policies(
        [None, None],
        [1, 2],
        declared="baseline",
        contract_policies=["baseline", "candidate"],
        display="f",
        column="p",
    ) == ["baseline", "baseline"]
    with pytest.raises(EvidenceError) as err:
        check_policies(
            ["baseline", "other"],
            [1, 2],
            declared=None,
            contract_policies=["baseline", "candidate"],
            display="f",
            column="p",
        )
    assert err.value.code == "evidence-policy-unknown" and err.value.row == 2


def test_csv_row_with_an_extra_field_is_located_without_its_text(tmp_path) -> None:
    """A row with more fields than the header names its row and counts, never its content."""
    path = tmp_path / "r.csv"
    path.write_text('id,v\n1,"a"\n2,secret text,9\n3,c\n')
    with pytest.raises(EvidenceError) as err:
        read_table(path, "csv", "evidence/r.csv")
    e = err.value
    assert (e.code, e.row, e.expected, e.found) == (
        "evidence-field-count",
        2,
        "2 fields",
        "3 fields",
    )
    assert e.message == "evidence/r.csv row 2 has 3 fields where the header has 2"
    assert "secret" not in e.message


@pytest.mark.parametrize("twin", ["Correct", "CORRECT"])
def test_wanted_column_with_a_case_twin_is_ambiguous(twin: str) -> None:
    """A mapped column whose name another column repeats up to case is refused, naming both."""
    with pytest.raises(EvidenceError) as err:
        require_columns(["example_id", "correct", twin], ["correct"], "evidence/r.csv")
    assert (err.value.code, err.value.column, err.value.found) == (
        "evidence-ambiguous-column",
        "correct",
        f"also {twin!r}",
    )
    require_columns(["example_id", "correct", "correct_2"], ["correct"], "evidence/r.csv")


@pytest.mark.parametrize(("fmt", "where"), [("jsonl", "line 3"), ("json", "record 3")])
def test_mixed_types_located_without_the_value(tmp_path, fmt, where) -> None:
    """A field holding a number on one record and a string on another names the record and the
    field, and never repeats the (possibly private) value (pyarrow's message quoted it)."""
    import json

    records = [{"id": "a", "score": 0.5}, {"id": "b", "score": 1}, {"id": "c", "score": "s3cr3t"}]
    path = tmp_path / f"e.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        path.write_text(json.dumps(records))
    with pytest.raises(EvidenceError) as err:
        read_table(path, fmt, f"e.{fmt}")
    expected = f"e.{fmt} {where}: field 'score' holds a string, earlier records a number"
    assert expected in err.value.message
    assert err.value.column == "score"
    assert "s3cr3t" not in str(err.value.to_record())


def test_mixed_types_name_the_kinds_with_their_article(tmp_path) -> None:
    """An object after a number reads "an object", never "a object"."""
    path = tmp_path / "e.jsonl"
    path.write_text('{"score": 1}\n{"score": {"x": 1}}\n')
    with pytest.raises(EvidenceError) as err:
        read_table(path, "jsonl", "e.jsonl")
    assert "field 'score' holds an object, earlier records a number" in err.value.message


@pytest.mark.parametrize("cell", [True, "True", " false", "1.0\u00a0", "\u00a00.5"])
def test_float_cell_refuses_booleans_and_unicode_spaces(cell: object) -> None:
    """Where the tool writes no booleans, a boolean is no number; a no-break space is no
    white space around one (plain ASCII decimals only)."""
    with pytest.raises(EvidenceError) as err:
        float_cell(cell, "f", 4, "c")
    assert (err.value.code, err.value.row, err.value.column) == ("evidence-wrong-type", 4, "c")


@pytest.mark.parametrize(
    ("cells", "row"), [(["0.5", "True"], 2), (["1.0\u00a0", "0"], 1), ([" 0.5\t", "x"], 2)]
)
def test_column_refuses_booleans_and_unicode_spaces(cells: list[str], row: int) -> None:
    """A CSV metric column: the first cell that is not a plain ASCII decimal is located."""
    import pyarrow as pa

    with pytest.raises(EvidenceError) as err:
        column_as_float(pa.table({"score": cells}), "score", "f.csv")
    assert (err.value.code, err.value.row) == ("evidence-wrong-type", row)


def test_column_booleans_where_the_tool_writes_them() -> None:
    """A boolean column reads as 1/0 only when the adapter declares booleans."""
    import pyarrow as pa

    table = pa.table({"score": [True, False]})
    with pytest.raises(EvidenceError, match="a boolean"):
        column_as_float(table, "score", "f.parquet")
    assert column_as_float(table, "score", "f.parquet", booleans=True)[0].to_pylist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("cells", "row"),
    [(("0.8", "true"), 2), (("false", "1"), 1), (("true", "true"), 1)],
)
def test_jsonl_booleans_in_a_metric_column_are_refused_like_csv(
    make_request, tmp_path, cells: tuple[str, str], row: int
) -> None:
    """A JSON true among numbers (or a column of them) is no number, exactly as in CSV or
    Parquet; it was read as 1 (Python's bool is an int) and let a candidate PROMOTE."""
    from ragwarrant.adapters import load_source

    path = tmp_path / "ev.jsonl"
    policies = ("baseline", "candidate")
    path.write_text(
        "".join(
            f'{{"qid": "a", "policy": "{p}", "faithfulness": {c}}}\n'
            for p, c in zip(policies, cells, strict=True)
        )
    )
    request = make_request(
        path,
        columns={"example_id": "qid", "policy_id": "policy"},
        metrics={"faithfulness": "faithfulness"},
    )
    with pytest.raises(EvidenceError) as err:
        load_source(request.source, request.path, request.sha256, request.contract)
    assert (err.value.code, err.value.file, err.value.row, err.value.column) == (
        "evidence-wrong-type",
        "ev.jsonl",
        row,
        "faithfulness",
    )
    assert "a boolean" in err.value.message


def test_jsonl_booleans_among_numbers_where_the_tool_writes_them(tmp_path) -> None:
    """For a tool that writes booleans (LangSmith), true/false among numbers read as 1/0."""
    path = tmp_path / "e.jsonl"
    path.write_text('{"s": 0.25}\n{"s": true}\n{"s": null}\n{"s": false}\n{"s": 3}\n')
    table = read_table(path, "jsonl", "e.jsonl")
    values, _ = column_as_float(table, "s", "e.jsonl", booleans=True)
    assert values.to_pylist() == [0.25, 1.0, None, 0.0, 3.0]
