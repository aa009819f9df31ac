"""deploy/docker/slim.txt removes from the image's venv only what the job never loads.

The job runs on the shipped example in a subprocess of the project's venv, with the modules it
imports lazily (scipy.stats, scipy.special, pyarrow's readers) imported too; every Python file
and shared library it loaded must survive the globs of slim.txt.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from .conftest import EXAMPLE, ROOT

SLIM = ROOT / "deploy" / "docker" / "slim.txt"
SITE = Path(sysconfig.get_paths()["purelib"])
_PROBE = """
import json, sys
from ragwarrant.cli import main
try:
    main(["run", "--input", sys.argv[1], "--output", sys.argv[2]])
except SystemExit:
    pass
import scipy.stats, scipy.special, pyarrow.csv, pyarrow.json, pyarrow.parquet, pyarrow.dataset
scipy.stats.rankdata([3, 1, 2])
files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
with open("/proc/self/maps") as maps:
    files |= {line.split()[-1] for line in maps if "/" in line}
print(json.dumps(sorted(f for f in files if f)))
"""


def _patterns() -> list[str]:
    lines = [x.strip() for x in SLIM.read_text().splitlines()]
    return [x for x in lines if x and not x.startswith("#")]


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A pathlib glob (``**`` any directories, ``*`` within one name) as an anchored regex."""
    parts = []
    for part in pattern.split("/"):
        if part == "**":
            parts.append("(?:[^/]+/)*")
        else:
            parts.append(fnmatch.translate(part).removeprefix("(?s:").removesuffix(")\\Z") + "/")
    return re.compile("".join(parts).removesuffix("/"))


def _removed(relative: Path, patterns: list[str]) -> str | None:
    """The pattern of slim.txt that removes ``relative`` (a path under site-packages): one that
    matches the path itself or one of its directories."""
    for pattern in patterns:
        regex = _glob_regex(pattern)
        for depth in range(len(relative.parts), 0, -1):
            if regex.fullmatch("/".join(relative.parts[:depth])):
                return pattern
    return None


def _loaded_files(tmp_path: Path) -> list[Path]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(EXAMPLE), str(tmp_path / "out")],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    return [Path(f) for f in json.loads(done.stdout.splitlines()[-1])]


def test_the_job_loads_nothing_slim_removes(tmp_path: Path) -> None:
    """No module or shared library the job loads matches a glob of slim.txt."""
    patterns = _patterns()
    loaded = [f.relative_to(SITE) for f in _loaded_files(tmp_path) if f.is_relative_to(SITE)]
    assert any(f.parts[0] == "pyarrow" for f in loaded)  # the probe did load the libraries
    assert {str(f): _removed(f, patterns) for f in loaded if _removed(f, patterns)} == {}


def test_slim_globs_match_something_and_bite() -> None:
    """Every glob removes a file of the installed packages (no stale line); a glob covering a
    loaded library would be caught."""
    patterns = _patterns()
    for pattern in patterns:
        assert next(SITE.glob(pattern), None) is not None, pattern
    assert _removed(Path("pyarrow/libarrow.so.2600"), ["pyarrow/libarrow*"]) is not None
    assert _removed(Path("scipy/stats/_stats_py.py"), patterns) is None
    assert _removed(Path("scipy/io/matlab/_mio.py"), patterns) == "scipy/io"
