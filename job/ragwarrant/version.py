"""The package version: a leaf module, so importing it never imports the rest of the package."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
