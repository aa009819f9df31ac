"""Draw a blinded random sample of paired examples for human review.

The population is every example of the contract's confirmatory split (or of all examples
without splits) where both the baseline and the candidate have a value of the metric. The draw
is uniform without replacement (``numpy.random.Generator.choice``), or, when stratified,
proportional to each slice's size (largest remainders) and uniform within each slice, so every
example has (nearly) the same chance of being drawn: the condition of the judge-corrected bound
(``stats.ppi``). Which policy is shown as A is a fair coin per item.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragwarrant.contract import QualityMetric, ReleaseContract
from ragwarrant.errors import EvidenceError, UsageError
from ragwarrant.review.queue import DrawnItem, EvidenceDigest, ReviewQueue, draw_tag
from ragwarrant.stats.noninferiority import detect_metric_kind


@dataclass(frozen=True)
class Population:
    """The examples a draw is made from, sorted by example id.

    Attributes:
        example_ids: example ids where both policies have a value of the metric.
        slices: each example's slice value (None without one), same order.
    """

    example_ids: tuple[str, ...]
    slices: tuple[str | None, ...]


def population(
    table: pa.Table, contract: ReleaseContract, metric: str, baseline: str, candidate: str
) -> Population:
    """The paired examples of ``metric`` in the confirmatory scope of the canonical table.

    Args:
        table: the canonical evidence table (``evidence.schema``).

    Raises:
        UsageError: ``review-metric-unknown`` when the contract declares no such quality metric.
    """
    if metric not in {m.id for m in contract.quality_metrics}:
        known = ", ".join(m.id for m in contract.quality_metrics)
        raise UsageError(
            "review-metric-unknown",
            f"--metric {metric!r} is not a quality metric of the contract",
            hint=f"one of: {known}",
        )
    rows = table.filter(pc.and_(pc.equal(table["metric"], metric), pc.is_valid(table["value"])))
    if contract.splits is not None:
        rows = rows.filter(pc.equal(rows["split"], contract.splits.confirmatory))
    policies: dict[str, set[str]] = defaultdict(set)
    slices: dict[str, str | None] = {}
    columns = (rows[c].to_pylist() for c in ("policy_id", "example_id", "slice"))
    for policy, example, slice_value in zip(*columns, strict=True):
        policies[example].add(policy)
        slices.setdefault(example, slice_value)
    ids = sorted(e for e, p in policies.items() if {baseline, candidate} <= p)
    return Population(tuple(ids), tuple(slices[e] for e in ids))


def binary_metric(table: pa.Table, metric: QualityMetric) -> bool:
    """Whether ``metric`` is binary: declared so, or undeclared with every finite value of it in
    the canonical ``table`` 0 or 1 (``stats.noninferiority.detect_metric_kind``; False without
    a value). Its human labels must then be 0 or 1 too (``review.labels.read_labels``)."""
    if metric.metric_kind is not None:
        return metric.metric_kind == "binary"
    rows = table.filter(pc.equal(table["metric"], metric.id))
    values = rows["value"].drop_null().to_numpy()
    values = values[np.isfinite(values)]
    return values.size > 0 and detect_metric_kind(values, metric.scale) == "binary"


def _allocation(sizes: dict[str | None, int], n: int) -> dict[str | None, int]:
    """Proportional allocation of ``n`` over strata by largest remainders (ties: stratum order)."""
    total = sum(sizes.values())
    exact = {k: n * v / total for k, v in sizes.items()}
    alloc = {k: math.floor(x) for k, x in exact.items()}
    order = sorted(sizes, key=lambda k: (-(exact[k] - alloc[k]), str(k)))
    for k in order[: n - sum(alloc.values())]:
        alloc[k] += 1
    return alloc


def draw(
    pop: Population,
    *,
    n: int,
    seed: int,
    stratify: bool,
    meta: tuple[str, str, str],
    evidence: list[EvidenceDigest],
) -> ReviewQueue:
    """Draw ``n`` examples and blind them.

    Args:
        pop: the population (``population``).
        n: items to draw, 1 <= n <= population size.
        seed: seed of ``numpy.random.default_rng`` (recorded in the queue).
        stratify: proportional allocation over slices, uniform within each.
        meta: (metric, baseline, candidate).
        evidence: the evidence files the population was read from, with sha256.

    Returns:
        ReviewQueue: items in a random order, ids ``<tag>-r0001``... (they reveal nothing; the
        tag is ``draw_tag``, unique to the draw), each with
        the policy shown as A chosen by a fair coin.

    Raises:
        UsageError: ``review-n-invalid`` when n is not in [1, population size].
    """
    size = len(pop.example_ids)
    if not 1 <= n <= size:
        raise UsageError(
            "review-n-invalid",
            f"--n {n}: the population has {size} paired examples; draw between 1 and {size}",
            hint="lower --n, or check --metric and the candidate",
        )
    rng = np.random.default_rng(seed)
    if stratify:  # each slice in its sorted order, then one shuffle of the whole draw
        strata: dict[str | None, list[int]] = defaultdict(list)
        for i, s in enumerate(pop.slices):
            strata[s].append(i)
        alloc = _allocation({k: len(v) for k, v in strata.items()}, n)
        chosen: list[int] = []
        for key in sorted(strata, key=str):
            members = np.asarray(strata[key])
            chosen += [int(i) for i in rng.choice(members, size=alloc[key], replace=False)]
        chosen = [chosen[i] for i in rng.permutation(len(chosen))]
    else:
        chosen = [int(i) for i in rng.choice(size, size=n, replace=False)]
    flips = rng.random(len(chosen)) < 0.5
    tag = draw_tag(seed, evidence, len(chosen), meta)
    items = [
        DrawnItem(
            item_id=f"{tag}-r{k + 1:04d}",
            example_id=pop.example_ids[i],
            slice=pop.slices[i],
            shown=("baseline", "candidate") if flip else ("candidate", "baseline"),
        )
        for k, (i, flip) in enumerate(zip(chosen, flips.tolist(), strict=True))
    ]
    metric, baseline, candidate = meta
    return ReviewQueue(
        metric=metric,
        baseline=baseline,
        candidate=candidate,
        seed=seed,
        stratified_by_slice=stratify,
        population=size,
        evidence=evidence,
        items=items,
    )


def evidence_digests(
    contract: ReleaseContract, digests: list[tuple[str, str]]
) -> list[EvidenceDigest]:
    """The (path, sha256) of ``digests`` that belong to the contract's evidence sources.

    A dataset directory's parts (``<path>/<part>``) are kept one by one, as the manifest lists them.
    """
    roots = [s.path for s in contract.evidence]
    return [
        EvidenceDigest(path=path, sha256=sha)
        for path, sha in digests
        if any(path == r or path.startswith(r + "/") for r in roots)
    ]


def _queue_error(code: str, message: str, relative: str, column: str) -> EvidenceError:
    return EvidenceError(
        code,
        f"{relative}: {message}",
        hint="pass the queue 'ragwarrant review sample' wrote, unchanged, or draw a new one "
        "from this evidence and label it",
        file=relative,
        column=column,
    )


def check_redraw(
    queue: ReviewQueue, table: pa.Table, contract: ReleaseContract, relative: str
) -> None:
    """Check that ``queue`` is the draw its recorded seed and parameters give on this evidence.

    The draw is re-derived (``population`` then ``draw`` with the queue's seed, n = its number of
    items, metric, policies and stratification) and compared item by item: example id, slice,
    item id and the blinding order ``shown``. An edited queue (an item swapped for an undrawn
    example, a reversed ``shown``) is not the uniform random, blinded draw the bound assumes.

    Args:
        queue: the queue as read; table: this run's canonical evidence (``evidence.schema``).
        relative: the queue's name in the input directory (for messages).

    Raises:
        EvidenceError: ``review-queue-example-unknown`` (an item names an example with no
            paired value of the metric; JSON pointer ``items/<k>/example_id``), or
            ``review-queue-not-the-draw`` (the first item that differs from the re-derived
            draw, ``items/<k>``, or ``population`` when the sizes differ). Values are not echoed.
    """
    pop = population(table, contract, queue.metric, queue.baseline, queue.candidate)
    known = set(pop.example_ids)
    for k, item in enumerate(queue.items):
        if item.example_id not in known:
            unknown = sum(i.example_id not in known for i in queue.items)
            raise _queue_error(
                "review-queue-example-unknown",
                f"the example of items[{k}].example_id has no paired value of "
                f"{queue.metric!r} in the evidence ({unknown} of {len(queue.items)} items "
                "name such an example)",
                relative,
                f"items/{k}/example_id",
            )
    n = len(queue.items)
    if queue.population != len(pop.example_ids) or not 1 <= n <= len(pop.example_ids):
        raise _queue_error(
            "review-queue-not-the-draw",
            f"the draw records a population of {queue.population}; this evidence has "
            f"{len(pop.example_ids)} paired examples",
            relative,
            "population",
        )
    again = draw(
        pop,
        n=n,
        seed=queue.seed,
        stratify=queue.stratified_by_slice,
        meta=(queue.metric, queue.baseline, queue.candidate),
        evidence=queue.evidence,
    )
    for k, (got, want) in enumerate(zip(queue.items, again.items, strict=True)):
        if got != want:
            field = next(
                f
                for f in ("item_id", "example_id", "slice", "shown")
                if getattr(got, f) != getattr(want, f)
            )
            raise _queue_error(
                "review-queue-not-the-draw",
                f"items[{k}].{field} differs from the draw its seed {queue.seed} gives on this "
                "evidence: the queue was edited",
                relative,
                f"items/{k}/{field}",
            )
