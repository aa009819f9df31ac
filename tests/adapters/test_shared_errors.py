"""The errors the tool adapters raise through their shared helpers, pinned word for word.

Each adapter words its own errors (what the file lacks, what was expected); the shared helpers
(``adapters._common``, ``_tables``, ``_cells``, ``_columns``) only assemble them. These tests fix
every field of the error — code, message, hint, file, row, column, expected, found — so that a
change to a shared helper cannot silently change what one adapter tells its user.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import deepeval, langsmith, otel, phoenix, ragas, trulens
from ragwarrant.adapters._base import AdapterRequest, AdapterResult
from ragwarrant.adapters._common import ONE_OR_MAPPED_POLICY, RowKeys, repetitions
from ragwarrant.adapters._rows import check_policies
from ragwarrant.adapters.registry import load_auto
from ragwarrant.adapters.trulens import FIXED_COLUMNS
from ragwarrant.errors import EvidenceError

RAGAS = "ragas/ragas_evaluate_baseline.csv"
LANGSMITH = "langsmith/langsmith_experiment_baseline.csv"
LANGSMITH_RAW = "langsmith/langsmith_experiment_baseline_rows_raw.jsonl"
DEEPEVAL = "deepeval/baseline/test_run_20261129_205103.json"
TRULENS = "trulens/trulens_records_and_feedback.csv"
PHOENIX_EVALS = "phoenix/baseline/phoenix_evaluate_dataframe_baseline.parquet"
OTEL = "otel/otel_genai_telemetry.parquet"


def _error(load: Callable[[AdapterRequest], AdapterResult], request: AdapterRequest) -> dict:
    with pytest.raises(EvidenceError) as err:
        load(request)
    e = err.value
    return {"code": e.code, "message": e.message, "hint": e.hint, **e.context}


def _copy_columns(src: Path, dst: Path, keep: Callable[[str], bool]) -> Path:
    table = pacsv.read_csv(src)
    pacsv.write_csv(table.select([c for c in table.column_names if keep(c)]), dst)
    return dst


# --- evidence-no-metrics -------------------------------------------------------------------------


def test_ragas_without_metric_columns(make_request, exports, tmp_path) -> None:
    """A Ragas export holding only echoed inputs names the columns it found."""
    path = _copy_columns(
        exports / RAGAS,
        tmp_path / "ragas_nometric.csv",
        lambda c: c in ("user_input", "response", "reference"),
    )
    assert _error(ragas.load, make_request(path, adapter="ragas", policy="baseline")) == {
        "code": "evidence-no-metrics",
        "message": "ragas_nometric.csv holds no metric column",
        "hint": "a Ragas export has one numeric column per metric",
        "file": "ragas_nometric.csv",
        "expected": "at least one metric column",
        "found": "user_input, response, reference",
    }


def test_langsmith_without_feedback_columns(make_request, exports, tmp_path) -> None:
    """A LangSmith table without feedback.<key> columns lists (up to 20 of) its columns."""
    path = _copy_columns(
        exports / LANGSMITH, tmp_path / "ls_nofb.csv", lambda c: not c.startswith("feedback.")
    )
    assert _error(langsmith.load, make_request(path, adapter="langsmith", policy="baseline")) == {
        "code": "evidence-no-metrics",
        "message": "ls_nofb.csv holds no numeric feedback column",
        "hint": "",
        "file": "ls_nofb.csv",
        "expected": "feedback.<key> columns",
        "found": "inputs.question_id, inputs.question, outputs.answer, "
        "outputs.retrieved_context_ids, outputs.contexts, error, reference.answer, "
        "reference.reference_context_ids, execution_time, example_id, id",
    }


def test_trulens_without_feedback_columns(make_request, exports, tmp_path) -> None:
    """A TruLens table with only its fixed columns lists the first 20 of them."""
    path = _copy_columns(exports / TRULENS, tmp_path / "tr_nofb.csv", FIXED_COLUMNS.__contains__)
    assert _error(trulens.load, make_request(path, adapter="trulens")) == {
        "code": "evidence-no-metrics",
        "message": "tr_nofb.csv holds no feedback column",
        "hint": "",
        "file": "tr_nofb.csv",
        "expected": "one column per feedback",
        "found": "app_name, app_version, app_id, app_json, type, record_id, conversation_id, "
        "input, output, tags, record_json, cost_json, perf_json, ts, latency, total_tokens, "
        "total_cost, cost_currency",
    }


# --- evidence-pairing-unsupported ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "adapter", "load", "message", "expected"),
    [
        (
            RAGAS,
            "ragas",
            ragas.load,
            "Ragas results cannot be span-joined (they carry no span id)",
            "pairing: question-hash or id-column",
        ),
        (
            LANGSMITH,
            "langsmith",
            langsmith.load,
            "LangSmith tables cannot be span-joined",
            "pairing: id-column or question-hash",
        ),
        (
            DEEPEVAL,
            "deepeval",
            deepeval.load,
            "DeepEval test runs cannot be span-joined",
            "pairing: id-column or question-hash",
        ),
        (
            TRULENS,
            "trulens",
            trulens.load,
            "TruLens tables cannot be span-joined",
            "pairing: id-column or question-hash",
        ),
    ],
)
def test_span_join_is_refused(make_request, exports, rel, adapter, load, message, expected) -> None:
    """Files without span ids refuse pairing: span-join, each in its adapter's words."""
    request = make_request(
        exports / rel, root=exports, adapter=adapter, policy="baseline", pairing="span-join"
    )
    assert _error(load, request) == {
        "code": "evidence-pairing-unsupported",
        "message": f"{rel}: {message}",
        "hint": "",
        "file": rel,
        "expected": expected,
        "found": "span-join",
    }


