"""Validity study of the noninferiority rule: false-PROMOTE rate, bound coverage and power.

For each scenario, data are simulated with the true oriented delta exactly at -margin (where a
pass is a false PROMOTE), half-way inside the margin, and at 0. On the SAME replicates it runs

- ``rule``: ``ragwarrant.stats.noninferiority.test_noninferiority`` (the issue-10 rule);
- ``t``: the paired t-test lower bound (on cluster means when units are clusters), the reference;
- ``tango``: Tango's score test (binary scenarios without clusters);
- ``legacy``: the first landing's rule, percentile bootstrap with LCB >= -margin (declared
  groups only, as landed; repetitions were not detected).

It prints the false-PROMOTE rate with its Clopper–Pearson 95 % interval
(``scipy.stats.binomtest(...).proportion_ci(method="exact")``), the coverage of the one-sided
lower bound at the margin, and the pass rate (power) half-way inside and at delta = 0. A
benchmark, not a test: rerun it to refresh ``docs/validity.md``.

Usage: python bench/validity.py --replicates 2000 [--workers 2] [--resamples 2000]
    [--write docs/validity.md] [--only binary-n30,...]
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import stats as sps

from ragwarrant.stats.missing_sensitivity import adversarial_pairs, tipping_point, worst_first
from ragwarrant.stats.noninferiority import MetricKind, test_noninferiority
from ragwarrant.stats.onesided import oriented_bootstrap
from ragwarrant.stats.paired_binary import tango_test

REPO = Path(__file__).resolve().parents[1]
ALPHA = 0.05


@dataclass(frozen=True)
class Sample:
    """One simulated paired sample."""

    candidate: np.ndarray  # NaN: missing, left out under on_missing: exclude
    baseline: np.ndarray
    groups: np.ndarray | None = None  # declared clusters
    example_ids: np.ndarray | None = None  # repeated ids = repetitions (not declared)


Generator = Callable[[np.random.Generator, float], Sample]


@dataclass(frozen=True)
class Scenario:
    """A data-generating process with its metric kind, scale and margin."""

    name: str
    kind: MetricKind
    margin: float
    scale: tuple[float, float]
    generate: Generator


def _binary(n: int) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        q12, q21 = 0.05 + delta / 2, 0.05 - delta / 2  # candidate-only, baseline-only 1s
        cells = rng.choice(4, size=n, p=[0.70, q12, q21, 1 - 0.70 - q12 - q21])
        cand = np.isin(cells, (0, 1)).astype(float)
        base = np.isin(cells, (0, 2)).astype(float)
        return Sample(cand, base)

    return gen


def _likert(n: int) -> Generator:
    p = np.array([0.05, 0.10, 0.25, 0.35, 0.25])
    r = 0.2

    def gen(rng: np.random.Generator, delta: float) -> Sample:
        # A step down has probability r + t (not from 1), up r (not from 5): E[D] = delta.
        t = (r * (1 - p[4]) - delta) / (1 - p[0]) - r
        base = rng.choice(np.arange(1, 6), size=n, p=p).astype(float)
        u = rng.uniform(size=n)
        down = (u < r + t) & (base > 1)
        up = (u >= 1 - r) & (base < 5)
        return Sample(base - down + up, base)

    return gen


def _skewed(n: int) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        base = rng.gamma(2.0, 0.1, n)
        noise = rng.gamma(0.5, 0.3, n) - 0.15  # right-skewed, mean 0
        return Sample(base + delta + noise, base)

    return gen


def _bounded(n: int) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        base = rng.beta(5.0, 2.0, n)
        mu = 5.0 / 7.0 + 2.0 * delta
        v = rng.beta(mu * 8.0, (1.0 - mu) * 8.0, n)
        return Sample(0.5 * base + 0.5 * v, base)

    return gen


def _ties(n: int) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        moved = rng.uniform(size=n) < 0.15
        p_up = 0.5 + delta / (2 * 0.15 * 0.5)
        step = np.where(rng.uniform(size=n) < p_up, 0.5, -0.5)
        base = np.full(n, 0.5)
        return Sample(base + moved * step, base)

    return gen


def _clustered(clusters: int, size: int = 5) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        g = np.repeat(np.arange(clusters), size)
        base = rng.normal(0.7, 0.2, g.size)
        d = delta + rng.normal(0, 0.1, clusters)[g] + rng.normal(0, 0.15, g.size)
        return Sample(base + d, base, groups=g)

    return gen


def _repetitions(examples: int, runs: int) -> Generator:
    def gen(rng: np.random.Generator, delta: float) -> Sample:
        ids = np.repeat(np.arange(examples), runs)
        base = rng.normal(0.7, 0.2, examples)[ids] + rng.normal(0, 0.05, ids.size)
        d = delta + rng.normal(0, 0.15, examples)[ids] + rng.normal(0, 0.1, ids.size)
        return Sample(base + d, base, example_ids=ids)

    return gen


def _skewed_losses(n: int, tail: float = 0.15) -> Generator:
    """Issue 33: a small slice whose deltas have a long lower tail, -tail * (Exp(1) - 1) (a long
    upper tail, gains, when ``tail`` < 0)."""

    def gen(rng: np.random.Generator, delta: float) -> Sample:
        base = rng.beta(5.0, 2.0, n)
        return Sample(base + delta - tail * (rng.exponential(1.0, n) - 1.0), base)

    return gen


def _missing(n: int, informative: bool, lost_c: int = 8, lost_b: int = 6) -> Generator:
    """Issue 33: ``_bounded(n)`` with ``lost_c`` candidate values missing (on its worst deltas when
    ``informative``, else at random) and ``lost_b`` baseline values missing at random."""
    bounded = _bounded(n)

    def gen(rng: np.random.Generator, delta: float) -> Sample:
        s = bounded(rng, delta)
        cand, base = s.candidate.copy(), s.baseline.copy()
        order = np.argsort(cand - base) if informative else rng.permutation(n)
        cand[order[:lost_c]] = np.nan
        base[rng.choice(order[lost_c:], lost_b, replace=False)] = np.nan
        return Sample(cand, base)

    return gen


SCENARIOS = [
    Scenario("binary-n30", "binary", 0.05, (0, 1), _binary(30)),
    Scenario("repetitions-60x3", "continuous", 0.05, (-5, 5), _repetitions(60, 3)),
    Scenario("clusters-10x5", "continuous", 0.05, (-5, 5), _clustered(10)),
    Scenario("heavy-ties-n200", "continuous", 0.05, (0, 1), _ties(200)),
    Scenario("slice-binary-n12", "binary", 0.10, (0, 1), _binary(12)),
    Scenario("slice-bounded-n15", "continuous", 0.10, (0, 1), _bounded(15)),
    Scenario("binary-n60", "binary", 0.05, (0, 1), _binary(60)),
    Scenario("likert-1-5-n150", "ordinal", 0.25, (1, 5), _likert(150)),
    Scenario("bounded-01-n200", "continuous", 0.05, (0, 1), _bounded(200)),
    Scenario("skewed-n300", "continuous", 0.05, (-5, 5), _skewed(300)),
    Scenario("clusters-30x5", "continuous", 0.05, (-5, 5), _clustered(30)),
    Scenario("clusters-100x5", "continuous", 0.05, (-5, 5), _clustered(100)),
    Scenario("binary-n400", "binary", 0.05, (0, 1), _binary(400)),
    Scenario("small-skewed-slice-n12", "continuous", 0.10, (0, 1), _skewed_losses(12)),
    Scenario("informative-missing-exclude-n300", "continuous", 0.05, (0, 1), _missing(300, True)),
    Scenario("mcar-missing-exclude-n300", "continuous", 0.05, (0, 1), _missing(300, False)),
    Scenario("small-right-skewed-slice-n12", "continuous", 0.10, (0, 1), _skewed_losses(12, -0.15)),
]
DELTAS = ("margin", "inside", "zero")  # true delta = -m, -m/2, 0
METHODS = ("rule", "t", "tango", "legacy")


def _true_delta(sc: Scenario, where: str) -> float:
    return {"margin": -sc.margin, "inside": -sc.margin / 2, "zero": 0.0}[where]


def _unit_deltas(s: Sample) -> np.ndarray:
    delta = s.candidate - s.baseline
    labels = s.groups if s.groups is not None else s.example_ids
    if labels is None:
        return delta
    codes = np.unique(labels, return_inverse=True)[1]
    return np.bincount(codes, weights=delta) / np.bincount(codes)


def _t_lower(s: Sample) -> float:
    d = _unit_deltas(s)
    sd = float(np.std(d, ddof=1))
    return float(d.mean() - sps.t.ppf(1 - ALPHA, d.size - 1) * sd / math.sqrt(d.size))


def _complete(s: Sample) -> tuple[Sample, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The complete pairs (``exclude``) and the dropped ones imputed adversarially."""
    lost_c, lost_b = np.isnan(s.candidate), np.isnan(s.baseline)
    dropped = adversarial_pairs(s.candidate, s.baseline, lost_c & ~lost_b, lost_b & ~lost_c, 0, 1)
    ok = ~(lost_c | lost_b)
    if ok.all():
        return s, dropped
    return Sample(s.candidate[ok], s.baseline[ok]), dropped


