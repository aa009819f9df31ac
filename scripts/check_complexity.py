"""Fail when a function in job/ragwarrant is too complex or too long.

Limits (issue "One home per decision"): cyclomatic complexity as radon measures it (boolean
operators count) at most 15, and at most 80 lines of code per function or method (radon's raw
metrics: blank lines, comments and docstrings excluded). A class is measured by its methods, not as
one block: its size is bounded by its module's, at most 600 lines (``wc -l``).

Usage: python scripts/check_complexity.py [--max-cc 15] [--max-sloc 80] [--max-lines 600] [PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parents[1]


def _code_line_numbers(source: str) -> set[int]:
    """Line numbers that hold code: any token but comments and layout, docstrings excluded."""
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.difference_update(range(body[0].lineno, (body[0].end_lineno or 0) + 1))
    return lines


def _shown(path: Path) -> str:
    """The path relative to the repository when it lies inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def findings(paths: list[Path], max_cc: int, max_sloc: int, max_lines: int = 600) -> list[str]:
    """One line per module over ``max_lines`` lines and per function or method over either limit
    (a class's own block is not a function)."""
    out = []
    for path in paths:
        source = path.read_text()
        lines = source.count("\n")
        if lines > max_lines:
            out.append(f"{_shown(path)}: {lines} lines > {max_lines}")
        code = _code_line_numbers(source)
        blocks = list(cc_visit(source))
        for b in blocks:
            if hasattr(b, "methods"):  # a class: radon lists its methods as blocks of their own
                continue
            blocks.extend(b.closures)  # radon counts a nested function apart from its outer one
            where = f"{_shown(path)}:{b.lineno} {b.name}"
            if b.complexity > max_cc:
                out.append(f"{where}: cyclomatic complexity {b.complexity} > {max_cc}")
            sloc = sum(1 for n in range(b.lineno, b.endline + 1) if n in code)
            if sloc > max_sloc:
                out.append(f"{where}: {sloc} lines of code > {max_sloc}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-cc", type=int, default=15)
    parser.add_argument("--max-sloc", type=int, default=80)
    parser.add_argument("--max-lines", type=int, default=600)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args()
    roots = args.paths or [ROOT / "job" / "ragwarrant"]
    files = sorted(p for r in roots for p in ([r] if r.is_file() else r.rglob("*.py")))
    found = findings([p.resolve() for p in files], args.max_cc, args.max_sloc, args.max_lines)
    for line in found:
        print(line)
    print(f"{len(found)} finding(s) in {len(files)} files", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
