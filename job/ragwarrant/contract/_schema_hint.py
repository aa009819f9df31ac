"""The hint of a refused contract key: its JSON pointer and line, and the values its schema allows.

A refusal's message names the key path and line; its hint points at the rule: the key's JSON
pointer in the contract (RFC 6901), the values ``contracts/contract.schema.json`` allows there
(type, bounds, enumerated values, or the keys a mapping may hold) and the pointer of that rule in
the schema. Everything in the hint comes from the schema, never from the refused value (which may
be private).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from ragwarrant.contract._document import Loc, ParsedDocument, key_path

SCHEMA_FILE = "contracts/contract.schema.json"
"""Where the contract's JSON Schema is committed (``make schemas``)."""

Node = dict[str, Any]
_BOUNDS = (
    ("exclusiveMinimum", "> {}"),
    ("minimum", ">= {}"),
    ("exclusiveMaximum", "< {}"),
    ("maximum", "<= {}"),
    ("minLength", "of at least {} character(s)"),
    ("maxLength", "of at most {} characters"),
    ("minItems", "of at least {} item(s)"),
    ("pattern", "matching {}"),
)
_NOUNS = {
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}
_MAX_KEYS = 30


def json_pointer(loc: Loc) -> str:
    """Return the RFC 6901 JSON pointer of a key path: ``/candidates/0/policy_id``, root ``""``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in loc)


@functools.cache
def _schema() -> Node:
    # imported here: the models load pydantic, which only a refused contract needs at this point
    from ragwarrant.contract._release import ReleaseContract

    schema: Node = ReleaseContract.model_json_schema(by_alias=True)
    return schema


@dataclass(frozen=True)
class _Rule:
    """A node of the contract's JSON Schema and its pointer there (``#/$defs/Name/...``)."""

    node: Node
    pointer: str = "#"

    @classmethod
    def of_key(cls, loc: Loc) -> tuple[_Rule, int]:
        """The rule of ``loc``, or of its longest prefix the schema has, and that length."""
        rule = cls(_schema())
        for depth, part in enumerate(loc):
            child = rule.child(part)
            if child is None:
                return rule, depth
            rule = child
        return rule, len(loc)

    def resolved(self) -> _Rule:
        """Follow ``$ref`` (``#/$defs/Name``) until a node without one."""
        rule = self
        while "$ref" in rule.node:
            ref = rule.node["$ref"]
            rule = _Rule(_schema()["$defs"][ref.rsplit("/", 1)[1]], ref)
        return rule

    def alternatives(self) -> list[_Rule]:
        """The resolved members of an ``anyOf`` (nested ones flattened), or the node itself."""
        rule = self.resolved()
        if "anyOf" not in rule.node:
            return [rule]
        out: list[_Rule] = []
        for i, member in enumerate(rule.node["anyOf"]):
            out += _Rule(member, f"{rule.pointer}/anyOf/{i}").alternatives()
        return out

    def child(self, part: str | int) -> _Rule | None:
        """The rule of key or index ``part`` under this node, or None when it allows none."""
        for alt in self.alternatives():
            node, ptr = alt.node, alt.pointer
            if isinstance(part, int):
                if isinstance(node.get("items"), dict):
                    return _Rule(node["items"], f"{ptr}/items")
                continue
            properties = node.get("properties", {})
            if part in properties:
                return _Rule(properties[part], f"{ptr}/properties/{part}")
            if isinstance(node.get("additionalProperties"), dict):
                return _Rule(node["additionalProperties"], f"{ptr}/additionalProperties")
            for pattern, sub in node.get("patternProperties", {}).items():
                if re.search(pattern, part):  # a keyed mapping (``reduce``: metric id → reduction)
                    return _Rule(sub, f"{ptr}/patternProperties{json_pointer((pattern,))}")
        return None


def _keys(node: Node) -> str:
    names = list(node["properties"])
    more = f", ... (+{len(names) - _MAX_KEYS})" if len(names) > _MAX_KEYS else ""
    return ", ".join(names[:_MAX_KEYS]) + more


def allowed_values(loc: Loc) -> str:
    """Say what the schema allows at ``loc`` (for an unknown key: which keys its mapping allows)."""
    rule, depth = _Rule.of_key(loc)
    alternatives = rule.alternatives()
    if depth < len(loc):  # an unknown key: name the keys the enclosing mapping allows
        mappings = [alt.node for alt in alternatives if alt.node.get("properties")]
        return f"allowed keys: {_keys(mappings[0])}" if mappings else "no such key"
    described: dict[str, None] = {}  # what each alternative allows, in words, once each
    for choice in alternatives:
        alt = choice.node
        kind = alt.get("type")
        if "const" in alt:
            said = json.dumps(alt["const"])
        elif "enum" in alt:
            said = "one of " + ", ".join(json.dumps(v) for v in alt["enum"])
        elif kind == "object" and alt.get("properties"):
            said = "a mapping with the keys " + _keys(alt)
        else:
            noun = _NOUNS.get(kind, "a value") if isinstance(kind, str) else "a value"
            bounds = [text.format(alt[key]) for key, text in _BOUNDS if key in alt]
            said = " ".join([noun, ", ".join(bounds)]).strip()
        described[said] = None
    text = "allowed: " + " or ".join(described)
    description = str(rule.node.get("description", "")).split("\n", 1)[
        0
    ]  # the field's, not its type's
    return text + (f" ({description})" if description else "")


def schema_hint(doc: ParsedDocument, loc: Loc, rule: str | None = None) -> str:
    """Return the hint of a refusal at ``loc``: key path, line, JSON pointer, allowed values, rule.

    ``rule`` is the refusal's own text when a validator raised it (a duplicate policy id, a
    candidate with the baseline's config, a path with a control character): the schema's type
    and pattern at ``loc`` say nothing about it, so the hint names the place and that rule.

    Example: ``statistics.alpha (line 86, JSON pointer contract.yaml#/statistics/alpha):
    allowed: a number > 0 and < 0.5 (one-sided significance level); rule:
    contracts/contract.schema.json#/$defs/Statistics/properties/alpha``. The line is that of
    the key, or of its nearest parent the document holds (a missing key). Pointers are written
    as URI fragments (RFC 6901 section 6), glued to their file's name.
    """
    line = doc.line_of(loc)
    place = f"line {line}, " if line is not None else ""
    where = f"{key_path(loc)} ({place}JSON pointer {doc.name}#{json_pointer(loc)}): "
    if rule is not None:
        return where + rule
    rule_pointer = _Rule.of_key(loc)[0].resolved().pointer  # ``#/$defs/...`` past a reference
    return where + f"{allowed_values(loc)}; rule: {SCHEMA_FILE}{rule_pointer}"
