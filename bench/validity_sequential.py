"""Validity study of repeated looks: the false-PROMOTE rate when evidence is added until a pass.

A team reruns the same contract on a growing sample (K equally spaced looks at n_k = k N / K)
and stops at the first look that passes. On the SAME replicates this compares

- ``today``: every look tested at the full one-sided alpha (the engine before issue 17);
- ``obrien_fleming``, ``pocock``: the Lan–DeMets spending plans of ``stats.sequential``
  (Lan & DeMets 1983, Biometrika 70:659–663), look k at alpha(t_k) - alpha(t_{k-1});
- ``open``: look k at alpha 6 / (pi^2 k^2) (any number of looks);
- ``fixed-n``: one test of the final size N at alpha (the reference for power);
- ``note+<plan>``, ``note+new-version``: retries that change the candidate config's ``note``
  ("attempt k") at every look, under one contract version and an O'Brien-Fleming plan, or with
  a new contract version at every look and no plan (issue 33's road: before looks were linked by
  evidence, each such retry was a fresh look 1 at full alpha, the ``today`` row). Their levels
  are the engine's own: ``gates.looks.resolve_look`` run over the K looks, each config's
  identity from ``inputs.behavioural_sha256``.

A replicate is a false PROMOTE when the true delta is exactly -margin and some look passes; power
is the pass rate (at any look) when the true delta is 0. Rates carry Clopper–Pearson 95 %
intervals (``scipy.stats.binomtest(...).proportion_ci(method="exact")``).

Data: ``binary`` pairs (10 % discordant, N = 400) tested by the engine's own rule
(``stats.noninferiority.test_noninferiority``, Tango's score test); ``continuous`` normal paired
deltas (sd 0.25, N = 200) tested by the paired t-test at each look's level (vectorised over
replicates; the bootstrap would take hours here, and the union bound the plans rest on holds for
any test valid at its level). Margin 0.05, alpha 0.05.

A benchmark, not a test: rerun it to refresh ``docs/validity.md`` (the part between the
``sequential`` markers).

Usage: python bench/validity_sequential.py --replicates 2000 [--write docs/validity.md]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

from ragwarrant.contract import Sequential, load_contract
from ragwarrant.gates.looks import EarlierLook, resolve_look
from ragwarrant.inputs import Inputs, behavioural_sha256
from ragwarrant.stats.noninferiority import test_noninferiority
from ragwarrant.stats.sequential import SequentialPlan, look_level

REPO = Path(__file__).resolve().parents[1]
ALPHA = 0.05
MARGIN = 0.05
LOOKS = (2, 3, 5)
RULES = ("today", "obrien_fleming", "pocock", "open", "note+obrien_fleming", "note+new-version")
EXAMPLE_CONTRACT = REPO / "examples" / "ragtruth-generators" / "contract.yaml"
BEGIN, END = "<!-- sequential:begin -->", "<!-- sequential:end -->"


def _retry_levels(rule: str, looks: int, n_final: int) -> list[float]:
    """The levels ``gates.looks.resolve_look`` gives ``looks`` retries on growing evidence
    (examples 0..n_k-1) whose candidate config differs only in its note ("attempt k"):
    under one contract version with an O'Brien-Fleming plan (``note+obrien_fleming``) or under a
    new contract version each time without a plan (``note+new-version``). 0 = cannot PROMOTE."""
    example = load_contract(EXAMPLE_CONTRACT)
    base, cand = example.baseline.policy_id, example.candidates[0].policy_id
    plan = Sequential(method="alpha_spending", looks=looks, max_units=n_final)
    same_version = rule == "note+obrien_fleming"
    contract = example.model_copy(
        update={"candidates": example.candidates[:1], "sequential": plan if same_version else None}
    )
    out: list[float] = []
    seen: list[EarlierLook] = []
    for k in range(1, looks + 1):
        version = contract if same_version else contract.model_copy(update={"version": f"1.{k}"})
        sha = f"contract-{version.version}"
        configs = {base: {"model": base}, cand: {"model": cand, "note": f"attempt {k}"}}
        inputs = Inputs(version, "contract.yaml", sha, config_sha={base: "b", cand: "c"})
        inputs.configs.update(configs)
        identity = {p: behavioural_sha256(inputs, p) for p in configs}
        units = k * n_final // looks
        fp = {"ids": np.arange(units, dtype=np.uint64)}
        earlier, others = (seen, []) if same_version else ([], seen)
        look = resolve_look(version, earlier, fp, units, identity, None, sha, others=others)
        out.append(look.record.alpha_this_look)
        seen = [*seen, EarlierLook(look.record, f"run-{k}", fp, sha)]
    return out


def levels(rule: str, looks: int, n_final: int) -> list[float]:
    """The one-sided level of each of ``looks`` equally spaced looks under ``rule``."""
    if rule.startswith("note+"):
        return _retry_levels(rule, looks, n_final)
    if rule == "today":
        return [ALPHA] * looks
    if rule == "open":
        plan = SequentialPlan("open", ALPHA)
    else:
        plan = SequentialPlan("alpha_spending", ALPHA, rule, looks, n_final)  # type: ignore[arg-type]
    out, spent = [], 0.0
    for k in range(1, looks + 1):
        lv = look_level(plan, k, k * n_final // looks, spent)
        out.append(lv.alpha_this_look)
        spent = lv.alpha_spent
    return out


# A "passes" function: (replicates' data, look sizes, levels) -> shape (R, K) bool.
Passes = Callable[[np.ndarray, list[int], list[float]], np.ndarray]


def _binary_data(rng: np.random.Generator, reps: int, n: int, delta: float) -> np.ndarray:
    """Shape (R, N, 2) paired 0/1 values (candidate, baseline); 10 % of pairs discordant."""
    q12, q21 = 0.05 + delta / 2, 0.05 - delta / 2
    cells = rng.choice(4, size=(reps, n), p=[0.70, q12, q21, 1 - 0.70 - q12 - q21])
    return np.stack([np.isin(cells, (0, 1)), np.isin(cells, (0, 2))], axis=-1).astype(float)


def _binary_passes(data: np.ndarray, sizes: list[int], alphas: list[float]) -> np.ndarray:
    """The engine's rule (Tango) at each look's level; level 0 never passes."""
    out = np.zeros((data.shape[0], len(sizes)), dtype=bool)
    rng = np.random.default_rng(0)  # unused by the binary test
    for r in range(data.shape[0]):
        for k, (n, a) in enumerate(zip(sizes, alphas, strict=True)):
            if a <= 0:
                continue
            t = test_noninferiority(
                data[r, :n, 0], data[r, :n, 1], kind="binary", margin_abs=MARGIN, alpha=a, rng=rng
            )
            out[r, k] = t.rejects
    return out


def _continuous_data(rng: np.random.Generator, reps: int, n: int, delta: float) -> np.ndarray:
    """Shape (R, N) paired deltas ~ Normal(delta, 0.25^2)."""
    return rng.normal(delta, 0.25, size=(reps, n))


def _continuous_passes(data: np.ndarray, sizes: list[int], alphas: list[float]) -> np.ndarray:
    """Paired t-test lower bound > -margin at each look's level."""
    out = np.zeros((data.shape[0], len(sizes)), dtype=bool)
    for k, (n, a) in enumerate(zip(sizes, alphas, strict=True)):
        if a <= 0:
            continue
        x = data[:, :n]
        lcb = x.mean(axis=1) - sps.t.ppf(1 - a, n - 1) * x.std(axis=1, ddof=1) / np.sqrt(n)
        out[:, k] = lcb > -MARGIN
    return out


