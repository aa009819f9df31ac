"""Typed, user-facing errors; a leaf module everyone may import.

Each error carries a stable kebab-case ``code``, a ``message`` naming what is wrong (file, row,
field, expected and found where they apply), a ``hint`` and whose fault it is. ``cli`` is the only
place that turns them into exit codes (``exit_code``).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING, Literal

from ragwarrant.exit_codes import ExitCode
from ragwarrant.mounts import DEFAULT_MOUNTS

if TYPE_CHECKING:
    from pydantic import ValidationError

Fault = Literal["user", "internal"]


class RagwarrantError(Exception):
    """Base of every error the job reports to its user."""

    exit_code: ExitCode = ExitCode.INTERNAL
    fault: Fault = "user"

    def __init__(self, code: str, message: str, hint: str = "", **context: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.context = {k: v for k, v in context.items() if v is not None}

    def __reduce__(self) -> tuple[object, ...]:
        # Exceptions pickle by re-calling __init__ with ``args``, which these signatures do not
        # accept; restore the state directly so errors cross process boundaries intact.
        return (type(self).__new__, (type(self),), {**self.__dict__, "args": self.args})

    def to_record(self) -> dict[str, object]:
        """Return the error as the ``error`` object of ``decision.json``.

        An error raised for a command-line option's value carries it in context ``option``
        (e.g. ``--signing-key``); the record then names it, for ``verify`` (which cannot replay
        an option's value from the inputs).
        """
        record: dict[str, object] = {
            "type": type(self).__name__,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "fault": self.fault,
            "exit_code": int(self.exit_code),
        }
        if "option" in self.context:
            record["option"] = self.context["option"]
        return record


class UsageError(RagwarrantError):
    """The command line is wrong (exit 64)."""

    exit_code = ExitCode.USAGE


class InputError(RagwarrantError):
    """The input directory is missing or unreadable (exit 66)."""

    exit_code = ExitCode.NO_INPUT


class ContractError(RagwarrantError):
    """The release contract is missing or invalid (exit 78)."""

    exit_code = ExitCode.CONFIG


class EvidenceError(RagwarrantError):
    """An evidence file does not match what its adapter expects.

    Not an exit code of its own: the run records it as a failed hard gate and BLOCKs.
    """

    exit_code = ExitCode.BLOCK

    def __init__(
        self,
        code: str,
        message: str,
        hint: str = "",
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        super().__init__(
            code, message, hint, file=file, row=row, column=column, expected=expected, found=found
        )
        self.file, self.row, self.column = file, row, column
        self.expected, self.found = expected, found

    def location(self) -> str:
        """Return ``file:row:column`` with the parts that are known."""
        parts = [p for p in (self.file, self.row, self.column) if p is not None]
        return ":".join(str(p) for p in parts)


class MismatchError(RagwarrantError):
    """A recorded output is not what it should be: a tampered or inconsistent file (exit 65)."""

    exit_code = ExitCode.VERIFY_MISMATCH


class OutputError(RagwarrantError):
    """The output directory cannot be written (exit 73)."""

    exit_code = ExitCode.CANT_CREATE


class InternalError(RagwarrantError):
    """A bug, or a failed self-test: an unproven engine decides nothing (exit 70)."""

    exit_code = ExitCode.INTERNAL
    fault = "internal"


def shown_path(path: PurePath) -> str:
    """``path`` as a message names it: as typed when relative or under a mount (``/in``,
    ``/out``), else by its last component alone. A host's absolute path is withheld from the
    decision record and the log (``audit.hygiene``), and with it the whole message naming it."""
    if not path.is_absolute() or any(PurePath(m) in (path, *path.parents) for m in DEFAULT_MOUNTS):
        return str(path)
    return path.name or str(path)


def file_for_directory(code: str, option: str, path: PurePath) -> InputError:
    """The error of a directory option that names a file: say so and name its directory.

    Both are named as ``shown_path`` shows them (never a host's absolute path).

    Args:
        code: the error's code (e.g. ``input-not-directory``).
        option: the option given the file (``--input``, ``OUTDIR``).
        path: the file given.
    """
    return InputError(
        code,
        f"{option} {shown_path(path)} is a file; pass its directory ({shown_path(path.parent)})",
        hint=f"pass {option} the directory holding {path.name}, not the file",
    )


def first_invalid(exc: ValidationError) -> str:
    """``<key path>: <rule>`` of the first field pydantic refused (``candidates.0.policy_id:
    Field required``; ``(root)`` for the document itself): values are never echoed."""
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc']) or '(root)'}: {first['msg']}"
