"""Sanity rules of a release contract that its field types cannot express.

Each rule raises ``FieldError``, a ``ValueError`` that carries the key path it is about (relative
to the model being validated), so the loader can name the key and its line. Messages never echo a
string the user wrote (it may be private); numbers and declared ids are safe to repeat.

Metric name families (README, "Metric name families"): a metric whose id contains one of these
words has the direction of its family, unless the metric sets ``direction_confirmed: true``.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragwarrant.contract._models import Direction, ReleaseContract

LOWER_IS_BETTER_WORDS = frozenset({"latency", "cost", "hallucination", "toxicity", "error"})
"""Words of metric ids whose metrics are better when lower."""

HIGHER_IS_BETTER_WORDS = frozenset(
    {
        "faithfulness",
        "accuracy",
        "groundedness",
        "relevance",
        "relevancy",
        "precision",
        "recall",
        "correctness",
    }
)
"""Words of metric ids whose metrics are better when higher."""

NEGATION_WORDS = frozenset({"no", "non", "not", "free", "without", "absence", "avoided"})
"""Words that turn a family around (``no_hallucination``, ``error_free``: higher is better)."""


SCALE_TOLERANCE = 1e-9
"""Relative slack at a quality scale's ends for floating-point rounding.

A value within ``SCALE_TOLERANCE × max(1, high − low)`` of the scale is on it: Ragas writes a
BLEU of ``1.0000000000000004`` (sums of float64 terms rounded above 1). A value farther out is
refused (``hard:value-range``, ``contract.check_scales``) and printed unrounded (``repr``).
"""


def scale_tolerance(low: float, high: float) -> float:
    """Return the absolute slack at each end of the scale ``[low, high]`` (``SCALE_TOLERANCE``)."""
    return SCALE_TOLERANCE * max(1.0, high - low)


class FieldError(ValueError):
    """A contract rule broken at ``loc`` (a key path relative to the model being validated)."""

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.loc = loc


def did_you_mean(wrong: str, candidates: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest candidate, or ``""`` when none is close."""
    close = difflib.get_close_matches(wrong, sorted(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _words(metric_id: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", metric_id).lower()
    words = {w for w in re.split(r"[^a-z0-9]+", spaced) if w}
    return words | {w[:-1] for w in words if w.endswith("s")}


def name_family(metric_id: str) -> str | None:
    """Return the direction (``higher_is_better``/``lower_is_better``) a metric id's words imply.

    A negation word turns the family around (``no_hallucination``, ``error_free``: higher is
    better; ``not_relevant``: lower is better). ``None`` when the id holds no family word or
    words of both families.
    """
    words = _words(metric_id)
    lower, higher = bool(words & LOWER_IS_BETTER_WORDS), bool(words & HIGHER_IS_BETTER_WORDS)
    if lower == higher:
        return None
    if _negated(metric_id):
        lower = not lower
    return "lower_is_better" if lower else "higher_is_better"


_POSTFIX_NEGATIONS = frozenset({"free", "avoided"})


def _negated(metric_id: str) -> bool:
    """Whether a negation word sits next to the family word it turns around.

    ``no_hallucination``, ``non_toxicity``, ``error_free``: yes. ``non_llm_context_recall``:
    no (``non`` qualifies ``llm``, not ``recall``).
    """
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", metric_id).lower()
    seq = [w for w in re.split(r"[^a-z0-9]+", spaced) if w and w != "of"]
    family = LOWER_IS_BETTER_WORDS | HIGHER_IS_BETTER_WORDS

    def is_family(w: str) -> bool:
        return w in family or (w.endswith("s") and w[:-1] in family)

    for i, w in enumerate(seq):
        if not is_family(w):
            continue
        before = seq[i - 1] if i > 0 else ""
        after = seq[i + 1] if i + 1 < len(seq) else ""
        if before in NEGATION_WORDS - _POSTFIX_NEGATIONS or after in _POSTFIX_NEGATIONS:
            return True
    return False


def check_direction_family(metric_id: str, direction: Direction, confirmed: bool) -> None:
    """Refuse a direction that contradicts the metric id's name family, unless confirmed.

    Raises:
        FieldError: at ``direction``, with the direction the name suggests.
    """
    family = name_family(metric_id)
    if confirmed or family is None or family == direction.value:
        return
    raise FieldError(
        f"metric {metric_id!r} is named like a {family} metric but is declared "
        f"{direction.value}; did you mean direction: {family}? (if {direction.value} is really "
        "right, add direction_confirmed: true)",
        ("direction",),
    )


UNIT_WORDS = {
    **{w: "usd" for w in ("usd", "dollar", "dollars")},
    **{w: "eur" for w in ("eur", "euro", "euros")},
    "gbp": "gbp",
    **{w: "cent" for w in ("cent", "cents")},
    **{w: "ms" for w in ("ms", "millisecond", "milliseconds")},
    **{w: "s" for w in ("s", "sec", "secs", "second", "seconds")},
    **{w: "us" for w in ("us", "microsecond", "microseconds")},
}
"""Unit words (lower case) of operational metric ids and units, mapped to one spelling each."""


def check_unit(metric_id: str, unit: str) -> None:
    """Refuse a ``unit`` contradicting the unit word that ends ``metric_id`` (``cost_usd``: usd).

    Only words of ``UNIT_WORDS`` are compared, so an id naming no unit, or a unit outside that
    list, is left alone.

    Raises:
        FieldError: at ``unit``, with the id's unit suggested.
    """
    last = re.split(r"[_\-.]", metric_id)[-1].lower()
    named, declared = UNIT_WORDS.get(last), UNIT_WORDS.get(unit.strip().lower())
    if named is None or declared is None or named == declared:
        return
    raise FieldError(
        f"metric {metric_id!r} is named in {named} but declares unit {declared}: values in "
        f"another unit would be compared as if they were {named}; did you mean unit: {last}?",
        ("unit",),
    )


def check_margin(margin: float, scale: Sequence[float], loc: tuple[str | int, ...]) -> None:
    """Refuse a noninferiority margin as wide as the metric's scale or wider.

    Such a margin makes the noninferiority test pass whatever the data (every delta lies inside it).

    Raises:
        FieldError: at ``loc``, suggesting the margin read as a percentage of the scale.
    """
    width = scale[1] - scale[0]
    if margin < width:
        return
    hint = f"; did you mean margin_abs: {margin / 100:g}?" if margin / 100 < width else ""
    raise FieldError(
        f"expected a margin narrower than the scale [{scale[0]:g}, {scale[1]:g}] "
        f"(width {width:g}), found {margin:g}{hint}",
        loc,
    )


def _distinct(ids: Sequence[str], locs: Sequence[tuple[str | int, ...]], what: str) -> None:
    seen: set[str] = set()
    for value, loc in zip(ids, locs, strict=True):
        if value in seen:
            raise FieldError(f"{what} must be distinct, found {value!r} twice", loc)
        seen.add(value)


def _check_distinct_ids(c: ReleaseContract) -> None:
    policies = [c.baseline.policy_id, *(p.policy_id for p in c.candidates)]
    policy_locs = [
        ("baseline", "policy_id"),
        *(("candidates", i, "policy_id") for i in range(len(c.candidates))),
    ]
    _distinct(policies, policy_locs, "policy ids")
    metrics = [m.id for m in c.quality_metrics] + [m.id for m in c.operational_metrics]
    metric_locs = [("quality_metrics", i, "id") for i in range(len(c.quality_metrics))]
    metric_locs += [("operational_metrics", i, "id") for i in range(len(c.operational_metrics))]
    _distinct(metrics, metric_locs, "metric ids")
    sources = [s.id for s in c.evidence]
    _distinct(sources, [("evidence", i, "id") for i in range(len(sources))], "evidence source ids")


def _check_configs(c: ReleaseContract) -> None:
    seen = {posixpath.normpath(c.baseline.config): "the baseline"}
    for i, p in enumerate(c.candidates):
        path = posixpath.normpath(p.config)
        if path in seen:
            raise FieldError(
                f"candidate {p.policy_id!r} has the same config file as {seen[path]}: a "
                "candidate's config must describe the candidate (the decision lists what differs)",
                ("candidates", i, "config"),
            )
        seen[path] = f"candidate {p.policy_id!r}"


def _check_claims(c: ReleaseContract) -> None:
    quality = {m.id for m in c.quality_metrics}
    operational = {m.id for m in c.operational_metrics}
    for i, claim in enumerate(c.claims.items):
        is_quality = claim.kind.value == "quality-improvement"
        wanted = quality if is_quality else operational
        if claim.metric not in wanted:
            kind = "quality" if is_quality else "operational"
            raise FieldError(
                f"claim {claim.kind.value} names metric {claim.metric!r}, which is not a declared "
                f"{kind} metric (declared: {', '.join(sorted(wanted)) or 'none'})"
                + did_you_mean(claim.metric, wanted),
                ("claims", "items", i, "metric"),
            )


def _check_slices(c: ReleaseContract) -> None:
    metrics = {m.id: m for m in c.quality_metrics}
    for i, ps in enumerate(c.protected_slices):
        for j, name in enumerate(ps.metrics or []):
            if name not in metrics:
                raise FieldError(
                    f"protected slice {ps.value!r} names unknown quality metric {name!r}"
                    + did_you_mean(name, metrics),
                    ("protected_slices", i, "metrics", j),
                )
        if ps.margin_abs is None:
            continue
        tested = ps.metrics or [m.id for m in c.quality_metrics if m.required]
        for name in tested:
            check_margin(ps.margin_abs, metrics[name].scale, ("protected_slices", i, "margin_abs"))


def _check_required(c: ReleaseContract) -> None:
    if not any(m.required for m in c.quality_metrics):
        raise FieldError(
            "no quality metric is required: the candidate would be decided without any quality "
            "gate (on its claims alone); set required: true on at least one quality metric",
            ("quality_metrics",),
        )


def check_references(contract: ReleaseContract) -> None:
    """Refuse repeated ids, claims and slices naming undeclared metrics, and too-wide slice margins.

    Also refuses a contract with no ``required: true`` quality metric: it would decide without
    any noninferiority gate.

    Raises:
        FieldError: at the key of the first broken rule.
    """
    _check_distinct_ids(contract)
    _check_required(contract)
    _check_configs(contract)
    _check_claims(contract)
    _check_slices(contract)


def wide_margins(contract: ReleaseContract) -> list[tuple[str, float, float]]:
    """Margins at least half their metric's scale width: ``(contract key path, margin, width)``.

    Legal (``check_margin`` refuses only a margin as wide as the scale) but rarely meant: a
    noninferiority margin of half the scale accepts a candidate that lost half of it.
    """
    out: list[tuple[str, float, float]] = []
    metrics = {m.id: m for m in contract.quality_metrics}
    for i, m in enumerate(contract.quality_metrics):
        width = m.scale[1] - m.scale[0]
        if m.margin_abs >= width / 2:
            out.append((f"quality_metrics[{i}].margin_abs", m.margin_abs, width))
    for i, ps in enumerate(contract.protected_slices):
        if ps.margin_abs is None:
            continue
        names = ps.metrics or [m.id for m in contract.quality_metrics if m.required]
        width = min(metrics[n].scale[1] - metrics[n].scale[0] for n in names)
        if ps.margin_abs >= width / 2:
            out.append((f"protected_slices[{i}].margin_abs", ps.margin_abs, width))
    return out
