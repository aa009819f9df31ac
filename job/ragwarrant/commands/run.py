"""``ragwarrant run``: the promotion job."""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

__all__ = ["register", "write_termination_message"]

DEFAULT_TERMINATION_LOG = Path("/dev/termination-log")


#: The path options of ``run``: (flag, environment variable that sets the default, default when
#: the variable is unset (None: no such path), help).
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
)


def _env_path(name: str, fallback: str | None) -> Path | None:
    """The path in environment variable ``name`` when set, else ``fallback`` (None: no path)."""
    value = os.environ.get(name, fallback)
    return Path(value) if value is not None else None


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``run`` subcommand."""
    p = subparsers.add_parser("run", help="decide whether a candidate may replace the baseline")
    for flag, env, fallback, help_text in _PATH_OPTIONS:
        p.add_argument(flag, type=Path, default=_env_path(env, fallback), help=help_text)
    p.set_defaults(handler=handle)


def write_termination_message(path: Path | None, line: str) -> None:
    """Write ``line`` to the termination-message path, if one is set or /dev/termination-log exists.

    Kubernetes shows the file's content (at most 4096 bytes) in the pod status.
    """
    target = path
    if (
        target is None
        and DEFAULT_TERMINATION_LOG.exists()
        and os.access(DEFAULT_TERMINATION_LOG, os.W_OK)
    ):
        target = DEFAULT_TERMINATION_LOG
    if target is None:
        return
    with contextlib.suppress(OSError):
        target.write_text(line[:4000] + "\n", encoding="utf-8")


def handle(args: argparse.Namespace) -> int:
    """Run the job and return its exit code."""
    from ragwarrant.pipeline import run_job  # the engine: imported only when a run is asked for

    outcome = run_job(args.input, args.output, ledger=args.ledger, signing_key=args.signing_key)
    write_termination_message(args.termination_message_path, outcome.summary)
    return outcome.exit_code
