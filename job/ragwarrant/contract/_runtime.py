"""Contract checks that need the evidence: pure functions the engine calls once it has read it.

Each returns a list of located messages (empty when the contract and the evidence agree); the
engine turns a non-empty list into a failed run-level hard gate (BLOCK). With ``source`` (from
``load_contract_source``) a message starts ``contract.yaml: key.path (line N):``; without it,
``key.path:``. Messages repeat declared ids and numbers, never free text from the evidence other
than the ids and split values it holds.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping

from ragwarrant.contract._document import Loc, key_path
from ragwarrant.contract._loading import ContractSource
from ragwarrant.contract._models import ReleaseContract
from ragwarrant.contract._sanity import did_you_mean, scale_tolerance

__all__ = [
    "check_directions",
    "check_policy_ids",
    "check_scales",
    "check_split_near_misses",
    "check_splits_declared",
]

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
    declared: list[tuple[Loc, str]] = [(("baseline", "policy_id"), contract.baseline.policy_id)]
    declared += [
        (("candidates", i, "policy_id"), c.policy_id) for i, c in enumerate(contract.candidates)
    ]
    return [
        f"{_where(source, loc)}: policy {policy!r} is not in the evidence, which holds "
        f"{_listed(present)}" + did_you_mean(policy, present - {p for _, p in declared})
        for loc, policy in declared
        if policy not in present
    ]


def _suggest_splits(values: Collection[str]) -> str:
    lowered = {v.lower(): v for v in values}
    confirmatory = next((lowered[n] for n in _CONFIRMATORY_NAMES if n in lowered), None)
    development = next((lowered[n] for n in _DEVELOPMENT_NAMES if n in lowered), None)
    if confirmatory is None:
        return "add splits: {confirmatory: <the held-out split value>}"
    dev = f"development: {development}, " if development is not None else ""
    return f"did you mean splits: {{{dev}confirmatory: {confirmatory}}}?"


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
    if contract.splits is None:
        return [
            f"{_where(source, ('splits',))}: the evidence holds split values "
            f"{_listed(split_values)} but the contract has no splits: block, so development "
            f"rows would count as confirmatory evidence; {_suggest_splits(split_values)}"
        ]
    wanted = contract.splits.confirmatory
    if wanted in split_values:
        return []
    return [
        f"{_where(source, ('splits', 'confirmatory'))}: split {wanted!r} is not in the evidence, "
        f"which holds {_listed(split_values)}" + did_you_mean(wanted, split_values)
    ]


def _folded(label: str) -> str:
    """``label`` without case, white space or Unicode compatibility differences (NFKC, then
    casefold, then every white space character removed): two labels that fold alike name the
    same split to a reader."""
    return "".join(unicodedata.normalize("NFKC", label).casefold().split())


def check_split_near_misses(
    contract: ReleaseContract,
    split_examples: Mapping[str, int],
    *,
    source: ContractSource | None = None,
) -> list[str]:
    """Report undeclared split values that differ from a declared one only by case, white space
    or Unicode form (``Holdout`` for ``holdout``, ``holdout `` or a full-width form).

    Their examples are in no split role, so they would be dropped from the decision while a
    reader takes them for the declared split (a trial PROMOTEd a candidate whose every third
    example, scored 0 and labelled ``Holdout``, was dropped with a note). A value that folds to
    no declared one (a ``train`` split the contract leaves out) is not reported here: it stays
    the ``split-unassigned`` note.

    Args:
        contract: the validated contract.
        split_examples: split value → examples that have a row in it (all values present).
        source: the contract's source, for line numbers.

    Returns:
        One message per declared role with near misses, naming them and their example counts.
    """
    if contract.splits is None:
        return []
    roles = {
        "development": contract.splits.development,
        "confirmatory": contract.splits.confirmatory,
    }
    declared = {v for v in roles.values() if v is not None}
    messages = []
    for role, wanted in roles.items():
        if wanted is None:
            continue
        near = sorted(
            v for v in split_examples if v not in declared and _folded(v) == _folded(wanted)
        )
        if not near:
            continue
        n = sum(split_examples[v] for v in near)
        shown = ", ".join(f"{v!r} ({split_examples[v]} examples)" for v in near)
        messages.append(
            f"{_where(source, ('splits', role))}: split {wanted!r} is declared, but the evidence "
            f"also labels {n} examples {shown}, which differ from it only by case, white space "
            "or Unicode form and would be left out of the decision; relabel them in the "
            "evidence, or declare the intended value"
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
                    f"[{low:g}, {high:g}]: fix the out-of-scale values, or, if the metric "
                    f"really spans more, declare a scale that covers them (e.g. "
                    f"[{min(seen_low, low):g}, {max(seen_high, high):g}])"
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
