"""Cold-start cost of the command line, beside ``python -c pass`` measured in the same run.

Usage (from the repository root)::

    .venv/bin/python bench/bench_startup.py [--repeat 5] [--before ../other-checkout]

Each command runs ``--repeat`` times as a fresh process (the interpreter this script runs under,
``-m ragwarrant``); printed per command are the median wall seconds, the median CPU seconds of
the child (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``) and both as a multiple of
``python -c pass``; ``python -c "import numpy"`` is the second reference (the floor of any run).
The example run's "main" column is the CPU of the ragwarrant process alone (it writes its
``RUSAGE_SELF`` at exit, ``MAIN_CPU_PROBE``), without the forked self-test child that the CPU
column includes: on a quiet 2-core machine its wall time is about that figure, the child running
on the other core. On a loaded machine wall time includes waiting for a core; the CPU columns and
the ratios are the figures to compare between runs. Targets (issue 13): the shipped example
(``examples/ragtruth-generators``) decided in <= 1.0 s, ``--version`` in <= 0.3 s.

Every timed ``run`` writes a fresh output directory: a second run into the same directory would
reuse the committed decision (``audit.rerun.reusable_run``) instead of deciding again.

Bytecode: an installed ragwarrant has its modules compiled (pip compiles a wheel's modules at
install, as in the image), so the children read them from a bytecode cache: a temporary
``PYTHONPYCACHEPREFIX`` (``PYTHONDONTWRITEBYTECODE`` unset), filled by one discarded run of each
command. The row "no bytecode cache" is the example run with that cache off
(``PYTHONDONTWRITEBYTECODE=1``, as in a development shell that sets it): an editable checkout
then compiles every ragwarrant module in every process.

``--before DIR`` times a second checkout (``PYTHONPATH=DIR/job``) in the same run, each of its
processes right after this checkout's, so load drifts alike on both columns.

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
OUT = "{out}"
"""Stands for a fresh, empty output directory in a command line."""
MAIN_CPU = "{main_cpu}"
"""Stands for a fresh file that receives the CPU seconds of the timed process itself."""
MAIN_CPU_PROBE = (
    "import atexit, resource, runpy, sys\n"
    "def _report(path=sys.argv[1]):\n"
    "    usage = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    with open(path, 'w') as f:\n"
    "        f.write(repr(usage.ru_utime + usage.ru_stime))\n"
    "atexit.register(_report)\n"
    "sys.argv = ['ragwarrant', *sys.argv[2:]]\n"
    "runpy.run_module('ragwarrant', run_name='__main__', alter_sys=True)\n"
)
"""``python -m ragwarrant ARGS`` that writes, at exit, its own CPU (without its children's)."""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env(cache: str | None, checkout: Path | None = None) -> dict[str, str]:
    """The children's environment: bytecode in ``cache`` (None: none), ``checkout``'s code."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout.resolve() / "job")
    return env


def _once(argv: Sequence[str], env: dict[str, str], out: str) -> tuple[float, float, float]:
    """(wall s, CPU s, main-process CPU s) of one fresh process running ``argv``.

    CPU counts the process and every child it waited for (the forked self-test); the third
    figure is the process alone when ``argv`` holds ``MAIN_CPU`` (``MAIN_CPU_PROBE``), else CPU.
    """
    main_cpu_file = f"{out}.main-cpu"
    cmd = [a.replace(OUT, out).replace(MAIN_CPU, main_cpu_file) for a in argv]
    cpu0, wall0 = _child_cpu(), time.perf_counter()
    subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, cpu = time.perf_counter() - wall0, _child_cpu() - cpu0
    main = float(Path(main_cpu_file).read_text()) if MAIN_CPU in argv else cpu
    return wall, cpu, main


def time_processes(
    jobs: Sequence[tuple[Sequence[str], dict[str, str]]], repeat: int
) -> list[tuple[float, float, float]]:
    """Median (wall s, CPU s, main-process CPU s) of ``repeat`` fresh processes per job.

    Jobs are (argv, env), interleaved; round 0 is discarded (it fills the bytecode cache); each
    round runs every job once.
    """
    samples: list[list[tuple[float, float, float]]] = [[] for _ in jobs]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeat + 1):
            for j, (argv, env) in enumerate(jobs):
                sample = _once(argv, env, f"{tmp}/out-{r}-{j}")
                if r:
                    samples[j].append(sample)
    return [tuple(statistics.median(x) for x in zip(*s, strict=True)) for s in samples]  # type: ignore[misc]


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


def selftest_cpu() -> tuple[float, float]:
    """CPU seconds of the first (cold) and a second (warm) ``run_selftest`` call, imports apart."""
    from ragwarrant.selftest import run_selftest

    t0 = time.process_time()
    run_selftest()
    cold = time.process_time() - t0
    t0 = time.process_time()
    run_selftest()
    return cold, time.process_time() - t0


def _load(averages: tuple[float, float, float]) -> str:
    return f"{' '.join(f'{x:.1f}' for x in averages)} ({os.cpu_count()} CPUs)"


def _commands() -> list[tuple[str, list[str], bool]]:
    """(name, argv, cached bytecode) of each timed command, references first."""
    py = sys.executable
    run = [py, "-c", MAIN_CPU_PROBE, MAIN_CPU, "run", "--input", str(EXAMPLE), "--output", OUT]
    return [
        ("reference: python -c pass", [py, "-c", "pass"], True),
        ('reference: python -c "import numpy"', [py, "-c", "import numpy"], True),
        ("ragwarrant --version", [py, "-m", "ragwarrant", "--version"], True),
        ("ragwarrant --help", [py, "-m", "ragwarrant", "--help"], True),
        ("ragwarrant run (ragtruth-generators)", run, True),
        ("  the same, no bytecode cache", run, False),
    ]


Row = tuple[float, float, float]


def _print_table(names: list[str], rows: list[Row], before: list[Row] | None) -> None:
    """One line per command; "main" is the process's own CPU (its forked child's apart)."""
    base_wall, base_cpu, _ = rows[0]
    head = (
        f"{'command':40s} {'wall s':>7s} {'CPU s':>7s} {'main s':>7s} {'x pass wall':>11s} "
        f"{'x pass CPU':>10s}"
    )
    print(head + (f" {'before CPU s':>12s} {'main s':>7s} {'x pass CPU':>10s}" if before else ""))
    for i, (name, (wall, cpu, main)) in enumerate(zip(names, rows, strict=True)):
        line = (
            f"{name:40s} {wall:7.3f} {cpu:7.3f} {main:7.3f} {wall / base_wall:11.1f} "
            f"{cpu / max(base_cpu, 1e-6):10.1f}"
        )
        if before:
            b_cpu, b_main = before[i][1], before[i][2]
            line += f" {b_cpu:12.3f} {b_main:7.3f} {b_cpu / max(before[0][1], 1e-6):10.1f}"
        print(line)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the cold-start table and the self-test's share."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout, timed in the same run")
    args = parser.parse_args(argv)
    commands = _commands()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cache_before:
        jobs = []
        for _, cmd, cached in commands:
            jobs.append((cmd, child_env(cache if cached else None)))
            if args.before is not None:
                jobs.append((cmd, child_env(cache_before if cached else None, args.before)))
        timed = time_processes(jobs, args.repeat)
    step = 1 if args.before is None else 2
    rows, before = timed[::step], (timed[1::2] if args.before is not None else None)
    print(f"python {sys.version.split()[0]}; median of {args.repeat} cold processes each")
    print(f"load average before {_load(load_before)}, after {_load(os.getloadavg())}")
    if args.before is not None:
        print(f"before: {args.before.resolve()} (its processes interleaved with this checkout's)")
    print()
    _print_table([name for name, _, _ in commands], rows, before)
    run_cpu = rows[-2][1]
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
