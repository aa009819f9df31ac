"""Reading a run's inputs: digests, parsed configs, unresolved references, unreadable sources."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ragwarrant.cli import main
from ragwarrant.digests import sha256_file
from ragwarrant.errors import ContractError, InputError, OutputError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.inputs import (
    behavioural_sha256,
    check_input_dir,
    check_output_dir,
    config_differences,
    read_inputs,
)
from tests.conftest import base_contract


def test_every_file_read_is_digested_in_reading_order(make_input):
    """The contract, the policy configs and the evidence are hashed, in the order read."""
    root = make_input()
    inputs = read_inputs(root)
    assert [d.path for d in inputs.digests] == [
        "contract.yaml",
        "policies/base.json",
        "policies/cand.json",
        "evidence/results.csv",
    ]
    assert all(d.sha256 == sha256_file(root / d.path) for d in inputs.digests)
    assert inputs.contract_sha256 == sha256_file(root / "contract.yaml")
    assert inputs.configs["cand"] == {"model": "cand", "top_k": 5}
    assert (inputs.unresolved, inputs.unreadable) == ([], [])


def test_missing_files_are_recorded_not_raised(make_input):
    """A missing config and a missing evidence file become unresolved references and checks."""
    root = make_input()
    (root / "policies" / "cand.json").unlink()
    (root / "evidence" / "results.csv").unlink()
    inputs = read_inputs(root)
    assert inputs.unresolved == [
        "policy config policies/cand.json (cand)",
        "evidence evidence/results.csv (results)",
    ]
    assert [c.id for c in inputs.checks if c.status == "fail"] == ["contract-reference"] * 2
    assert "cand" not in inputs.config_sha and inputs.results == []


def test_unreadable_evidence_is_recorded_with_its_error(make_input):
    """Evidence its adapter refuses is kept as (source id, error) and a failed check."""
    root = make_input()
    (root / "evidence" / "results.csv").write_text("nothing,useful\n1,2\n")
    inputs = read_inputs(root)
    assert [source for source, _ in inputs.unreadable] == ["results"]
    failed = next(c for c in inputs.checks if c.id == "evidence-readable:results")
    assert failed.status == "fail" and failed.message.startswith(inputs.unreadable[0][1].code)


def test_config_differences_are_sorted_leaf_paths():
    """Differing leaves are listed by dotted path; lists are shown as JSON text."""
    diffs = config_differences(
        {"model": "a", "retriever": {"top_k": 5, "filters": ["x"]}},
        {"model": "b", "retriever": {"top_k": 5, "filters": ["x", "y"]}, "extra": True},
    )
    assert [(d.path, d.baseline, d.candidate) for d in diffs] == [
        ("extra", None, True),
        ("model", "a", "b"),
        ("retriever.filters", '["x"]', '["x","y"]'),
    ]


def test_missing_input_directory_is_an_input_error(tmp_path):
    """A missing input directory raises input-missing (exit 66) saying so, with what to pass
    (not "pass --input" alone: the user may have passed one)."""
    with pytest.raises(InputError) as err:
        check_input_dir(tmp_path / "nope")
    assert (err.value.code, err.value.message, err.value.hint) == (
        "input-missing",
        "--input nope does not exist",
        "pass --input the directory of the contract and the evidence (default /in)",
    )


def test_an_input_that_is_a_fifo_is_named_as_one_never_opened(tmp_path):
    """``--input`` naming a FIFO is ``input-not-directory`` saying it is a FIFO (exit 66), at
    once: nothing opens it."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError) as err:
        check_input_dir(tmp_path / "pipe")
    assert (err.value.code, err.value.message) == (
        "input-not-directory",
        "--input pipe is a FIFO, not a directory",
    )


