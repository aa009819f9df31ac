"""The files a rendered job mounts under ``/in``: contracts and the evidence they name, checked.

``load_inputs`` refuses inputs that cannot work before anything is rendered: an invalid contract
(``ContractError``, 78) and a policy config or evidence file the contract names that is not in the
directory packaged for it (``InputError``, 66).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragwarrant.contract import load_contract, resolve_inside
from ragwarrant.errors import ContractError, InputError, UsageError
from ragwarrant.k8s.options import InputFile

_CONTRACT_NAMES = ("contract.yaml", "contract.yml", "contract.json")


def collect_input_files(input_dir: Path) -> tuple[InputFile, ...]:
    """Return every regular file under ``input_dir`` except contract files, sorted by path.

    A symlinked file is packaged only when it leads to a file inside ``input_dir``
    (``contract.resolve_inside``): nothing outside the directory is read into the cluster.

    Raises:
        UsageError: ``input_dir`` is not a readable directory.
        ContractError: ``path-escapes-input`` or ``path-unresolvable`` for such a symlink.
    """
    if not input_dir.is_dir():
        raise UsageError(
            "k8s-input-missing",
            f"evidence directory {input_dir} does not exist or is not a directory",
            hint="pass --evidence-dir DIR, the directory the contract's paths are relative to",
        )
    files = []
    for path in sorted(p for p in input_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(input_dir).as_posix()
        if rel in _CONTRACT_NAMES or any(part.startswith(".") for part in PurePosixPath(rel).parts):
            continue
        files.append(InputFile(rel, resolve_inside(input_dir, rel).read_bytes()))
    return tuple(files)


@dataclass(frozen=True)
class RenderInputs:
    """The checked files of ``load_inputs``, ready for ``RenderOptions``.

    Attributes:
        contracts: one contract file per ``--contract``, in order.
        evidence: the shared input files (every contract's directory is the same).
        index_evidence: per contract, its own input files (contracts in different directories);
            empty when ``evidence`` is shared.
    """

    contracts: tuple[InputFile, ...]
    evidence: tuple[InputFile, ...]
    index_evidence: tuple[tuple[InputFile, ...], ...] = ()


def _contract_references(path: Path) -> list[tuple[str, str]]:
    """Return (what, relative path) of every file the contract at ``path`` names.

    Raises:
        ContractError: the contract is unreadable or invalid; the message starts with ``path``.
    """
    try:
        contract = load_contract(path)
    except ContractError as exc:
        raise ContractError(exc.code, f"--contract {path}: {exc.message}", exc.hint) from exc
    refs = [
        (f"policy config of {p.policy_id}", p.config)
        for p in [contract.baseline, *contract.candidates]
    ]
    refs += [(f"evidence {s.id}", s.path) for s in contract.evidence]
    refs += [
        (f"human labels of {m.id}", path)
        for m in contract.quality_metrics
        if m.human_labels is not None
        for path in (m.human_labels.queue, m.human_labels.file)
    ]
    return refs


def load_inputs(contract_paths: Sequence[Path], evidence_dir: Path | None = None) -> RenderInputs:
    """Read and check every contract and the files it names; return what to package.

    Each contract is validated with ``ragwarrant.contract.load_contract``. Its input directory is
    ``evidence_dir`` when given, else the contract's own directory; every policy config and
    evidence path it names must be a file packaged from that directory (``collect_input_files``:
    hidden files are not packaged). Contracts in different directories get their own files
    (``RenderInputs.index_evidence``), so no index reads another contract's evidence.

    Args:
        contract_paths: the ``--contract`` files, in index order.
        evidence_dir: ``--evidence-dir``, the one directory every contract's paths are relative
            to; ``None``: each contract's own directory.

    Raises:
        UsageError: a contract file cannot be read, or ``evidence_dir`` is not a directory.
        ContractError: a contract is not a valid release contract (exit 78).
        InputError: a file a contract names is not in its input directory (exit 66); the
            message names the contract, the file and the directory.
    """
    contracts = []
    for path in contract_paths:
        try:
            contracts.append(InputFile(path.name, path.read_bytes()))
        except OSError as exc:
            raise UsageError(
                "k8s-contract-unreadable",
                f"cannot read contract {path}: {exc.strerror}",
                hint="pass an existing contract file to --contract",
            ) from exc
    dirs = [evidence_dir if evidence_dir is not None else p.parent for p in contract_paths]
    files_of: dict[Path, tuple[InputFile, ...]] = {}
    for d in dirs:
        if d.resolve() not in files_of:
            files_of[d.resolve()] = collect_input_files(d)
    missing = []
    for path, d in zip(contract_paths, dirs, strict=True):
        # Each packaged file, and each directory holding some (a dataset of part files).
        packaged = {
            p.as_posix()
            for f in files_of[d.resolve()]
            for p in (PurePosixPath(f.relpath), *PurePosixPath(f.relpath).parents[:-1])
        }
        for what, ref in _contract_references(path):
            if PurePosixPath(ref).as_posix() not in packaged:
                missing.append(f"{path} names {what} {ref!r}, which is not a file in {d}")
    if missing:
        raise InputError(
            "k8s-input-reference-missing",
            "; ".join(missing),
            hint="put each file the contract names under its directory (paths are relative to "
            "the contract's directory, or to --evidence-dir DIR when given); files and folders "
            "whose names start with '.' are not packaged",
        )
    if len(files_of) > 1:
        return RenderInputs(tuple(contracts), (), tuple(files_of[d.resolve()] for d in dirs))
    return RenderInputs(tuple(contracts), next(iter(files_of.values()), ()))


def scan_input_root(root: Path) -> tuple[str, ...]:
    """Return the contract directories of an input volume's root, each one checked.

    ``root`` is a local view of what a pod sees at ``/in`` (the volume itself, mounted on the
    machine that renders, or a copy): each non-hidden subdirectory holding ``contract.yaml``
    (``.yml``, ``.json``) is one contract. Its contract must be valid and every policy config and
    evidence path it names must exist under that subdirectory (a file, or a dataset directory).
    Nothing is read but the contracts, so ten thousand directories take seconds.

    Returns:
        The subdirectory names: numeric ones in numeric order first, then the others sorted.

    Raises:
        UsageError: ``root`` is not a directory, or holds no contract directory.
        ContractError: a contract is invalid (exit 78); the message names it.
        InputError: a file a contract names is missing from its directory (exit 66).
    """
    if not root.is_dir():
        raise UsageError(
            "k8s-input-missing",
            f"--input-root {root} does not exist or is not a directory",
            hint="pass the directory whose subdirectories are the contracts (what pods see at /in)",
        )
    names = sorted(
        (d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")),
        key=lambda name: (0, int(name), "") if name.isdigit() else (1, 0, name),
    )
    missing: list[str] = []
    found = []
    for name in names:
        contract = next(
            (root / name / c for c in _CONTRACT_NAMES if (root / name / c).is_file()), None
        )
        if contract is None:
            continue
        found.append(name)
        for what, ref in _contract_references(contract):
            if not (root / name / ref).exists():
                missing.append(f"{contract} names {what} {ref!r}, which is not in {root / name}")
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise InputError(
            "k8s-input-reference-missing",
            "; ".join(missing[:5]) + more,
            hint="put each file the contract names under its own directory of the input volume",
        )
    if not found:
        raise UsageError(
            "k8s-no-contract",
            f"--input-root {root} has no subdirectory holding a contract.yaml",
            hint="lay the volume out as /in/<index or name>/contract.yaml plus its files",
        )
    return tuple(found)
