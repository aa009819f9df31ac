"""Collect the decisions of a fan-out (one output directory per contract) into one table.

``ragwarrant summary --all OUT`` calls ``collect_decisions``: an Indexed Job writes contract i to
``OUT/<i>/`` and an Argo fan-out to ``OUT/<name>/``; each subdirectory of ``OUT`` is one row. A
row says how far that run got, without ever raising for one bad directory:

- ``decided``: ``decision.json`` is a valid decision record and ``manifest.json`` (written last)
  records its sha256: the run completed;
- ``partial``: a valid decision record but no manifest, or a manifest recording other bytes
  (the run stopped before publishing, or the decision was changed after it);
- ``unreadable``: ``decision.json`` exists but is not a valid decision record, is not a regular
  file (a FIFO or device is never read: it would block or never end), is larger than
  ``sidefiles.MAX_SIDE_FILE_BYTES``, or is a symlink leading outside its run's directory; or the
  run's directory is itself a symlink leading outside ``OUT`` (never followed);
- ``missing``: no ``decision.json`` (the pod never ran, or died before writing), including every
  expected index (``expect``) that has no directory at all.

A run that ended in a typed error is ``decided`` with run class ``ERROR`` and the error's code.
Nothing is re-decided here: the class and exit code are the ones the run wrote.

``Collection.exit_code`` is the worst row's code, so a CI step on a fan-out fails when any run
did not PROMOTE: the largest code any decided run wrote (0 < 10 REJECT < 11 INCONCLUSIVE < 12
BLOCK, the order ``decision.run_class`` gives the classes, below every error code), and for a
row without a readable, committed decision the code ``ragwarrant summary`` gives that directory
alone: 66 for ``missing`` and for ``partial`` without a manifest (not a completed run), 65 for
``unreadable`` and for a ``partial`` decision the manifest does not record. An empty fan-out
(no run at all) is 66.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError, first_invalid
from ragwarrant.exit_codes import ExitCode
from ragwarrant.outputs import Decision, Manifest
from ragwarrant.sidefiles import read_regular


class RowStatus(StrEnum):
    """How far one contract's run got (see the module docstring)."""

    DECIDED = "decided"
    PARTIAL = "partial"
    UNREADABLE = "unreadable"
    MISSING = "missing"


@dataclass(frozen=True)
class RunRow:
    """One contract's outcome.

    Attributes:
        name: the subdirectory of ``OUT`` (the completion index, or the Argo item).
        status: how far the run got.
        run_class: PROMOTE, REJECT, INCONCLUSIVE, BLOCK or ERROR as the run wrote it; ``None``
            when there is no readable decision.
        exit_code: the run's exit code as written in ``decision.json``; ``None`` without one.
        contract_id: the contract's id, when the decision names one.
        detail: the error's code for an ERROR, the reason for a non-decided status, else the
            decision's summary line.
    """

    name: str
    status: RowStatus
    run_class: str | None
    exit_code: int | None
    contract_id: str | None
    detail: str


@dataclass(frozen=True)
class Collection:
    """Every row of one fan-out, in index order (numeric names first).

    Attributes:
        root: the directory collected.
        rows: one per subdirectory, plus one ``missing`` row per absent expected index.
    """

    root: str
    rows: tuple[RunRow, ...]

    def exit_code(self) -> int:
        """The worst row's exit code (see the module docstring); 66 without any row."""
        return max((_row_code(r) for r in self.rows), default=int(ExitCode.NO_INPUT))

    def counts(self) -> dict[str, int]:
        """Return the number of rows per run class (decided rows) and per other status."""
        counter: Counter[str] = Counter()
        for row in self.rows:
            key = row.run_class if row.status is RowStatus.DECIDED else row.status.value
            counter[str(key)] += 1
        return dict(sorted(counter.items()))

    def to_json(self) -> dict[str, Any]:
        """Return the collection as plain JSON types (``summary --all --format json``)."""
        return {
            "root": self.root,
            "total": len(self.rows),
            "exit_code": self.exit_code(),
            "counts": self.counts(),
            "rows": [
                {
                    "name": r.name,
                    "status": r.status.value,
                    "run_class": r.run_class,
                    "exit_code": r.exit_code,
                    "contract_id": r.contract_id,
                    "detail": r.detail,
                }
                for r in self.rows
            ],
        }


