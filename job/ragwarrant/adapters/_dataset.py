"""Evidence as a dataset directory: Parquet, CSV or JSON-lines part files, Hive-partitioned or not.

What Spark, Trino, BigQuery exports and DuckDB write is a directory of part files, sometimes
under ``key=value/`` subdirectories (Hive partitioning). ``read_dataset_table`` reads one with
``pyarrow.dataset`` (Arrow's "Tabular Datasets" API: files discovered recursively, names starting
with ``.`` or ``_`` such as ``_SUCCESS`` and ``.crc`` ignored, ``key=value`` directories turned
into columns); ``dataset_digests`` lists exactly the files it reads, each with its sha256 and
size, for the manifest, and ``dataset_sha256`` folds them into the one digest of the source.
Each part passes the same boundary checks as a single file (``check_dataset``: magic bytes,
encoding) and is read on its own, so a damaged part (a failed Parquet page checksum, bad pages)
is reported by its own path, ``<evidence path>/<relative path>``.

Wired in by ``inputs`` (hashing), ``adapters.registry`` (boundary checks),
``_tables.read_table`` and ``_tables.iter_parquet_batches`` (reading).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds

from ragwarrant.adapters._integrity import (
    check_file,
    guarded,
    no_rows,
    parser_message,
    require_columns,
)
from ragwarrant.digests import sha256_bytes, sha256_file
from ragwarrant.errors import ContractError, EvidenceError
from ragwarrant.limits import MAX_DATASET_PARTS

DatasetFormat = Literal["parquet", "csv", "jsonl"]
# pyarrow.dataset's own defaults (FileSystemDatasetFactory selector_ignore_prefixes).
_IGNORED_PREFIXES = (".", "_")
_ARROW_FORMAT: dict[str, str | ds.FileFormat] = {
    # Parquet page checksums verified where the writer stored them, as for single files.
    "parquet": ds.ParquetFileFormat(
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(page_checksum_verification=True)
    ),
    "csv": "csv",
    "jsonl": "json",
}


def is_dataset(path: Path) -> bool:
    """Return whether an evidence path is a dataset directory rather than one file."""
    return path.is_dir()


def _discover(path: Path, fmt: DatasetFormat, display: str) -> ds.FileSystemDataset:
    """A dataset of exactly ``dataset_files`` (nothing Arrow would find by itself), Hive
    partitions read from their paths below ``path``; a CSV dataset's file columns as strings."""
    if fmt not in _ARROW_FORMAT:
        raise EvidenceError(
            "evidence-dataset-format",
            f"{display} is a directory; a dataset directory holds parquet, csv or jsonl parts, "
            f"not {fmt}",
            hint="declare the evidence's format as parquet, csv or jsonl",
            file=display,
            expected="parquet, csv or jsonl",
            found=fmt,
        )
    files = [part for _, part in dataset_files(path, display)]
    if not files:
        raise no_rows(display, expected=f"at least one {fmt} part file")
    hive = {"partitioning": "hive", "partition_base_dir": str(path)}
    try:
        dataset = ds.dataset([str(f) for f in files], format=_ARROW_FORMAT[fmt], **hive)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise EvidenceError(
            "evidence-unparseable",
            f"{display}: its part files are not one {fmt} dataset: "
            f"{parser_message(exc, path, display)}",
            hint="every part file must be of the declared format, with compatible columns",
            file=display,
            expected=f"{fmt} part files",
        ) from exc
    if fmt != "csv":
        return dataset
    # re-opened with every file column read as a string, as read_table reads a CSV file
    partitions = set(dataset.partitioning.schema.names) if dataset.partitioning else set()
    schema = pa.schema(
        [f if f.name in partitions else pa.field(f.name, pa.string()) for f in dataset.schema]
    )
    options = pacsv.ConvertOptions(strings_can_be_null=False, quoted_strings_can_be_null=False)
    csv = ds.CsvFileFormat(convert_options=options)
    return ds.dataset(dataset.files, schema=schema, format=csv, **hive)


