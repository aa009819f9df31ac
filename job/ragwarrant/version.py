"""The package version: a leaf module, so importing it never imports the rest of the package."""

from __future__ import annotations

__version__ = "0.1.0"
