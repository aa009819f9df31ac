"""Contract checks that need the evidence: pure functions the engine calls once it has read it.

Each returns a list of located messages (empty when the contract and the evidence agree); the
engine turns a non-empty list into a failed run-level hard gate (BLOCK). With ``source`` (from
``load_contract_source``) a message starts ``contract.yaml: key.path (line N):``; without it,
``key.path:``. Messages repeat declared ids and numbers, never free text from the evidence other
than the ids, split and slice values it holds (shown through ``display.quoted``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from ragwarrant.contract._document import Loc, key_path
from ragwarrant.contract._loading import ContractSource
from ragwarrant.contract._release import ReleaseContract
from ragwarrant.contract._sanity import did_you_mean, scale_tolerance
from ragwarrant.display import LATIN_OF, number, quoted

#: What ``check_near_misses`` compares: split, protected slice, policy or metric labels.
NearMissKind = Literal["split", "slice", "policy", "metric"]

_CONFIRMATORY_NAMES = ("confirmatory", "holdout", "heldout", "held-out", "held_out", "test")
_DEVELOPMENT_NAMES = ("development", "dev", "validation", "val", "tuning", "train")


def _where(source: ContractSource | None, loc: Loc) -> str:
    return source.where(loc) if source is not None else key_path(loc)


def _listed(values: Iterable[str]) -> str:
    return ", ".join(sorted(values)) or "none"


def check_policy_ids(
    contract: ReleaseContract, present_ids: Iterable[str], *, source: ContractSource | None = None
) -> list[str]:
    """Report each declared baseline or candidate policy id that the evidence does not hold.

    Args:
        contract: the validated contract.
        present_ids: every policy id found in the evidence (all sources together).
        source: the contract's source, for line numbers.

    Returns:
        One message per absent policy, listing the ids present and the closest one.
    """
    present = set(present_ids)
    declared = contract.declared_labels("policy")
    return [
        f"{_where(source, loc)}: policy {policy!r} is not in the evidence, which holds "
        f"{_listed(present)}" + did_you_mean(policy, present - set(declared.values()))
        for loc, policy in declared.items()
        if policy not in present
    ]


def check_splits_declared(
    contract: ReleaseContract,
    split_values: Collection[str],
    *,
    source: ContractSource | None = None,
) -> list[str]:
    """Report split values in the evidence that the contract's ``splits:`` block does not govern.

    Without a ``splits:`` block every row counts as confirmatory evidence, so development rows
    would decide; with one, its confirmatory value must be among the values present.

    Args:
        contract: the validated contract.
        split_values: the distinct values of the evidence's split column (empty: no such column).
        source: the contract's source, for line numbers.

    Returns:
        At most one message, with a suggested ``splits:`` block or the closest value.
    """
    if not split_values:
        return []
    if contract.splits is None:  # suggest a splits: block from the values' usual names
        lowered = {v.lower(): v for v in split_values}
        confirmatory = next((lowered[n] for n in _CONFIRMATORY_NAMES if n in lowered), None)
        development = next((lowered[n] for n in _DEVELOPMENT_NAMES if n in lowered), None)
        dev = f"development: {development}, " if development is not None else ""
        suggestion = f"did you mean splits: {{{dev}confirmatory: {confirmatory}}}?"
        if confirmatory is None:
            suggestion = "add splits: {confirmatory: <the held-out split value>}"
        return [
            f"{_where(source, ('splits',))}: the evidence holds split values "
            f"{_listed(split_values)} but the contract has no splits: block, so development "
            f"rows would count as confirmatory evidence; {suggestion}"
        ]
    wanted = contract.splits.confirmatory
    if wanted in split_values:
        return []
    return [
        f"{_where(source, ('splits', 'confirmatory'))}: split {wanted!r} is not in the evidence, "
        f"which holds {_listed(split_values)}" + did_you_mean(wanted, split_values)
    ]


#: Dropped when folding: format characters (zero-width space, bidirectional marks), controls,
#: combining marks (accents after NFD), separators and every punctuation class (dashes U+2010,
#: U+2212 and ``-``, ``_``, ``.``, quotes, brackets).
_FOLD_DROP = ("Cf", "Cc", "Mn", "Me", "Z", "P")


def _read_alike(label: str, declared: str) -> bool:
    """Whether two labels read alike to a reader. Each is folded: NFKC, lookalike characters as
    Latin letters (``display.LATIN_OF``), casefold but for a capital ``I``, ``m`` as ``rn``,
    NFD, then every white space, format, control, combining mark and punctuation character
    removed; the folds must be equal, but for a capital ``I`` that matches ``i``, ``l`` or ``I``
    (UTS #39 maps ``I`` to ``l``; case folding maps it to ``i``). ``Holdout``, ``hold-out``,
    ``hold\u2010out``, ``ho\u200bldout``, ``holdоut`` with a Cyrillic ``о``, ``hóldout``,
    ``hoIdout``, ``ho1dout`` and ``h0ldout`` all read as ``holdout``."""
    folds = []
    for text in (label, declared):
        text = unicodedata.normalize("NFKC", text).translate(LATIN_OF)
        text = "I".join(part.casefold() for part in text.split("I")).replace("m", "rn")
        folds.append(
            "".join(
                ch
                for ch in unicodedata.normalize("NFD", text)
                if not ch.isspace() and not unicodedata.category(ch).startswith(_FOLD_DROP)
            )
        )
    a, b = folds
    return len(a) == len(b) and all(
        x == y or {x, y} in ({"I", "i"}, {"I", "l"}) for x, y in zip(a, b, strict=True)
    )


def check_near_misses(
    contract: ReleaseContract,
    kind: NearMissKind,
    examples: Mapping[str, int],
    *,
    located: Mapping[str, str] | None = None,
    source: ContractSource | None = None,
) -> list[str]:
    """Report labels in the evidence that the contract does not declare but that differ from a
    declared one only as ``_read_alike`` ignores: case, white space, punctuation and dashes,
    accents, invisible characters, compatibility forms or lookalike characters (Cyrillic/Greek
    letters, ``I``/``1``/``|`` for ``l``, ``ı`` for ``i``, ``0`` for ``o``, ``rn`` for ``m``).

    Rows with such a label are in no split role, no protected slice, no tested policy or no
    tested metric, so they would be dropped from the decision while a reader takes them for the
    declared one (trials PROMOTEd candidates whose worst examples were labelled ``Holdout``,
    ``Summ`` for protected ``summ``, ``TOPK3`` for ``topk3``, ``Faithfulness`` or
    ``faithfuIness`` for ``faithfulness``). A label that folds to no declared one (a
    ``train`` split, another task, a third policy, another metric) is not reported here: it
    stays a note.

    Args:
        contract: the validated contract.
        kind: ``split`` (``splits:`` values), ``slice`` (``protected_slices[*].value``),
            ``policy`` (baseline and candidate policy ids) or ``metric`` (quality and
            operational metric ids).
        examples: label → examples that have a row with it (every label present).
        located: label → one row that holds it (``<file> row <n>``), named when given.
        source: the contract's source, for line numbers.

    Returns:
        One message per declared label with near misses, naming them (``display.quoted``),
        their example counts and, with ``located``, a row of each.
    """
    declared = contract.declared_labels(kind)
    known = set(declared.values())
    messages = []
    for loc, wanted in declared.items():
        near = sorted(v for v in examples if v not in known and _read_alike(v, wanted))
        if not near:
            continue
        shown = ", ".join(
            f"{quoted(v)} ({examples[v]} examples" + (f", e.g. {located[v]})" if located else ")")
            for v in near
        )
        if len(near) > 1:  # the total once, before the values; one value states its own count
            shown = f"{sum(examples[v] for v in near)} examples: {shown}"
        messages.append(
            f"{_where(source, loc)}: {kind} {quoted(wanted)} is declared, but the evidence also "
            f"labels {shown}, which differ from it only by case, white space, "
            "punctuation, accents, invisible characters or lookalike characters and would be left "
            "out of the decision; relabel them in the evidence, or declare the intended value"
        )
    return messages


def check_scales(
    contract: ReleaseContract,
    observed: Mapping[str, tuple[float, float]],
    *,
    non_binary: Collection[str] = (),
    source: ContractSource | None = None,
) -> list[str]:
    """Report quality metrics whose values contradict the declared scale or ``metric_kind``.

    Args:
        contract: the validated contract.
        observed: metric id → (smallest, largest) finite value in the evidence, all policies.
        non_binary: ids of metrics holding a finite value other than 0 and 1.
        source: the contract's source, for line numbers.

    Values within ``scale_tolerance`` of an end are on the scale (float rounding); values
    outside are printed unrounded.

    Returns:
        One message per contradiction, suggesting the scale that covers the values.
    """
    messages = []
    for i, metric in enumerate(contract.quality_metrics):
        low, high = metric.scale
        if metric.id in observed:
            seen_low, seen_high = (float(v) for v in observed[metric.id])
            slack = scale_tolerance(low, high)
            if seen_low < low - slack or seen_high > high + slack:
                messages.append(
                    f"{_where(source, ('quality_metrics', i, 'scale'))}: values of {metric.id!r} "
                    f"range over [{seen_low!r}, {seen_high!r}] but the declared scale is "
                    f"[{number(low)}, {number(high)}]: fix the out-of-scale values, or, if the "
                    f"metric really spans more, declare a scale that covers them (e.g. "
                    f"[{number(min(seen_low, low))}, {number(max(seen_high, high))}])"
                )
        if metric.metric_kind == "binary" and metric.id in non_binary:
            messages.append(
                f"{_where(source, ('quality_metrics', i, 'metric_kind'))}: {metric.id!r} is "
                "declared binary but holds values other than 0 and 1; did you mean metric_kind: "
                "ordinal, continuous, or null (detect from the data)?"
            )
    return messages


def check_directions(
    contract: ReleaseContract,
    declared: Mapping[str, Mapping[str, str]],
    *,
    source: ContractSource | None = None,
) -> list[str]:
    """Report metrics whose contract direction contradicts the direction their export declares.

    Exports that say which way a metric is better (Phoenix Score ``direction``, Phoenix annotation
    ``metadata.direction``, TruLens ``<name> direction``) are read by the adapters into
    ``AdapterResult.directions``. A metric with ``direction_confirmed: true`` is not checked.

    Args:
        contract: the validated contract.
        declared: metric id → {evidence source id → ``higher_is_better`` / ``lower_is_better``}.
        source: the contract's source, for line numbers.

    Returns:
        One message per contradicted metric, naming the sources and the direction they declare.
    """
    metrics: list[tuple[Loc, str, str, bool]] = [
        (("quality_metrics", i, "direction"), m.id, m.direction.value, m.direction_confirmed)
        for i, m in enumerate(contract.quality_metrics)
    ]
    metrics += [
        (("operational_metrics", i, "direction"), m.id, m.direction.value, m.direction_confirmed)
        for i, m in enumerate(contract.operational_metrics)
    ]
    messages = []
    for loc, metric_id, direction, confirmed in metrics:
        said = {s: d for s, d in declared.get(metric_id, {}).items() if d != direction}
        if confirmed or not said:
            continue
        other = sorted(set(said.values()))[0]
        sources = ", ".join(f"{s!r} ({d})" for s, d in sorted(said.items()))
        messages.append(
            f"{_where(source, loc)}: {metric_id!r} is declared {direction} but evidence source "
            f"{sources} declares it the other way round; did you mean direction: {other}? "
            f"(if {direction} is really right, add direction_confirmed: true)"
        )
    return messages
