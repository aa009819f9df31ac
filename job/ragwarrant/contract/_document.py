"""Strict, located parsing of the YAML and JSON files a contract run reads.

One parser for the contract and the policy configs: it refuses duplicate keys (YAML and JSON
parsers otherwise keep the last one silently) and non-finite numbers (``.inf``, ``.nan``, a JSON
number that overflows a double), and records the line of every key and list item so that a
validation error can name the key path *and* its line. Values come from the usual parsers
(``yaml.SafeLoader``, ``orjson``); only the positions are computed here.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ragwarrant.errors import ContractError
from ragwarrant.limits import MAX_INTEGER_DIGITS, MAX_YAML_DEPTH, MAX_YAML_NODES

Loc = tuple[str | int, ...]
"""A key path into a document: mapping keys and list indices, outermost first."""

_MERGE_TAG = "tag:yaml.org,2002:merge"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INT_TAG = "tag:yaml.org,2002:int"


@dataclass(frozen=True)
class ParsedDocument:
    """A parsed YAML or JSON document and the 1-based line of each key path in it."""

    name: str
    data: object
    lines: Mapping[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int | None:
        """Return the line of ``loc``, or of its longest prefix that the document holds."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None

    def where(self, loc: Loc) -> str:
        """Return ``key.path (line N)`` for a message; ``(root)`` for the empty path."""
        line = self.line_of(loc)
        return key_path(loc) + (f" (line {line})" if line is not None else "")


def key_path(loc: Loc) -> str:
    """Render a key path as ``evidence[0].columns.metric`` (``(root)`` when empty)."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _duplicate(name: str, loc: Loc, line: int, first: int) -> ContractError:
    return ContractError(
        "contract-duplicate-key",
        f"{name}: {key_path(loc)} (line {line}) repeats the key first given at line {first}; "
        "expected each key once in a mapping (a parser would silently keep the last value)",
        hint="delete one of the two entries",
    )


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, also reading YAML 1.2 / JSON floats without a dot (``2e-2``, ``1E3``).

    PyYAML resolves plain scalars by YAML 1.1, whose float needs a dot (``2.0e-2``): ``2e-2``
    would be the string "2e-2". YAML 1.2's core schema (section 10.3.2) and JSON read it as 0.02.
    """


