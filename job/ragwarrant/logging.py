"""structlog configuration, once per process.

Logs go to stderr when stdout is not a TTY (stdout then carries only the command's own result,
e.g. ``run``'s one-line decision, so ``ragwarrant run ... | tail -1`` shows it), and to stdout on a
terminal. They are JSON lines unless the log stream is a TTY (console renderer). Every event
passes through ``audit.hygiene.redacting_processor`` before it is rendered: a credential,
personal datum or private path in a logged value (a contract id, a message) is replaced by
``[withheld: <kind>]``, as in the outputs. On the console renderer every string value is
``display.visible`` too: a value from the inputs cannot send an escape sequence to the terminal
or start a line (JSON lines escape control characters themselves).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

from ragwarrant.display import visible
from ragwarrant.mounts import DEFAULT_MOUNTS


def configure_logging(
    json: bool | None = None,
    stream: TextIO | None = None,
    mounts: tuple[str, ...] = DEFAULT_MOUNTS,
) -> None:
    """Configure structlog for the process.

    Args:
        json: JSON lines when True, the console renderer when False; default: JSON unless the
            stream is a TTY.
        stream: where log lines go; default: stdout on a TTY, else stderr.
        mounts: absolute paths whose mention is not withheld (the command line's directories).
    """
    import structlog  # here: `ragwarrant --version` and `--help` log nothing and never load it

    redactor: Any = None

    def redact(logger: Any, method: str, event: Any) -> Any:
        """``audit.hygiene.redacting_processor``, imported at the first event: ``--help`` and
        ``--version`` log nothing, so they never load the scanner and its imports."""
        nonlocal redactor
        if redactor is None:
            from ragwarrant.audit.hygiene import redacting_processor

            redactor = redacting_processor(mounts)
        return redactor(logger, method, event)

    def visible_values(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        """Every string value of an event through ``display.visible`` (console lines only)."""
        return {k: visible(v) if isinstance(v, str) else v for k, v in event.items()}

    if stream is None:
        stream = sys.stdout if sys.stdout.isatty() else sys.stderr
    use_json = (not stream.isatty()) if json is None else json
    renderer = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact,
            *(() if use_json else (visible_values,)),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