def test_an_output_that_is_a_fifo_is_named_as_one_never_opened(tmp_path):
    """``--output`` naming a FIFO is ``output-not-directory`` saying so (exit 73), not "cannot
    create it: File exists" with a hint to make a directory writable."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OutputError) as err:
        check_output_dir(tmp_path / "pipe", tmp_path / "in")
    assert (err.value.code, err.value.message, err.value.hint) == (
        "output-not-directory",
        "--output pipe is a FIFO, not a directory",
        "pass --output a directory for the outputs (created when absent)",
    )


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ragtruth-generators"
TELEMETRY = "evidence/telemetry.parquet"


def _as_dataset(tmp_path: Path) -> tuple[Path, list[str]]:
    """The example with its telemetry Parquet rewritten as a 3-part Hive-partitioned dataset
    (by task_type) under the same path, page checksums written; returns it and the part paths."""
    root = tmp_path / "dataset-input"
    shutil.copytree(EXAMPLE, root)
    table = pq.read_table(root / TELEMETRY)
    (root / TELEMETRY).unlink()
    pq.write_to_dataset(
        table, root / TELEMETRY, partition_cols=["task_type"], write_page_checksum=True
    )
    (root / TELEMETRY / "_SUCCESS").write_bytes(b"")
    parts = sorted(p.relative_to(root).as_posix() for p in (root / TELEMETRY).rglob("*.parquet"))
    return root, parts


def _decision_without_sources(out: Path) -> dict[str, object]:
    decision = json.loads((out / "decision.json").read_text())
    for key in ("run_id", "started_at", "finished_at", "sources"):
        decision.pop(key)
    return decision


def test_dataset_directory_is_hashed_part_by_part(tmp_path):
    """A dataset source gets one digest per part (``_SUCCESS`` left out) and one sha256 for its
    rows: the sha256 of the sorted ``<sha256>  <relative path>`` lines."""
    root, parts = _as_dataset(tmp_path)
    inputs = read_inputs(root)
    assert len(parts) == 3 and inputs.unreadable == []
    recorded = [d for d in inputs.digests if d.path.startswith(TELEMETRY)]
    assert [d.path for d in recorded] == parts
    assert all(d.sha256 == sha256_file(root / d.path) for d in recorded)
    lines = "".join(f"{d.sha256}  {d.path.removeprefix(TELEMETRY + '/')}\n" for d in recorded)
    (result,) = [r for r in inputs.results if r.provenance.source_id == "modeled-cost"]
    shas = set(result.evidence.column("source_sha256").to_pylist())
    assert shas == {hashlib.sha256(lines.encode()).hexdigest()}


def test_dataset_decides_like_the_single_file(tmp_path):
    """The example decides byte-identically with its telemetry as a 3-part Hive dataset (source
    digests and paths aside), and ``verify --input`` rechecks every part."""
    root, parts = _as_dataset(tmp_path)
    single, split = tmp_path / "single", tmp_path / "split"
    assert main(["run", "--input", str(EXAMPLE), "--output", str(single)]) == 0
    assert main(["run", "--input", str(root), "--output", str(split)]) == 0
    assert _decision_without_sources(split) == _decision_without_sources(single)
    manifest = json.loads((split / "manifest.json").read_text())
    assert [i["path"] for i in manifest["inputs"] if i["path"].startswith(TELEMETRY)] == parts
    assert main(["verify", str(split), "--input", str(root)]) == 0
    part = root / parts[1]
    part.write_bytes(part.read_bytes() + b"\n")
    assert main(["verify", str(split), "--input", str(root)]) == ExitCode.VERIFY_MISMATCH


def test_corrupted_part_blocks_naming_the_part(tmp_path):
    """A part whose data page is damaged BLOCKs the run, and the error names that part."""
    root, parts = _as_dataset(tmp_path)
    part = root / parts[2]
    chunk = pq.ParquetFile(part).metadata.row_group(0).column(7)
    assert chunk.path_in_schema == "cost_usd"
    data = bytearray(part.read_bytes())
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data[start + chunk.total_compressed_size - 3] ^= 0xFF  # inside cost_usd's last page
    part.write_bytes(bytes(data))
    inputs = read_inputs(root)
    ((source_id, error),) = inputs.unreadable
    assert (source_id, error.code, error.file) == ("modeled-cost", "evidence-checksum", parts[2])
    out = tmp_path / "out"
    assert main(["run", "--input", str(root), "--output", str(out)]) == ExitCode.BLOCK
    assert parts[2] in (out / "decision.json").read_text()


def test_truncated_part_fails_the_boundary_check(tmp_path):
    """A part missing its closing magic bytes is refused before any reader sees it, by name."""
    root, parts = _as_dataset(tmp_path)
    part = root / parts[0]
    part.write_bytes(part.read_bytes()[:-4])
    ((_, error),) = read_inputs(root).unreadable
    assert (error.code, error.file) == ("evidence-unparseable", parts[0])


def test_take_evidence_returns_every_row_and_releases_the_sources() -> None:
    """The index gets every source's rows in one table; the sources keep none of them."""
    from ragwarrant.inputs import read_inputs, take_evidence

    inputs = read_inputs(Path(__file__).resolve().parents[1] / "examples" / "ragtruth-generators")
    rows = [r.evidence.num_rows for r in inputs.results]
    table = take_evidence(inputs)
    assert table.num_rows == sum(rows) > 0
    assert [r.evidence.num_rows for r in inputs.results] == [0] * len(rows)
    assert all(r.evidence.schema == table.schema for r in inputs.results)


