"""A telemetry row written twice must BLOCK, not double its arm's summed cost.

Fifth fresh-user trial (d_dup_tel_baseline): the RAGTruth example with the candidate made
identical to the baseline REJECTs (no gain); appending every baseline telemetry row a second
time doubled the baseline's ``reduce: cost_usd: {how: sum}`` and the run PROMOTEd.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters._requests import RequestIdentity, identity_columns
from ragwarrant.api import decide
from ragwarrant.errors import EvidenceError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ragtruth-generators"
BASELINE, CANDIDATE = "gpt-4-0613", "gpt-3.5-turbo-0613"


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "in"))


def _telemetry(root: Path) -> Path:
    return root / "evidence" / "telemetry.parquet"


def _make_identical(root: Path) -> None:
    """The candidate's quality and cost set to the baseline's, example by example."""
    path = root / "evidence" / "quality.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    base = {r["example_id"]: r for r in rows if r["policy_id"] == BASELINE}
    for r in rows:
        if r["policy_id"] == CANDIDATE and r["example_id"] in base:
            r["no_hallucination"] = base[r["example_id"]]["no_hallucination"]
            r["hallucinated_spans"] = base[r["example_id"]]["hallucinated_spans"]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = pq.read_table(_telemetry(root))
    data = table.to_pylist()
    cost = {r["example_id"]: r["cost_usd"] for r in data if r["policy_id"] == BASELINE}
    for r in data:
        if r["policy_id"] == CANDIDATE and r["example_id"] in cost:
            r["cost_usd"] = cost[r["example_id"]]
    pq.write_table(pa.Table.from_pylist(data, schema=table.schema), _telemetry(root))


def _append_rows(root: Path, policy: str, limit: int | None = None) -> None:
    """Append a policy's telemetry rows (the first ``limit``) a second time, byte-identical."""
    table = pq.read_table(_telemetry(root))
    data = table.to_pylist()
    again = [dict(r) for r in data if r["policy_id"] == policy][:limit]
    pq.write_table(pa.Table.from_pylist(data + again, schema=table.schema), _telemetry(root))


def _drop_request_id(root: Path) -> None:
    table = pq.read_table(_telemetry(root))
    pq.write_table(table.drop_columns(["request_id"]), _telemetry(root))


def _blocked_by_duplicate(root: Path, tmp_path: Path) -> str:
    decision = decide(root, tmp_path / "out")
    assert decision.run_class == "BLOCK"
    text = (tmp_path / "out" / "decision.json").read_text()
    assert "evidence-duplicate-request" in text
    return text


