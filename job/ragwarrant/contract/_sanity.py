"""Sanity rules of a release contract that its field types cannot express.

Each rule raises ``FieldError``, a ``ValueError`` that carries the key path it is about (relative
to the model being validated), so the loader can name the key and its line. Messages never echo a
string the user wrote (it may be private); numbers and declared ids are safe to repeat.

Metric name families (README, "Metric name families"): a metric whose id contains one of these
words has the direction of its family, unless the metric sets ``direction_confirmed: true``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from ragwarrant.display import number
from ragwarrant.limits import MAX_SCALE_MAGNITUDE, MAX_SCALE_TO_MARGIN

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


def name_words(metric_id: str) -> list[str]:
    """The lower-case words of a metric id, in order (``noHallucination``: no, hallucination)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", metric_id).lower()
    return [w for w in re.split(r"[^a-z0-9]+", spaced) if w]


_POSTFIX_NEGATIONS = frozenset({"free", "avoided"})


def name_family(metric_id: str) -> str | None:
    """Return the direction (``higher_is_better``/``lower_is_better``) a metric id's words imply.

    A negation word next to a family word turns the family around (``no_hallucination``,
    ``non_toxicity``, ``error_free``: higher is better; ``not_relevant``: lower is better;
    ``non_llm_context_recall`` is not negated: ``non`` qualifies ``llm``, not ``recall``).
    ``None`` when the id holds no family word or words of both families.
    """
    words = set(name_words(metric_id))
    words |= {w[:-1] for w in words if w.endswith("s")}
    lower, higher = bool(words & LOWER_IS_BETTER_WORDS), bool(words & HIGHER_IS_BETTER_WORDS)
    if lower == higher:
        return None
    seq = [w for w in name_words(metric_id) if w != "of"]
    family = LOWER_IS_BETTER_WORDS | HIGHER_IS_BETTER_WORDS
    for i, w in enumerate(seq):
        if w not in family and not (w.endswith("s") and w[:-1] in family):
            continue
        before = seq[i - 1] if i > 0 else ""
        after = seq[i + 1] if i + 1 < len(seq) else ""
        if before in NEGATION_WORDS - _POSTFIX_NEGATIONS or after in _POSTFIX_NEGATIONS:
            lower = not lower
            break
    return "lower_is_better" if lower else "higher_is_better"


def check_direction_family(metric_id: str, direction: str, confirmed: bool) -> None:
    """Refuse a ``direction`` (``higher_is_better``/``lower_is_better``) that contradicts the metric
    id's name family, unless confirmed.

    Raises:
        FieldError: at ``direction``, with the direction the name suggests.
    """
    family = name_family(metric_id)
    if confirmed or family is None or family == direction:
        return
    raise FieldError(
        f"metric {metric_id!r} is named like a {family} metric but is declared "
        f"{direction}; did you mean direction: {family}? (if {direction} is really "
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


def check_scale_ends(scale: Sequence[float]) -> None:
    """Refuse a scale end beyond ``limits.MAX_SCALE_MAGNITUDE`` (float64 overflow; ValueError)."""
    end = max(abs(scale[0]), abs(scale[1]))
    if end > MAX_SCALE_MAGNITUDE:
        raise ValueError(
            f"expected scale ends within +/-{MAX_SCALE_MAGNITUDE:g}, found {end:g}: the "
            "statistics cannot sum such values without float64 overflow; rescale the metric"
        )


def check_margin(margin: float, scale: Sequence[float], loc: tuple[str | int, ...]) -> None:
    """Refuse a noninferiority margin as wide as the metric's scale or wider, or one too small
    for float64 to resolve on the scale (``limits.MAX_SCALE_TO_MARGIN``).

    A margin as wide as the scale makes the noninferiority test pass whatever the data (every
    delta lies inside it); one below ``max(|low|, |high|) / MAX_SCALE_TO_MARGIN`` is lost in the
    rounding of sums of values on the scale, so a bound could PROMOTE or REJECT by rounding.

    Raises:
        FieldError: at ``loc``, suggesting the margin read as a percentage of the scale, or
            naming the smallest margin the scale allows.
    """
    end = max(abs(scale[0]), abs(scale[1]))
    if end > MAX_SCALE_TO_MARGIN * margin:
        raise FieldError(
            f"expected a margin of at least {end / MAX_SCALE_TO_MARGIN:g} on the scale "
            f"[{number(scale[0])}, {number(scale[1])}], found {number(margin)}: float64 sums of "
            f"values up to {end:g} cannot resolve a smaller one (at most "
            f"{MAX_SCALE_TO_MARGIN:g} margins per scale end); declare the scale the values "
            "really span, or rescale the metric",
            loc,
        )
    width = scale[1] - scale[0]
    if margin < width:
        return
    hint = f"; did you mean margin_abs: {margin / 100:g}?" if margin / 100 < width else ""
    raise FieldError(
        f"expected a margin narrower than the scale [{number(scale[0])}, {number(scale[1])}] "
        f"(width {number(width)}), found {number(margin)}{hint}",
        loc,
    )
