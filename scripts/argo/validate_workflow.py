"""Validate Argo Workflows objects strictly with Hera's pydantic models of the Argo API.

Run with the Python of build/deploy-tools/argo (scripts/fetch-argo-schemas.sh installs Hera from
PyPI there). Reads a JSON list of Workflow / WorkflowTemplate objects on stdin; prints one line per
object: ``ok`` or ``invalid: <errors>``.

Hera's models ignore unknown fields and coerce types (pydantic's lax mode), so validation alone
would pass a misspelt field or ``parallelism: "10"``. Strictness comes from a round trip: the
object, validated and dumped back (``by_alias``, unset fields left out), must equal the input; a
field the model dropped or a value it coerced is reported by its path.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hera.workflows.models import Workflow, WorkflowTemplate
from pydantic import ValidationError

MODELS = {"Workflow": Workflow, "WorkflowTemplate": WorkflowTemplate}


def _differences(given: Any, kept: Any, path: str = "") -> list[str]:
    """Paths where the round-tripped object differs from the input (unknown or coerced)."""
    if isinstance(given, dict) and isinstance(kept, dict):
        out = [f"{path}.{k}: unknown field" for k in given if k not in kept]
        for key in given:
            if key in kept:
                out += _differences(given[key], kept[key], f"{path}.{key}")
        return out
    if isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        out = []
        for i, (g, k) in enumerate(zip(given, kept, strict=True)):
            out += _differences(g, k, f"{path}[{i}]")
        return out
    if given != kept or type(given) is not type(kept):
        return [f"{path}: {given!r} is read as {kept!r} (wrong type)"]
    return []


def errors(doc: dict[str, Any]) -> list[str]:
    """Every reason ``doc`` is not a valid Argo object; empty when it is."""
    model = MODELS.get(doc.get("kind", ""))
    if model is None:
        return [f"kind: {doc.get('kind')!r} is not one of {sorted(MODELS)}"]
    try:
        parsed = model.model_validate(doc)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
    kept = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return _differences(doc, kept)


def main() -> None:
    for doc in json.load(sys.stdin):
        found = errors(doc)
        print("ok" if not found else "invalid: " + "; ".join(found))


if __name__ == "__main__":
    main()
