"""Evidence as a dataset directory: read with pyarrow datasets, hashed file by file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from ragwarrant.adapters._dataset import (
    check_dataset,
    dataset_digests,
    dataset_sha256,
    is_dataset,
    read_dataset_table,
)
from ragwarrant.adapters._tables import iter_parquet_batches, open_parquet, read_table
from ragwarrant.errors import EvidenceError

TABLE = pa.table(
    {
        "question_id": ["q1", "q2", "q3", "q4"],
        "score": [0.5, 0.25, 1.0, 0.0],
        "policy": ["base", "base", "cand", "cand"],
    }
)


def _sorted(table: pa.Table) -> list[dict[str, object]]:
    return sorted(table.to_pylist(), key=lambda r: str(r["question_id"]))


def _spark_like(root: Path) -> Path:
    """A Hive-partitioned Parquet dataset with Spark's _SUCCESS marker and .crc side files."""
    pq.write_to_dataset(TABLE, root, partition_cols=["policy"])
    (root / "_SUCCESS").write_bytes(b"")
    (root / "policy=base" / ".part.crc").write_bytes(b"crc")
    return root


def test_hive_partitioned_parquet_reads_every_row_with_its_partition(tmp_path: Path) -> None:
    """policy=<value>/ directories become the policy column; every row is read once."""
    root = _spark_like(tmp_path / "quality")
    table = read_dataset_table(root, "parquet")
    assert is_dataset(root) and not is_dataset(root / "_SUCCESS")
    assert _sorted(table) == _sorted(TABLE)


def test_plain_part_files_are_concatenated(tmp_path: Path) -> None:
    """A directory of part files without partitions reads as their concatenation."""
    root = tmp_path / "quality"
    root.mkdir()
    pq.write_table(TABLE.slice(0, 2), root / "part-00000.parquet")
    pq.write_table(TABLE.slice(2), root / "part-00001.parquet")
    assert read_dataset_table(root, "parquet").to_pylist() == TABLE.to_pylist()


def test_csv_parts_are_read_as_strings(tmp_path: Path) -> None:
    """CSV part files keep every cell a string, as a single CSV evidence file does."""
    root = tmp_path / "quality"
    (root / "policy=base").mkdir(parents=True)
    pacsv.write_csv(TABLE.drop(["policy"]).slice(0, 2), root / "policy=base" / "p0.csv")
    table = read_dataset_table(root, "csv")
    assert table.schema.field("score").type == pa.string()
    assert table.column("score").to_pylist() == ["0.5", "0.25"]
    assert table.column("policy").to_pylist() == ["base", "base"]


def test_digests_list_exactly_the_files_read(tmp_path: Path) -> None:
    """Every part file, sorted, with its sha256 and size; _SUCCESS and .crc files are not read
    and not listed."""
    root = _spark_like(tmp_path / "quality")
    digests = dataset_digests(root, "d")
    parts = sorted(p for p in root.rglob("*.parquet"))
    assert [d[0] for d in digests] == [p.relative_to(root).as_posix() for p in parts]
    for (_, sha, size), p in zip(digests, parts, strict=True):
        assert sha == hashlib.sha256(p.read_bytes()).hexdigest() and size == p.stat().st_size
    assert all(d[0].startswith("policy=") for d in digests)


def test_digest_changes_when_one_part_changes(tmp_path: Path) -> None:
    """Rewriting one part file changes its digest and only its digest."""
    root = _spark_like(tmp_path / "quality")
    before = dataset_digests(root, "d")
    first = root / before[0][0]
    pq.write_table(pq.read_table(first).slice(0, 1), first)
    after = dataset_digests(root, "d")
    assert after[0][1] != before[0][1] and after[1:] == before[1:]


def test_empty_directory_is_evidence_empty(tmp_path: Path) -> None:
    """A directory without part files (only _SUCCESS): evidence-empty, naming it."""
    root = tmp_path / "quality"
    root.mkdir()
    (root / "_SUCCESS").write_bytes(b"")
    with pytest.raises(EvidenceError) as info:
        read_dataset_table(root, "parquet", "evidence/quality")
    assert info.value.code == "evidence-empty" and info.value.file == "evidence/quality"


def test_incompatible_parts_are_unparseable(tmp_path: Path) -> None:
    """A part whose column cannot be cast to the first part's type fails the whole read."""
    root = tmp_path / "quality"
    root.mkdir()
    pq.write_table(pa.table({"score": [0.5]}), root / "a.parquet")
    pq.write_table(pa.table({"score": ["high"]}), root / "b.parquet")
    with pytest.raises(EvidenceError) as info:
        read_dataset_table(root, "parquet")
    assert info.value.code == "evidence-unparseable"


def test_part_not_of_the_declared_format_is_unparseable(tmp_path: Path) -> None:
    """A CSV part in a dataset declared parquet: evidence-unparseable."""
    root = tmp_path / "quality"
    root.mkdir()
    (root / "part-0.parquet").write_text("score\n0.5\n")
    with pytest.raises(EvidenceError) as info:
        read_dataset_table(root, "parquet")
    assert info.value.code == "evidence-unparseable"