@pytest.mark.parametrize(
    ("baseline_bytes", "candidate_name", "candidate_bytes"),
    [
        (b'{"model": "m", "top_k": 5}', "cand.json", b'{"model": "m", "top_k": 5}'),
        (b'{"model": "m", "top_k": 5}', "cand.yaml", b"# a copy\ntop_k: 5\nmodel: m\n"),
    ],
    ids=["byte-identical", "same-content-yaml"],
)
def test_candidate_config_with_the_baseline_content_refused(
    make_input, baseline_bytes, candidate_name, candidate_bytes
):
    """A candidate config that is a copy of the baseline's, in another file, is refused like the
    same path (it PROMOTEd): the error names both files and the contract key."""
    root = make_input(
        mutate=lambda c: c["candidates"][0].update(config=f"policies/{candidate_name}")
    )
    (root / "policies" / "base.json").write_bytes(baseline_bytes)
    (root / "policies" / candidate_name).write_bytes(candidate_bytes)
    with pytest.raises(ContractError) as info:
        read_inputs(root)
    err = info.value
    assert err.code == "contract-invalid"
    assert "candidates[0].config (line" in err.message
    assert f"policies/{candidate_name}" in err.message
    assert "policies/base.json" in err.message
    assert "same content" in err.message


def test_candidates_with_one_config_content_refused(make_input):
    """Two candidates whose configs hold the same content are refused, naming both files."""
    root = make_input(contract=base_contract(n_candidates=2))
    (root / "policies" / "cand1.json").write_bytes((root / "policies" / "cand0.json").read_bytes())
    with pytest.raises(ContractError) as info:
        read_inputs(root)
    assert "candidates[1].config" in info.value.message
    assert "policies/cand0.json" in info.value.message
    assert "policies/cand1.json" in info.value.message


def test_copied_baseline_config_is_an_error_record(make_input, tmp_path, capsys):
    """``run`` on a candidate config copied from the baseline exits 78 and records the error."""
    root = make_input()
    (root / "policies" / "cand.json").write_bytes((root / "policies" / "base.json").read_bytes())
    out = tmp_path / "out"
    assert main(["run", "--input", str(root), "--output", str(out)]) == ExitCode.CONFIG
    error = json.loads((out / "decision.json").read_text())["error"]
    assert error["code"] == "contract-invalid"
    assert "policies/cand.json" in error["message"]
    assert "policies/base.json" in error["message"]


def test_an_input_that_is_a_file_names_the_directory_to_pass(tmp_path):
    """``--input path/to/contract.yaml``: the error says it is a file and names its directory."""
    contract = tmp_path / "in" / "contract.yaml"
    contract.parent.mkdir()
    contract.write_text("id: x\n")
    with pytest.raises(InputError) as err:
        check_input_dir(contract)
    assert err.value.code == "input-not-directory"
    assert err.value.message == "--input contract.yaml is a file; pass its directory (in)"
    assert err.value.hint == "pass --input the directory holding contract.yaml, not the file"


def _identity(make_input, config: dict, keys: list[str]) -> str:
    def declare(c: dict) -> None:
        c["non_behavioural_config_keys"] = keys

    inputs = read_inputs(make_input(mutate=declare, configs={"cand": config}))
    return behavioural_sha256(inputs, "cand")


def test_behavioural_identity_drops_the_note_and_declared_keys_only(make_input):
    """A config's identity for looks ignores its top-level note and the declared dotted keys;
    any other key, or a note below the top level, changes it."""
    plain = {"model": "cand", "top_k": 5, "meta": {"owner": "a", "team": "x"}}
    same = _identity(make_input, plain, ["meta.owner"])
    assert _identity(make_input, {**plain, "note": "attempt 2"}, ["meta.owner"]) == same
    assert (
        _identity(make_input, {**plain, "meta": {"owner": "b", "team": "x"}}, ["meta.owner"])
        == same
    )
    assert (
        _identity(make_input, {**plain, "meta": {"owner": "a", "team": "y"}}, ["meta.owner"])
        != same
    )
    assert _identity(make_input, {**plain, "top_k": 6}, ["meta.owner"]) != same
    assert _identity(make_input, {**plain, "meta": {**plain["meta"], "note": "n"}}, []) != (
        _identity(make_input, plain, [])
    )


def test_an_output_under_a_file_says_a_folder_on_its_path_is_a_file(tmp_path):
    """``--output FILE/sub``: the hint names the file on the path, not permissions."""
    from ragwarrant.errors import OutputError
    from ragwarrant.inputs import check_output_dir

    (tmp_path / "in").mkdir()
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError) as info:
        check_output_dir(tmp_path / "f" / "sub", tmp_path / "in")
    assert info.value.code == "output-not-writable"
    assert "a folder on that path is a file" in (info.value.hint or "")