def _part_display(fragment: ds.Fragment, path: Path, shown: str) -> str:
    """``<display>/<relative path>`` of a part file, as the manifest names it."""
    return f"{shown}/{Path(fragment.path).relative_to(path).as_posix()}"


def read_dataset_table(path: Path, fmt: DatasetFormat, display: str | None = None) -> pa.Table:
    """Read every part file of a dataset directory into one Arrow table.

    Parts are found recursively; names starting with ``.`` or ``_`` are skipped; each
    ``key=value`` directory level adds a column ``key`` (type inferred by pyarrow: integers, else
    strings). CSV file columns are read as strings, as single CSV files are; Parquet and JSON
    lines keep their types. The schema is the first part's, unified with the partitions; a part
    whose columns do not cast to it fails the read. Row order is by file path, then file order.
    Each part is read on its own (Parquet page checksums verified where present, every batch
    validated in full), so a failure names the part: ``<display>/<relative path>``.

    Args:
        path: the dataset directory.
        fmt: the format of its part files.
        display: how errors name it (default: ``path``).

    Raises:
        EvidenceError: ``evidence-dataset-format`` (a format datasets do not support),
            ``evidence-empty`` (no part file, or no row), ``evidence-unparseable`` (a part is
            not of the format, or its columns are incompatible with the others'),
            ``evidence-checksum`` / ``evidence-corrupt`` (a damaged Parquet part, named).
    """
    shown = display or str(path)
    dataset = _discover(path, fmt, shown)
    parts: list[pa.Table] = []
    for f in dataset.get_fragments():  # each part read whole, a failure naming the part
        whole = (f.to_table(schema=dataset.schema) for _ in range(1))  # read inside guarded
        parts += guarded(whole, Path(f.path), fmt, _part_display(f, path, shown))
    try:
        table = pa.concat_tables(parts)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise EvidenceError(
            "evidence-unparseable",
            f"{shown}: cannot read its part files as one {fmt} dataset: {exc}",
            hint="every part file must be of the declared format, with compatible columns",
            file=shown,
            expected=f"{fmt} part files with one schema",
        ) from exc
    if table.num_rows == 0:
        raise no_rows(shown)
    return table


def iter_dataset_batches(
    path: Path, columns: list[str], fmt: DatasetFormat, display: str, batch_size: int = 1 << 20
) -> Iterator[pa.RecordBatch]:
    """Stream ``columns`` of a dataset directory part by part, in record batches (memory
    bounded by one batch); the streaming counterpart of ``read_dataset_table``.

    Raises:
        EvidenceError: as ``read_dataset_table``; ``evidence-missing-column`` (as
            ``require_columns``) when the dataset lacks one of ``columns``.
    """
    dataset = _discover(path, fmt, display)
    require_columns(dataset.schema.names, columns, display)
    rows = 0
    for fragment in dataset.get_fragments():
        part = _part_display(fragment, path, display)
        batches = fragment.to_batches(schema=dataset.schema, columns=columns, batch_size=batch_size)
        for batch in guarded(batches, Path(fragment.path), fmt, part):
            rows += batch.num_rows
            yield batch
    if rows == 0:
        raise no_rows(display)


def check_dataset(path: Path, fmt: str, display: str) -> None:
    """Apply ``_integrity.check_file`` (magic bytes, encoding) to every part file, each named
    ``<display>/<relative path>``.

    Raises:
        EvidenceError: as ``check_file``, naming the first part that fails.
        ContractError: as ``dataset_files``.
    """
    for rel, part in dataset_files(path, display):
        check_file(part, fmt, f"{display}/{rel}")