def test_identical_candidate_rejects_and_duplicated_baseline_blocks(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _make_identical(root)
    before = {c.policy_id: c.decision_class for c in decide(root).candidates}
    assert before[CANDIDATE] == "REJECT"  # no gain (the run BLOCKs on another candidate)
    _append_rows(root, BASELINE)  # was PROMOTE: the baseline's summed cost doubled
    text = _blocked_by_duplicate(root, tmp_path)
    assert "'request_id'" in text and f"policy '{BASELINE}'" in text


def test_duplicated_candidate_rows_block(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _append_rows(root, CANDIDATE, limit=3)
    text = _blocked_by_duplicate(root, tmp_path)
    assert "3 row(s) in all repeat" in text


def test_identical_rows_without_an_id_column_block(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _drop_request_id(root)
    _append_rows(root, CANDIDATE, limit=2)
    text = _blocked_by_duplicate(root, tmp_path)
    assert "every column (no request_id or span_id column)" in text


@pytest.mark.parametrize("drop_id", [False, True])
def test_control_without_duplicates_still_promotes(tmp_path: Path, drop_id: bool) -> None:
    root = _copy(tmp_path)
    if drop_id:
        _drop_request_id(root)
    assert decide(root).run_class == "PROMOTE"


def test_error_names_both_rows_never_the_id_value() -> None:
    ids, is_id = identity_columns(["span_id", "trace_id", "cost_usd"])
    assert (ids, is_id) == (["span_id", "trace_id"], True)
    check = RequestIdentity(ids, is_id, "spans.parquet")
    table = pa.table(
        {
            "span_id": ["secret-a", "secret-b", "secret-a", "secret-a"],
            "trace_id": ["t1", "t1", "t2", "t1"],
        }
    )
    check.add(table, pa.array(["p"] * 4))
    with pytest.raises(EvidenceError) as err:
        check.check()
    assert "rows 1 and 4" in err.value.message
    assert "secret" not in err.value.message and "secret" not in str(err.value.context)
    assert err.value.context["row"] == 4


def test_same_span_id_in_other_traces_is_no_repeat() -> None:
    check = RequestIdentity(["span_id", "trace_id"], True, "spans.parquet")
    check.add(pa.table({"span_id": ["a", "a"], "trace_id": ["t1", "t2"]}), pa.array(["p", "p"]))
    check.check()  # raises nothing: a span id is unique within its trace only


#: invisible suffixes a fresh-user trial appended to re-ingested request ids (all summed before):
#: zero-width space, BOM, ZWNJ, ZWJ, word joiner, Mongolian vowel separator, soft hyphen
INVISIBLE_SUFFIXES = ["\u200b", "\ufeff", "\u200c", "\u200d", "\u2060", "\u180e", "\u00ad"]


@pytest.mark.parametrize(
    "again",
    ["r1 ", "R1", "\tr1", " R1  ", *(f"r1{c}" for c in INVISIBLE_SUFFIXES), "\u200bR1\ufeff "],
)
def test_request_id_written_two_ways_is_a_repeat(again: str) -> None:
    """Request ids differing only by case, white space at either end or invisible characters are
    one request (s29 trials: baseline rows re-added with trailing spaces, or with a zero-width
    space or BOM appended, were summed and REJECT turned PROMOTE)."""
    check = RequestIdentity(["request_id"], True, "telemetry.csv")
    check.add(pa.table({"request_id": ["r1", "r2", again]}), pa.array(["p"] * 3))
    with pytest.raises(EvidenceError) as err:
        check.check()
    assert "rows 1 and 3" in err.value.message and "letter case" in err.value.message


def test_rows_written_two_ways_without_an_id_still_differ() -> None:
    """Without an id column the whole row is compared exactly: 'a' and 'A ' are two rows."""
    check = RequestIdentity(["model", "cost_usd"], False, "telemetry.csv")
    check.add(pa.table({"model": ["a", "A "], "cost_usd": [1.0, 1.0]}), pa.array(["p"] * 2))
    check.check()


def test_padded_request_ids_appended_block(tmp_path: Path) -> None:
    """End to end: the baseline's rows appended with request ids padded by a space BLOCK."""
    root = _copy(tmp_path)
    _make_identical(root)
    table = pq.read_table(_telemetry(root))
    data = table.to_pylist()
    again = [dict(r, request_id=f"{r['request_id']} ") for r in data if r["policy_id"] == BASELINE]
    pq.write_table(pa.Table.from_pylist(data + again, schema=table.schema), _telemetry(root))
    _blocked_by_duplicate(root, tmp_path)


def test_request_ids_with_invisible_suffixes_appended_block(tmp_path: Path) -> None:
    """End to end: the baseline's rows appended again with a zero-width space or BOM (one
    suffix per copy) after each request id BLOCK."""
    root = _copy(tmp_path)
    _make_identical(root)
    table = pq.read_table(_telemetry(root))
    data = table.to_pylist()
    base = [r for r in data if r["policy_id"] == BASELINE]
    again = [dict(r, request_id=r["request_id"] + c) for c in INVISIBLE_SUFFIXES for r in base]
    pq.write_table(pa.Table.from_pylist(data + again, schema=table.schema), _telemetry(root))
    _blocked_by_duplicate(root, tmp_path)


def test_declared_request_id_column_must_exist() -> None:
    with pytest.raises(EvidenceError, match="columns.request_id"):
        identity_columns(["id", "cost_usd"], declared="rid")
