"""``ragwarrant bench groundedness``: the lexical groundedness gates on RAGTruth.

Reads a RAGTruth copy (``corroborators.ragtruth``), runs the benchmark protocol that matches its
layout (``corroborators.benchmark``: official train/test split, or source-grouped cross-validation
on the shared sample) and prints the table, or its JSON, and optionally a calibration file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragwarrant.commands._help import CommandHelp, add_command
from ragwarrant.exit_codes import ExitCode


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` atomically, readable by all (the image runs as uid 65532)."""
    from ragwarrant.audit.writer import write_atomic

    write_atomic(path, text.encode("utf-8"))


def _run(args: argparse.Namespace) -> int:
    # imported here: the benchmark needs numpy and scipy, which --help and other commands do not
    from ragwarrant.corroborators.benchmark import (
        calibration_document,
        render_markdown,
        report_as_json,
        run_groundedness_bench,
    )
    from ragwarrant.corroborators.ragtruth import load_ragtruth

    data = load_ragtruth(args.ragtruth_dir)
    report = run_groundedness_bench(data, folds=args.folds, seed=args.seed)
    if args.format == "json":
        text = json.dumps(report_as_json(report), indent=2, allow_nan=False) + "\n"
    else:
        text = render_markdown(report)
    if args.output is None:
        print(text, end="")
    else:
        _write_atomic(Path(args.output), text)
    if args.write_calibration is not None:
        document = calibration_document(data, args.calibration_version)
        _write_atomic(
            Path(args.write_calibration), json.dumps(document, indent=2, allow_nan=False) + "\n"
        )
    return 0


GROUNDEDNESS_HELP = CommandHelp(
    purpose="lexical groundedness gates on RAGTruth (response-level P/R/F1/FNR, latency)",
    reads="--ragtruth-dir DIR: a RAGTruth copy (response.jsonl + source_info.jsonl: the official "
    "train/test protocol) or the shared partial sample (source-grouped cross-validation, not the "
    "official test split)",
    writes="the table (--format md) or its JSON on stdout, or into --output FILE; with "
    "--write-calibration FILE, a calibration file",
    codes=(ExitCode.PROMOTE, ExitCode.NO_INPUT),
    success="the benchmark ran and its table was written",
    code_note=f"{int(ExitCode.NO_INPUT)}: the RAGTruth directory or one of its files is missing "
    "or not in the expected form.",
    examples=("ragwarrant bench groundedness --ragtruth-dir path/to/ragtruth",),
)
"""``ragwarrant bench groundedness --help``."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench groundedness`` to the ``ragwarrant`` command line."""
    bench = subparsers.add_parser(
        "bench",
        help="benchmarks of ragwarrant's deterministic checks",
        description="Benchmarks of ragwarrant's deterministic checks; see "
        "'ragwarrant bench BENCHMARK --help'.",
    )
    kinds = bench.add_subparsers(dest="bench_kind", metavar="BENCHMARK", required=True)
    parser = add_command(kinds, "groundedness", GROUNDEDNESS_HELP)
    parser.add_argument(
        "--ragtruth-dir",
        required=True,
        type=Path,
        metavar="DIR",
        help="RAGTruth dataset/ folder (response.jsonl + source_info.jsonl) or the shared sample",
    )
    parser.add_argument("--output", type=Path, metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="default: md")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (sample only)")
    parser.add_argument("--seed", type=int, default=0, help="fold-assignment seed (sample only)")
    parser.add_argument(
        "--write-calibration",
        type=Path,
        metavar="FILE",
        help="also calibrate every gate on all training data and write a calibration file",
    )
    parser.add_argument(
        "--calibration-version",
        default="lexical-v1",
        metavar="ID",
        help="version id written into --write-calibration (default: lexical-v1)",
    )
    parser.set_defaults(handler=_run)