def dataset_files(path: Path, display: str) -> list[tuple[str, Path]]:
    """``(relative POSIX path, path)`` of every file a dataset read uses, sorted by relative
    path: the files under ``path`` none of whose path parts starts with ``.`` or ``_``.

    The one lister of a dataset's files (Arrow reads exactly these): directories are walked
    without following a symlink, a symlinked part file is read only when it leads to a regular
    file inside ``path``, and anything else is refused, so no file outside the dataset is read
    and no loop is walked.

    Raises:
        ContractError: ``path-escapes-input`` (a part links outside the dataset directory, or a
            subdirectory is a symlink), ``path-special-file`` (a FIFO, socket or device),
            each naming ``<display>/<relative path>``.
        EvidenceError: ``evidence-limit``, more than ``limits.MAX_DATASET_PARTS`` part files.
        OSError: a subdirectory cannot be listed (the run reports the source unreadable).
    """
    root = path.resolve()
    files = []
    for folder, dirs, names in os.walk(path, onerror=_raise, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(_IGNORED_PREFIXES)]
        for name in [*dirs, *(n for n in names if not n.startswith(_IGNORED_PREFIXES))]:
            entry = Path(folder) / name
            rel = entry.relative_to(path).as_posix()
            if name in dirs and entry.is_symlink():
                raise ContractError(
                    "path-escapes-input",
                    f"{display}/{rel} is a symlink to a directory; a dataset's subdirectories "
                    "must be directories (a link can loop or lead outside the input directory)",
                    hint="copy the directory into the dataset instead of linking to it",
                    file=f"{display}/{rel}",
                )
            if name not in dirs:
                _check_part_file(entry, root, f"{display}/{rel}")
                files.append((rel, entry))
    if len(files) > MAX_DATASET_PARTS:
        raise EvidenceError(
            "evidence-limit",
            f"{display} holds {len(files):,} part files; the limit is {MAX_DATASET_PARTS:,}",
            hint="compact the dataset into fewer, larger part files",
            file=display,
            expected=f"at most {MAX_DATASET_PARTS} part files",
            found=f"{len(files)} part files",
        )
    return sorted(files)


def _raise(exc: OSError) -> None:
    """``os.walk``'s error handler: an unreadable subdirectory is not skipped in silence."""
    raise exc


def _check_part_file(entry: Path, root: Path, shown: str) -> None:
    """Refuse ``entry`` unless it is a regular file (directly, or by a symlink inside ``root``)."""
    mode = entry.lstat().st_mode
    if stat.S_ISLNK(mode):
        try:
            target = entry.resolve(strict=True)
        except (OSError, RuntimeError):  # dangling, or a loop
            target = None
        if target is None or root not in target.parents:
            raise ContractError(
                "path-escapes-input",
                f"{shown} is a symlink that does not lead to a file inside its dataset directory",
                hint="copy the part file into the dataset instead of linking to it",
                file=shown,
            )
        mode = target.stat().st_mode
    if not stat.S_ISREG(mode):
        raise ContractError(
            "path-special-file",
            f"{shown} is not a regular file (a FIFO, socket or device)",
            hint="a dataset directory holds only part files and directories",
            file=shown,
        )


def dataset_digests(path: Path, display: str) -> list[tuple[str, str, int]]:
    """Return ``(relative POSIX path, sha256 hex, size in bytes)`` of every file a dataset
    read uses (``dataset_files``), sorted by path.

    ``inputs`` records one manifest digest per part file, path ``<evidence path>/<relative
    path>``, so ``verify --input`` rechecks each part.

    Raises:
        OSError: a file cannot be read.
        ContractError: as ``dataset_files``.
    """
    return [(rel, sha256_file(p), p.stat().st_size) for rel, p in dataset_files(path, display)]


def dataset_sha256(digests: list[tuple[str, str, int]]) -> str:
    """The one sha256 of a dataset source (its rows' ``source_sha256``): the sha256 of the
    UTF-8 lines ``<sha256 hex>  <relative path>\n`` of its parts, sorted by path — the text
    ``sha256sum`` prints when run from the dataset directory on the sorted part list. Any part
    added, removed, renamed or changed changes it.

    Args:
        digests: as returned by ``dataset_digests``.
    """
    lines = "".join(f"{sha}  {rel}\n" for rel, sha, _ in sorted(digests))
    return sha256_bytes(lines.encode("utf-8"))
