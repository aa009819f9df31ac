"""Shared fixtures: build input directories (contract + evidence) from arrays."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
import yaml

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def base_contract(n_candidates: int = 1) -> dict[str, Any]:
    """A minimal valid contract: quality 'correct' (margin 0.05), cost claim, one slice pair."""
    return {
        "schema_version": "1",
        "id": "fixture",
        "version": "1",
        "baseline": {"policy_id": "base", "config": "policies/base.json"},
        "candidates": [
            {
                "policy_id": f"cand{i}" if n_candidates > 1 else "cand",
                "config": f"policies/cand{i if n_candidates > 1 else ''}.json",
            }
            for i in range(n_candidates)
        ],
        "evidence": [
            {
                "id": "results",
                "path": "evidence/results.csv",
                "format": "csv",
                "layout": "wide",
                "columns": {
                    "example_id": "example_id",
                    "policy_id": "policy",
                    "slice": "task",
                    "group_id": "doc",
                },
                "metrics": {"correct": "correct", "cost_usd": "cost_usd"},
                "evaluator": "fixture",
                "evaluator_version": "1",
            }
        ],
        "quality_metrics": [
            {"id": "correct", "direction": "higher_is_better", "scale": [0, 1], "margin_abs": 0.05}
        ],
        "operational_metrics": [
            {"id": "cost_usd", "unit": "usd", "direction": "lower_is_better", "statistic": "mean"}
        ],
        "claims": {"join": "any", "items": [{"kind": "cost-reduction", "metric": "cost_usd"}]},
        "statistics": {
            "alpha": 0.05,
            "resamples": 2000,
            "seed": 7,
            "min_paired_n": 30,
            "min_pairing_coverage": 0.95,
        },
        "evidence_class": "confirmatory",
        "promotion_min_class": "confirmatory",
    }


def simulate(
    n: int,
    *,
    quality_delta: float = 0.0,
    base_rate: float = 0.8,
    cost_ratio: float = 0.5,
    seed: int = 0,
    slices: tuple[str, ...] = ("a", "b"),
) -> dict[str, dict[str, np.ndarray]]:
    """Per-policy arrays: correct (0/1), cost_usd, task, doc for n paired examples."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    base_correct = (u < base_rate).astype(float)
    cand_correct = (u < base_rate + quality_delta).astype(float)
    base_cost = rng.gamma(4.0, 0.01, n)
    task = np.array([slices[i % len(slices)] for i in range(n)])
    doc = np.array([f"d{i // 2}" for i in range(n)])
    return {
        "base": {"correct": base_correct, "cost_usd": base_cost, "task": task, "doc": doc},
        "cand": {
            "correct": cand_correct,
            "cost_usd": base_cost * cost_ratio,
            "task": task,
            "doc": doc,
        },
    }


def write_results_csv(path: Path, data: dict[str, dict[str, np.ndarray]]) -> None:
    """Write the wide results CSV the base contract expects."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["example_id,policy,task,doc,correct,cost_usd"]
    for policy, cols in data.items():
        for i in range(len(cols["correct"])):
            c = cols["correct"][i]
            c_s = "" if np.isnan(c) else repr(float(c))
            lines.append(
                f"ex{i:05d},{policy},{cols['task'][i]},{cols['doc'][i]},{c_s},{float(cols['cost_usd'][i])!r}"
            )
    path.write_text("\n".join(lines) + "\n")


InputFactory = Callable[..., Path]


def reset_logging() -> None:
    """Forget the process's structlog configuration (``ragwarrant.logging.configure_logging``).

    ``cli.main`` binds structlog to the ``sys.stderr`` of its moment, which under ``capsys`` is a
    capture stream closed when the test ends; a later test that logs without the CLI (the
    pipeline's module logger) would write to it ("I/O operation on closed file").
    """
    import structlog

    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _fresh_logging() -> Any:
    """Every test starts and ends with structlog's default configuration (order-independent)."""
    reset_logging()
    yield
    reset_logging()


@pytest.fixture
def make_input(tmp_path: Path) -> InputFactory:
    """Build an input directory; returns its path.

    Keyword args: contract (dict, default base_contract()), data (policy → arrays, default
    simulate(200)), mutate (callable on the contract dict), configs (policy → dict).
    """
    counter = {"i": 0}

    def factory(
        *,
        contract: dict[str, Any] | None = None,
        data: dict[str, dict[str, np.ndarray]] | None = None,
        mutate: Callable[[dict[str, Any]], None] | None = None,
        configs: dict[str, dict[str, Any]] | None = None,
        fmt: str = "yaml",
    ) -> Path:
        counter["i"] += 1
        root = tmp_path / f"in{counter['i']}"
        (root / "policies").mkdir(parents=True)
        c = copy.deepcopy(contract or base_contract())
        if mutate:
            mutate(c)
        data = data if data is not None else simulate(200)
        write_results_csv(root / "evidence" / "results.csv", data)
        policies = [c["baseline"], *c["candidates"]]
        for p in policies:
            cfg = (configs or {}).get(p["policy_id"], {"model": p["policy_id"], "top_k": 5})
            (root / p["config"]).write_bytes(orjson.dumps(cfg))
        if fmt == "yaml":
            (root / "contract.yaml").write_text(yaml.safe_dump(c, sort_keys=False))
        else:
            (root / "contract.json").write_bytes(orjson.dumps(c))
        return root

    return factory


SLOW_TEST_FILES = frozenset(
    {
        "tests/audit/test_hygiene_linear.py",
        "tests/audit/test_integrity_bench.py",
        "tests/audit/test_verify_findings.py",
        "tests/ci",
        "tests/commands/test_closed_stdout.py",
        "tests/commands/test_option_files.py",
        "tests/deploy",
        "tests/hardened",
        "tests/stats/test_margin_simulation.py",
        "tests/test_bench_groundedness.py",
        "tests/test_bench_lexical.py",
        "tests/test_bench_scale.py",
        "tests/test_bench_sequential.py",
        "tests/test_bench_smoke.py",
        "tests/test_cli.py",
        "tests/test_complexity.py",
        "tests/test_derive_ragtruth_example.py",
        "tests/test_fuzz.py",
        "tests/test_looks_cli.py",
        "tests/test_pipeline.py",
    }
)
"""Files (or folders) whose tests run subprocesses, benchmarks' smoke runs, simulations or deploy
tools: marked ``slow``, so ``make test-quick`` (``-m 'not slow'``) leaves them to ``make test``."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under ``SLOW_TEST_FILES`` as ``slow``."""
    for item in items:
        path = Path(str(item.fspath)).resolve()
        rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else ""
        if any(rel == slow or rel.startswith(slow + "/") for slow in SLOW_TEST_FILES):
            item.add_marker(pytest.mark.slow)
