"""``ragwarrant init``'s files: the exports placed beside the contract, the policy stubs.

``scaffold.py`` describes the exports and drafts the contract; this module writes nothing but
the user's input directory: copies of exports that lie outside it and a stub config per policy.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ragwarrant import scaffold_specs as specs
from ragwarrant.display import quoted, visible
from ragwarrant.errors import InputError, OutputError, UsageError, shown_path
from ragwarrant.mounts import unwritable_hint
from ragwarrant.scaffold import ExportSummary
from ragwarrant.sidefiles import special_file


def place_exports(
    sources: Sequence[Path], input_dir: Path
) -> tuple[list[tuple[Path, str, bool]], Path | None]:
    """Where each export is read and named, nothing copied yet (``copy_exports`` copies last).

    Returns:
        Each export as (the file to read: the source itself, its path in the contract relative
        to ``input_dir``, whether it is to be copied there), and the folder the copies' paths
        are relative to (None when none is copied).

    A file under ``input_dir`` stays where it is. Those outside it (a contract names only files
    of its input directory) are copied beside the contract keeping their layout below their
    common folder, that folder's name first (``/x/deepeval/baseline/r.json`` and
    ``/x/deepeval/candidate/r.json`` become ``deepeval/baseline/r.json`` and
    ``deepeval/candidate/r.json``), so that init reads the copies as it read the originals
    (roles from folders, Phoenix spans beside their evaluations); an identical file already
    there is reused. Exports whose only common folder is ``/`` keep their own folder's name
    alone (``/a/b/x.csv`` becomes ``b/x.csv``): no host layout is written into the contract.

    Raises:
        InputError: ``init-missing`` when a source is not a readable file; ``init-from-directory``
            when it is a directory.
        UsageError: ``init-from-repeated`` when two sources are one file; ``init-copy-exists``
            when a different file (or a link) is already where a copy goes; ``init-export-link``
            when a source under ``input_dir`` is a link leading outside it (run would refuse it).
    """
    _refuse_repeated(sources)
    absolute = [Path(os.path.abspath(p)) for p in sources]
    inside = [p.resolve().is_relative_to(input_dir) for p in sources]
    outside = [a.parent for a, kept in zip(absolute, inside, strict=True) if not kept]
    common = Path(os.path.commonpath(outside)) if outside else None
    origin = common.parent if common and common != common.parent else None  # None: only "/"
    placed = []
    for path, where in zip(sources, absolute, strict=True):
        resolved = path.resolve()
        if not path.is_file():
            raise _not_a_file(path)
        if resolved.is_relative_to(input_dir):
            placed.append((resolved, str(resolved.relative_to(input_dir)), False))
        elif where.is_relative_to(input_dir):
            raise UsageError(
                "init-export-link",
                f"{visible(str(path))} is a link to a file outside --output's directory: "
                "refused, as run reads only files inside its input directory",
                hint="replace the link by a copy of the file, then run init again",
            )
        else:
            display = str(where.relative_to(origin or where.parent.parent))
            refuse_other_file(path, input_dir / display)
            placed.append((path, display, True))
    return placed, origin


def _not_a_file(path: Path) -> InputError:
    """``init-from-directory`` for a directory given to ``--from``, else ``init-missing``."""
    shown = visible(shown_path(path))
    if path.is_dir():
        return InputError(
            "init-from-directory",
            f"--from {shown} is a directory, not an export file",
            hint="pass --from the export files inside it, not the folder (a shell glob can "
            "name several)",
        )
    kind = special_file(path)  # /dev/null said "--from null is not a readable file"
    what = f"is {kind}, not an export file" if kind else "is not a readable file"
    return InputError("init-missing", f"--from {shown} {what}")


def _refuse_repeated(sources: Sequence[Path]) -> None:
    """Refuse a file given to ``--from`` twice (two sources of one id; run would refuse them).

    Raises:
        UsageError: ``init-from-repeated`` naming the file as given the second time.
    """
    seen: set[Path] = set()
    for path in sources:
        if path.resolve() in seen:
            raise UsageError(
                "init-from-repeated",
                f"--from names {visible(shown_path(path))} twice (the same file)",
                hint="give each export once: baseline and candidates are different files",
            )
        seen.add(path.resolve())


def refuse_other_file(source: Path, target: Path) -> None:
    """Refuse to copy ``source`` to ``target`` when another file, or a link, is there.

    Raises:
        UsageError: ``init-copy-exists``.
    """
    kept = target.is_file() and not target.is_symlink() and filecmp.cmp(source, target, False)
    if not kept and (target.exists() or target.is_symlink()):
        raise UsageError(
            "init-copy-exists",
            f"{visible(str(source))} is outside --output's directory, and its copy's place "
            f"{visible(str(target))} holds another file",
            hint="move that file away, or copy the export into --output's directory yourself, "
            "then run init again",
        )


def copy_exports(copies: Sequence[tuple[Path, Path]]) -> None:
    """Copy each (source, target) byte for byte, creating folders; an existing target (checked
    identical by ``refuse_other_file``) is kept.

    Raises:
        OutputError: ``init-output-unwritable`` when a folder or file cannot be created.
    """
    for source, target in copies:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                with source.open("rb") as src, target.open("xb") as out:
                    shutil.copyfileobj(src, out)
        except OSError as exc:
            raise unwritable(target, exc) from exc


def unwritable(path: Path, exc: OSError) -> OutputError:
    """``init-output-unwritable`` (exit 73) for ``path``, with the OS's reason."""
    return OutputError(
        "init-output-unwritable",
        f"cannot write {visible(str(path))}: {exc.strerror or type(exc).__name__}",
        hint=unwritable_hint(path.parent),
    )


