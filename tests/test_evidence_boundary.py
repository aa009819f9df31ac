"""End to end: a defective evidence file BLOCKs (exit 12) with its place named, never exit 70."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragwarrant import cli
from tests.adapters.conftest import read_csv_rows, write_csv_rows
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "handbook-exports"
RAGAS = "evidence/ragas/ragas_evaluate_candidate.csv"
TELEMETRY = "evidence/otel/otel_genai_telemetry.parquet"


def _duplicate_column(root: Path) -> None:
    path = root / RAGAS
    header, rows = read_csv_rows(path)
    write_csv_rows(path, [*header, header[-1]], [[*r, r[-1]] for r in rows])


def _latin1(root: Path) -> None:
    path = root / RAGAS
    path.write_bytes(path.read_text(encoding="utf-8").replace("e", "\u00e9", 1).encode("cp1252"))


def _zero_candidate_cost(root: Path) -> None:
    path = root / TELEMETRY
    t = pq.read_table(path)
    cost = [
        0.0 if p == "candidate" else c
        for p, c in zip(t["policy_id"].to_pylist(), t["cost_usd"].to_pylist(), strict=True)
    ]
    i = t.schema.get_field_index("cost_usd")
    pq.write_table(t.set_column(i, "cost_usd", pa.array(cost, pa.float64())), path)


def _millisecond_time(root: Path) -> None:
    path = root / TELEMETRY
    t = pq.read_table(path)
    start = t["start_time_unix_nano"].to_pylist()
    start[3] //= 1_000_000
    i = t.schema.get_field_index("start_time_unix_nano")
    pq.write_table(t.set_column(i, "start_time_unix_nano", pa.array(start, pa.int64())), path)


@pytest.mark.parametrize(
    ("mutate", "code", "file"),
    [
        (_duplicate_column, "evidence-duplicate-column", RAGAS),
        (_latin1, "evidence-encoding", RAGAS),
        (_zero_candidate_cost, "evidence-uninstrumented", TELEMETRY),
        (_millisecond_time, "evidence-time-unit", TELEMETRY),
    ],
)
def test_defective_evidence_blocks_the_run(
    tmp_path: Path, mutate: Callable[[Path], None], code: str, file: str
) -> None:
    """Each defect BLOCKs the whole run, its code and file in the decision record."""
    root = tmp_path / "in"
    shutil.copytree(EXAMPLE, root)
    mutate(root)
    out = tmp_path / "out"
    assert cli.main(["run", "--input", str(root), "--output", str(out)]) == 12
    decision = orjson.loads((out / "decision.json").read_bytes())
    reasons = [
        g["reason"]
        for g in decision.get("run_gates", [])
        if g["id"].startswith("hard:evidence-readable")
    ]
    assert any(r.startswith(f"{code}: {file}") for r in reasons), reasons