def _rule(sc: Scenario, s: Sample, rng: np.random.Generator, resamples: int) -> tuple[float, bool]:
    """The job's rule: the test on complete pairs, which under ``exclude`` passes only when the
    tipping-point analysis (``stats.missing_sensitivity``) finds no tipping point; its lower
    bound is the smaller of the two tests' (complete pairs, all dropped pairs imputed)."""
    full, (_, cand, base) = _complete(s)
    order = worst_first(cand - base)

    def run(k: int):  # type: ignore[no-untyped-def]
        return test_noninferiority(
            np.concatenate([full.candidate, cand[order[:k]]]),
            np.concatenate([full.baseline, base[order[:k]]]),
            kind=sc.kind,
            margin_abs=sc.margin,
            alpha=ALPHA,
            rng=rng,
            resamples=resamples,
            scale=sc.scale,
            groups=full.groups if k == 0 else None,
            example_ids=full.example_ids if k == 0 else None,
        )

    res = run(0)
    if order.size == 0:
        return res.lower_bound, res.rejects
    sens = tipping_point(run, order.size)  # its bound (all imputed) is the rule's bound
    return min(res.lower_bound, sens.test.lower_bound), res.rejects and sens.holds


def _run_one(
    sc: Scenario, s: Sample, seed: list[int], resamples: int, at_margin: bool
) -> dict[str, float]:
    """Lower bounds and pass flags of every method on one sample (NaN: not applicable)."""
    rng = np.random.default_rng(seed)
    lcb, passes = _rule(sc, s, rng, resamples)
    out = {"rule_lcb": lcb, "rule_pass": float(passes)}
    s = _complete(s)[0]
    t_lcb = _t_lower(s)
    out |= {"t_lcb": t_lcb, "t_pass": float(t_lcb > -sc.margin)}
    out |= {"tango_lcb": math.nan, "tango_pass": math.nan}
    if sc.kind == "binary" and s.groups is None and s.example_ids is None:
        d = s.candidate - s.baseline
        tg = tango_test(int(np.sum(d > 0)), int(np.sum(d < 0)), d.size, -sc.margin, ALPHA)
        out |= {"tango_lcb": tg.lower_bound, "tango_pass": float(tg.p_value <= ALPHA)}
    out |= {"legacy_lcb": math.nan, "legacy_pass": math.nan}
    if at_margin:  # the first landing's rule, for its false-PROMOTE rate only
        (boot,) = oriented_bootstrap(
            s.candidate[:, None], s.baseline[:, None], ["mean"], [1], s.groups, resamples, rng
        )
        legacy = boot.percentile_test(-sc.margin, ALPHA, power=0.8, inclusive=True)
        out |= {"legacy_lcb": legacy.lower_bound, "legacy_pass": float(legacy.rejects)}
    return out


