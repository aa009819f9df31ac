"""File integrity at the evidence boundary: magic bytes, encodings, headers, damaged Parquet."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import load_source
from ragwarrant.adapters._cells import parse_number
from ragwarrant.adapters._integrity import check_file, json_depth, visible
from ragwarrant.adapters._tables import read_table
from ragwarrant.errors import EvidenceError
from ragwarrant.limits import MAX_CSV_FIELD_CHARS, MAX_JSON_DEPTH
from tests.adapters.conftest import read_csv_rows, write_csv_rows

RAGAS = "ragas/ragas_evaluate_baseline.csv"
DEEPEVAL = "deepeval/baseline/test_run_20261129_205103.json"
OTEL = "otel/otel_genai_telemetry.parquet"


def _read(request):
    return load_source(request.source, request.path, request.sha256, request.contract)


def _error(request) -> EvidenceError:
    with pytest.raises(EvidenceError) as err:
        _read(request)
    return err.value


def _ragas(make_request, path: Path):
    return make_request(path, adapter="ragas", policy="baseline")


def _ragas_copy(exports: Path, tmp_path: Path, edit) -> Path:
    header, rows = read_csv_rows(exports / RAGAS)
    header, rows = edit(header, rows)
    return write_csv_rows(tmp_path / "ragas.csv", header, rows)


# --- headers -------------------------------------------------------------------------------------


def test_duplicate_column_names_are_refused(make_request, exports, tmp_path) -> None:
    """Two columns of one name BLOCK naming the column and both positions (never a KeyError)."""
    path = _ragas_copy(
        exports,
        tmp_path,
        lambda h, rows: (h + [h[-1]], [r + [r[-1]] for r in rows]),
    )
    err = _error(_ragas(make_request, path))
    header, _ = read_csv_rows(path)
    assert (err.code, err.column) == ("evidence-duplicate-column", header[-1])
    assert f"columns {len(header) - 1} and {len(header)}" in err.message


def test_header_with_trailing_space_does_not_match(make_request, exports, tmp_path) -> None:
    """A metric header with a trailing space is refused, the space made visible."""
    path = _ragas_copy(
        exports,
        tmp_path,
        lambda h, rows: ([c + " " if c == "exact_match" else c for c in h], rows),
    )
    header, _ = read_csv_rows(path)
    assert "exact_match " in header
    err = _error(_ragas(make_request, path))
    assert err.code == "evidence-header-invisible"
    assert err.column == "exact_match<U+0020>"
    assert "compared exactly" in err.hint


def test_visible_spells_out_invisible_characters() -> None:
    """Edges, no-break spaces and zero-width characters become <U+XXXX>; inner spaces stay."""
    assert visible("\u200bToken F1\u00a0") == "<U+200B>Token F1<U+00A0>"


def test_five_thousand_columns_are_read_not_empty(make_request, tmp_path) -> None:
    """A 5,000-column CSV is read (its header is longer than one parser block), not "empty"."""
    names = ["user_input", "response"] + [f"metric_with_a_long_name_{i:04d}" for i in range(4998)]
    rows = [[f"question {i}", "answer"] + ["0.5"] * 4998 for i in range(3)]
    path = write_csv_rows(tmp_path / "wide.csv", names, rows)
    result = _read(_ragas(make_request, path))
    assert result.evidence.num_rows == 3 * 4998


# --- encodings and magic bytes ------------------------------------------------------------------


def test_utf16_csv_is_named(make_request, exports, tmp_path) -> None:
    """A CSV saved as UTF-16 says so, instead of a parser error or a crash."""
    path = tmp_path / "ragas.csv"
    path.write_bytes((exports / RAGAS).read_text(encoding="utf-8").encode("utf-16"))
    err = _error(_ragas(make_request, path))
    assert (err.code, err.found) == ("evidence-encoding", "UTF-16-LE")


def test_latin1_csv_names_line_and_offset(make_request, exports, tmp_path) -> None:
    """A Latin-1 byte is located by line and byte offset; the text itself is never quoted."""
    text = (exports / RAGAS).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    lines[3] = lines[3].replace("e", "\u00e9", 1)
    data = "".join(lines).encode("latin-1", "replace")
    path = tmp_path / "ragas.csv"
    path.write_bytes(data)
    err = _error(_ragas(make_request, path))
    offset = data.index(b"\xe9")
    assert (err.code, err.row) == ("evidence-encoding", 4)
    assert err.found == f"bytes e9 at offset {offset}"
    assert "Latin-1" in err.hint


def test_gzip_given_as_csv_is_named(make_request, exports, tmp_path) -> None:
    """A gzip file declared as CSV is called gzip."""
    import gzip

    path = tmp_path / "ragas.csv"
    path.write_bytes(gzip.compress((exports / RAGAS).read_bytes()))
    err = _error(_ragas(make_request, path))
    assert err.code == "evidence-unparseable"
    assert err.message == "ragas.csv is gzip, not csv"


def test_truncated_parquet_misses_its_magic_bytes(make_request, exports, tmp_path) -> None:
    """A Parquet file cut short (footer lost) is refused for its missing end magic bytes."""
    path = tmp_path / "spans.parquet"
    path.write_bytes((exports / OTEL).read_bytes()[:-100])
    err = _error(make_request(path, adapter="otel", kind="telemetry"))
    assert err.code == "evidence-unparseable"
    assert "magic bytes 'PAR1' are missing at its end" in err.message


# --- damaged Parquet ----------------------------------------------------------------------------


def _cost_file(tmp_path: Path, *, checksum: bool, compression: str = "none") -> Path:
    """A telemetry Parquet of 4 examples × 2 policies with cost 0.25 / 0.5 / 0.75 / 1.0."""
    n = 8
    table = pa.table(
        {
            "example_id": [f"q{i % 4}" for i in range(n)],
            "policy_id": ["baseline"] * 4 + ["candidate"] * 4,
            "cost_usd": [0.25, 0.5, 0.75, 1.0] * 2,
        }
    )
    path = tmp_path / "cost.parquet"
    pq.write_table(
        table, path, write_page_checksum=checksum, compression=compression, use_dictionary=False
    )
    return path


def _generic_cost(make_request, path: Path):
    return make_request(
        path,
        kind="telemetry",
        columns={"example_id": "example_id", "policy_id": "policy_id"},
        reduce={"cost_usd": {"how": "sum", "column": "cost_usd"}},
    )


def test_page_checksum_failure_blocks(make_request, tmp_path) -> None:
    """A value changed after writing fails the page CRC: BLOCK, not a wrong cost."""
    path = _cost_file(tmp_path, checksum=True)
    data = bytearray(path.read_bytes())
    i = data.index(struct.pack("<dd", 0.5, 0.75))
    data[i + 6] ^= 0x01  # 0.5 becomes 0.53125: a plausible, wrong cost
    path.write_bytes(bytes(data))
    assert pq.read_table(path).column("cost_usd")[1].as_py() == 0.53125  # unchecked: wrong
    err = _error(_generic_cost(make_request, path))
    assert err.code == "evidence-checksum"
    assert "CRC" in err.message or "checksum" in err.message


def test_damaged_compressed_page_is_corrupt_not_a_crash(make_request, tmp_path) -> None:
    """A damaged snappy page (OSError from the codec) is an evidence error, never exit 70."""
    path = _cost_file(tmp_path, checksum=False, compression="snappy")
    data = bytearray(path.read_bytes())
    for i in range(8, 60):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    err = _error(_generic_cost(make_request, path))
    assert err.code in ("evidence-corrupt", "evidence-unparseable")
    assert err.file == "cost.parquet"


# --- one number rule ----------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["0.20_857", "\uff10.\uff15", "\u0661"])
def test_number_strings_python_accepts_are_refused_in_csv(
    make_request, exports, tmp_path, cell
) -> None:
    """'0.20_857', full-width and Arabic-Indic digits: a located error, not a crash."""

    def edit(h, rows):
        rows[4][h.index("exact_match")] = cell
        return h, rows

    err = _error(_ragas(make_request, _ragas_copy(exports, tmp_path, edit)))
    assert (err.code, err.row, err.column) == ("evidence-wrong-type", 5, "exact_match")
    assert "plain ASCII digits" in err.message


def test_number_strings_follow_the_same_rule_in_json(make_request, exports, tmp_path) -> None:
    """A DeepEval score "0.20_857" is refused as it is in CSV (not read as 0.20857)."""
    data = json.loads((exports / DEEPEVAL).read_text(encoding="utf-8"))
    data["testCases"][2]["metricsData"][0]["score"] = "0.20_857"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    err = _error(make_request(path, adapter="deepeval", policy="baseline"))
    assert (err.code, err.row) == ("evidence-wrong-type", 3)


def test_parse_number_is_arrows_rule() -> None:
    """Plain ASCII decimals and inf parse; underscores and non-ASCII digits do not."""
    assert [parse_number(s) for s in ("1", "-.5", "1e-3", "+inf")] == [1.0, -0.5, 0.001, 1e999]
    assert [parse_number(s) for s in ("1_0", "\uff11", "0x1", "")] == [None] * 4


def test_deepeval_metric_names_differing_in_case(make_request, exports, tmp_path) -> None:
    """'Token F1' and 'token f1' in one run are ambiguous, not merged or duplicated."""
    data = json.loads((exports / DEEPEVAL).read_text(encoding="utf-8"))
    first = data["testCases"][0]["metricsData"]
    twin = dict(first[0], name=first[0]["name"].lower())
    assert twin["name"] != first[0]["name"]
    first.append(twin)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    err = _error(make_request(path, adapter="deepeval", policy="baseline"))
    assert err.code == "evidence-metric-ambiguous"
    assert repr(twin["name"]) in err.message


def test_json_metric_name_with_trailing_space(make_request, exports, tmp_path) -> None:
    """A DeepEval metric named 'Token F1 ' does not silently become token_f1."""
    data = json.loads((exports / DEEPEVAL).read_text(encoding="utf-8"))
    for case in data["testCases"]:
        for m in case["metricsData"]:
            if m["name"] == "Token F1":
                m["name"] = "Token F1 "
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    err = _error(make_request(path, adapter="deepeval", policy="baseline"))
    assert (err.code, err.column) == ("evidence-header-invisible", "Token F1<U+0020>")


@pytest.mark.parametrize(
    ("fmt", "text", "row"),
    [
        ("jsonl", '{"id": "a", "score": 0.9}\n{"id": "b", "score": 0.8, "score": 0.1}\n', 2),
        ("json", '[{"id": "a", "score": 0.9}, {"id": "b", "score": 0.8, "score": 0.1}]', None),
    ],
)
def test_a_key_given_twice_in_one_json_object_is_refused(tmp_path, fmt, text, row) -> None:
    """A JSON object holding a key twice: readers silently keep one value (the run PROMOTEd
    on it); the file is refused naming the line and the key, never a value (trial-int)."""
    path = tmp_path / f"evals.{fmt}"
    path.write_text(text)
    with pytest.raises(EvidenceError) as info:
        check_file(path, fmt, path.name)
    err = info.value
    expected = ("evidence-duplicate-key", path.name, row, "score")
    assert (err.code, err.file, err.row, err.column) == expected
    assert "'score' appears twice in one object" in err.message
    assert "0.8" not in err.message and "0.1" not in err.message


def test_a_parquet_file_with_two_columns_of_one_name_is_refused_by_name(tmp_path) -> None:
    """Parquet may hold two fields of one name: the reader's own message ('Multiple matches for
    FieldRef...', with the schema's bytes) is replaced by the located duplicate-column error."""
    from ragwarrant.adapters._tables import read_table

    table = pa.Table.from_arrays(
        [pa.array(["a"]), pa.array([0.5]), pa.array([0.1])], names=["id", "cost", "cost"]
    )
    path = tmp_path / "evals.parquet"
    pq.write_table(table, path)
    with pytest.raises(EvidenceError) as info:
        read_table(path, "parquet", path.name)
    err = info.value
    assert (err.code, err.column) == ("evidence-duplicate-column", "cost")
    assert "columns 2 and 3" in err.message


@pytest.mark.parametrize(
    ("doc", "depth"),
    [
        (b'{"a": 1}', 1),
        (b'{"a": "' + b"[{" * 500 + b'"}', 1),  # brackets inside a string do not nest
        (b'{"a": "\\"' + b"[" * 500 + b'"}', 1),  # nor after an escaped quote
        (b"[" * 300 + b"]" * 300, 300),
        (b'[{"a": ' * 100 + b"1" + b"}]" * 100, 200),
    ],
)
def test_json_depth_counts_nesting_outside_strings(doc: bytes, depth: int) -> None:
    """Depth is counted on the text, strings skipped (a bound is enough below the limit)."""
    assert min(json_depth(doc), MAX_JSON_DEPTH) == min(depth, MAX_JSON_DEPTH)


def test_deep_jsonl_line_is_refused_before_any_parser(tmp_path: Path) -> None:
    """A JSONL line nested 10^5 deep (Arrow's JSON reader overflows its stack on it: exit 139)
    is an ``evidence-limit`` error naming the line, the depth and the limit."""
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    with pytest.raises(EvidenceError) as err:
        check_file(path, "jsonl", "e.jsonl")
    assert (err.value.code, err.value.row) == ("evidence-limit", 2)
    assert f"nested 100,001 levels deep; the limit is {MAX_JSON_DEPTH}" in err.value.message


def test_csv_header_field_past_the_limit_is_located(make_request, tmp_path) -> None:
    """A header field longer than the csv module reads is ``evidence-limit``, not a crash."""
    path = tmp_path / "e.csv"
    path.write_text("example_id,policy," + "h" * (MAX_CSV_FIELD_CHARS + 1) + "\nx,base,1\n")
    with pytest.raises(EvidenceError) as err:
        read_table(path, "csv", "e.csv")
    assert err.value.code == "evidence-limit"
    assert f"{MAX_CSV_FIELD_CHARS:,} characters" in err.value.message


def test_deep_line_in_a_ragas_export_is_refused_not_a_crash(make_request, exports, tmp_path):
    """A Ragas JSONL export (read by Arrow's JSON reader, which overflows its stack on deep
    nesting) with a line nested 10^5 deep is refused by the depth limit, naming line 1, before
    any reader sees it."""
    real = (exports / "ragas/ragas_evaluate_baseline.jsonl").read_bytes()
    path = tmp_path / "ragas.jsonl"
    path.write_bytes(b'{"user_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n" + real)
    request = make_request(path, adapter="ragas", policy="baseline")
    with pytest.raises(EvidenceError) as err:
        load_source(request.source, request.path, request.sha256, request.contract)
    assert (err.value.code, err.value.row) == ("evidence-limit", 1)


def test_an_evidence_file_over_the_size_limit_is_refused_before_reading(tmp_path) -> None:
    """A (sparse) file one byte over the limit is refused from its size; one at it is read on."""
    from ragwarrant.limits import MAX_EVIDENCE_FILE_BYTES

    big = tmp_path / "big.csv"
    with big.open("wb") as f:
        f.truncate(MAX_EVIDENCE_FILE_BYTES + 1)  # no byte written: reading it would take minutes
    with pytest.raises(EvidenceError) as info:
        check_file(big, "csv", "evidence/big.csv")
    assert info.value.code == "evidence-limit"
    assert f"{MAX_EVIDENCE_FILE_BYTES + 1:,} bytes" in str(info.value)
    assert "evidence/big.csv" in str(info.value)