_Loader.add_implicit_resolver(
    _FLOAT_TAG,
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def parse_document(raw: bytes, name: str, *, is_json: bool) -> ParsedDocument:
    """Parse YAML (safe loader) or JSON, refusing duplicate keys and non-finite numbers.

    Args:
        raw: the file's bytes.
        name: the file's name relative to the input directory, used in messages.
        is_json: parse as JSON (``orjson``) instead of YAML.

    Raises:
        yaml.YAMLError | orjson.JSONDecodeError: a syntax error (the caller decides what it means).
        ContractError: ``contract-duplicate-key`` or ``contract-non-finite``, naming the key path
            and its line; ``contract-limit`` past a document limit of ``limits`` (nesting depth,
            nodes once aliases are expanded, digits of an integer).
    """
    if is_json:
        data = orjson.loads(raw)  # refuses NaN, Infinity and numbers overflowing a double
        return ParsedDocument(name, data, _json_lines(raw.decode("utf-8"), name))
    loader = _Loader(raw)
    try:
        node = loader.get_single_node()
        lines: dict[Loc, int] = {}
        if node is not None:
            _YamlWalk(name, lines).visit(node, ())
        data = loader.construct_document(node) if node is not None else None
    except RecursionError:  # PyYAML composes recursively: deep nesting is refused here
        raise ContractError(
            "contract-limit",
            f"{name}: the document nests deeper than the limit of {MAX_YAML_DEPTH:,} levels",
            hint="write the document with less nesting",
        ) from None
    finally:
        loader.dispose()  # type: ignore[no-untyped-call]
    return ParsedDocument(name, data, lines)


@dataclass
class _YamlWalk:
    """Records the line of every key path and refuses duplicate keys, non-finite floats, integers
    too long to be meant, and nesting or alias expansion past ``limits``.

    ``visit`` returns the node count of the subtree once its aliases are expanded (an alias is
    walked once and counted at its full size), so a "billion laughs" is refused by its count.
    """

    name: str
    lines: dict[Loc, int]
    sizes: dict[int, int] = field(default_factory=dict)

    def visit(self, node: Node, loc: Loc) -> int:
        self.lines.setdefault(loc, node.start_mark.line + 1)
        if id(node) in self.sizes:  # an alias: walked once, counted at its expanded size
            return self.sizes[id(node)]
        if len(loc) > MAX_YAML_DEPTH:
            deep = f"nests {len(loc):,} levels deep"
            raise self._past_limit(loc[:3], node, deep, MAX_YAML_DEPTH)
        self.sizes[id(node)] = 1  # a cycle counts once
        size = 1
        if isinstance(node, MappingNode):
            size += self._mapping(node, loc)
        elif isinstance(node, SequenceNode):
            size += sum(self.visit(item, (*loc, index)) for index, item in enumerate(node.value))
        elif node.tag == _FLOAT_TAG and not _finite_yaml_float(node.value):
            raise ContractError(
                "contract-non-finite",
                f"{self.name}: {key_path(loc)} (line {node.start_mark.line + 1}) is not a finite "
                "number; expected a finite number (.inf and .nan are not allowed)",
                hint="write the finite bound you mean, or leave the field out for its default",
            )
        elif node.tag == _INT_TAG and len(node.value) > MAX_INTEGER_DIGITS:
            digits = f"is an integer of {len(node.value):,} digits"
            raise self._past_limit(loc, node, digits, MAX_INTEGER_DIGITS)
        if size > MAX_YAML_NODES:
            raise self._past_limit(loc, node, f"expands to {size:,} nodes", MAX_YAML_NODES)
        self.sizes[id(node)] = size
        return size

    def _mapping(self, node: MappingNode, loc: Loc) -> int:
        first: dict[tuple[str, str], int] = {}
        size = 0
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                size += self.visit(value_node, loc)
                continue
            line = key_node.start_mark.line + 1
            key = key_node.value if isinstance(key_node, ScalarNode) else f"<{key_node.id}>"
            child = (*loc, key)
            if (key_node.tag, key) in first:
                raise _duplicate(self.name, child, line, first[(key_node.tag, key)])
            first[(key_node.tag, key)] = line
            self.lines[child] = line
            size += 1 + self.visit(value_node, child)
        return size

    def _past_limit(self, loc: Loc, node: Node, found: str, limit: int) -> ContractError:
        """``contract-limit``: a YAML document past one of ``limits``' document limits."""
        return ContractError(
            "contract-limit",
            f"{self.name}: {key_path(loc)} (line {node.start_mark.line + 1}) {found}; "
            f"the limit is {limit:,}",
            hint="write the document out plainly (YAML aliases are expanded when counted)",
        )


def _finite_yaml_float(text: str) -> bool:
    value = text.replace("_", "").lower()
    if ".inf" in value or ".nan" in value:
        return False
    try:
        return math.isfinite(float(value))
    except ValueError:  # sexagesimal (``1:30.5``) and other YAML 1.1 forms: finite by grammar
        return True


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


@dataclass
class _Frame:
    """One open JSON object or array while scanning: its current key or index."""

    is_object: bool
    at: str | int = 0
    expect_key: bool = True
    first: dict[str, int] = field(default_factory=dict)

    def advance(self) -> None:
        """Past a comma: an object expects its next key, an array moves to its next index."""
        if self.is_object:
            self.expect_key = True
        else:
            self.at = int(self.at) + 1


def _json_lines(text: str, name: str) -> dict[Loc, int]:
    """Return the line of each key path of a JSON text that ``orjson`` already accepted.

    Raises:
        ContractError: a key repeated in one object.
    """
    lines: dict[Loc, int] = {}
    frames: list[_Frame] = []
    starts = [m.end() for m in re.finditer("\n", text)]
    for m in _JSON_TOKEN.finditer(text):
        token, line = m.group(), bisect.bisect_right(starts, m.start()) + 1
        top = frames[-1] if frames else None
        path: Loc = tuple(f.at for f in frames)
        if top is not None and top.is_object and top.expect_key and token.startswith('"'):
            key = orjson.loads(token)
            if key in top.first:
                raise _duplicate(name, (*path[:-1], key), line, top.first[key])
            top.first[key], top.at, top.expect_key = line, key, False
            lines[(*path[:-1], key)] = line
        elif token == ",":
            frames[-1].advance()
        elif token in "}]":
            frames.pop()
        elif token != ":":
            lines.setdefault(path, line)
            if token in "{[":
                frames.append(_Frame(is_object=token == "{"))
    return lines