def _job(args: tuple[int, int, int, int, int]) -> list[dict[str, float]]:
    sc_i, d_i, start, stop, resamples = args
    sc = SCENARIOS[sc_i]
    delta = _true_delta(sc, DELTAS[d_i])
    rows = []
    for r in range(start, stop):
        data_rng = np.random.default_rng([2026, sc_i, d_i, r])
        sample = sc.generate(data_rng, delta)
        rows.append(_run_one(sc, sample, [7, sc_i, d_i, r], resamples, DELTAS[d_i] == "margin"))
    return rows


def _cp(k: int, n: int) -> tuple[float, float]:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class Cell:
    """Summary of one method on one scenario."""

    scenario: str
    method: str
    false_promote: int
    replicates: int
    coverage: float
    power_inside: float
    power_zero: float

    @property
    def rate(self) -> float:
        return self.false_promote / self.replicates


def _summarise(sc: Scenario, rows: dict[str, list[dict[str, float]]]) -> list[Cell]:
    cells = []
    for m in METHODS:
        at_margin = np.array([r[f"{m}_pass"] for r in rows["margin"]])
        if np.all(np.isnan(at_margin)):
            continue
        lcb = np.array([r[f"{m}_lcb"] for r in rows["margin"]])
        cells.append(
            Cell(
                scenario=sc.name,
                method=m,
                false_promote=int(np.sum(at_margin)),
                replicates=at_margin.size,
                coverage=float(np.mean(lcb <= -sc.margin)),
                power_inside=float(np.mean([r[f"{m}_pass"] for r in rows["inside"]])),
                power_zero=float(np.mean([r[f"{m}_pass"] for r in rows["zero"]])),
            )
        )
    return cells


