"""Benchmark: the publication-hygiene copy scan against a plain-Python shingle-set reference.

Prints wall time and throughput (private tokens per second) of ``scan_outputs`` for growing
private corpora, beside a reference implementation measured in the same run (a Python ``set`` of
12-token tuples built from the private texts, then probed with the output's windows). Both must
agree on whether the planted copy is found. Then times the credential and personal-data patterns
(``redact_text``) on adversarial strings of 10 kB and 1 MB: linear time costs ~100x between the
two, a quadratic pattern ~10,000x. Usage: ``python bench/bench_hygiene.py``.
"""

from __future__ import annotations

import re
import time

import numpy as np
import orjson

from ragwarrant.audit._shingles import COPY_RUN_TOKENS
from ragwarrant.audit.hygiene import redact_text, scan_outputs

WORDS = np.array([f"w{i}" for i in range(20_000)])


def _corpus(n_texts: int, tokens: int, rng: np.random.Generator) -> list[str]:
    return [" ".join(WORDS[rng.integers(0, WORDS.size, tokens)]) for _ in range(n_texts)]


def _reference(outputs: dict[str, bytes], texts: list[str]) -> bool:
    token = re.compile(r"\w+")
    shingles = set()
    for t in texts:
        toks = token.findall(t.lower())
        shingles.update(
            tuple(toks[i : i + COPY_RUN_TOKENS]) for i in range(len(toks) - COPY_RUN_TOKENS + 1)
        )
    for data in outputs.values():
        toks = token.findall(data.decode().lower())
        if any(
            tuple(toks[i : i + COPY_RUN_TOKENS]) in shingles
            for i in range(len(toks) - COPY_RUN_TOKENS + 1)
        ):
            return True
    return False


ADVERSARIAL = {
    "alphanumeric run": lambda n: "a" * n,
    "scheme, user, long password": lambda n: "a://b:" + "c" * n,
    "secret keyword then spaces": lambda n: "password" + " " * n,
    "path segments after a glued v": lambda n: "/v" * (n // 2) + "+",
}


def _pattern_costs() -> None:
    print(f"\n{'adversarial string':<30} {'10 kB s':>9} {'1 MB s':>9} {'ratio':>7}")
    for name, make in ADVERSARIAL.items():
        costs = []
        for n in (10_000, 1_000_000):
            text = make(n)
            t0 = time.perf_counter()
            redact_text(text)
            costs.append(time.perf_counter() - t0)
        print(f"{name:<30} {costs[0]:>9.4f} {costs[1]:>9.3f} {costs[1] / costs[0]:>7.0f}")


def main() -> None:
    rng = np.random.default_rng(7)
    print(
        f"{'texts':>8} {'tokens':>10} {'scan_outputs s':>15} {'tok/s':>12} "
        f"{'reference s':>12} {'tok/s':>12} agree"
    )
    for n_texts in (1_000, 10_000, 50_000):
        texts = _corpus(n_texts, 300, rng)
        copied = " ".join(texts[-1].split()[100:115])
        decision = {
            "candidates": [{"gates": [{"reason": f"gate {i}"} for i in range(200)]}],
            "note": copied,
        }
        outputs = {
            "decision.json": orjson.dumps(decision),
            "report.md": ("| row |\n" * 2000).encode(),
        }
        n_tokens = n_texts * 300
        t0 = time.perf_counter()
        found = any(f.kind == "copied-text" for f in scan_outputs(outputs, iter(texts)))
        t1 = time.perf_counter()
        ref = _reference(outputs, texts)
        t2 = time.perf_counter()
        print(
            f"{n_texts:>8} {n_tokens:>10} {t1 - t0:>15.3f} {n_tokens / (t1 - t0):>12.3g} "
            f"{t2 - t1:>12.3f} {n_tokens / (t2 - t1):>12.3g} {found == ref and found}"
        )
    _pattern_costs()


if __name__ == "__main__":
    main()
