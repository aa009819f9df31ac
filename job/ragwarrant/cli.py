"""Command line: argv and environment → subcommand → exit code.

The only place with an ``except`` ladder and ``sys.exit``: typed errors become the published
exit codes (contracts/exit-codes.md), and ``run`` still writes an ERROR decision record when the
output directory is writable.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import traceback
from collections.abc import Iterable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ragwarrant.commands import init, k8s, ledger, review, run, schemas, selftest, summary, verify
from ragwarrant.commands._help import top_level_epilog
from ragwarrant.display import visible
from ragwarrant.errors import InternalError, RagwarrantError, UsageError
from ragwarrant.logging import configure_logging
from ragwarrant.mounts import DEFAULT_MOUNTS
from ragwarrant.version import __version__

if TYPE_CHECKING:
    import structlog

_COMMANDS = (run, summary, verify, ledger, selftest, schemas, k8s, init, review)
"""The subcommands, in the order ``ragwarrant --help`` lists them."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError("usage", message, hint=f"see '{self.prog} --help'")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = _Parser(
        prog="ragwarrant",
        description="Decide whether a candidate RAG policy may replace the baseline.",
        epilog=top_level_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"ragwarrant {__version__}",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _COMMANDS:
        module.register(sub)
    return parser


def _logger(args: argparse.Namespace | None) -> structlog.typing.FilteringBoundLogger:
    """The process logger, configured for the command line's mounts (once it is parsed).

    Configured after parsing, not before: ``--version`` and ``--help`` exit inside the parser
    and log nothing, so they never import structlog (issue 13).
    """
    import structlog

    configure_logging(mounts=_mounts(args))
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger("ragwarrant")
    return logger


