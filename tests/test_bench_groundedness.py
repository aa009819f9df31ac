"""bench/groundedness.py as a script: a smoke run, and what it reproduces on the shared sample.

The shared-sample tests (skipped without ``../shared/data/ragtruth`` beside the clone) pin the
committed table in docs/groundedness-ragtruth.md and the shipped ``lexical-v2`` calibration to
what the script produces now. The protocol itself is tested in-process in
tests/corroborators/test_groundedness_protocol.py.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SHARED
from tests.corroborators.ragtruth_files import make_official

SCRIPT = REPO / "bench" / "groundedness.py"
SHARED_RAGTRUTH = SHARED / "data" / "ragtruth"
DOCS = REPO / "docs" / "groundedness-ragtruth.md"
DOCS_BEGIN = "<!-- BEGIN bench groundedness output -->"
DOCS_END = "<!-- END bench groundedness output -->"
LATENCY_HEADING = "### Latency"
LEXICAL_V1_SHA256 = "e56191a676803f5a7367873eca8810c0ec68f8ace85636bd48eba35664aef9f1"


def run_script(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``python bench/groundedness.py ARGV`` from the repository root."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *argv],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=600,
    )


def test_script_prints_the_table_and_writes_a_calibration(tmp_path: Path) -> None:
    """On the small official fixture: exit 0, the Markdown table on stdout, a calibration file."""
    calibration = tmp_path / "cal.json"
    done = run_script(
        "--ragtruth-dir",
        str(make_official(tmp_path / "d")),
        "--write-calibration",
        str(calibration),
        "--calibration-version",
        "lexical-t",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| Summary | hybrid |" in done.stdout and LATENCY_HEADING in done.stdout
    assert json.loads(calibration.read_text(encoding="utf-8"))["version"] == "lexical-t"


def test_script_reports_a_missing_copy_with_the_input_exit_code(tmp_path: Path) -> None:
    """A missing --ragtruth-dir: exit 66 and the error's code on stderr, no traceback."""
    done = run_script("--ragtruth-dir", str(tmp_path / "absent"))
    assert done.returncode == 66
    assert done.stderr.startswith("error: ragtruth-dir-missing: ")
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------ the shared sample


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The script's Markdown table and ``lexical-v2`` calibration file on the shared sample."""
    if not (SHARED_RAGTRUTH / "sample_response.jsonl.gz").is_file():
        pytest.skip(f"shared RAGTruth sample absent: expected it at {SHARED_RAGTRUTH}")
    out = tmp_path_factory.mktemp("shared")
    done = run_script(
        "--ragtruth-dir",
        str(SHARED_RAGTRUTH),
        "--output",
        str(out / "bench.md"),
        "--write-calibration",
        str(out / "cal.json"),
        "--calibration-version",
        "lexical-v2",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = (out / "bench.md").read_text(encoding="utf-8")
    return table, json.loads((out / "cal.json").read_text(encoding="utf-8"))


def test_script_reproduces_the_docs_table(shared_run: tuple[str, dict[str, Any]]) -> None:
    """The committed table in docs/groundedness-ragtruth.md is what the script prints now."""
    produced = shared_run[0].split(LATENCY_HEADING)[0].strip()
    docs = DOCS.read_text(encoding="utf-8")
    committed = docs.split(DOCS_BEGIN)[1].split(DOCS_END)[0].strip()
    assert committed == produced


def test_shared_sample_counts_match_its_readme(shared_run: tuple[str, dict[str, Any]]) -> None:
    """Responses and positives per task equal the README's counts (the floor rows' n, positives)."""
    expected = {"QA": (817, 208), "Summary": (900, 232), "Data2txt": (900, 564)}
    for task, (n, positives) in expected.items():
        assert f"| {task} | always-flag | {n} | {positives} |" in shared_run[0]


def test_shipped_calibration_is_regenerated_from_the_shared_sample(
    shared_run: tuple[str, dict[str, Any]],
) -> None:
    """lexical-v2.json equals what --write-calibration produces on the shared sample."""
    shipped = json.loads(
        resources.files("ragwarrant")
        .joinpath("data", "calibration", "lexical-v2.json")
        .read_text("utf-8")
    )
    # Same keys, strings and integers; floats equal up to the last bits, which numpy's
    # CPU-dispatched exp/log kernels may change from one machine to another.
    assert _close(shared_run[1], shipped)


def _close(a: Any, b: Any) -> bool:
    """Equal structure; floats within 1e-12 relative, everything else equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1.0)
    return bool(a == b) and type(a) is type(b)


def test_legacy_calibration_v1_is_unchanged() -> None:
    """lexical-v1.json (pooled, pre-v2 tokens) is kept byte for byte for contracts that name it."""
    raw = resources.files("ragwarrant").joinpath("data", "calibration", "lexical-v1.json")
    assert hashlib.sha256(raw.read_bytes()).hexdigest() == LEXICAL_V1_SHA256