@dataclass(frozen=True)
class Kind:
    """A data-generating process, its final size N and its test."""

    name: str
    n_final: int
    data: Callable[[np.random.Generator, int, int, float], np.ndarray]
    passes: Passes


KINDS = (
    Kind("binary", 400, _binary_data, _binary_passes),
    Kind("continuous", 200, _continuous_data, _continuous_passes),
)


@dataclass(frozen=True)
class Row:
    """One rule's rates for one (kind, looks)."""

    kind: str
    looks: int
    rule: str
    false_promote: int
    power: int
    replicates: int
    levels: tuple[float, ...]


def _cp(k: int, n: int) -> tuple[float, float]:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def _any_pass(kind: Kind, data: np.ndarray, looks: int, alphas: list[float]) -> int:
    sizes = [k * kind.n_final // looks for k in range(1, looks + 1)]
    return int(np.count_nonzero(kind.passes(data, sizes, alphas).any(axis=1)))


def study(replicates: int, seed: int = 20261201) -> list[Row]:
    """Every (kind, looks, rule) on the same replicates per kind; plus the fixed-n reference."""
    rows = []
    for kind in KINDS:
        rng = np.random.default_rng([seed, len(kind.name)])
        at_margin = kind.data(rng, replicates, kind.n_final, -MARGIN)
        at_zero = kind.data(rng, replicates, kind.n_final, 0.0)
        for looks in LOOKS:
            for rule in RULES:
                alphas = levels(rule, looks, kind.n_final)
                fp = _any_pass(kind, at_margin, looks, alphas)
                pw = _any_pass(kind, at_zero, looks, alphas)
                rows.append(Row(kind.name, looks, rule, fp, pw, replicates, tuple(alphas)))
        fp = _any_pass(kind, at_margin, 1, [ALPHA])
        pw = _any_pass(kind, at_zero, 1, [ALPHA])
        rows.append(Row(kind.name, 1, "fixed-n", fp, pw, replicates, (ALPHA,)))
    return rows


def format_table(rows: list[Row]) -> str:
    """Markdown: false-PROMOTE at -margin with CP 95 %, power at delta = 0, the looks' levels."""
    head = (
        "| data | looks | rule | false-PROMOTE at −margin [CP 95 %] | power at Δ = 0 "
        "| levels of the looks | upper CP ≤ alpha + 0.01 |\n|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        lo, hi = _cp(r.false_promote, r.replicates)
        rate = r.false_promote / r.replicates
        ok = "yes" if hi <= ALPHA + 0.01 else "**no**"
        if r.rule == "fixed-n":  # one test at alpha: the reference for power, not a plan
            ok = f"reference ({'yes' if hi <= ALPHA + 0.01 else 'no'})"
        elif sorted(r.levels)[-2:] == [0.0, ALPHA]:  # only the first look can pass, at alpha
            within = rate <= ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / r.replicates)
            ok = f"one test at alpha: rate ≤ alpha + 2 MC SE {'yes' if within else '**no**'}"
        lv = ", ".join(f"{a:.3g}" for a in r.levels)
        lines.append(
            f"| {r.kind} (N = {dict((k.name, k.n_final) for k in KINDS)[r.kind]}) | {r.looks} "
            f"| {r.rule} | {rate:.3f} [{lo:.3f}, {hi:.3f}] | {r.power / r.replicates:.3f} "
            f"| {lv} | {ok} |"
        )
    return "\n".join(lines)


def replace_generated(path: Path, generated: str) -> None:
    """Write ``generated`` between the sequential markers of ``path`` (appended when absent)."""
    text = path.read_text() if path.exists() else ""
    block = f"{BEGIN}\n{generated}\n{END}"
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    """Run the study, print the table, optionally write it into docs/validity.md."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=2000)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()
    started = time.perf_counter()
    rows = study(args.replicates)
    table = format_table(rows)
    seconds = time.perf_counter() - started
    generated = (
        f"## Repeated looks (issue 17): `python bench/validity_sequential.py --replicates "
        f"{args.replicates}` ({datetime.date.today().isoformat()}, {seconds:.0f} s)\n\n"
        f"Equally spaced looks at n_k = k N / K; a replicate counts when any look passes "
        f"(the team stops at the first pass). One-sided alpha {ALPHA}, margin {MARGIN}; "
        f"{args.replicates} replicates per row, the same replicates for every rule of one data "
        "kind. The last column applies issue 10's target to the rate across all looks: the "
        "upper Clopper–Pearson bound at most alpha + 0.01 (today's rule, every look at full "
        "alpha, fails it). The `note+` rows retry with a new note in the candidate's config at "
        "every look (issue 33): under one version and plan the look rules link the looks and "
        "give the plan's levels; with a new contract version at every look, the first look is "
        "at alpha and every later one, linked to it by its examples, cannot PROMOTE: that row "
        "is one test at alpha on N / K examples, judged like `fixed-n` by issue 33's target "
        "(rate at most alpha + 2 Monte Carlo SE), since its upper CP bound can pass "
        "alpha + 0.01 by chance alone.\n\n" + table
    )
    print(generated)
    if args.write is not None:
        replace_generated(args.write, generated)
        print(f"wrote {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
