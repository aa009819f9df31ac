"""Functions in job/ragwarrant stay small: radon complexity ≤ 15 and ≤ 80 lines of code; modules
at most 600 lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location(
    "check_complexity", REPO / "scripts" / "check_complexity.py"
)
assert _spec is not None and _spec.loader is not None
check_complexity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_complexity)


def test_no_function_over_the_limits():
    """No function in the package exceeds complexity 15 or 80 code lines."""
    files = sorted((REPO / "job" / "ragwarrant").rglob("*.py"))
    assert check_complexity.findings(files, 15, 80) == []


def test_checker_reports_a_branchy_function(tmp_path: Path):
    """A 16-branch function and an 81-line one (the def line counts) are both reported."""
    branchy = "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(16))
    long = "def g():\n" + "".join(f"    a{i} = {i}\n" for i in range(80))
    path = tmp_path / "planted.py"
    path.write_text(branchy + "\n\n" + long)
    found = check_complexity.findings([path], 15, 80)
    assert len(found) == 2
    assert "f: cyclomatic complexity 17 > 15" in found[0]
    assert "g: 81 lines of code > 80" in found[1]


def test_a_class_is_measured_by_its_methods(tmp_path: Path):
    """A class of short methods passes however many it has; an 81-line method in it is named."""
    short = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(60))
    long = "    def big(self):\n" + "".join(f"        a{i} = {i}\n" for i in range(80))
    path = tmp_path / "planted.py"
    path.write_text("class C:\n" + short + long)
    found = check_complexity.findings([path], 15, 80)
    assert len(found) == 1
    assert "big: 81 lines of code > 80" in found[0]


def test_a_module_over_600_lines_is_named(tmp_path: Path):
    """Short functions do not excuse a long module: 601 lines are reported, 600 are not."""
    path = tmp_path / "planted.py"
    path.write_text("x = 0\n" * 600)
    assert check_complexity.findings([path], 15, 80) == []
    path.write_text("x = 0\n" * 601)
    assert check_complexity.findings([path], 15, 80) == [f"{path}: 601 lines > 600"]


def test_a_nested_function_is_measured_too(tmp_path: Path):
    """Radon counts a closure apart from the function around it: a branchy one is still named."""
    inner = "".join(f"        if y == {i}:\n            return {i}\n" for i in range(16))
    path = tmp_path / "planted.py"
    path.write_text("def f(x):\n    def g(y):\n" + inner + "    return g(x)\n")
    found = check_complexity.findings([path], 15, 80)
    assert len(found) == 1
    assert "g: cyclomatic complexity 17 > 15" in found[0]
