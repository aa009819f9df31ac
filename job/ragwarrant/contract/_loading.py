"""Finding, reading and validating the release contract and the policy configs it names.

``load_contract`` is the only reader of a contract: YAML (safe loader) or JSON, duplicate keys and
non-finite numbers refused, then the strict pydantic models. Every refusal is a ``ContractError``
(exit 78) whose message names the key path and its line, what was expected and the kind of value
found, never the value itself (it may be private), and no absolute path (messages are persisted).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ragwarrant.contract._document import Loc, ParsedDocument, parse_document
from ragwarrant.contract._models import ContractModel
from ragwarrant.contract._release import ReleaseContract
from ragwarrant.contract._sanity import FieldError, did_you_mean
from ragwarrant.contract._schema_hint import schema_hint
from ragwarrant.errors import ContractError
from ragwarrant.limits import MAX_CONFIG_BYTES, MAX_CONTRACT_BYTES
from ragwarrant.sidefiles import read_regular

CONTRACT_FILENAMES = ("contract.yaml", "contract.yml", "contract.json")
"""The names a release contract may have in the input directory; the one home of this list."""

_MAX_LISTED = 10


def _field_names(model: type[ContractModel]) -> set[str]:
    names = set(model.model_fields)
    for sub in model.__subclasses__():
        names |= _field_names(sub)
    return names


_FIELD_NAMES = frozenset(_field_names(ContractModel))
"""Every key a contract may hold, for a "did you mean" on an unknown key."""


@dataclass(frozen=True)
class ContractSource:
    """A validated contract with the document it came from, for located run-time messages."""

    contract: ReleaseContract
    document: ParsedDocument

    def line_of(self, loc: Loc) -> int | None:
        """Return the contract file's line of key path ``loc`` (or of its nearest parent)."""
        return self.document.line_of(loc)

    def where(self, loc: Loc) -> str:
        """Return ``contract.yaml: key.path (line N)``."""
        return f"{self.document.name}: {self.document.where(loc)}"


def find_contract(input_dir: Path) -> Path:
    """Return the contract file in ``input_dir``.

    A name that exists but is no regular file (a FIFO, socket or device) is found, and refused
    by ``resolve_inside`` as such, not reported missing.

    Raises:
        ContractError: none, or more than one, of ``CONTRACT_FILENAMES`` is present;
            ``path-escapes-input`` when it is a symlink leading outside ``input_dir``;
            ``path-special-file`` when it is a FIFO, socket or device.
    """
    found = [
        input_dir / n
        for n in CONTRACT_FILENAMES
        if os.path.lexists(input_dir / n) and not (input_dir / n).is_dir()
    ]
    if not found:
        raise ContractError(
            "contract-missing",
            "no release contract in the input directory: "
            f"expected one of {', '.join(CONTRACT_FILENAMES)}",
            hint="mount the directory holding contract.yaml at /in, or pass --input DIR",
        )
    if len(found) > 1:
        raise ContractError(
            "contract-ambiguous",
            "more than one release contract in the input directory: "
            f"{', '.join(p.name for p in found)}",
            hint="keep exactly one contract file in the input directory",
        )
    resolve_inside(input_dir, found[0].name)
    return found[0]


def _found(value: object) -> str:
    """Describe a refused value by its kind; strings are never repeated (they may be private)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    return "a mapping" if isinstance(value, dict) else f"a {type(value).__name__}"


def _present_loc(data: object, loc: Loc, missing: bool) -> Loc:
    """Cut ``loc`` to the keys the document holds (pydantic adds union member names)."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict):
            held = part in node
        else:
            held = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not held:
            return (*out, part) if missing else tuple(out)
        node = node[part]  # type: ignore[index]
        out.append(part)
    return tuple(out)


