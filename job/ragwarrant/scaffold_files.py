"""``ragwarrant init``'s files: the exports placed beside the contract, the policy stubs.

``scaffold.py`` describes the exports and drafts the contract; this module writes nothing but
the user's input directory: copies of exports that lie outside it and a stub config per policy.
"""

from __future__ import annotations

import filecmp
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ragwarrant import scaffold_specs as specs
from ragwarrant.display import quoted
from ragwarrant.errors import InputError, UsageError
from ragwarrant.scaffold import ExportSummary


def place_exports(sources: Sequence[Path], input_dir: Path) -> list[tuple[Path, str, bool]]:
    """Each export as (the file to read, its path in the contract relative to ``input_dir``,
    whether it was copied there); ``input_dir`` is created when absent.

    A file under ``input_dir`` stays where it is. One outside it (a contract names only files
    of its input directory) is copied beside the contract, byte for byte, so that ``init`` then
    ``run`` works; an identical file already there is reused. Every source is checked before
    any is copied.

    Raises:
        InputError: ``init-missing`` when a source is not a readable file.
        UsageError: ``init-copy-exists`` when a different file (or a link) of the same name is
            already there, or two sources outside share a name; ``init-output-dir`` when
            ``input_dir`` cannot be created.
    """
    placed: dict[Path, Path] = {}  # where each source is read (the copy when copied) -> source
    for path in sources:
        if not path.is_file():
            raise InputError("init-missing", f"{path} is not a readable file")
        resolved = path.resolve()
        target = resolved if resolved.is_relative_to(input_dir) else input_dir / path.name
        if target != resolved:
            kept = target.is_file() and not target.is_symlink() and filecmp.cmp(path, target, False)
            if target in placed or (not kept and (target.exists() or target.is_symlink())):
                raise UsageError(
                    "init-copy-exists",
                    f"{path} is outside --output's directory, and {path.name} there is "
                    "another file",
                    hint="copy the export into --output's directory under another name, then "
                    "run init again with that copy",
                )
        placed[target] = path
    try:  # the user's input directory, named by --output: created when absent
        input_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            "init-output-dir",
            f"cannot create the directory of --output: {exc.strerror}",
            hint="choose an --output in a directory you can write",
        ) from exc
    for target, path in placed.items():
        if not target.exists():
            with path.open("rb") as src, target.open("xb") as out:
                shutil.copyfileobj(src, out)
    return [(t, str(t.relative_to(input_dir)), t != p.resolve()) for t, p in placed.items()]


def plan_policy_stubs(text: str, input_dir: Path) -> dict[str, Path]:
    """The stub file of each policy of the draft ``text`` that has no config file yet.

    A stub is written only under ``<input_dir>/policies/``, as the path resolves (no symlinked
    folder leading elsewhere, no ``..``), and never where a symlink is, dangling or not.

    Returns:
        policy id -> the file to write; a policy whose config file exists is left out (kept).

    Raises:
        InputError: ``init-policy-stub-path`` when a stub would be written outside
            ``policies/`` or through a symlink.
    """
    data = yaml.safe_load(text)
    root = input_dir.resolve() / "policies"
    planned = {}
    for ref in [data["baseline"], *data["candidates"]]:
        path = input_dir / ref["config"]
        if path.exists():
            continue
        if path.is_symlink() or not path.resolve().is_relative_to(root):
            raise InputError(
                "init-policy-stub-path",
                f"policy {quoted(ref['policy_id'])}: its stub {quoted(ref['config'])} would be "
                "written outside policies/ or through a symlink",
                hint="rename the policy in the export, or remove the symlink, then run init again",
            )
        planned[ref["policy_id"]] = path
    return planned


def write_policy_stubs(
    text: str, stubs: dict[str, Path], exports: Sequence[ExportSummary] = ()
) -> list[Path]:
    """Write the stub config of each policy of ``stubs`` (``plan_policy_stubs``) of the draft
    ``text``.

    The stub names the policy, holds under ``seen_in_exports`` what ``exports`` say about it
    (models called, DeepEval hyperparameters), and asks for what else distinguishes it (prompt,
    retrieval settings); the decision lists what differs between the configs. A file created
    since the plan is kept (exclusive create: never overwritten, never through a symlink).

    Returns:
        The files written.
    """
    file_policy = {src["path"]: src.get("policy") for src in yaml.safe_load(text)["evidence"]}
    written = []
    for policy, path in stubs.items():
        stub: dict[str, Any] = {"policy_id": policy}
        seen: dict[str, Any] = {}  # first export wins per key
        for e in exports:
            for key, values in e.settings.items():
                if key == policy or (key == "" and file_policy.get(e.path) == policy):
                    seen = values | seen
        if seen:
            stub["seen_in_exports"] = seen
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(specs.STUB_HEADER + yaml.safe_dump(stub, sort_keys=False))
        except FileExistsError:
            continue
        written.append(path)
    return written
