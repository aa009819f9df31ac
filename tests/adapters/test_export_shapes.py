"""Three export shapes written by the real libraries, checked against the libraries' reading.

Files (see tests/data/exports/README.md): trulens 2.16.0 OTel-mode records-and-feedback table,
arize-phoenix 20.26.1 ``to_annotation_dataframe`` and ``DocumentEvaluations.save`` outputs; the
expected values are what each library itself returned (``*_expected.json``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters import load_source
from ragwarrant.adapters._rows import question_hash
from ragwarrant.errors import EvidenceError

TRULENS_OTEL = "trulens/trulens_otel_records_and_feedback.csv"


def _read(request):
    return load_source(request.source, request.path, request.sha256, request.contract)


def _values(result, metric: str) -> dict[str, float | None]:
    e = result.evidence.filter(pc.equal(result.evidence["metric"], metric))
    return dict(zip(e["example_id"].to_pylist(), e["value"].to_pylist(), strict=True))


def _phoenix(make_request, exports: Path, policy: str, name: str, **fields):
    options = {
        "spans": f"phoenix/{policy}/phoenix_spans_{policy}.parquet",
        **fields.pop("opts", {}),
    }
    return make_request(
        exports / "phoenix" / policy / name,
        root=exports,
        adapter=fields.pop("adapter", "phoenix"),
        policy=policy,
        columns={"example_id": "question_id"},
        options=options,
        **fields,
    )


def _span_examples(exports: Path, policy: str) -> dict[str, str]:
    """span id → example id (question_id of its trace), read from the spans file."""
    t = pq.read_table(exports / "phoenix" / policy / f"phoenix_spans_{policy}.parquet")
    rows = t.select(["context.span_id", "context.trace_id", "attributes.metadata"]).to_pylist()
    trace_ex = {
        r["context.trace_id"]: r["attributes.metadata"]["question_id"]
        for r in rows
        if r["attributes.metadata"]
    }
    return {r["context.span_id"]: trace_ex[r["context.trace_id"]] for r in rows}


# --- TruLens OTel mode --------------------------------------------------------------------------


def test_trulens_otel_table_matches_the_library(make_request, exports) -> None:
    """Every Token F1 of the OTel-mode table (datetime reprs in record_json) is read exactly."""
    expected = json.loads((exports / "trulens/trulens_otel_expected.json").read_text())
    result = _read(make_request(exports / TRULENS_OTEL, root=exports, adapter="trulens"))
    e = result.evidence.filter(pc.equal(result.evidence["metric"], "token_f1"))
    got = {
        (p, x): v
        for p, x, v in zip(
            e["policy_id"].to_pylist(),
            e["example_id"].to_pylist(),
            e["value"].to_pylist(),
            strict=True,
        )
    }
    want = {
        (k.split("|")[0], question_hash(k.split("|", 1)[1])): v
        for k, v in expected["token_f1"].items()
    }
    assert got == want
    assert set(result.provenance.metric_names) == {"Token F1", "feedback cost in USD"}


def test_trulens_otel_direction_is_exposed(make_request, exports) -> None:
    """The OTel-mode '<name> direction' column becomes the result's declared direction."""
    result = _read(make_request(exports / TRULENS_OTEL, root=exports, adapter="trulens"))
    assert result.directions == {"token_f1": "higher_is_better"}


def test_trulens_otel_table_is_detected(make_request, exports) -> None:
    """adapter: auto recognises the OTel-mode table as TruLens."""
    result = _read(make_request(exports / TRULENS_OTEL, root=exports, adapter="auto"))
    assert result.provenance.adapter == "trulens"


# --- Phoenix annotations (long layout) ----------------------------------------------------------


@pytest.mark.parametrize("policy", ["baseline", "candidate"])
def test_phoenix_annotations_match_the_library(make_request, exports, policy) -> None:
    """to_annotation_dataframe's rows (one per span and name) become one value per metric."""
    expected = json.loads((exports / "phoenix/phoenix_shapes_expected.json").read_text())[policy]
    example_of = _span_examples(exports, policy)
    result = _read(_phoenix(make_request, exports, policy, f"phoenix_annotations_{policy}.parquet"))
    got = {}
    for metric in ("exact_match", "token_f1", "refusal", "retrieval_recall"):
        for ex, v in _values(result, metric).items():
            got[(ex, metric)] = v
    want = {
        (example_of[k.split("|")[0]], k.split("|")[1]): v
        for k, v in expected["annotations"].items()
    }
    assert got == want
    assert result.directions["refusal"] == "lower_is_better"
    assert result.directions["token_f1"] == "higher_is_better"


