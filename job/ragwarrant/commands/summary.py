"""``ragwarrant summary OUTDIR``: print a finished run's decision for a person."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from ragwarrant.errors import InputError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``summary`` subcommand."""
    p = subparsers.add_parser("summary", help="print the decision of a finished run")
    p.add_argument("outdir", type=Path)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Print run class, each candidate's class and first reason; return the run's exit code."""
    path = args.outdir / "decision.json"
    try:
        d = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError("decision-unreadable", f"cannot read {path}: {exc}") from exc
    print(f"decision: {d['summary']}")
    for c in d.get("candidates", []):
        first = c["reasons"][0] if c["reasons"] else ""
        print(f"  {c['policy_id']:<28} {c['class']:<13} {first[:150]}")
    if d.get("error"):
        print(f"  error: {d['error']['code']}: {d['error']['message']}")
    return int(d["exit_code"])