class _ClosedPipeTolerantStdout:
    """``sys.stdout`` while a command runs: a reader that closed the pipe costs no result.

    A command's result is its exit code (``verify``'s 0 or 65, ``run``'s decision, committed
    before its line is printed); ``| head -1`` or a log collector that quit must not turn it
    into an internal error (70). On the first ``BrokenPipeError`` the file descriptor is pointed
    at ``/dev/null``, so later writes and the interpreter's final flush go nowhere and cannot
    fail either; the command carries on and its code is returned. Every other attribute is the
    wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _to_devnull(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:  # through ``write``: the stream's own would bypass the guard
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()
            self._stream.flush()  # what stayed buffered now goes to /dev/null

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def entry() -> None:
    """The ``ragwarrant`` console script and ``python -m ragwarrant``: ``main``, then exit.

    When ``main`` returns, every output is committed (written, fsynced, renamed in), every lock
    released and every thread and child process joined. What the exit would still do that
    matters runs here: every ``atexit`` handler (``atexit._run_exitfuncs``), then a flush of
    stdout and stderr. The interpreter's own teardown, which frees each module, array and table
    one by one and changes nothing outside the process, is skipped (``os._exit`` with ``main``'s
    code): after a cold ``run`` of the shipped example it cost about 0.4 CPU-s on the loaded
    build machine (issue 13, docs/benchmarks.md "Cold start"). ``--help``, ``--version`` and
    usage errors exit in the parser, and an exception escaping ``main`` (there should be none)
    with its traceback: those exit the usual way.

    Raises:
        SystemExit: from the parser, or what escaped ``main``.
    """
    code = main()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed or broken pipe: nothing more can be said
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args: argparse.Namespace | None = None
    log: structlog.typing.FilteringBoundLogger | None = None
    try:
        args = build_parser().parse_args(argv)
        log = _logger(args)
        if getattr(args, "handler", None) is None:
            raise UsageError("usage", "no command given", hint="see 'ragwarrant --help'")
        stdout = sys.stdout
        sys.stdout = _ClosedPipeTolerantStdout(stdout)  # type: ignore[assignment]
        try:
            return int(args.handler(args))
        finally:
            sys.stdout = stdout
    except RagwarrantError as exc:
        error = exc
    except KeyboardInterrupt:
        error = InternalError("interrupted", "interrupted")
    except Exception as exc:  # an unexpected bug: still an error record, never a decision
        log = log if log is not None else _logger(args)
        log.error("internal_error", traceback=traceback.format_exc())  # redacted by the logger
        error = InternalError(
            "internal-error",
            f"{type(exc).__name__}: {_redacted(str(exc), args)}",
            hint="this is a bug in ragwarrant; please report it",
        )
    words = list(sys.argv[1:] if argv is None else argv)
    return _fail(log if log is not None else _logger(args), args, error, words[:1] == ["run"])


def _record_run_error(
    log: structlog.typing.FilteringBoundLogger,
    args: argparse.Namespace,
    output: Path,
    exc: RagwarrantError,
) -> tuple[bool, str]:
    """``run`` only: write the ERROR record (and ledger entry, termination message and
    ``--summary-json``); return (written, the summary published).

    The pipeline (and with it ``audit.verify``) is imported here, so an error of another
    command (``summary``, ``verify``) does not load it.
    """
    from pydantic import ValidationError

    from ragwarrant.audit.attestation import try_load_private_key
    from ragwarrant.audit.ledger_history import record_run
    from ragwarrant.audit.record import record_error
    from ragwarrant.outputs import DECISION_FILE, Decision

    published = f"ERROR: {exc.code}: {exc.message}"
    written = record_error(
        output,
        exc,
        input_dir=args.input,
        signing_key=args.signing_key,
        options=run.recorded_options(args),
    )
    decision = None
    if written:
        # What the job publishes (termination message, log event) is the record as written,
        # after the publication-hygiene scan: a secret or host path in the message stays out.
        with suppress(OSError, ValidationError):
            decision = Decision.model_validate_json((output / DECISION_FILE).read_bytes())
    if decision is not None and decision.summary.startswith("[withheld"):
        published = (
            f"ERROR: {exc.code}: message withheld by publication hygiene "
            "(see validation_report.json)"
        )
    elif decision is not None:
        published = decision.summary
    ledger = _outside_run_dirs(args, args.ledger)
    if written and ledger is not None and exc.context.get("option") != "--ledger":  # its own error
        try:
            record_run(ledger, output, private_key=try_load_private_key(args.signing_key))
        except RagwarrantError as lexc:
            log.error("ledger_append_failed", code=lexc.code, message=lexc.message)
    run.write_termination_message(_outside_run_dirs(args, args.termination_message_path), published)
    summary_json = _outside_run_dirs(args, args.summary_json)
    if summary_json is not None and decision is not None:
        try:  # ``run --summary-json``: the machine summary of the ERROR record as written
            run.write_summary_json(summary_json, decision)
        except (OSError, RagwarrantError) as sexc:
            log.error("summary_json_failed", path=summary_json.name, error=type(sexc).__name__)
    return written, published


def _outside_run_dirs(args: argparse.Namespace, path: Path | None) -> Path | None:
    """``path``, or None when it lies (or links) inside ``--input`` or ``--output`` (never
    written there) or is not a regular file (a FIFO would block, ``run`` refused it)."""
    from ragwarrant.inputs import inside_run_dirs
    from ragwarrant.sidefiles import special_file

    if path is None or (
        inside_run_dirs(path, args.input, args.output) is None and special_file(path) is None
    ):
        return path
    return None


def _fail(
    log: structlog.typing.FilteringBoundLogger,
    args: argparse.Namespace | None,
    exc: RagwarrantError,
    run_command: bool = False,
) -> int:
    """Report ``exc`` (stderr, log; ``run``: the ERROR record and the stdout line); return its
    code. ``run_command``: the command line names ``run``, even when it did not parse."""
    written = False
    published = f"ERROR: {exc.code}: {exc.message}"
    is_run = getattr(args, "command", None) == "run" or run_command
    output = getattr(args, "output", None)
    if is_run and args is not None and isinstance(output, Path):
        written, published = _record_run_error(log, args, output, exc)
    # On stderr before the log record: on a terminal the person reads this. The progress line
    # (``commands.run.ProgressLine``) is cleared first; a value from the inputs in the message
    # or hint is ``display.visible`` (no escape sequence, no new line); all is redacted.
    clear = "\r\x1b[K" if sys.stderr.isatty() else ""
    hint = f"\n  hint: {visible(exc.hint)}" if exc.hint else ""
    text = _redacted(f"ragwarrant: error: {visible(exc.message)}{hint}", args)
    print(clear + text, file=sys.stderr, flush=True)
    if is_run:
        # ``run``'s one line on stdout, as for a decision (``run ... | tail -1``).
        hint = exc.hint or "see decision.json's error, or the message on stderr"
        line = visible(f"ERROR (exit {int(exc.exit_code)}): {exc.code} — next: {hint}")
        with suppress(ValueError, OSError):  # the reader went away: the code tells
            print(_redacted(line, args), flush=True)
    log.error(
        "run_failed",
        code=exc.code,
        message=published,
        hint=exc.hint,
        exit_code=int(exc.exit_code),
        error_record_written=written,
    )
    return int(exc.exit_code)


def _redacted(text: str, args: argparse.Namespace | None) -> str:
    """``text`` through the publication-hygiene redaction (the scanner loads only on an error)."""
    from ragwarrant.audit.hygiene import redact_text

    return redact_text(text, mounts=_mounts(args))


def _mounts(args: argparse.Namespace | None) -> tuple[str, ...]:
    """``/in``, ``/out`` and the paths the command line names (their mention is not a leak)."""
    paths = [v for v in vars(args).values() if isinstance(v, Path)] if args is not None else []
    return tuple(dict.fromkeys([*DEFAULT_MOUNTS, *(str(p.absolute()) for p in paths)]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
