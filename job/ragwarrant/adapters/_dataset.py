"""Evidence as a dataset directory: Parquet, CSV or JSON-lines part files, Hive-partitioned or not.

What Spark, Trino, BigQuery exports and DuckDB write is a directory of part files, sometimes
under ``key=value/`` subdirectories (Hive partitioning). ``read_dataset_table`` reads one with
``pyarrow.dataset`` (Arrow's "Tabular Datasets" API: files discovered recursively, names starting
with ``.`` or ``_`` such as ``_SUCCESS`` and ``.crc`` ignored, ``key=value`` directories turned
into columns); ``dataset_digests`` lists exactly the files it reads, each with its sha256 and
size, for the manifest.

Not yet called by the adapters: the integrator wires it where evidence paths are resolved,
hashed and read (see the docstrings of both functions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds

from ragwarrant.adapters._io import no_rows
from ragwarrant.digests import sha256_file
from ragwarrant.errors import EvidenceError

__all__ = ["DatasetFormat", "dataset_digests", "is_dataset", "read_dataset_table"]

DatasetFormat = Literal["parquet", "csv", "jsonl"]
# pyarrow.dataset's own defaults (FileSystemDatasetFactory selector_ignore_prefixes).
_IGNORED_PREFIXES = (".", "_")
_ARROW_FORMAT = {"parquet": "parquet", "csv": "csv", "jsonl": "json"}


def is_dataset(path: Path) -> bool:
    """Return whether an evidence path is a dataset directory rather than one file."""
    return path.is_dir()


def _discover(path: Path, fmt: DatasetFormat, display: str) -> ds.FileSystemDataset:
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
    try:
        dataset = ds.dataset(
            path,
            format=_ARROW_FORMAT[fmt],
            partitioning="hive",
            ignore_prefixes=list(_IGNORED_PREFIXES),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise EvidenceError(
            "evidence-unparseable",
            f"{display}: its part files are not one {fmt} dataset: {exc}",
            hint="every part file must be of the declared format, with compatible columns",
            file=display,
            expected=f"{fmt} part files",
        ) from exc
    if not dataset.files:
        raise no_rows(display, expected=f"at least one {fmt} part file")
    return dataset


def _as_strings(dataset: ds.FileSystemDataset, path: Path) -> ds.FileSystemDataset:
    """Re-open a CSV dataset with every file column read as a string (as ``read_table`` does)."""
    partition_names = set(dataset.partitioning.schema.names) if dataset.partitioning else set()
    schema = pa.schema(
        [f if f.name in partition_names else pa.field(f.name, pa.string()) for f in dataset.schema]
    )
    fmt = ds.CsvFileFormat(
        convert_options=pacsv.ConvertOptions(
            strings_can_be_null=False, quoted_strings_can_be_null=False
        )
    )
    return ds.dataset(
        path,
        schema=schema,
        format=fmt,
        partitioning="hive",
        ignore_prefixes=list(_IGNORED_PREFIXES),
    )


def read_dataset_table(path: Path, fmt: DatasetFormat, display: str | None = None) -> pa.Table:
    """Read every part file of a dataset directory into one Arrow table.

    Parts are found recursively; names starting with ``.`` or ``_`` are skipped; each
    ``key=value`` directory level adds a column ``key`` (type inferred by pyarrow: integers, else
    strings). CSV file columns are read as strings, as single CSV files are; Parquet and JSON
    lines keep their types. The schema is the first part's, unified with the partitions; a part
    whose columns do not cast to it fails the read. Row order is by file path, then file order.

    Integration: where a contract's evidence path is resolved, call this instead of
    ``_io.read_table`` when ``is_dataset(path)``.

    Args:
        path: the dataset directory.
        fmt: the format of its part files.
        display: how errors name it (default: ``path``).

    Raises:
        EvidenceError: ``evidence-dataset-format`` (a format datasets do not support),
            ``evidence-empty`` (no part file, or no row), ``evidence-unparseable`` (a part is
            not of the format, or its columns are incompatible with the others').
    """
    shown = display or str(path)
    dataset = _discover(path, fmt, shown)
    try:
        if fmt == "csv":
            dataset = _as_strings(dataset, path)
        table = dataset.to_table()
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError) as exc:
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


def dataset_digests(path: Path) -> list[tuple[str, str, int]]:
    """Return ``(relative POSIX path, sha256 hex, size in bytes)`` of every file a dataset
    read uses, sorted by path: the files under ``path`` whose path has no part starting with
    ``.`` or ``_``.

    Integration: where the manifest hashes inputs, record one digest per part file (path
    ``<evidence path>/<relative path>``) instead of one for the evidence path.

    Raises:
        OSError: a file cannot be read.
    """
    files = []
    for p in path.rglob("*"):
        rel = p.relative_to(path)
        if p.is_file() and not any(part.startswith(_IGNORED_PREFIXES) for part in rel.parts):
            files.append((rel.as_posix(), p))
    return [(rel, sha256_file(p), p.stat().st_size) for rel, p in sorted(files)]
