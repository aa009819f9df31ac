"""structlog configuration: JSON lines on stdout (console rendering on a TTY), configured once."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging"]


def configure_logging(json: bool | None = None) -> None:
    """Configure structlog for the process.

    Args:
        json: JSON lines when True, the console renderer when False; default: JSON unless stdout
            is a TTY.
    """
    use_json = (not sys.stdout.isatty()) if json is None else json
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
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout),
        cache_logger_on_first_use=False,
    )
