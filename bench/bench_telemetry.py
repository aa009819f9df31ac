"""Benchmark: reduce a generated telemetry Parquet (one row per LLM span) to per-example metrics.

Generates two files with the same examples and traces (20,000 examples × 2 policies, one trace
each) and 10^6 and 10^7 span rows, then, each in a fresh subprocess so peak RSS is its own:

- ``otel``: the ragwarrant OTel adapter (streaming, column-projected batches decoded and
  validated in turn, each batch grouped once on integer key codes into per-trace running
  totals; plus one 64-bit hash per span, sorted once at the end, to refuse a repeated span);
- ``reference``: ``pyarrow.parquet.read_table`` of the same columns + one ``group_by`` over the
  whole table, and one more ``group_by`` of (trace id, span id) counting repeats (what a
  straightforward implementation of the same work does; memory grows with the file).

Prints, for each: wall seconds, CPU seconds (user + system of the child, all threads), rows per
wall second, rows per CPU second, CPU as a multiple of the reference's in the same run, and peak
RSS (ru_maxrss). Targets (issue 13): otel CPU <= 1.0x the reference's, peak RSS <= 500 MB and
flat across file sizes, >= 5 million rows/s wall on 2 cores. On a loaded machine only the CPU
ratio and the RSS are meaningful.

Usage: ``.venv/bin/python bench/bench_telemetry.py [--rows 1000000,10000000] [--dir /tmp/rwbench]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

EXAMPLES = 20_000
POLICIES = ("baseline", "candidate")
MODELS = {"baseline": "llama-3.1-8b-instruct", "candidate": "llama-3.1-70b-instruct"}


def generate(path: Path, rows: int, seed: int = 7) -> None:
    """Write ``rows`` spans over EXAMPLES × POLICIES traces, in row groups of 1M."""
    rng = np.random.default_rng(seed)
    ex_ids = pa.array([f"ex{i:06d}" for i in range(EXAMPLES)])
    traces = pa.array([f"{i:032x}" for i in range(EXAMPLES * len(POLICIES))])
    writer = None
    chunk = 1_000_000
    done = 0
    t0 = 1_767_261_600_000_000_000
    while done < rows:
        n = min(chunk, rows - done)
        tr = rng.integers(0, EXAMPLES * len(POLICIES), n)
        pol_idx = tr // EXAMPLES
        ex = tr % EXAMPLES
        start = t0 + tr.astype(np.int64) * 10_000_000_000 + rng.integers(0, 5_000_000_000, n)
        dur = rng.integers(100_000_000, 2_000_000_000, n)
        pol_dict = pa.array(list(POLICIES))
        table = pa.table(
            {
                "trace_id": pa.DictionaryArray.from_arrays(pa.array(tr, pa.int32()), traces),
                "span_id": pa.array([f"{x:016x}" for x in rng.integers(0, 2**62, n)]),
                "example_id": pa.DictionaryArray.from_arrays(pa.array(ex, pa.int32()), ex_ids),
                "policy_id": pa.DictionaryArray.from_arrays(
                    pa.array(pol_idx, pa.int32()), pol_dict
                ),
                "gen_ai.operation.name": pa.DictionaryArray.from_arrays(
                    pa.array(np.zeros(n, np.int32)), pa.array(["chat"])
                ),
                "gen_ai.request.model": pa.DictionaryArray.from_arrays(
                    pa.array(pol_idx, pa.int32()), pa.array([MODELS[p] for p in POLICIES])
                ),
                "gen_ai.usage.input_tokens": pa.array(rng.integers(100, 4000, n)),
                "gen_ai.usage.output_tokens": pa.array(rng.integers(5, 500, n)),
                "start_time_unix_nano": pa.array(start),
                "end_time_unix_nano": pa.array(start + dur),
                "status_code": pa.DictionaryArray.from_arrays(
                    pa.array((rng.random(n) < 0.01).astype(np.int32)), pa.array(["OK", "ERROR"])
                ),
                "cost_usd": pa.array(rng.random(n) * 1e-3),
            }
        )
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=chunk)
        done += n
    assert writer is not None
    writer.close()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime


def run_one(kind: str, path: Path) -> dict[str, float]:
    """Run one reducer on ``path`` in this process; return rows, seconds and peak RSS."""
    from ragwarrant.adapters._base import AdapterRequest
    from ragwarrant.adapters.otel import load
    from ragwarrant.contract import ReleaseContract

    rows = pq.ParquetFile(path).metadata.num_rows
    base_rss = _peak_rss_mb()
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    if kind == "otel":
        contract = ReleaseContract.model_validate(
            {
                "id": "bench",
                "version": "1",
                "baseline": {"policy_id": "baseline", "config": "p/b.yaml"},
                "candidates": [{"policy_id": "candidate", "config": "p/c.yaml"}],
                "evidence": [
                    {
                        "id": "tel",
                        "path": path.name,
                        "format": "parquet",
                        "adapter": "otel",
                        "kind": "telemetry",
                    }
                ],
                "quality_metrics": [{"id": "q", "margin_abs": 0.05}],
                "claims": {"items": [{"kind": "quality-improvement", "metric": "q"}]},
                "evidence_class": "development",
            }
        )
        result = load(AdapterRequest(contract.evidence[0], path, path.name, "-", contract))
        out_rows = result.evidence.num_rows // 3
    else:
        cols = [
            "trace_id",
            "example_id",
            "policy_id",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "start_time_unix_nano",
            "end_time_unix_nano",
            "cost_usd",
            "span_id",
        ]
        table = pq.read_table(path, columns=cols)
        spans = table.group_by(["trace_id", "span_id"], use_threads=False).aggregate(
            [("span_id", "count")]
        )
        assert pc.max(spans.column("span_id_count")).as_py() == 1  # no span delivered twice
        per_trace = table.group_by(
            ["policy_id", "example_id", "trace_id"], use_threads=False
        ).aggregate(
            [
                ("cost_usd", "sum"),
                ("gen_ai.usage.input_tokens", "sum"),
                ("start_time_unix_nano", "min"),
                ("end_time_unix_nano", "max"),
                ("cost_usd", "count"),
            ]
        )
        out_rows = per_trace.num_rows
    seconds = time.perf_counter() - t0
    cpu = _cpu_seconds() - cpu0
    return {
        "rows": rows,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows_per_cpu_s": rows / cpu,
        "rows_per_s": rows / seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "baseline_rss_mb": base_rss,
        "examples": out_rows,
    }


def _run_child(kind: str, path: Path) -> dict[str, float]:
    """Run one reducer in a fresh interpreter (its own peak RSS and CPU clock)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--dir", default="/tmp/ragwarrant-bench")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], Path(args.child[1]))))
        return 0
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"{'file rows':>12} {'reducer':>10} {'wall s':>7} {'CPU s':>7} {'rows/s wall':>12} "
        f"{'rows/CPU-s':>12} {'CPU x ref':>9} {'peak RSS MB':>11} {'MB on disk':>10}"
    )
    for rows in (int(x) for x in args.rows.split(",")):
        path = out / f"telemetry_{rows}.parquet"
        if not path.exists():
            generate(path, rows)
        size_mb = path.stat().st_size / 2**20
        results = {kind: _run_child(kind, path) for kind in ("otel", "reference")}
        ref_cpu = results["reference"]["cpu_seconds"]
        for kind, r in results.items():
            print(
                f"{rows:>12,} {kind:>10} {r['seconds']:>7.2f} {r['cpu_seconds']:>7.2f} "
                f"{r['rows_per_s']:>12,.0f} {r['rows_per_cpu_s']:>12,.0f} "
                f"{r['cpu_seconds'] / ref_cpu:>9.2f} {r['peak_rss_mb']:>11.0f} {size_mb:>10.0f}"
            )
    print(
        "targets: otel CPU <= 1.0x reference; otel peak RSS <= 500 MB, flat across file sizes; "
        ">= 5,000,000 rows/s wall on 2 cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