_NO_MANIFEST = "no manifest.json: the run did not complete"


def _row_code(row: RunRow) -> int:
    """A row's exit code: the one its run wrote, else the one ``summary`` gives its directory."""
    if row.status is RowStatus.DECIDED and row.exit_code is not None:
        return row.exit_code
    if row.status is RowStatus.MISSING or row.detail == _NO_MANIFEST:
        return int(ExitCode.NO_INPUT)
    return int(ExitCode.VERIFY_MISMATCH)


def _manifest_sha256(directory: Path) -> str | None:
    """Return the sha256 manifest.json records for decision.json; None if there is none."""
    try:
        raw = read_regular(directory / "manifest.json", within=directory)
        manifest = Manifest.model_validate_json(raw)
    except (OSError, ValidationError):
        return None
    return next((d.sha256 for d in manifest.outputs if d.path == "decision.json"), None)


def _row(directory: Path, root: Path) -> RunRow:
    """Return the row of one run's output directory under ``root``; never raises for its
    contents. A directory that is a symlink leading outside ``root`` is not read."""
    name = directory.name
    if directory.is_symlink() and not directory.resolve().is_relative_to(root.resolve()):
        detail = "the run directory is a symlink leading outside the runs root: not followed"
        return RunRow(name, RowStatus.UNREADABLE, None, None, None, detail)
    path = directory / "decision.json"
    try:
        raw = read_regular(path, within=directory)
    except FileNotFoundError as exc:
        return RunRow(
            name, RowStatus.MISSING, None, None, None, f"no decision.json ({exc.strerror})"
        )
    except OSError as exc:
        detail = f"decision.json cannot be read: {exc.strerror}"
        return RunRow(name, RowStatus.UNREADABLE, None, None, None, detail)
    try:
        d = Decision.model_validate_json(raw)
    except ValidationError as exc:
        return RunRow(name, RowStatus.UNREADABLE, None, None, None, first_invalid(exc))
    contract_id = d.contract.id if d.contract is not None else None
    detail = f"{d.error.code}: {d.error.message}" if d.error is not None else d.summary
    recorded = _manifest_sha256(directory)
    status = RowStatus.DECIDED
    if recorded is None:
        status, detail = RowStatus.PARTIAL, _NO_MANIFEST
    elif recorded != sha256_bytes(raw):
        status, detail = RowStatus.PARTIAL, "decision.json differs from what manifest.json records"
    return RunRow(name, status, d.run_class.value, d.exit_code, contract_id, detail)


def collect_decisions(root: Path, *, expect: int | None = None) -> Collection:
    """Read the decision of every run under ``root`` into one table.

    Args:
        root: the fan-out's output prefix (``/out/<job name>/<job uid>/`` of an Indexed Job,
            ``/out/<workflow name>/<workflow uid>/`` of an Argo Workflow); each subdirectory not
            starting with ``.`` is one run.
        expect: the number of indexes the fan-out had; every index ``0`` .. ``expect - 1``
            without a directory becomes a ``missing`` row. ``None``: only what is there.

    Raises:
        InputError: ``root`` is not a readable directory (66).
    """
    try:
        dirs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError as exc:
        raise InputError(
            "collect-root-unreadable",
            f"cannot list {root}: {exc.strerror}",
            hint="pass the fan-out's output prefix, whose subdirectories are the runs",
        ) from exc
    rows = [_row(d, root) for d in dirs]
    present = {p.name for p in dirs}
    rows += [
        RunRow(str(i), RowStatus.MISSING, None, None, None, "no output directory")
        for i in range(expect or 0)
        if str(i) not in present
    ]
    rows.sort(key=lambda r: (0, int(r.name), "") if r.name.isdigit() else (1, 0, r.name))
    return Collection(str(root), tuple(rows))
