"""Validity of the judge-corrected (PPI++) noninferiority bound with judges biased to the candidate.

Paired binary human outcomes (baseline 1 in 80 %; discordant pairs 10 % baseline-only and
10 % + delta candidate-only, so the true human delta is ``delta``) on N judged examples, human
labels on a uniform random n of them. The judge reports each output's human label with
probability ``accuracy`` (else its opposite), and then, favouring the candidate, turns a
candidate's 0 into 1 with probability ``bias``. At delta = -margin a PROMOTE is false. On the
SAME replicates it decides with

- ``judge-only``: the engine's rule (``stats.noninferiority.test_noninferiority``, binary:
  Tango's score bound) on the judge's scores of all N examples;
- ``ppi++``: ``stats.ppi.ppi_mean_bound`` (cross-fitted power-tuned lambda, score bound) from
  the judge on all N and the human labels on n: what the gate decides on when the contract
  names human labels;
- ``ppi++ clt``: the earlier rule, kept for comparison (``clt_bound``): lambda tuned on all the
  labels and the normal (CLT) bound, as ``ppi_py.ppi_mean_ci``;
- ``human-only``: the normal bound mean(y) - z sd(y)/sqrt(n) on the same n human labels.

It prints the false-PROMOTE rate at the margin with its Clopper–Pearson 95 % interval
(``scipy.stats.binomtest(...).proportion_ci(method="exact")``), the pass rate at delta = 0
(power) and the mean bound width (estimate - lower bound) relative to human-only on the same n;
(1 / ratio)^2 is the effective-sample gain: how many human labels the judge is worth per label.
A benchmark, not a test.

Usage: python bench/validity_ppi.py --replicates 2000 [--write docs/validity.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path
from statistics import NormalDist

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validity as v  # noqa: E402  (the validity study's writer)

from ragwarrant.stats.noninferiority import test_noninferiority  # noqa: E402
from ragwarrant.stats.ppi import power_tuned_lambda, ppi_mean_bound  # noqa: E402

ALPHA, MARGIN = 0.05, 0.05
N_JUDGED = 2000
LABELLED = (100, 300)
JUDGES = (
    (1.0, 0.0),
    (0.95, 0.0),
    (0.85, 0.0),
    (0.95, 0.3),
    (0.85, 0.3),
    (0.70, 0.3),
)  # (accuracy, bias)
METHODS = ("judge-only", "ppi++", "ppi++ clt", "human-only")
BEGIN, END = "<!-- ppi:begin -->", "<!-- ppi:end -->"
_Z = NormalDist().inv_cdf(1 - ALPHA)


def human_pairs(rng: np.random.Generator, size: int, delta: float) -> tuple[np.ndarray, ...]:
    """Shape (size,) 0/1 human outcomes (candidate, baseline) with mean difference ``delta``."""
    q10, q01 = 0.10, 0.10 + delta
    probs = [0.8 - q10, q10, q01, 1 - (0.8 - q10) - q10 - q01]  # (1,1) (0,1) (1,0) (0,0)
    cell = rng.choice(4, size=size, p=probs)
    cand = np.isin(cell, (0, 2)).astype(float)
    base = np.isin(cell, (0, 1)).astype(float)
    return cand, base


def judge(rng: np.random.Generator, human: np.ndarray, accuracy: float, bias: float) -> np.ndarray:
    """The judge's 0/1 scores of outputs whose human labels are ``human``; ``bias`` > 0 turns
    a 0 into 1 (pass it for the candidate's outputs only)."""
    wrong = rng.random(human.size) >= accuracy
    scores = np.where(wrong, 1 - human, human)
    return np.where((scores == 0) & (rng.random(human.size) < bias), 1.0, scores)


def clt_bound(f: np.ndarray, labelled: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(estimate, lower bound) of the earlier rule, kept for comparison: PPI++ with lambda
    tuned on all the labels and the one-sided normal (CLT) bound (``ppi_py.ppi_mean_ci``)."""
    unlabelled = np.ones(f.size, bool)
    unlabelled[labelled] = False
    f_l, f_u, n = f[labelled], f[unlabelled], y.size
    cov = float(np.mean((y - y.mean()) * (f_l - f_l.mean())))
    lam = power_tuned_lambda(cov, float(np.var(f, ddof=1)), n, f_u.size)
    rect = y - lam * f_l
    estimate = lam * float(f_u.mean()) + float(rect.mean())
    se = math.sqrt(float(np.var(rect)) / n + lam**2 * float(np.var(f_u)) / f_u.size)
    return estimate, estimate - _Z * se


def replicate(rng: np.random.Generator, delta: float, acc: float, bias: float, n: int) -> dict:
    """One simulated run: each method's pass (bound > -margin) and bound width."""
    hc, hb = human_pairs(rng, N_JUDGED, delta)
    jc, jb = judge(rng, hc, acc, bias), judge(rng, hb, acc, 0.0)
    f = jc - jb
    labelled = rng.choice(N_JUDGED, size=n, replace=False)
    y = (hc - hb)[labelled]
    judge_test = test_noninferiority(
        jc,
        jb,
        kind="binary",
        margin_abs=MARGIN,
        alpha=ALPHA,
        rng=rng,
        resamples=2000,
        power=0.8,
        higher_is_better=True,
        scale=(0.0, 1.0),
    )
    unlabelled = np.ones(N_JUDGED, bool)
    unlabelled[labelled] = False
    ppi = ppi_mean_bound(f, f[labelled], y, alpha=ALPHA, unlabelled_mask=unlabelled)
    human_width = _Z * float(np.std(y)) / math.sqrt(n)
    human_lower = float(y.mean()) - human_width
    clt_estimate, clt_lower = clt_bound(f, labelled, y)
    return {
        "ppi++ clt": (clt_lower > -MARGIN, clt_estimate - clt_lower),
        "judge-only": (judge_test.rejects, judge_test.estimate - judge_test.lower_bound),
        "ppi++": (ppi.lower_bound > -MARGIN, ppi.estimate - ppi.lower_bound),
        "human-only": (human_lower > -MARGIN, human_width),
    }


def _cp(k: int, n: int) -> tuple[float, float]:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def _rows(replicates: int, acc: float, bias: float, n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    at_margin = [replicate(rng, -MARGIN, acc, bias, n) for _ in range(replicates)]
    at_zero = [replicate(rng, 0.0, acc, bias, n) for _ in range(replicates)]
    human_width = float(np.mean([r["human-only"][1] for r in at_margin]))
    rows = []
    for m in METHODS:
        k = sum(bool(r[m][0]) for r in at_margin)
        low, high = _cp(k, replicates)
        power = sum(bool(r[m][0]) for r in at_zero) / replicates
        ratio = float(np.mean([r[m][1] for r in at_margin])) / human_width
        target = ("ok" if high <= ALPHA + 0.01 else "MISS") if m == "ppi++" else ""
        rows.append(
            f"| {acc:.2f} | {bias:.1f} | {n} | {m} | {k / replicates:.3f} [{low:.3f}, {high:.3f}] "
            f"| {power:.3f} | {ratio:.2f} | {1 / ratio**2:.2f} | {target} |"
        )
    return rows


def run(replicates: int) -> str:
    """The markdown table: per judge and labelled n, each method's rates and width ratio."""
    lines = [
        "| judge accuracy | bias to candidate | labelled n | method | false PROMOTE at -margin "
        "[CP 95 %] | pass rate at Δ = 0 | width / human-only | effective-n gain | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, (acc, bias) in enumerate(JUDGES):
        for j, n in enumerate(LABELLED):
            lines += _rows(replicates, acc, bias, n, seed=1000 * i + j)
    return "\n".join(lines)


_INTRO = (
    f"N = {N_JUDGED:,} judged paired examples, binary human outcomes (baseline 1 in 80 %, 10 % "
    "baseline-only pairs), true human delta at -margin (0.05; a pass is a false PROMOTE) or 0 "
    "(power). The judge gives each output's human label with probability `accuracy`, else its "
    "opposite, and turns a candidate's 0 into 1 with probability `bias`. One-sided alpha 0.05. "
    "`judge-only` = the engine's rule on the judge's scores (Tango's score bound), `ppi++` = the "
    "judge-corrected bound the gate uses with human labels (`stats.ppi`: lambda cross-fitted "
    "over two folds of the labels, score bound), `ppi++ clt` = the earlier rule (lambda tuned on "
    "all the labels, normal bound), `human-only` = the normal bound on the same n labels; all on "
    "the same replicates. Width = estimate - lower bound, relative to human-only; effective-n "
    "gain = (1 / width ratio)^2. Target for ppi++: upper CP bound <= alpha + 0.01."
)


def main() -> None:
    """Run the study, print the table and optionally write it between the ppi markers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--write", default=None, help="markdown file, e.g. docs/validity.md")
    args = parser.parse_args()
    table = run(args.replicates)
    print(table)
    if args.write:
        cmd = "python bench/validity_ppi.py " + " ".join(sys.argv[1:])
        title = f"## Judge-corrected bounds (issue 32): `{cmd}` ({datetime.date.today()})"
        v.replace_generated(
            Path(args.write), f"{title}\n\n{_INTRO}\n\n{table}", (BEGIN, END), first=False
        )


if __name__ == "__main__":
    main()