def plan_policy_stubs(text: str, input_dir: Path) -> dict[str, Path]:
    """The stub file of each policy of the draft ``text`` that has no config file yet.

    A stub is written only under ``<input_dir>/policies/``, as the path resolves (no symlinked
    folder leading elsewhere, no ``..``), and never where a symlink is, dangling or not.

    Returns:
        policy id -> the file to write; a policy whose config file exists is left out (kept).

    Raises:
        InputError: ``init-policy-stub-path`` when a policy id (``a/../../x``) would put its
            stub outside ``policies/``.
        UsageError: ``init-policy-stub-link`` when a stub would be written through a symlink
            (``policies/`` itself a link included).
    """
    data = yaml.safe_load(text)
    root = input_dir.resolve() / "policies"
    planned = {}
    for ref in [data["baseline"], *data["candidates"]]:
        path = input_dir / ref["config"]
        if path.exists():
            continue
        where = f"policy {quoted(ref['policy_id'])}: its stub {quoted(ref['config'])}"
        if not Path(os.path.normpath(path)).is_relative_to(root):
            raise InputError(
                "init-policy-stub-path",
                f"{where} would be written outside policies/",
                hint="rename the policy in the export, then run init again",
            )
        if path.is_symlink() or not path.resolve().is_relative_to(root):
            raise UsageError(
                "init-policy-stub-link",
                f"{where} would be written through a symlink: refused, a stub is written only "
                "in the real policies/ folder of --output's directory",
                hint="remove the symlink (or choose another --output), then run init again",
            )
        planned[ref["policy_id"]] = path
    return planned


def write_policy_stubs(stubs: dict[str, Path], exports: Sequence[ExportSummary] = ()) -> list[Path]:
    """Write the stub config of each policy of ``stubs`` (``plan_policy_stubs``).

    The stub names the policy, holds under ``seen_in_exports`` what ``exports`` say about it
    (models called, DeepEval hyperparameters), and asks for what else distinguishes it (prompt,
    retrieval settings); the decision lists what differs between the configs. A file created
    since the plan is kept (exclusive create: never overwritten, never through a symlink).

    Returns:
        The files written.
    """
    written = []
    for policy, path in stubs.items():
        stub: dict[str, Any] = {"policy_id": policy}
        seen: dict[str, Any] = {}  # first export wins per key
        for e in exports:
            for key, values in e.settings.items():
                if key == policy or (key == "" and e.file_policy == policy):
                    seen = values | seen
        if seen:
            stub["seen_in_exports"] = seen
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as out:
                out.write(specs.STUB_HEADER + yaml.safe_dump(stub, sort_keys=False))
        except FileExistsError:
            continue
        except OSError as exc:
            raise unwritable(path, exc) from exc
        written.append(path)
    return written
