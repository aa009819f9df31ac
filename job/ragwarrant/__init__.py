"""ragwarrant: decides whether a candidate RAG policy may replace the baseline.

The Python API (``ragwarrant.decide``, ``ragwarrant.load_contract``) lives in ``ragwarrant.api``;
it is imported on first use so that ``import ragwarrant`` stays light.
"""

from __future__ import annotations

from typing import Any

from ragwarrant.version import __version__

__all__ = ["__version__", "decide", "load_contract"]


def __getattr__(name: str) -> Any:
    """Import ``decide`` and ``load_contract`` from ``ragwarrant.api`` on first use."""
    if name in ("decide", "load_contract"):
        from ragwarrant import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragwarrant' has no attribute {name!r}")
