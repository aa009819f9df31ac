"""Cold-start cost of the command line, beside ``python -c pass`` measured in the same run.

Usage (from the repository root)::

    .venv/bin/python bench/bench_startup.py [--repeat 5]

Each command runs ``--repeat`` times as a fresh process (the interpreter this script runs under,
``-m ragwarrant``); printed per command are the median wall seconds, the median CPU seconds of
the child (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``) and both as a multiple of
``python -c pass``; ``python -c "import numpy"`` is the second reference (the floor of any run).
On a loaded machine wall time includes waiting for a core; the CPU column and the ratios are
the figures to compare between runs. Targets (issue 13): the shipped example
(``examples/ragtruth-generators``) decided in <= 1.0 s, ``--version`` in <= 0.3 s.

Bytecode: an installed ragwarrant has its modules compiled (pip compiles a wheel's modules at
install, as in the image), so the children read them from a bytecode cache: a temporary
``PYTHONPYCACHEPREFIX`` (``PYTHONDONTWRITEBYTECODE`` unset), filled by one discarded run of each
command. The last row is the example run with that cache off (``PYTHONDONTWRITEBYTECODE=1``, as
in a development shell that sets it): an editable checkout then compiles every ragwarrant module
in every process. To time another checkout, set ``PYTHONPATH=<checkout>/job``.

Then, in this process: the self-test's share of a run (the CPU of one ``run_selftest`` call,
cold and warm, against the CPU of the cold example run above), and the modules the short commands
load, and the example run's (a ``--version`` that imports numpy, scipy, pyarrow, pydantic or
jinja2 is a regression).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ragtruth-generators"
HEAVY = (
    "numpy",
    "scipy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "pyarrow",
    "pydantic",
    "jinja2",
    "structlog",
)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bytecode_env(cache: str | None) -> dict[str, str]:
    """The children's environment: bytecode read from (and written to) ``cache``, or none."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


OUT = "{out}"
"""Stands for a fresh, empty output directory in a command: a second run into the same directory
would reuse the committed decision (``pipeline._reusable_run``) instead of deciding again."""


def time_process(
    argv: Sequence[str], repeat: int, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Median (wall s, CPU s) of ``repeat`` fresh processes running ``argv`` (after one unseen)."""
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat + 1):
            cmd = [a.replace(OUT, f"{tmp}/out{i}") for a in argv]
            cpu0, wall0 = _child_cpu(), time.perf_counter()
            subprocess.run(
                cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            if i:  # the first fills the bytecode cache
                walls.append(time.perf_counter() - wall0)
                cpus.append(_child_cpu() - cpu0)
    return statistics.median(walls), statistics.median(cpus)


def heavy_modules(args: Sequence[str]) -> list[str]:
    """The heavy top-level packages ``ragwarrant ARGS`` has imported when it exits."""
    probe = (
        "import sys\nfrom ragwarrant.cli import main\n"
        f"try:\n    main({list(args)!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(set(sys.modules) & {set(HEAVY)!r}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False
    )
    return proc.stdout.strip().splitlines()[-1:] or ["?"]


def _load(averages: tuple[float, float, float]) -> str:
    return f"{' '.join(f'{x:.1f}' for x in averages)} ({os.cpu_count()} CPUs)"


def selftest_cpu() -> tuple[float, float]:
    """CPU seconds of the first (cold) and a second (warm) ``run_selftest`` call, imports apart."""
    from ragwarrant.selftest import run_selftest

    t0 = time.process_time()
    run_selftest()
    cold = time.process_time() - t0
    t0 = time.process_time()
    run_selftest()
    return cold, time.process_time() - t0


def main(argv: Sequence[str] | None = None) -> int:
    """Print the cold-start table and the self-test's share."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    py = sys.executable
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as cache:
        run = [py, "-m", "ragwarrant", "run", "--input", str(EXAMPLE), "--output", OUT]
        commands = [
            ("reference: python -c pass", [py, "-c", "pass"]),
            ('reference: python -c "import numpy"', [py, "-c", "import numpy"]),
            ("ragwarrant --version", [py, "-m", "ragwarrant", "--version"]),
            ("ragwarrant --help", [py, "-m", "ragwarrant", "--help"]),
            ("ragwarrant run (ragtruth-generators)", run),
        ]
        env = bytecode_env(cache)
        rows = [(name, *time_process(cmd, args.repeat, env)) for name, cmd in commands]
        rows.append(
            ("  the same, no bytecode cache", *time_process(run, args.repeat, bytecode_env(None)))
        )
    _, base_wall, base_cpu = rows[0]
    print(f"python {sys.version.split()[0]}; median of {args.repeat} cold processes each")
    print(f"load average before {_load(load_before)}, after {_load(os.getloadavg())}")
    print()
    print(f"{'command':40s} {'wall s':>7s} {'CPU s':>7s} {'x pass wall':>11s} {'x pass CPU':>10s}")
    for name, wall, cpu in rows:
        print(
            f"{name:40s} {wall:7.3f} {cpu:7.3f} {wall / base_wall:11.1f} "
            f"{cpu / max(base_cpu, 1e-6):10.1f}"
        )
    run_cpu = rows[-2][2]
    cold, warm = selftest_cpu()
    print()
    print(
        f"self-test CPU: cold {cold:.3f} s ({cold / run_cpu:.0%} of the example run's CPU), "
        f"warm {warm:.3f} s"
    )
    run_heavy = heavy_modules(["run", "--input", str(EXAMPLE), "--output", tempfile.mkdtemp()])
    print(f"heavy packages imported by ragwarrant run (example): {run_heavy[0]}")
    for short in (["--version"], ["--help"]):
        print(f"heavy packages imported by ragwarrant {' '.join(short)}: {heavy_modules(short)[0]}")
    print("targets: example run <= 1.0 s, --version <= 0.3 s (wall, quiet machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
