"""``ragwarrant run``: the promotion job.

stdout receives one line at the end, the decision (``audit.summary.summary_line``: the class,
each tested candidate's class and the next step, at most ``STDOUT_WIDTH`` characters, values from
the inputs made visible; reasons are in report.md and ``ragwarrant summary``); logs go to
stderr off a TTY (``logging.configure_logging``). On a terminal, progress is a rewritten line on
stderr. ``--summary-json`` writes the machine summary; ``--exit-mode status`` exits 0 for every
decision (``exit_modes``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ragwarrant.commands._help import RUN_EXIT_CODES, CommandHelp, add_command
from ragwarrant.display import visible
from ragwarrant.errors import UsageError
from ragwarrant.exit_codes import ExitCode
from ragwarrant.exit_modes import ExitMode, process_exit_code

if TYPE_CHECKING:
    from ragwarrant.outputs import Decision

# The engine, the record models and the summary are imported by the functions that use them, so
# that ``ragwarrant --help`` and the other commands do not load numpy, pyarrow or pydantic.

DEFAULT_TERMINATION_LOG = Path("/dev/termination-log")
STDOUT_WIDTH = 200
"""The longest decision line ``run`` prints (a longer one is cut with an explicit marker)."""
BLAS_THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"
"""Read by the OpenBLAS builds in the numpy and scipy wheels when they load (once, at import)."""


#: The path options of ``run``: (flag, environment variable that sets the default, default when
#: the variable is unset or empty (None: no such path), help).
_PATH_OPTIONS: tuple[tuple[str, str, str | None, str], ...] = (
    (
        "--input",
        "RAGWARRANT_INPUT",
        "/in",
        "input directory holding contract.yaml|json and evidence (default /in)",
    ),
    ("--output", "RAGWARRANT_OUTPUT", "/out", "output directory (default /out)"),
    (
        "--ledger",
        "RAGWARRANT_LEDGER",
        None,
        "evidence ledger (JSON Lines, append-only, hash-chained) on its own volume; "
        "the run appends one entry",
    ),
    (
        "--signing-key",
        "RAGWARRANT_SIGNING_KEY",
        None,
        "Ed25519 private key (PEM PKCS#8), e.g. a mounted secret; signs "
        "decision.intoto.json as a DSSE envelope",
    ),
    (
        "--termination-message-path",
        "RAGWARRANT_TERMINATION_MESSAGE_PATH",
        None,
        "file that receives a one-line decision summary (Kubernetes reads "
        "/dev/termination-log); default: /dev/termination-log when writable",
    ),
    (
        "--summary-json",
        "RAGWARRANT_SUMMARY_JSON",
        None,
        "file receiving the machine summary {run_class, exit_code, next_step, candidates} "
        "(outside the output directory's manifest; written for ERROR records too)",
    ),
)


RUN_HELP = CommandHelp(
    purpose="decide whether a candidate may replace the baseline",
    reads="--input DIR (never written to): contract.yaml|json, the policy configs and evidence "
    "files it names; --ledger and --signing-key when given",
    writes="--output DIR (outside --input; inside it: exit 64 output-inside-input, nothing "
    "written): decision.json, validation_report.json, report.md, report.html, junit.xml, "
    "decision.intoto.json, manifest.json (last); one decision line on stdout (on an error: "
    "ERROR (exit N): code — next: hint), logs on stderr (on a terminal: logs on stdout, "
    "progress on stderr); --ledger, "
    "--summary-json and --termination-message-path when given",
    codes=RUN_EXIT_CODES,
    code_note=f"--exit-mode status: every decision exits {int(ExitCode.PROMOTE)}; error codes are "
    "kept. On an error, decision.json (class ERROR) is still written when --output is writable.",
    examples=(
        "ragwarrant run --input examples/ragtruth-generators --output out/demo",
        "ragwarrant run --input in --output out --ledger ledger/ledger.jsonl | tail -1",
    ),
)
"""``ragwarrant run --help`` (every exit code but ``verify``'s mismatch)."""


_VARIABLE_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_variables(text: str, environ: MutableMapping[str, str] = os.environ) -> Path:
    """Return ``text`` as a path, each ``${NAME}`` replaced by environment variable ``NAME``.

    Lets a batch template name the platform's own execution id and task index in ``--input`` and
    ``--output`` (``/out/${AWS_BATCH_JOB_ID}``, ``/in/${CLOUD_RUN_TASK_INDEX}``) without a shell:
    AWS Batch cannot replace the image's entrypoint, and no wrapper can then write to bare
    ``/out``. Only ``${NAME}`` is expanded; any other ``$`` stays as written.

    Raises:
        UsageError: ``run-variable-unset`` (exit 64) when ``NAME`` is unset or empty, as a
            shell's ``${NAME:?}`` fails, before anything is read or written; ``path-empty``
            (exit 64) when ``text`` is empty or blank.
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        found = environ.get(name, "")
        if not found:
            raise UsageError(
                "run-variable-unset",
                f"--input or --output names ${{{name}}}, which is unset or empty",
                hint=f"set {name} (the platform sets it in its own jobs), or give the path "
                "without it",
            )
        return found

    if not text.strip():  # Path("") is ".": the current directory, never what was meant
        raise UsageError(
            "path-empty",
            "--input or --output is an empty string (it would mean the current directory)",
            hint="give the directory (or file) by name; '.' for the current directory",
        )
    return Path(_VARIABLE_RE.sub(value, text))


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``run`` subcommand."""
    p = add_command(subparsers, "run", RUN_HELP, handle)
    for flag, env, fallback, help_text in _PATH_OPTIONS:
        directory = flag in ("--input", "--output")  # ${NAME}: the platform's execution id
        default = os.environ.get(env) or fallback  # set but empty: unset, as a shell's ${VAR:-…}
        p.add_argument(
            flag,
            type=expand_variables if directory else Path,
            default=Path(default) if default is not None else None,
            metavar="DIR" if directory else "FILE",
            help=help_text + (" (${NAME} is read from the environment)" if directory else ""),
        )
    p.add_argument(
        "--exit-mode",
        type=ExitMode,
        choices=list(ExitMode),
        default=os.environ.get("RAGWARRANT_EXIT_MODE", ExitMode.CLASS.value),
        help="class (default): exit with the decision's code (0/10/11/12); status: exit 0 for "
        "every decision, keep error codes (env RAGWARRANT_EXIT_MODE)",
    )


def recorded_options(args: argparse.Namespace) -> list[str]:
    """The run's options besides ``--input`` and ``--output``, as an ERROR record keeps them.

    A path option is recorded by its flag alone (its value may be a secret's mount or a host
    path, never published); ``--exit-mode`` with its value. Values set through the environment
    count as given.
    """
    given = [
        flag
        for flag, _, _, _ in _PATH_OPTIONS
        if flag not in ("--input", "--output")
        and getattr(args, flag.removeprefix("--").replace("-", "_"), None) is not None
    ]
    mode = getattr(args, "exit_mode", None)
    return given + ([f"--exit-mode={ExitMode(mode).value}"] if mode is not None else [])


def write_termination_message(path: Path | None, line: str) -> None:
    """Write ``line`` to the termination-message path, if one is set or /dev/termination-log exists.

    Kubernetes shows the file's content (at most 4096 bytes) in the pod status. Written with
    ``sidefiles.write_regular``: only into a regular file, never blocking on a FIFO; a file
    that cannot be written is skipped (the decision is already committed).
    """
    from ragwarrant.sidefiles import write_regular

    if path is None and os.access(DEFAULT_TERMINATION_LOG, os.W_OK):  # False when absent
        path = DEFAULT_TERMINATION_LOG
    if path is not None:
        with contextlib.suppress(OSError):
            write_regular(path, (visible(line)[:4000] + "\n").encode("utf-8"))


def write_summary_json(path: Path | None, decision: Decision) -> None:
    """Write ``audit.summary.summary_document(decision)`` to ``path`` atomically, if set.

    Raises:
        OutputError: the file cannot be written (exit 73).
    """
    if path is not None:
        import orjson

        from ragwarrant.audit.summary import summary_document
        from ragwarrant.audit.writer import write_atomic

        document = summary_document(decision)
        write_atomic(path, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


class ProgressLine:
    """Progress events as one rewritten line on a terminal, each also logged (structlog)."""

    def __init__(self, stream: TextIO) -> None:
        """Write to ``stream`` (a TTY)."""
        import structlog  # here: --help and --version never need it

        self._stream = stream
        self._log = structlog.get_logger("ragwarrant")

    def __call__(self, event: str, **fields: object) -> None:
        """Log the event; show a source read or a candidate evaluated as the current line."""
        if event == "source_read":
            text = f"read {fields['source_id']}: {fields['rows']} rows in {fields['elapsed_s']} s"
        elif event == "candidate_evaluated":
            text = (
                f"[{fields['index']}/{fields['of']}] {fields['policy_id']}: "
                f"{fields['gates']} gates in {fields['elapsed_s']} s"
            )
        else:
            self._stream.write("\r\x1b[K")
            self._log.info(event, **fields)
            return
        self._stream.write(f"\r\x1b[K{text}")
        self._stream.flush()


def pin_blas_threads(environ: MutableMapping[str, str] = os.environ) -> bool:
    """One BLAS thread for this process, unless the operator set ``OPENBLAS_NUM_THREADS``.

    The job's parallelism is its own: the bootstrap's worker threads, each with BLAS pinned to
    one thread (``stats.bootstrap``). A BLAS pool of one thread per core on top of them only
    spins: each of the two OpenBLAS libraries (numpy's and scipy's) starts its pool when it
    loads, and the run's few small matrix products outside the workers wake it; on the shipped
    example that was about 0.2 CPU-s of a 1.2 CPU-s cold run (issue 13, docs/benchmarks.md),
    and the decision is the same bit for bit. OpenBLAS reads the variable once, when it loads,
    so it is set only while numpy is not yet imported (in-process callers that already loaded
    it keep their pool, and their environment is left alone).

    Args:
        environ: the process environment (a mapping in tests).

    Returns:
        True when the variable was set here.
    """
    if BLAS_THREADS_VARIABLE in environ or "numpy" in sys.modules:
        return False
    environ[BLAS_THREADS_VARIABLE] = "1"
    return True


def handle(args: argparse.Namespace) -> int:
    """Run the job; print its one-line decision; return the exit code under ``--exit-mode``.

    Raises:
        UsageError: ``--summary-json`` or ``--termination-message-path`` inside the input (never
            written to) or the output directory (its files must all be in the manifest), also
            through a symlink: ``path-inside-run-directory`` (exit 64); ``path-not-regular-file``
            (exit 64) for an existing FIFO, device or directory.
    """
    pin_blas_threads()  # before the engine imports numpy
    from ragwarrant.audit.summary import summary_line
    from ragwarrant.inputs import refuse_inside_run_dirs
    from ragwarrant.pipeline import run_job

    for flag, path in (
        ("--summary-json", args.summary_json),
        ("--termination-message-path", args.termination_message_path),
    ):
        if path is not None:
            refuse_inside_run_dirs(
                path,
                args.input,
                args.output,
                code="path-inside-run-directory",
                option=flag,
                hint=f"write {flag} outside --input and --output",
            )
    progress = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    outcome = run_job(
        args.input,
        args.output,
        on_stage=progress,
        ledger=args.ledger,
        signing_key=args.signing_key,
    )
    write_termination_message(args.termination_message_path, outcome.summary)
    write_summary_json(args.summary_json, outcome.decision)
    # Committed before it is printed: a closed stdout (``| head -0``) is tolerated by ``cli``.
    print(summary_line(outcome.decision, STDOUT_WIDTH, reasons=False), flush=True)
    return process_exit_code(outcome.exit_code, args.exit_mode)
