"""Fan-out on one machine: K concurrent ``ragwarrant run`` processes sharing one ledger.

Usage (from the repository root)::

    .venv/bin/python bench/bench_fanout.py [--k 4] [--dir /tmp/fanout]

K copies of the shipped example (``examples/ragtruth-generators``) are made, each a contract of
its own (contract id ``ragtruth-generators-<k>``, its baseline renamed ``gpt-4-0613-copy<k>`` in
the contract and the evidence, and a ``fanout_copy: <k>`` key in every policy config, so no copy
is a look at another's comparison: looks are linked by the baseline and candidate names or
configs on shared examples, whatever the contract id). First one copy is run alone (the
reference: one run's wall seconds), then all K at once, each a fresh process into its own output
directory, every one with ``--ledger`` on the same file. Printed: the wall seconds of the K
concurrent runs against K x one run (``--before DIR`` runs another checkout's code instead,
``PYTHONPATH=DIR/job``), the pairs of runs whose ``[started_at, finished_at]``
intervals overlap (with a lock held across each run, as before issue 34, none could), the
ledger's entries and whether ``ragwarrant ledger verify`` finds its chain intact, then the
collector (``ragwarrant summary --all`` over the K output directories ``out/0`` ..) and its
time. "CPU s / cores" is the CPU the K runs used (their processes and their forked self-test
children) over the machine's cores: the floor of their wall time on this machine however they
are scheduled.

On a 2-core machine K runs cannot take less than about K / 2 x one run of CPU-bound work; the
figure to read is the ratio against K x one run (1.0 = serialised).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ragtruth-generators"


BASELINE = "gpt-4-0613"


def _rename_baseline(dest: Path, name: str) -> None:
    """Rename the baseline policy in the copy's contract and in both evidence files."""
    contract = dest / "contract.yaml"
    text = contract.read_text().replace(f"policy_id: {BASELINE}\n", f"policy_id: {name}\n")
    contract.write_text(text)
    quality = dest / "evidence" / "quality.csv"
    quality.write_text(quality.read_text().replace(f",{BASELINE},", f",{name},"))
    telemetry = dest / "evidence" / "telemetry.parquet"
    table = pq.read_table(telemetry)
    col = table.column("policy_id")
    renamed = pc.if_else(pc.equal(col, BASELINE), pa.scalar(name), col)
    index = table.schema.get_field_index("policy_id")
    pq.write_table(table.set_column(index, table.schema.field(index), renamed), telemetry)


def _copy(root: Path, k: int) -> Path:
    """Copy the example as contract ``ragtruth-generators-<k>`` with its own baseline name and
    policy configs."""
    dest = root / f"in{k}"
    shutil.copytree(EXAMPLE, dest)
    contract = dest / "contract.yaml"
    text = contract.read_text()
    contract.write_text(text.replace("id: ragtruth-generators\n", f"id: ragtruth-generators-{k}\n"))
    _rename_baseline(dest, f"{BASELINE}-copy{k}")
    for config in (dest / "policies").glob("*.json"):
        doc = orjson.loads(config.read_bytes())
        doc["fanout_copy"] = k
        config.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return dest


def _command(inp: Path, out: Path, ledger: Path) -> list[str]:
    return [sys.executable, "-m", "ragwarrant", "run", "--input", str(inp), "--output", str(out),
            "--ledger", str(ledger)]  # fmt: skip


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_together(
    commands: list[list[str]], env: dict[str, str] | None = None
) -> tuple[float, list[int]]:
    """Start every command at once; (wall seconds until the last exits, exit codes)."""
    started = time.perf_counter()
    procs = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        for c in commands
    ]
    codes = [p.wait(timeout=1800) for p in procs]
    return time.perf_counter() - started, codes


def _overlaps(outs: list[Path]) -> tuple[int, int]:
    """(overlapping pairs of [started_at, finished_at], pairs) over the decided runs."""
    spans = []
    for out in outs:
        d = orjson.loads((out / "decision.json").read_bytes())
        spans.append((d["started_at"], d["finished_at"]))
    pairs = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1 :]]
    return sum(1 for a, b in pairs if a[0] < b[1] and b[0] < a[1]), len(pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=4, help="concurrent runs (contracts)")
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: temp)")
    parser.add_argument(
        "--before", type=Path, default=None, help="time another checkout (PYTHONPATH=DIR/job)"
    )
    args = parser.parse_args(argv)
    if args.before is not None:
        os.environ["PYTHONPATH"] = str(args.before.resolve() / "job")
    root = Path(args.dir or tempfile.mkdtemp(prefix="fanout-"))
    root.mkdir(parents=True, exist_ok=True)
    inputs = [_copy(root, k) for k in range(args.k + 1)]
    one_s, (code,) = _run_together([_command(inputs[0], root / "out-one", root / "one.jsonl")])
    outs = [root / "out" / str(k) for k in range(args.k)]  # a fan-out's output prefix
    ledger = root / "ledger.jsonl"
    cpu_before = _children_cpu_s()
    wall_s, codes = _run_together(
        [_command(i, o, ledger) for i, o in zip(inputs[1:], outs, strict=True)]
    )
    cpu_s = _children_cpu_s() - cpu_before
    overlapping, pairs = _overlaps(outs)
    verify = subprocess.run(
        [sys.executable, "-m", "ragwarrant", "ledger", "verify", str(ledger)],
        capture_output=True,
        check=False,
    )
    entries = len(ledger.read_bytes().splitlines())
    started = time.perf_counter()
    collect = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragwarrant",
            "summary",
            "--all",
            str(root / "out"),
            "--expect",
            str(args.k),
        ],  # fmt: skip
        capture_output=True,
        check=False,
    )
    collect_s = time.perf_counter() - started
    head = "| K | one run s | K x one s | K concurrent s | ratio | CPU s / cores |"
    print(head + " overlapping pairs | entries | chain |")
    print("|---|---|---|---|---|---|---|---|---|")
    chain = "intact" if verify.returncode == 0 else f"BROKEN ({verify.returncode})"
    print(
        f"| {args.k} | {one_s:.2f} | {args.k * one_s:.2f} | {wall_s:.2f} | "
        f"{wall_s / (args.k * one_s):.2f} | {cpu_s / (os.cpu_count() or 1):.2f} | "
        f"{overlapping} of {pairs} | {entries} | {chain} |"
    )
    print(f"exit codes: one run {code}, concurrent {codes}")
    print(f"collector (summary --all over the {args.k} outputs): {collect_s:.2f} s, "
          f"exit {collect.returncode}")  # fmt: skip
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    ok = code == 0 and all(c == 0 for c in codes) and verify.returncode == 0 and entries == args.k
    ok = ok and collect.returncode == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