def _verdict(cell: Cell, cells: list[Cell]) -> str:
    if cell.method != "rule":
        return ""
    ref = next((c for c in cells if c.method == "tango"), None) or next(
        c for c in cells if c.method == "t"
    )
    ok_rate = _cp(cell.false_promote, cell.replicates)[1] <= ALPHA + 0.01
    ok_cov = cell.coverage >= 0.94
    ok_power = cell.power_zero >= ref.power_zero - 0.03
    fails = [
        name
        for name, ok in (
            ("rate", ok_rate),
            ("coverage", ok_cov),
            (f"power vs {ref.method}", ok_power),
        )
        if not ok
    ]
    return "ok" if not fails else "MISS: " + ", ".join(fails)


def _fmt(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3f}"


def format_table(cells: list[Cell]) -> str:
    """The markdown table: one row per scenario and method."""
    head = (
        "| scenario | method | false-PROMOTE at −margin [CP 95 %] | coverage of LCB | "
        "power at −margin/2 | power at Δ = 0 | target |\n|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for c in cells:
        lo, hi = _cp(c.false_promote, c.replicates)
        same = [x for x in cells if x.scenario == c.scenario]
        lines.append(
            f"| {c.scenario} | {c.method} | {c.rate:.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{c.coverage:.3f} | {_fmt(c.power_inside)} | {_fmt(c.power_zero)} | "
            f"{_verdict(c, same)} |"
        )
    return head + "\n".join(lines) + "\n"


def run_study(
    replicates: int,
    resamples: int,
    workers: int,
    only: set[str] | None = None,
    on_scenario: Callable[[list[Cell]], None] | None = None,
) -> list[Cell]:
    """Simulate every scenario (or those in ``only``) and summarise each method.

    ``on_scenario`` is called with all cells so far each time a scenario completes.
    """
    chosen = [(i, sc) for i, sc in enumerate(SCENARIOS) if only is None or sc.name in only]
    chunk = max(1, math.ceil(replicates / (4 * max(workers, 1))))
    jobs = [
        (i, d, s, min(s + chunk, replicates), resamples)
        for i, _ in chosen
        for d in range(len(DELTAS))
        for s in range(0, replicates, chunk)
    ]
    per_scenario = len(DELTAS) * math.ceil(replicates / chunk)
    rows: dict[tuple[int, int], list[dict[str, float]]] = {}
    cells: list[Cell] = []
    with Pool(workers) as pool:
        for k, (job, res) in enumerate(zip(jobs, pool.imap(_job, jobs), strict=True), 1):
            rows.setdefault((job[0], job[1]), []).extend(res)
            if k % per_scenario == 0:
                i = job[0]
                by_delta = {DELTAS[d]: rows[(i, d)] for d in range(len(DELTAS))}
                cells += _summarise(SCENARIOS[i], by_delta)
                if on_scenario is not None:
                    on_scenario(cells)
    return cells


BEGIN, END = "<!-- validity:begin -->", "<!-- validity:end -->"


def replace_generated(
    path: Path, generated: str, markers: tuple[str, str] = (BEGIN, END), first: bool = True
) -> None:
    """Write ``generated`` between the ``markers`` of ``path``, keeping the rest.

    Text outside the markers (the hand-written reading of the table, the sections written by
    ``bench/validity_sequential.py``, ``bench/validity_claims.py`` and
    ``bench/hint_calibration.py``) is kept; a file without the markers gets the generated block
    first (``first``) or last, around its old text.
    """
    begin, end = markers
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{generated.rstrip()}\n{end}\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        path.write_text(head + block + ("\n" + tail if tail else ""))
    elif first:
        path.write_text(block + ("\n" + old if old else ""))
    else:
        path.write_text((old.rstrip("\n") + "\n\n" if old else "") + block)


def main() -> None:
    """Run the study, print the table and optionally write it with its command and date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument(
        "--write", default=None, help="markdown file to write, e.g. docs/validity.md"
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    total = sum(1 for sc in SCENARIOS if only is None or sc.name in only)

    def write(cells: list[Cell]) -> None:
        done = len({c.scenario for c in cells})
        print(f"{done}/{total} scenarios done", file=sys.stderr, flush=True)
        if args.write:
            cmd = "python bench/validity.py " + " ".join(sys.argv[1:])
            intro = (
                (REPO / "bench" / "validity_intro.md")
                .read_text()
                .format(
                    command=cmd,
                    date=datetime.date.today().isoformat(),
                    replicates=args.replicates,
                    resamples=args.resamples,
                )
            )
            status = "" if done == total else f"\n**Partial: {done} of {total} scenarios.**\n"
            replace_generated(Path(args.write), intro + status + "\n" + format_table(cells))

    print(format_table(run_study(args.replicates, args.resamples, args.workers, only, write)))


if __name__ == "__main__":
    main()
