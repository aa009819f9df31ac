"""What ``audit.verify`` reports, and the state its checks share (one ``VerifyContext``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from ragwarrant.audit.attestation import ATTESTATION_FILENAME
from ragwarrant.contract import key_path
from ragwarrant.exit_codes import ExitCode
from ragwarrant.outputs import Decision, Manifest, ValidationReport

REPLAY_IGNORED_FIELDS = frozenset({"run_id", "started_at", "finished_at"})
"""Fields of ``decision.json`` that legitimately differ between a run and its replay."""

MANIFEST = "manifest.json"
UNSIGNED_VERIFY_LIMITS = (
    "what this verify proves: every file is the one manifest.json lists, byte for byte; "
    "decision.json, report.md, manifest.json and decision.intoto.json agree with each other "
    "field by field; nothing secret-looking is published",
    "what it does not prove: who wrote them. No signature was checked (no --public-key), so "
    "whoever can write this directory can rewrite every file consistently and this verify "
    "still passes; only --public-key (a signed attestation) or --input (a replay from the "
    "inputs) ties the files to their source",
)
"""What a verify without a public key does and does not establish (printed by the command)."""

ReplayFn = Callable[[Path, Path], Any]
"""``(input_dir, output_dir) -> anything``: runs the job (``commands.verify.replay_with_job``;
passed in because ``audit`` sits below ``job`` in the layering)."""


@dataclass(frozen=True)
class Mismatch:
    """One thing that does not match.

    Attributes:
        file: the file concerned (``input:<path>`` for an input file).
        field: the JSON field path, when there is one.
        kind: ``missing``, ``symlink``, ``size``, ``sha256``, ``unexpected-file``, ``schema``,
            ``consistency``, ``attestation``, ``signature``, ``hygiene``, ``input-missing``,
            ``input-sha256``, ``replay`` or ``replay-failed``.
        message: what was expected and what was found (never a secret).
    """

    file: str
    field: str | None
    kind: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.field}" if self.field else self.file
        return f"{where}: {self.kind}: {self.message}"


@dataclass
class VerifyReport:
    """The outcome of ``verify_output_dir``.

    Attributes:
        mismatches: in check order; ``mismatches[0]`` is the first file and field that differ.
        checked: one line per check that ran.
        signature_verified: a DSSE signature verified with the given public key.
        replayed: the decision was replayed from the inputs and compared.
        notes: what could not be checked, and why (e.g. an error from a command-line option,
            which no replay from the inputs reproduces).
    """

    mismatches: list[Mismatch] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    signature_verified: bool = False
    replayed: bool = False

    def add(self, file: str, field: str | None, kind: str, message: str) -> None:
        """Record one ``Mismatch`` (see its attributes)."""
        self.mismatches.append(Mismatch(file, field, kind, message))

    @property
    def ok(self) -> bool:
        """True when nothing mismatched."""
        return not self.mismatches

    @property
    def exit_code(self) -> int:
        """0 when everything matches, ``ExitCode.VERIFY_MISMATCH`` (65, EX_DATAERR) otherwise."""
        return 0 if self.ok else int(ExitCode.VERIFY_MISMATCH)


def safe_relative(path: str) -> bool:
    p = PurePosixPath(path)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in path and path != ""


def validate(name: str, data: bytes, model: type[BaseModel], report: VerifyReport) -> Any:
    try:
        obj = model.model_validate_json(data)
    except ValidationError as err:
        first = err.errors()[0]
        report.add(
            name,
            key_path(first["loc"]),
            "schema",
            f"does not match the {model.__name__} schema: {first['msg']}",
        )
        return None
    report.checked.append(f"{name} validates against the {model.__name__} schema")
    return obj


@dataclass(frozen=True)
class DiffWords:
    """How ``diff_json`` words a difference (``{a}``: recorded side, ``{b}``: the other)."""

    only_recorded: str = "present in the recorded decision, absent from the replay"
    only_replayed: str = "absent from the recorded decision, present in the replay"
    lengths: str = "recorded {a} items, replay has {b}"
    values: str = "recorded {a}, replay gives {b}"


_REPLAY_WORDS = DiffWords()


def _diff_objects(
    recorded: dict[Any, Any],
    replayed: dict[Any, Any],
    path: str,
    ignore: frozenset[str],
    words: DiffWords,
) -> Iterator[tuple[str, str]]:
    for key in [*recorded, *(k for k in replayed if k not in recorded)]:
        if key in ignore:
            continue
        sub = f"{path}.{key}" if path else str(key)
        if key not in replayed:
            yield sub, words.only_recorded
        elif key not in recorded:
            yield sub, words.only_replayed
        else:
            yield from diff_json(recorded[key], replayed[key], sub, ignore, words=words)


def diff_json(
    recorded: Any,
    replayed: Any,
    path: str = "",
    ignore: frozenset[str] = frozenset(),
    *,
    words: DiffWords = _REPLAY_WORDS,
) -> Iterator[tuple[str, str]]:
    """Yield ``(field path, message)`` for every difference between two JSON values, in order.

    Objects are compared member by member in the recorded document's order (then members only
    the replay has), lists element by element; members named in ``ignore`` are skipped at any
    depth. Numbers compare exactly (``1 == 1.0``): a replay with the same seed and versions is
    bit-for-bit identical. ``words`` phrases the messages (a replay's by default).
    """
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        yield from _diff_objects(recorded, replayed, path, ignore, words)
    elif isinstance(recorded, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            yield from diff_json(a, b, f"{path}[{i}]", ignore, words=words)
        if len(recorded) != len(replayed):
            yield path or "(root)", words.lengths.format(a=len(recorded), b=len(replayed))
    # JSON scalars compare equal (1 == 1.0), but a recorded boolean equals only a boolean
    elif recorded != replayed or (type(recorded) is bool and type(replayed) is not bool):
        yield path or "(root)", words.values.format(a=short(recorded), b=short(replayed))


def short(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Documents:
    """The validated JSON outputs (None where absent or invalid)."""

    decision: Decision | None = None
    decision_dict: dict[str, Any] | None = None
    report: ValidationReport | None = None
    report_dict: Any = None


PrivateTextsFn = Callable[[Path], Iterable[str]]
"""``input_dir -> texts``: the evidence's private texts (``commands.verify.read_private_texts``)."""


@dataclass
class VerifyContext:
    """What one ``verify_output_dir`` call checks, and what its checks have found so far.

    Every check reads this and adds to ``report``; the earlier checks fill ``present``, ``docs``,
    ``attestation`` and ``inputs_ok`` for the later ones.
    """

    output_dir: Path
    manifest: Manifest
    manifest_bytes: bytes
    report: VerifyReport
    input_dir: Path | None = None
    public_key: Path | None = None
    replay: ReplayFn | None = None
    private_texts: PrivateTextsFn | None = None
    present: dict[str, bytes] = field(default_factory=dict)
    docs: Documents = field(default_factory=Documents)
    attestation: bytes | None = None
    inputs_ok: bool = False

    @property
    def scanned(self) -> dict[str, bytes]:
        """Every file of the directory the checks read: the outputs, manifest and attestation."""
        files = {**self.present, MANIFEST: self.manifest_bytes}
        if self.attestation is not None:
            files[ATTESTATION_FILENAME] = self.attestation
        return files


Check = Callable[[VerifyContext], None]
"""One named check of ``verify``: reads the context, appends to ``context.report``."""
