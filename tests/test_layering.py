"""Imports flow one way: adapters → evidence → stats → gates → decision → audit → job → cli."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PKG = REPO / "job" / "ragwarrant"

# Layer of each top-level module or subpackage; a module may import only from layers <= its own.
LAYERS = {
    "exit_codes": 0,
    "errors": 0,
    "evidence_class": 0,
    "digests": 0,
    "outputs": 1,
    "contract": 2,
    "stats": 2,
    "adapters": 3,
    "evidence": 3,
    "corroborators": 3,
    "gates": 4,
    "decision": 5,
    "selftest": 6,
    "audit": 6,
    "job": 7,
    "deploy": 7,
    "deploy_render": 7,
    "deploy_submit": 7,
    "commands": 8,
    "logging": 8,
    "cli": 9,
    "__main__": 10,
    "__init__": 0,
}
# stats is pure: numpy/scipy only.
STATS_ALLOWED = {
    "numpy",
    "scipy",
    "math",
    "hashlib",
    "statistics",
    "dataclasses",
    "collections",
    "typing",
    "concurrent",
    "__future__",
}


def _layer(path: Path) -> tuple[str, int]:
    rel = path.relative_to(PKG).parts
    name = rel[0].removesuffix(".py")
    return name, LAYERS[name]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_import_direction():
    """No module imports from a later layer (e.g. stats from gates, gates from audit)."""
    violations = []
    for path in PKG.rglob("*.py"):
        name, layer = _layer(path)
        for mod in _imports(path):
            if not mod.startswith("ragwarrant."):
                continue
            target = mod.split(".")[1]
            if target in LAYERS and LAYERS[target] > layer:
                violations.append(f"{path.relative_to(PKG)} imports {mod}")
    assert violations == []


def test_stats_is_pure():
    """stats/ imports only numpy, scipy and stdlib basics (no Arrow, pydantic, logging, I/O)."""
    for path in (PKG / "stats").rglob("*.py"):
        for mod in _imports(path):
            root = mod.split(".")[0]
            assert root in STATS_ALLOWED or mod.startswith("ragwarrant.stats"), (
                f"{path.name} imports {mod}"
            )