def test_json_array_format_is_refused_for_a_directory(tmp_path: Path) -> None:
    """JSON arrays do not split into part files: evidence-dataset-format."""
    root = _spark_like(tmp_path / "quality")
    with pytest.raises(EvidenceError) as info:
        read_dataset_table(root, "json")  # type: ignore[arg-type]
    assert info.value.code == "evidence-dataset-format"


def test_read_table_and_parquet_batches_read_a_directory(tmp_path: Path) -> None:
    """``_tables.read_table`` and ``_tables.iter_parquet_batches`` read a directory as a dataset."""
    root = _spark_like(tmp_path / "quality")
    assert _sorted(read_table(root, "parquet", "q")) == _sorted(TABLE)
    batches = list(iter_parquet_batches(root, ["question_id", "policy"], "q"))
    assert _sorted(pa.Table.from_batches(batches)) == _sorted(
        TABLE.select(["question_id", "policy"])
    )


def test_open_parquet_refuses_a_directory(tmp_path: Path) -> None:
    """Readers of one Parquet file (otel, phoenix) get a located error, not a crash."""
    root = _spark_like(tmp_path / "quality")
    with pytest.raises(EvidenceError) as info:
        open_parquet(root, "evidence/spans.parquet")
    assert (info.value.code, info.value.file) == (
        "evidence-dataset-unsupported",
        "evidence/spans.parquet",
    )


def test_boundary_check_names_the_failing_part(tmp_path: Path) -> None:
    """``check_dataset`` applies the magic-byte check to every part, naming the bad one."""
    root = _spark_like(tmp_path / "quality")
    check_dataset(root, "parquet", "ev")
    (bad,) = [p for p in root.rglob("*.parquet") if "policy=cand" in str(p)]
    bad.write_bytes(bad.read_bytes()[:-2])
    with pytest.raises(EvidenceError) as info:
        check_dataset(root, "parquet", "ev")
    assert info.value.file == f"ev/{bad.relative_to(root).as_posix()}"


def test_dataset_sha256_is_the_sha256_of_the_sorted_digest_lines(tmp_path: Path) -> None:
    """The source digest is sha256 of ``<sha256>  <relative path>\\n`` lines sorted by path."""
    root = _spark_like(tmp_path / "quality")
    digests = dataset_digests(root, "d")
    lines = "".join(f"{sha}  {rel}\n" for rel, sha, _ in digests)
    assert dataset_sha256(list(reversed(digests))) == hashlib.sha256(lines.encode()).hexdigest()


def test_part_failing_a_page_checksum_is_named(tmp_path: Path) -> None:
    """A part whose page fails its CRC is ``evidence-checksum``, naming that part."""
    root = tmp_path / "quality"
    pq.write_to_dataset(TABLE, root, partition_cols=["policy"], write_page_checksum=True)
    (bad,) = [p for p in root.rglob("*.parquet") if "policy=base" in str(p)]
    chunk = pq.ParquetFile(bad).metadata.row_group(0).column(1)
    data = bytearray(bad.read_bytes())
    data[
        (chunk.dictionary_page_offset or chunk.data_page_offset) + chunk.total_compressed_size - 2
    ] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(EvidenceError) as info:
        read_dataset_table(root, "parquet", "ev")
    assert (info.value.code, info.value.file) == (
        "evidence-checksum",
        f"ev/{bad.relative_to(root).as_posix()}",
    )


def test_an_unlistable_subdirectory_is_an_error_not_skipped(tmp_path, monkeypatch) -> None:
    """A subdirectory that cannot be listed raises (the source is reported unreadable); its
    parts are never dropped in silence."""
    import os

    from ragwarrant.adapters._dataset import dataset_files

    root = tmp_path / "d"
    (root / "k=1").mkdir(parents=True)
    (root / "k=1" / "part-0.csv").write_text("a\n1\n")
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("k=1"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(PermissionError):
        dataset_files(root, "d")


def _split_into_parts(csv_path: Path, parts: int) -> None:
    """Replace ``csv_path`` with a directory of that name holding ``parts`` CSV part files."""
    header, *rows = csv_path.read_text().splitlines(keepends=True)
    csv_path.unlink()
    csv_path.mkdir()
    for i in range(parts):
        (csv_path / f"part-{i:05d}.csv").write_text("".join([header, *rows[i::parts]]))


def test_too_many_part_files_block_as_evidence_limit(make_input, tmp_path, monkeypatch) -> None:
    """A dataset of more part files than limits.MAX_DATASET_PARTS: the run BLOCKs with
    evidence-limit naming the limit and the count; at the limit it reads every part."""
    import json

    from ragwarrant.adapters import _dataset
    from ragwarrant.cli import main

    root = make_input()
    _split_into_parts(root / "evidence" / "results.csv", 5)
    monkeypatch.setattr(_dataset, "MAX_DATASET_PARTS", 4)
    assert main(["run", "--input", str(root), "--output", str(tmp_path / "o1")]) == 12
    text = (tmp_path / "o1" / "decision.json").read_text()
    assert "evidence-limit" in text and "5 part files; the limit is 4" in text
    monkeypatch.setattr(_dataset, "MAX_DATASET_PARTS", 5)
    assert main(["run", "--input", str(root), "--output", str(tmp_path / "o2")]) != 12
    assert json.loads((tmp_path / "o2" / "decision.json").read_text())["run_class"] != "BLOCK"