def test_phoenix_client_annotation_frame_with_result_score(make_request, exports, tmp_path) -> None:
    """get_span_annotations_dataframe's flattened ``result.score`` is read as well."""
    src = pq.read_table(exports / "phoenix/baseline/phoenix_annotations_baseline.parquet")
    t = src.rename_columns(
        [
            "span_id" if n == "context.span_id" else "result.score" if n == "score" else n
            for n in src.column_names
        ]
    )
    (tmp_path / "phoenix/baseline").mkdir(parents=True)
    pq.write_table(t, tmp_path / "phoenix/baseline/ann.parquet")
    (tmp_path / "phoenix/baseline/phoenix_spans_baseline.parquet").write_bytes(
        (exports / "phoenix/baseline/phoenix_spans_baseline.parquet").read_bytes()
    )
    result = _read(_phoenix(make_request, tmp_path, "baseline", "ann.parquet"))
    assert result.evidence.num_rows == src.num_rows


def test_phoenix_annotation_repeated_is_a_duplicate(make_request, exports, tmp_path) -> None:
    """Two annotations of one name on one span are refused, naming both rows."""
    src = pq.read_table(exports / "phoenix/baseline/phoenix_annotations_baseline.parquet")
    (tmp_path / "phoenix/baseline").mkdir(parents=True)
    pq.write_table(
        pa.concat_tables([src, src.slice(0, 1)]), tmp_path / "phoenix/baseline/a.parquet"
    )
    (tmp_path / "phoenix/baseline/phoenix_spans_baseline.parquet").write_bytes(
        (exports / "phoenix/baseline/phoenix_spans_baseline.parquet").read_bytes()
    )
    with pytest.raises(EvidenceError) as err:
        _read(_phoenix(make_request, tmp_path, "baseline", "a.parquet"))
    assert (err.value.code, err.value.row) == ("evidence-duplicate-id", src.num_rows + 1)
    assert "(first in row 1)" in err.value.message


# --- Phoenix DocumentEvaluations ----------------------------------------------------------------


@pytest.mark.parametrize("reducer", ["mean", "max", "any"])
@pytest.mark.parametrize("policy", ["baseline", "candidate"])
def test_phoenix_document_evaluations_reduced_per_example(
    make_request, exports, policy, reducer
) -> None:
    """Per-document relevance reduced per example by the declared reducer, as pandas does."""
    expected = json.loads((exports / "phoenix/phoenix_shapes_expected.json").read_text())[policy]
    example_of = _span_examples(exports, policy)
    result = _read(
        _phoenix(
            make_request,
            exports,
            policy,
            f"phoenix_document_evaluations_relevance_{policy}.parquet",
            opts={"document_reducer": reducer},
        )
    )
    got = _values(result, "relevance")
    want = {example_of[s]: v for s, v in expected[f"documents_{reducer}"].items()}
    assert got.keys() == want.keys()
    assert all(math.isclose(got[k], want[k]) for k in want)


def test_phoenix_document_evaluations_need_a_reducer(make_request, exports) -> None:
    """Without options.document_reducer the file is refused with the choices."""
    with pytest.raises(EvidenceError) as err:
        _read(
            _phoenix(
                make_request,
                exports,
                "baseline",
                "phoenix_document_evaluations_relevance_baseline.parquet",
            )
        )
    assert err.value.code == "evidence-reducer-needed"
    assert err.value.expected == "options.document_reducer: mean | max | any"


def test_phoenix_missing_spans_file(make_request, exports, tmp_path) -> None:
    """options.spans naming a file that is not there BLOCKs (never a FileNotFoundError)."""
    (tmp_path / "phoenix/baseline").mkdir(parents=True)
    path = tmp_path / "phoenix/baseline/e.parquet"
    path.write_bytes(
        (exports / "phoenix/baseline/phoenix_evaluate_dataframe_baseline.parquet").read_bytes()
    )
    with pytest.raises(EvidenceError) as err:
        _read(_phoenix(make_request, tmp_path, "baseline", "e.parquet"))
    assert err.value.code == "evidence-spans-missing"
    assert "phoenix/baseline/phoenix_spans_baseline.parquet" in err.value.message


def test_phoenix_evaluate_dataframe_directions(make_request, exports) -> None:
    """Score directions of evaluate_dataframe are exposed for the run to check."""
    result = _read(
        _phoenix(make_request, exports, "baseline", "phoenix_evaluate_dataframe_baseline.parquet")
    )
    assert result.directions == {
        "exact_match": "higher_is_better",
        "refusal": "lower_is_better",
        "retrieval_recall": "higher_is_better",
        "token_f1": "higher_is_better",
    }
