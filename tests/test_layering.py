"""Imports flow one way: adapters → evidence → stats → gates → decision → audit → pipeline → cli."""

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
    "version": 0,
    "mounts": 0,
    "sidefiles": 0,
    "limits": 0,
    "exit_modes": 0,
    "display": 0,
    "outputs": 1,
    "contract": 2,
    "stats": 2,
    "adapters": 3,
    "evidence": 3,
    "inputs": 3,
    "corroborators": 3,
    "review": 3,
    "gates": 4,
    "decision": 5,
    "selftest": 6,
    "audit": 6,
    "selection": 6,
    "pipeline": 7,
    "k8s": 7,
    "api": 7,
    "scaffold": 7,
    "scaffold_specs": 7,
    "scaffold_files": 7,
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
    "threadpoolctl",  # pins BLAS threads inside the bootstrap's workers (no I/O)
    "math",
    "hashlib",
    "statistics",
    "dataclasses",
    "functools",  # lru_cache of a pure function (the Monte Carlo guard's table, stats.onesided)
    "collections",
    "typing",
    "concurrent",
    "__future__",
    # stats.distributions imports scipy.special on first use, numpy's unused submodules deferred
    "importlib",
    "sys",
    "types",
}


def _layer(path: Path) -> tuple[str, int]:
    rel = path.relative_to(PKG).parts
    name = rel[0].removesuffix(".py")
    return name, LAYERS[name]


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes inside ``if TYPE_CHECKING:`` blocks (annotations only, never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return inside


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at any depth (function-level imports count too)."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module → the ragwarrant modules it imports (``from a import b`` names module a.b if any),
    annotation-only imports included: a reader still has to read both modules together."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):  # ``if TYPE_CHECKING:`` ones too
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragwarrant"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if full in modules else str(node.module))
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in modules}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    """No two modules import each other, directly or through others, even inside one layer."""
    assert _cycles(_import_graph()) == []


def test_cycle_finder_finds_a_cycle():
    """The cycle finder reports a planted three-module cycle (so the test above can fail)."""
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(planted) == [["a", "b", "c"]]
