"""Thousands of contracts: an Indexed Job reading /in/<i>/ from a claim, with per-index limits.

`k8s render --input-claim NAME` mounts a PersistentVolumeClaim (a file share, or an object-store
CSI volume) read-only at /in instead of packaging ConfigMaps, so the 1 MiB ConfigMap limit no
longer bounds the number of contracts; `--input-root DIR` checks every contract on a local view
of that volume first.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwarrant.errors import InputError, UsageError
from ragwarrant.k8s import DEFAULT_PARALLELISM, MIN_KUBERNETES_VERSION

from .conftest import DIGEST_IMAGE, EXAMPLE, job_spec, load_docs, render, workload


def _volume(root: Path, names: list[str]) -> Path:
    """Lay out root/<name>/ as a copy of the shipped example for each name."""
    for name in names:
        shutil.copytree(EXAMPLE, root / name)
    return root


def _render(tmp_path: Path, *argv: str) -> list[dict[str, Any]]:
    out = tmp_path / "out.yaml"
    assert render("--image", DIGEST_IMAGE, *argv, "--out", str(out)) == 0
    return load_docs(out)


def test_indexed_job_from_a_claim_mounts_it_read_only_without_configmaps(
    k8s_client: Any, tmp_path: Path, tool: Callable[[str], Path]
) -> None:
    """--input-claim with --input-root: one completion per contract directory, /in is the
    claim (read-only), no ConfigMap, and the output validates strictly on the oldest version."""
    root = _volume(tmp_path / "volume", ["0", "1", "2"])
    docs = _render(tmp_path, "--kind", "indexed", "--input-claim", "contracts",
                   "--input-root", str(root))  # fmt: skip
    assert [d["kind"] for d in docs if d["kind"] == "ConfigMap"] == []
    spec = job_spec(workload(docs))
    pod = spec["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "input"]
    assert volume["persistentVolumeClaim"] == {"claimName": "contracts", "readOnly": True}
    assert spec["completions"] == 3 and spec["parallelism"] == 3
    assert pod["containers"][0]["args"][2] == "/in/$(JOB_COMPLETION_INDEX)"
    done = subprocess.run(
        [str(tool("kubernetes-validate")), "--strict", "--quiet", "-k",
         f"{MIN_KUBERNETES_VERSION}.0", str(tmp_path / "out.yaml")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_ten_thousand_completions_render_with_derived_limits(
    k8s_client: Any, tmp_path: Path
) -> None:
    """--completions 10000: one Job of 10,000 indexes, default parallelism, a per-pod deadline,
    and a Job deadline long enough for every wave of every index's attempts."""
    docs = _render(tmp_path, "--kind", "indexed", "--input-claim", "contracts",
                   "--completions", "10000", "--pod-deadline-seconds", "600")  # fmt: skip
    spec = job_spec(workload(docs))
    assert spec["completions"] == 10000 and spec["parallelism"] == DEFAULT_PARALLELISM
    assert spec["template"]["spec"]["activeDeadlineSeconds"] == 600
    waves = 10000 // DEFAULT_PARALLELISM
    assert spec["activeDeadlineSeconds"] == waves * (spec["backoffLimitPerIndex"] + 1) * 600
    assert "maxFailedIndexes" not in spec  # every index runs, whatever the others decide


def test_max_failed_indexes_is_rendered_and_bounded(k8s_client: Any, tmp_path: Path) -> None:
    """--max-failed-indexes N lands in the spec; more than the number of contracts is refused."""
    argv = ["--kind", "indexed", "--input-claim", "c", "--completions", "5"]
    spec = job_spec(workload(_render(tmp_path, *argv, "--max-failed-indexes", "2")))
    assert spec["maxFailedIndexes"] == 2
    with pytest.raises(UsageError, match="between 0 and the number of contracts"):
        render("--image", DIGEST_IMAGE, *argv, "--max-failed-indexes", "6")


def test_indexed_job_refuses_named_directories(k8s_client: Any, tmp_path: Path) -> None:
    """A pod finds /in/<i>/ by its completion index: directories named otherwise are refused,
    pointing to the Argo engine."""
    root = _volume(tmp_path / "volume", ["team-a", "team-b"])
    with pytest.raises(UsageError) as info:
        render("--image", DIGEST_IMAGE, "--kind", "indexed", "--input-claim", "c",
               "--input-root", str(root))  # fmt: skip
    assert info.value.code == "k8s-input-not-indexed" and "--engine argo" in info.value.hint


def test_input_root_checks_every_contract_directory(k8s_client: Any, tmp_path: Path) -> None:
    """A file named by the contract of directory 1 but missing there: exit 66, naming it."""
    root = _volume(tmp_path / "volume", ["0", "1"])
    (root / "1" / "evidence" / "telemetry.parquet").unlink()
    with pytest.raises(InputError) as info:
        render("--image", DIGEST_IMAGE, "--kind", "indexed", "--input-claim", "c",
               "--input-root", str(root))  # fmt: skip
    assert int(info.value.exit_code) == 66
    assert str(root / "1") in info.value.message and "telemetry.parquet" in info.value.message


def test_input_root_accepts_a_dataset_directory_as_evidence(
    k8s_client: Any, tmp_path: Path
) -> None:
    """An evidence path that is a directory (Parquet part files) exists on the volume: accepted."""
    root = _volume(tmp_path / "volume", ["0"])
    part = root / "0" / "evidence" / "telemetry.parquet"
    data = part.read_bytes()
    part.unlink()
    part.mkdir()
    (part / "part-0.parquet").write_bytes(data)
    docs = _render(tmp_path, "--kind", "indexed", "--input-claim", "c", "--input-root", str(root))
    assert job_spec(workload(docs))["completions"] == 1


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (
            ["--input-claim", "c", "--contract", str(EXAMPLE / "contract.yaml")],
            "k8s-input-conflict",
        ),
        (["--input-claim", "c"], "k8s-input-root-required"),
        (
            ["--input-claim", "c", "--completions", "2", "--input-root", "."],
            "k8s-input-root-required",
        ),
        (
            ["--completions", "2", "--contract", str(EXAMPLE / "contract.yaml")],
            "k8s-input-claim-required",
        ),
        (["--input-claim", "Bad_Name", "--completions", "2"], "k8s-bad-name"),
        (["--input-claim", "c", "--completions", "0"], "k8s-bad-number"),
    ],
)
def test_input_claim_argument_errors(k8s_client: Any, argv: list[str], code: str) -> None:
    """Contradictory or incomplete input-volume arguments are usage errors (64)."""
    with pytest.raises(UsageError) as info:
        render("--image", DIGEST_IMAGE, "--kind", "indexed", *argv)
    assert info.value.code == code and int(info.value.exit_code) == 64


def test_plain_job_from_a_claim_reads_its_named_directory(k8s_client: Any, tmp_path: Path) -> None:
    """--kind job with an input root of one contract directory reads /in/<name>/."""
    root = _volume(tmp_path / "volume", ["nightly"])
    docs = _render(tmp_path, "--input-claim", "c", "--input-root", str(root))
    args = job_spec(workload(docs))["template"]["spec"]["containers"][0]["args"]
    assert args[:5] == ["run", "--input", "/in/nightly", "--output", "/out/$(JOB_NAME)/$(JOB_UID)"]
