"""ragwarrant: decides whether a candidate RAG policy may replace the baseline."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