def _suggestion(loc: Loc, e: ErrorDetails) -> str:
    """Return a "did you mean" naming a known key or an allowed value (never the input)."""
    if e["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
        if loc[-1] in _FIELD_NAMES:  # a known key in the wrong mapping: never "did you mean" it
            return f"; {loc[-1]!r} is a key of another mapping of the contract, not of this one"
        return did_you_mean(loc[-1], _FIELD_NAMES)
    found, expected = e.get("input"), (e.get("ctx") or {}).get("expected")
    if isinstance(found, str) and found != found.strip():
        return "; it starts or ends with white space (ids are compared exactly): remove it"
    if isinstance(found, str) and isinstance(expected, str):
        return did_you_mean(found, re.findall(r"'([^']*)'", expected))
    return ""


def _validation_message(doc: ParsedDocument, err: ValidationError) -> tuple[str, Loc]:
    """Return the refusal's message (every located error) and the key path of its first one."""
    by_loc: dict[Loc, list[str]] = {}
    for e in err.errors():
        loc: Loc = tuple(e["loc"])
        cause = (e.get("ctx") or {}).get("error")
        missing = e["type"] == "missing"
        if isinstance(cause, FieldError):  # a validator's rule, at the key it names
            loc, text = (*loc, *cause.loc), str(cause)
        elif isinstance(cause, ValueError):
            loc, text = _present_loc(doc.data, loc, False), str(cause)
        else:
            loc = _present_loc(doc.data, loc, missing)
            text = e["msg"]
            if not missing:
                text += f", found {_found(e.get('input'))}" + _suggestion(loc, e)
        texts = by_loc.setdefault(loc, [])
        if text not in texts:
            texts.append(text)
    parts = [f"{doc.where(loc)}: {' or '.join(texts)}" for loc, texts in by_loc.items()]
    more = f" (+{len(parts) - _MAX_LISTED} more)" if len(parts) > _MAX_LISTED else ""
    message = f"{doc.name} is not a valid release contract: " + "; ".join(parts[:_MAX_LISTED])
    return message + more, next(iter(by_loc), ())


def _read_document(path: Path, name: str, what: str, limit: int) -> ParsedDocument:
    """Read a file parsed whole (refused unread past ``limit`` bytes) and parse it.

    Raises:
        ContractError: ``contract-unreadable``; ``contract-limit`` naming the limit and size;
            ``contract-syntax`` naming the line and column; as ``parse_document``.
    """
    try:
        raw = read_regular(path, limit=limit)
    except OSError as exc:
        if exc.errno != errno.EFBIG:
            raise ContractError(
                "contract-unreadable", f"cannot read {what} {name}: {exc.strerror}", file=name
            ) from exc
        raise ContractError(
            "contract-limit",
            f"{what} {name} is {path.stat().st_size:,} bytes; the limit is {limit:,} bytes",
            hint="a contract and a policy config are parsed whole: keep them small",
            file=name,
        ) from None
    is_json = name.endswith(".json")
    try:
        return parse_document(raw, name, is_json=is_json)
    except (orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ContractError(
            "contract-syntax",
            f"{what} {name} is not valid {'JSON' if is_json else 'YAML'}{where}: "
            f"{getattr(exc, 'problem', None) or exc}",
            hint="check the file with a YAML/JSON linter",
            file=name,
        ) from exc


def load_contract_source(path: Path) -> ContractSource:
    """Parse and validate a release contract file, keeping its line map for later messages.

    Raises:
        ContractError: unreadable file, syntax error, duplicate key, non-finite number, or a field
            that fails validation (the message names each key path with its line, the rule and
            the kind of value found).
    """
    doc = _read_document(path, path.name, "the release contract", MAX_CONTRACT_BYTES)
    if not isinstance(doc.data, dict):
        raise ContractError(
            "contract-not-mapping",
            f"{path.name} must hold a mapping at the top level, found {_found(doc.data)}",
        )
    try:
        contract = ReleaseContract.model_validate(doc.data)
    except ValidationError as exc:
        message, first = _validation_message(doc, exc)
        cause = (exc.errors()[0].get("ctx") or {}).get("error")  # a validator's rule, if one
        rule = str(cause) if isinstance(cause, ValueError) else None
        hint = schema_hint(doc, first, rule=rule)
        raise ContractError("contract-invalid", message, hint=hint) from exc
    return ContractSource(contract, doc)


def load_contract(path: Path) -> ReleaseContract:
    """Parse and validate a release contract file (YAML with a safe loader, or JSON).

    Raises:
        ContractError: as ``load_contract_source``.
    """
    return load_contract_source(path).contract


def load_policy_config(path: Path, name: str) -> object:
    """Read a policy config (JSON or YAML), refusing duplicate keys and non-finite numbers.

    Args:
        path: the file.
        name: its path relative to the input directory, for messages.

    Raises:
        ContractError: ``contract-syntax`` (not valid YAML or JSON: a config the job cannot
            compare is refused, not skipped), ``contract-limit`` (past ``limits.MAX_CONFIG_BYTES``
            or a document limit), ``contract-duplicate-key`` or ``contract-non-finite`` (exit 78).
    """
    return _read_document(path, name, "the policy config", MAX_CONFIG_BYTES).data


def resolve_inside(input_dir: Path, relative: str) -> Path:
    """Resolve ``relative`` under ``input_dir``, refusing what must not be read from there.

    Every symlink on the way is followed (``Path.resolve``); the result must be inside the input
    directory and, when it exists, a regular file or a directory. Messages name ``relative``
    only, never an absolute path.

    Raises:
        ContractError: ``path-escapes-input`` (the resolved path is outside the input
            directory), ``path-unresolvable`` (a symlink loop, or a name the system refuses),
            ``path-special-file`` (a FIFO, socket or device: reading one could block or never
            end).
    """
    root = input_dir.resolve()
    try:
        target = (input_dir / relative).resolve()
        mode = target.stat().st_mode if target.exists() else stat.S_IFREG
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a loop (Python < 3.13)
        raise ContractError(
            "path-unresolvable",
            f"{relative} cannot be resolved inside the input directory (a symlink loop, or a "
            f"name the system refuses: {type(exc).__name__})",
            hint="replace the symlink by the file it should name",
            file=relative,
        ) from None
    if target != root and root not in target.parents:
        raise ContractError(
            "path-escapes-input",
            f"{relative} resolves outside the input directory (through a symlink)",
            hint="copy the file into the input directory instead of linking to it",
            file=relative,
        )
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ContractError(
            "path-special-file",
            f"{relative} is not a regular file or directory (a FIFO, socket or device)",
            hint="give the path of a regular file",
            file=relative,
        )
    return target


def is_readable_file(path: Path) -> bool:
    """Return whether ``path`` is a regular file this process can read."""
    return path.is_file() and os.access(path, os.R_OK)
