"""Thousands of contracts: render and validate a 10,000-index fan-out; collect 10,000 decisions.

Measures, each beside a reference measured in the same run:

1. ``render``: an Indexed Job over N contracts on an input claim (``k8s.build_manifests`` +
   YAML), and the Argo Workflow over the same N (``k8s.build_argo_manifests``). Reference: N
   one-contract Jobs, extrapolated from 100 renders (what one Job per contract would cost).
2. ``dry-run``: the offline stand-in for a server-side dry run (impossible without a cluster):
   kubernetes-validate --strict at the minimum Kubernetes version on the Indexed Job, and Hera's
   Argo models (strict round trip, scripts/argo/validate_workflow.py) on the Workflow. Each is
   skipped when not installed (scripts/install-ci-tools.sh, scripts/fetch-argo-schemas.sh).
3. ``scan``: ``k8s.scan_input_root`` checking N contract directories (each contract validated,
   each named file's presence checked; the evidence is symlinked). Reference: listing the same
   directories without validating anything.
4. ``collect``: ``audit.collect.collect_decisions`` on N output directories (decision.json and
   manifest.json of one real run, copied). Reference: ``json.loads`` of every decision.json
   alone (no validation, no manifest check).

Time is wall-clock; memory is the tracemalloc peak of the step (Python allocations).

Usage: python bench/bench_scale.py [--contracts 10000] [--decisions 10000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ragwarrant.audit.collect import collect_decisions
from ragwarrant.k8s import (
    MIN_KUBERNETES_VERSION,
    InputFile,
    RenderOptions,
    WorkloadKind,
    build_argo_manifests,
    build_manifests,
    manifests_to_yaml,
)
from ragwarrant.k8s.inputs import scan_input_root
from ragwarrant.pipeline import run_job

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ragtruth-generators"
IMAGE = "registry.example/ragwarrant@sha256:" + "0" * 64
HERA = REPO / "build" / "deploy-tools" / "argo" / "bin" / "python"
VALIDATE_WORKFLOW = REPO / "scripts" / "argo" / "validate_workflow.py"
VALIDATOR = REPO / "build" / "deploy-tools" / "venv" / "bin" / "kubernetes-validate"


def _measure(fn: Callable[[], Any], memory: bool = True) -> tuple[Any, float, float | None]:
    """Return (result, seconds, tracemalloc peak in MiB or None) of ``fn``.

    The time comes from a call without tracemalloc (which slows allocation-heavy code several
    times); with ``memory`` a second call under tracemalloc gives the peak.
    """
    t0 = time.perf_counter()
    result = fn()
    took = time.perf_counter() - t0
    if not memory:
        return result, took, None
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, took, peak


def _row(step: str, what: str, n: int, seconds: float, mib: float | None, note: str = "") -> None:
    memory = f"{mib:8.1f}" if mib is not None else "       -"
    print(f"{step:<9} {what:<48} {n:>7} {seconds:9.2f} {memory}  {note}")


def _claim_options(n: int) -> RenderOptions:
    return RenderOptions(
        kind=WorkloadKind.INDEXED,
        image=IMAGE,
        contracts=(),
        input_claim="contracts",
        input_names=tuple(str(i) for i in range(n)),
    )


def _render(n: int, out: Path) -> tuple[Path, Path]:
    options = _claim_options(n)
    build_manifests(_claim_options(1))  # import and warm the kubernetes client first
    job_file, argo_file = out / "indexed.yaml", out / "argo.yaml"
    text, took, mib = _measure(lambda: manifests_to_yaml(build_manifests(options)))
    job_file.write_text(text)
    _row("render", "Indexed Job on an input claim", n, took, mib, f"{len(text) / 1e3:.0f} kB")
    text, took, mib = _measure(lambda: manifests_to_yaml(build_argo_manifests(options)))
    argo_file.write_text(text)
    _row("render", "Argo Workflow (withItems)", n, took, mib, f"{len(text) / 1e3:.0f} kB")
    contract = InputFile("contract.yaml", (EXAMPLE / "contract.yaml").read_bytes())
    one = RenderOptions(kind=WorkloadKind.JOB, image=IMAGE, contracts=(contract,))
    sample = min(n, 20)
    _, took, _ = _measure(
        lambda: [manifests_to_yaml(build_manifests(one)) for _ in range(sample)], memory=False
    )
    _row("render", "reference: one Job per contract (extrapolated)", n, took * n / sample, None,
         f"measured on {sample}")  # fmt: skip
    return job_file, argo_file


def _dry_run(n: int, job_file: Path, argo_file: Path) -> None:
    if VALIDATOR.is_file():
        version = f"{MIN_KUBERNETES_VERSION}.0"
        argv = [str(VALIDATOR), "--strict", "--quiet", "-k", version, str(job_file)]
        done, took, _ = _measure(
            lambda: subprocess.run(argv, capture_output=True, check=False), memory=False
        )
        ok = "valid" if done.returncode == 0 else f"INVALID: {done.stdout[-200:]!r}"
        _row("dry-run", f"kubernetes-validate --strict {version}", n, took, None, ok)
    else:
        print("dry-run   kubernetes-validate not installed: run scripts/install-ci-tools.sh")
    if not HERA.is_file():
        print("dry-run   hera not installed: run scripts/fetch-argo-schemas.sh")
        return
    workflow = next(d for d in yaml.safe_load_all(argo_file.read_text()) if d["kind"] == "Workflow")
    argv = [str(HERA), str(VALIDATE_WORKFLOW)]
    done, took, _ = _measure(
        lambda: subprocess.run(
            argv, input=json.dumps([workflow]), capture_output=True, text=True, check=False
        ),
        memory=False,
    )
    line = done.stdout.strip() or done.stderr[-200:]
    _row("dry-run", "Hera Argo models (strict)", n, took, None,
         "valid" if line == "ok" else f"INVALID: {line[:80]}")  # fmt: skip


def _volume(n: int, root: Path) -> None:
    """Lay out root/<i>/ for i < n: the contract copied, policies/ and evidence/ symlinked."""
    contract = (EXAMPLE / "contract.yaml").read_bytes()
    for i in range(n):
        d = root / str(i)
        d.mkdir(parents=True)
        (d / "contract.yaml").write_bytes(contract)
        for sub in ("policies", "evidence"):
            os.symlink(EXAMPLE / sub, d / sub)


def _scan(n: int, work: Path) -> None:
    root = work / "volume"
    _volume(n, root)
    names, took, mib = _measure(lambda: scan_input_root(root), memory=False)
    assert len(names) == n
    _row("scan", "scan_input_root (validate every contract)", n, took, mib,
         f"{took / n * 1000:.1f} ms per contract")  # fmt: skip
    listed, took, mib = _measure(lambda: sorted(p.name for p in root.iterdir() if p.is_dir()))
    _row("scan", "reference: list the directories only", len(listed), took, mib)


def _decisions(n: int, work: Path) -> Path:
    run_out = work / "one-run"
    run_job(EXAMPLE, run_out, on_stage=lambda *a, **k: None)
    root = work / "decisions"
    for i in range(n):
        d = root / str(i)
        d.mkdir(parents=True)
        for name in ("decision.json", "manifest.json"):
            shutil.copyfile(run_out / name, d / name)
    return root


def _collect(n: int, work: Path) -> None:
    root = _decisions(n, work)
    collection, took, mib = _measure(lambda: collect_decisions(root, expect=n))
    counts = ", ".join(f"{k} {v}" for k, v in collection.counts().items())
    _row("collect", "collect_decisions (validated, manifest-checked)", n, took, mib, counts)

    def plain() -> list[Any]:
        return [json.loads((d / "decision.json").read_bytes()) for d in root.iterdir()]

    loaded, took, mib = _measure(plain)
    _row("collect", "reference: json.loads of each decision.json", len(loaded), took, mib)


def main() -> None:
    """Print the table of every step (time in s, tracemalloc peak in MiB)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", type=int, default=10_000)
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, help="scratch directory (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        work = Path(scratch)
        print(f"{'step':<9} {'what':<48} {'n':>7} {'seconds':>9} {'peak MiB':>8}  note")
        job_file, argo_file = _render(args.contracts, work)
        _dry_run(args.contracts, job_file, argo_file)
        _scan(args.contracts, work)
        _collect(args.decisions, work)


if __name__ == "__main__":
    main()