# --- evidence-policy-unknown ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "adapter", "load", "fields", "what", "hint"),
    [
        (
            RAGAS,
            "ragas",
            ragas.load,
            {},
            "Ragas exports carry no policy",
            ONE_OR_MAPPED_POLICY,
        ),
        (
            LANGSMITH,
            "langsmith",
            langsmith.load,
            {},
            "LangSmith experiment tables carry no policy",
            ONE_OR_MAPPED_POLICY,
        ),
        (
            PHOENIX_EVALS,
            "phoenix",
            phoenix.load,
            {"pairing": "question-hash", "columns": {"example_id": "question_id"}},
            "neither the evaluations nor their spans name a policy,",
            "add 'policy: <id>' to this evidence source",
        ),
    ],
)
def test_undeclared_policy(make_request, exports, rel, adapter, load, fields, what, hint) -> None:
    """A file that names no policy, read without 'policy:', says which source needs one."""
    request = make_request(exports / rel, root=exports, adapter=adapter, **fields)
    assert _error(load, request) == {
        "code": "evidence-policy-unknown",
        "message": f"{rel}: {what} and the source declares none",
        "hint": hint,
        "file": rel,
        "expected": "policy: <id>",
        "found": "nothing",
    }


# --- JSON lines, JSON files, Parquet files -------------------------------------------------------


def test_json_line_that_is_not_an_object(make_request, tmp_path) -> None:
    """A JSON line holding a list is named, with the type found."""
    path = tmp_path / "r_list.jsonl"
    path.write_bytes(b'{"user_input": "a", "m": 1}\n[1]\n')
    assert _error(ragas.load, make_request(path, adapter="ragas", policy="baseline")) == {
        "code": "evidence-unparseable",
        "message": "r_list.jsonl line 2 holds a JSON list, not an object",
        "hint": "",
        "file": "r_list.jsonl",
        "row": 2,
        "expected": "a JSON object",
        "found": "list",
    }


def test_raw_langsmith_line_that_is_not_an_object(make_request, exports, tmp_path) -> None:
    """Raw LangSmith rows name a non-object line in their own words."""
    raw = (exports / LANGSMITH_RAW).read_bytes().splitlines(keepends=True)
    path = tmp_path / "ls_list.jsonl"
    path.write_bytes(b"".join([*raw[:2], b"\n", b"[1, 2]\n", *raw[2:]]))
    assert _error(langsmith.load, make_request(path, adapter="langsmith", policy="baseline")) == {
        "code": "evidence-unparseable",
        "message": "ls_list.jsonl line 4 is not a JSON object",
        "hint": "",
        "file": "ls_list.jsonl",
        "row": 4,
        "expected": "a JSON object",
        "found": "list",
    }


@pytest.mark.parametrize(
    ("content", "adapter", "load", "fields", "row", "expected", "found"),
    [
        (
            b'{"user_input": "a", "m": 1}\n\n{oops\n',
            "ragas",
            ragas.load,
            {},
            3,
            "one JSON object per line",
            "unexpected character, expected a string key: line 1 column 2 (char 1)",
        ),
        (
            b'{"resourceSpans": []}\n{bad json\n',
            "otel",
            otel.load,
            {"kind": "telemetry", "columns": {"example_id": "q"}},
            2,
            "one OTLP JSON object per line",
            "unexpected character, expected a string key: line 1 column 2 (char 1)",
        ),
    ],
)
def test_bad_json_line(
    make_request, tmp_path, content, adapter, load, fields, row, expected, found
) -> None:
    """The first line that is not JSON is named by number (blank lines count), with the parser's
    position but never the line's text; OTLP JSON lines say each should be an OTLP object."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    error = _error(load, make_request(path, adapter=adapter, policy="baseline", **fields))
    assert error.pop("message").startswith(f"bad.jsonl line {row} is not valid JSON: ")
    assert error == {
        "code": "evidence-unparseable",
        "hint": "",
        "file": "bad.jsonl",
        "row": row,
        "expected": expected,
        "found": found,
    }


@pytest.mark.parametrize(
    ("name", "adapter", "load"),
    [
        ("de_bad.json", "deepeval", deepeval.load),
        ("auto_bad.json", "auto", load_auto),
        ("r_badarr.json", "ragas", ragas.load),
    ],
)
def test_file_that_is_not_json(make_request, tmp_path, name, adapter, load) -> None:
    """A .json file that does not parse is named with the parser's message."""
    path = tmp_path / name
    path.write_bytes(b'[{"testCases": 1},')
    error = _error(load, make_request(path, adapter=adapter, policy="baseline"))
    assert error.pop("message").startswith(f"{name} is not valid JSON: ")
    assert error == {"code": "evidence-unparseable", "hint": "", "file": name, "expected": "JSON"}


