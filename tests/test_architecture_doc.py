"""docs/architecture.md names only files and names that exist, so its recipes can be followed.

Every backticked path (``gates/hard.py``, ``tests/gates/test_gates.py``) must be a file of the
repository, and every backticked dotted name under a module the doc names
(``audit/verify.CHECKS``, ``stats.onesided.mc_decision``, ``selftest._hard()``) must be an
attribute of that module.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "job" / "ragwarrant"
DOC = REPO / "docs" / "architecture.md"
_TICKED = re.compile(r"`([^`\s]+)`")
_PLACEHOLDER = re.compile(r"<[^>]+>")
_FILE = re.compile(r"\.(py|md|json|j2|yaml|yml|csv|toml|sh)$|/$")


def _ticked() -> list[str]:
    return sorted(set(_TICKED.findall(DOC.read_text(encoding="utf-8"))))


def _file_of(token: str) -> Path | None:
    """The repository file a ``*.py`` (or other suffixed) token names, or None if not a path."""
    if "/" not in token or not _FILE.search(token) or _PLACEHOLDER.search(token):
        return None
    if token.startswith(("/", "http")):
        return None
    path = token
    for root in (REPO, PACKAGE):
        if (root / path).exists():
            return root / path
    return REPO / path


def _module_and_name(token: str) -> tuple[str, str] | None:
    """``audit/verify.CHECKS`` or ``stats.onesided.mc_decision`` -> (module, attribute)."""
    token = token.removesuffix("()").split("(")[0]
    if "/" in token and ".py" not in token:
        module, _, name = token.replace("/", ".").rpartition(".")
    elif "/" not in token and "." in token and not _FILE.search(token):
        module, _, name = token.rpartition(".")
    else:
        return None
    if not name.isidentifier() or not all(p.isidentifier() for p in module.split(".")):
        return None
    if (
        not (PACKAGE / (module.replace(".", "/") + ".py")).exists()
        and not (PACKAGE / module.replace(".", "/") / "__init__.py").exists()
    ):
        return None
    return module, name


@pytest.mark.parametrize("token", [t for t in _ticked() if _file_of(t) is not None])
def test_named_file_exists(token: str) -> None:
    path = _file_of(token)
    assert path is not None and path.exists(), f"docs/architecture.md names `{token}`: no such file"


@pytest.mark.parametrize("token", [t for t in _ticked() if _module_and_name(t) is not None])
def test_named_attribute_exists(token: str) -> None:
    pair = _module_and_name(token)
    assert pair is not None
    module, name = pair
    assert hasattr(importlib.import_module(f"ragwarrant.{module}"), name), (
        f"docs/architecture.md names `{token}`: ragwarrant.{module} has no {name}"
    )


def test_the_doc_names_files_and_attributes() -> None:
    """The parser finds the recipes' references (a parser that finds none would pass vacuously)."""
    tokens = _ticked()
    assert sum(_file_of(t) is not None for t in tokens) >= 30
    assert sum(_module_and_name(t) is not None for t in tokens) >= 10