@pytest.mark.parametrize(("adapter", "load"), [("otel", otel.load), ("phoenix", phoenix.load)])
def test_spans_file_that_is_not_parquet(make_request, tmp_path, adapter, load) -> None:
    """A spans file that is not Parquet is named with pyarrow's reason."""
    path = tmp_path / "garbage.parquet"
    path.write_bytes(b"not parquet at all")
    error = _error(load, make_request(path, adapter=adapter, kind="telemetry", policy="baseline"))
    assert error.pop("message").startswith("garbage.parquet is not valid parquet: ")
    assert error == {
        "code": "evidence-unparseable",
        "hint": "check that the file really is parquet",
        "file": "garbage.parquet",
        "expected": "parquet",
    }


def test_spans_parquet_without_rows(make_request, exports, tmp_path) -> None:
    """A Parquet spans file with a schema but no rows expects spans."""
    path = tmp_path / "otel_empty.parquet"
    pq.write_table(pq.read_table(exports / OTEL).slice(0, 0), path)
    request = make_request(path, adapter="otel", kind="telemetry", policy="baseline")
    assert _error(otel.load, request) == {
        "code": "evidence-empty",
        "message": "otel_empty.parquet has no rows",
        "hint": "",
        "file": "otel_empty.parquet",
        "expected": "at least one span",
        "found": "0 rows",
    }


def test_joined_spans_without_example_attribute(make_request, exports) -> None:
    """Evaluations joined to spans that lack the example id attribute name the spans file."""
    spans = "phoenix/baseline/phoenix_spans_baseline.parquet"
    request = make_request(
        exports / PHOENIX_EVALS,
        root=exports,
        adapter="phoenix",
        policy="baseline",
        options={"spans": spans},
        columns={"example_id": "ticket_id"},
    )
    error = _error(phoenix.load, request)
    assert error.pop("found").startswith("columns: ")
    assert error == {
        "code": "evidence-missing-column",
        "message": f"{spans} has no example id attribute (ticket_id or metadata.ticket_id)",
        "hint": "set columns.example_id, e.g. question_id for attributes.metadata.question_id",
        "file": spans,
        "column": "ticket_id",
        "expected": "an example id attribute",
    }


@pytest.mark.parametrize(
    ("named", "hint"),
    [
        (
            ["a", "a"],
            "if this file holds only policy 'a', declare 'policy: a' on the evidence source; "
            "else give the contract's policies the ids the file uses",
        ),
        (
            ["a", "b"],
            "the file names policies 'a', 'b': give the contract's 'c' the id the file uses for "
            "that policy (policy ids must be the same in every evidence file), or remove it if "
            "it is not a policy",
        ),
    ],
)
def test_missing_policy_hint_depends_on_how_many_policies_the_file_names(
    named: list[str], hint: str
) -> None:
    """A file naming one policy is told to declare it; one naming several, to fix the ids."""
    with pytest.raises(EvidenceError) as err:
        check_policies(
            list(named),
            [1, 2],
            declared=None,
            contract_policies=["a", "b", "c"],
            display="f.csv",
            column="pol",
        )
    assert (err.value.code, err.value.hint) == ("evidence-policy-missing", hint)


def test_a_run_written_twice_is_a_duplicated_row() -> None:
    """The same run id twice in one policy is refused at its second row, naming both rows."""
    keys = RowKeys.of(["a", "a", "a"], ["e1", "e1", "e1"], [1, 2, 3])
    with pytest.raises(EvidenceError) as err:
        repetitions(keys, ["r1", None, "r1"], ["q", "q", "q"], display="f.csv", run_column="id")
    e = err.value
    assert {"code": e.code, "message": e.message, "hint": e.hint, **e.context} == {
        "code": "evidence-duplicate-id",
        "message": "f.csv row 3: run 'r1' of policy 'a' already appears in row 1: the same run "
        "written twice",
        "hint": "remove the repeated row (repetitions of an example are runs with their own run "
        "ids)",
        "file": "f.csv",
        "row": 3,
        "column": "id",
        "expected": "a unique run id per policy",
        "found": "'r1' again (first in row 1)",
    }
