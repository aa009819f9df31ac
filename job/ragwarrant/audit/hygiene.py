"""Publication hygiene: nothing secret, host-specific, personal or copied from the evidence leaves.

Every output is scanned before it is written. A finding names the file, the JSON field path (for
JSON outputs) or the line (for text outputs) and the kind of finding; it never carries the
matched text. A run with findings BLOCKs with blocker ``publication-hygiene`` and the offending
content is withheld (``withhold``): JSON outputs are redacted field by field (they stay valid, so
``decision.json`` still publishes the BLOCK), other outputs (``report.md``) are replaced by a
notice saying they were withheld and why. This module only finds and redacts: ``audit.publish``
runs the scan and ``decision.block_for_hygiene`` applies the BLOCK.

Kinds (stable strings, used in ``validation_report.json`` check ids ``hygiene:<kind>``):

- ``aws-access-key``: an AWS access key id (``AKIA``/``ASIA``/... + 16 characters), or an
  ``aws_secret_access_key`` assignment.
- ``api-token``: ``sk-...`` (OpenAI, Anthropic), Stripe live keys, Google ``AIza...`` keys,
  Slack ``xox?-`` tokens, JSON Web Tokens.
- ``github-token``: ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` and ``github_pat_`` tokens.
- ``private-key``: a PEM ``-----BEGIN ... PRIVATE KEY-----`` block.
- ``bearer-token``: ``Bearer <token>`` or ``Basic <credentials>`` (HTTP Authorization values).
- ``password-in-url``: ``scheme://user:password@host``.
- ``secret-assignment``: a JSON member (or a config-difference path) named like a secret
  (password, secret, api_key, access_key, auth_token, private_key, credential) with a non-empty
  string value; in text, ``password = ...`` and the like.
- ``absolute-path``: an absolute host path outside the run's mounts: under ``/home``,
  ``/Users``, ``/root``, ``/tmp``, ``/var/tmp``, ``/var/folders``, ``/private``, ``/mnt``, any
  other absolute POSIX path of two or more segments (``/srv/...``, ``/opt/...``, ``/data/...``),
  a Windows drive (``C:\\``) or a UNC share. Relative paths (the contract's) and the mounts
  (``DEFAULT_MOUNTS``: ``/in`` and ``/out``, and everything under them) are not findings.
- ``email-address``: an e-mail address.
- ``ip-address``: an IPv4 address (not one whose four parts are single digits, like a version
  ``1.0.0.0``, nor loopback ``127.*`` or ``0.*``), or an IPv6 address (full, or compressed with
  ``::`` and at least three groups or four hex digits).
- ``phone-number``: an international number ``+<country> ...`` (8 to 15 digits; spaces, dashes,
  parentheses, never decimal points) or a NANP number ``(555) 123-4567`` / ``555-123-4567``.
- ``national-id``: a dashed US Social Security number (``123-45-6789``, invalid areas 000, 666,
  9xx excluded) or a UK National Insurance number (``AB 12 34 56 C``, HMRC prefix letters).

No credential pattern needs a word boundary on its left, and the personal-data patterns also
start right after a lone ``v``: report.md writes ``v<version>``, and formatting glued to a token
must not hide it. ``email-address``, ``absolute-path``, ``ip-address``, ``phone-number`` and
``national-id`` can be switched off (``allowed_kinds``, ``ALLOWABLE_KINDS``) by a team that must
publish them; credentials and copied text cannot.
- ``copied-text``: a run of ``COPY_RUN_TOKENS`` (12) or more consecutive tokens of a private
  question, response or context.

Copied text is found with 12-token shingles: every 12-token window of each output string is
hashed into a sorted array (outputs are small), then the private texts are streamed past it once,
so memory is proportional to the outputs, not to the evidence. Tokens are lowercased ``\\w+``
runs, so punctuation, case and markup do not hide a copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ragwarrant.audit._findings import (
    Finding,
    ScanSettings,
    Site,
    is_secret_name,
    join_path,
    pattern_kinds,
    pattern_matches,
    split_path,
)
from ragwarrant.audit._shingles import copied_text
from ragwarrant.mounts import DEFAULT_MOUNTS

REDACTED = "[withheld: {kind}]"
"""What a redacted JSON string value becomes."""


_NOT_A_SECRET = re.compile(
    r"^(?:\[withheld: [a-z\-]+\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|env:[A-Za-z_][A-Za-z0-9_]*|"
    r"\*+|<redacted>|redacted|none|null|false|true|default|required|optional|unset)$",
    re.IGNORECASE,
)
"""Values of secret-named members that are references or placeholders, not secrets."""


def _secret_value(value: object) -> bool:
    return isinstance(value, str) and value.strip() != "" and not _NOT_A_SECRET.match(value.strip())


def _walk_json(file: str, node: Any, path: str, sites: list[Site], found: set[Finding]) -> None:
    """Add every string of a JSON document (values and member names) to ``sites``, and to
    ``found`` each member named like a secret and each config difference whose path names one
    (``{"path": "db.password", "baseline": ..., "candidate": ...}``) holding a secret value."""
    if isinstance(node, str):
        sites.append(Site(file, node, path or "(root)", None, False))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk_json(file, value, f"{path}[{i}]", sites, found)
    elif isinstance(node, dict):
        diff_path = node.get("path")
        if isinstance(diff_path, str) and is_secret_name(diff_path):
            for k in ("baseline", "candidate"):
                if _secret_value(node.get(k)):
                    found.add(Finding(file, "secret-assignment", join_path(path, k)))
        for key, value in node.items():
            sub = join_path(path, key)
            sites.append(Site(file, str(key), sub, None, True))
            if isinstance(value, str) and is_secret_name(str(key)) and _secret_value(value):
                found.add(Finding(file, "secret-assignment", sub))
            _walk_json(file, value, sub, sites, found)


def scan_outputs(
    outputs: Mapping[str, bytes],
    private_texts: Iterable[str] = (),
    *,
    allowed_kinds: frozenset[str] = frozenset(),
    mounts: tuple[str, ...] = DEFAULT_MOUNTS,
) -> list[Finding]:
    """Scan output files for credentials, personal data, host paths and copied evidence text.

    The scan reads the rendered bytes of each file: JSON string values and member names after
    decoding, text line by line; no pattern needs a word boundary before a credential, so
    formatting glued to a token (``v<version>``) cannot hide it.

    Args:
        outputs: file name → the bytes about to be written. ``*.json`` files are walked field by
            field (string values and member names); anything else is scanned line by line.
        private_texts: questions, responses and contexts of the evidence (any iterable; consumed
            once, streamed). See ``private_texts_from_tables``.
        allowed_kinds: kinds not reported, from ``ALLOWABLE_KINDS`` (the contract's switch for
            teams that must publish, say, IP addresses); every kind is on by default.
        mounts: absolute paths (the run's input and output mounts) that are not
            ``absolute-path`` findings, nor is anything under them.

    Returns:
        Findings sorted by file, then location, one per (site, kind); empty when clean.
        A finding never contains the matched text.

    Raises:
        ValueError: ``allowed_kinds`` names a kind outside ``ALLOWABLE_KINDS``.
    """
    settings = ScanSettings(frozenset(allowed_kinds), tuple(mounts))
    sites: list[Site] = []
    found: set[Finding] = set()
    for name in sorted(outputs):
        data = outputs[name]
        if name.endswith(".json"):
            try:
                doc = orjson.loads(data)
            except orjson.JSONDecodeError:
                doc = None
            else:
                _walk_json(name, doc, "", sites, found)
                continue
        text = data.decode("utf-8", errors="replace")
        for i, line in enumerate(text.splitlines(), start=1):
            sites.append(Site(name, line, None, i, False))
    kinds_of: dict[str, list[str]] = {}  # the same text recurs across files and fields
    for site in sites:
        kinds = kinds_of.get(site.text)
        if kinds is None:
            kinds = kinds_of[site.text] = pattern_kinds(site.text, settings)
        for kind in kinds:
            found.add(Finding(site.file, kind, site.field, site.line, site.key_of))
    found.update(copied_text(sites, private_texts))
    return sorted(  # by file, line, then field path (indexes as numbers), member name, kind
        found,
        key=lambda f: (
            f.file,
            f.line or 0,
            [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in split_path(f.field or "")],
            f.key_of,
            f.kind,
        ),
    )


def redact_text(
    text: str,
    *,
    private_texts: Iterable[str] = (),
    allowed_kinds: frozenset[str] = frozenset(),
    mounts: tuple[str, ...] = DEFAULT_MOUNTS,
) -> str:
    """Return ``text`` with every finding replaced by ``[withheld: <kind>]``.

    For anything that leaves the process outside the scanned outputs: log events, error
    messages on stderr. The same patterns as ``scan_outputs`` (and the same switches), except
    that the mounts (the directories the command line names) also cover paths under a private
    root such as ``/tmp`` (the user typed them; outputs never publish them); each
    string of ``private_texts`` (4 characters or more: the contract id, a config value, an
    example id...) is replaced wherever it occurs, as ``[withheld: private-text]``.

    Example: ``redact_text("key sk-proj-Q8x7L2m9N4b6V1c3Z5k8J0h2 at /srv/a/b")`` →
    ``"key [withheld: api-token] at [withheld: absolute-path]"``.

    Raises:
        ValueError: ``allowed_kinds`` names a kind outside ``ALLOWABLE_KINDS``.
    """
    settings = ScanSettings(frozenset(allowed_kinds), tuple(mounts), True)
    spans = [(m.start(), m.end(), kind) for kind, m in pattern_matches(text, settings)]
    for private in private_texts:
        if len(private) < 4:  # shorter ones would mangle ordinary words
            continue
        start = text.find(private)
        while start != -1:
            spans.append((start, start + len(private), "private-text"))
            start = text.find(private, start + 1)
    merged: list[tuple[int, int, str]] = []  # the first span's kind names the merged one
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    for start, end, kind in reversed(merged):
        text = text[:start] + REDACTED.format(kind=kind) + text[end:]
    return text


def redacting_processor(mounts: tuple[str, ...] = DEFAULT_MOUNTS) -> Callable[..., dict[str, Any]]:
    """A structlog processor: ``redact_text`` on every string in the event (nested included).

    Put it last before the renderer. Values of members named like a secret (``api_key``...)
    are withheld whole; paths under ``mounts`` (e.g. the directories the command line names)
    are withheld too.
    """

    def processor(logger: object, method_name: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        return {key: _redact_value(key, value, mounts) for key, value in event_dict.items()}

    return processor


def _redact_value(key: object, value: Any, mounts: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        if is_secret_name(str(key)) and _secret_value(value):
            return REDACTED.format(kind="secret-assignment")
        return redact_text(value, mounts=mounts)
    if isinstance(value, dict):
        return {k: _redact_value(k, v, mounts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(key, v, mounts) for v in value]
    return value


def private_texts_from_tables(tables: Iterable[Any]) -> Iterator[str]:
    """Yield every question, response, context and cited quote of private text tables.

    Args:
        tables: pyarrow tables with (some of) the ``TEXT_SCHEMA`` columns ``question``,
            ``response``, ``contexts`` (list of strings), ``cited_quotes`` (list of strings).
    """
    for table in tables:
        for column in ("question", "response", "contexts", "cited_quotes"):
            if column not in table.column_names:
                continue
            for value in table.column(column).to_pylist():
                if column in ("contexts", "cited_quotes"):
                    yield from (v for v in value or () if v)
                elif value:
                    yield value


def files_to_withhold(
    findings: Iterable[Finding], *, redact: Collection[str] | None = None
) -> list[str]:
    """Return the output files whose content is withheld (not redacted) for these findings.

    Args:
        findings: the scan's findings.
        redact: JSON files to redact field by field; None means every JSON file. A JSON file
            is withheld all the same when a finding in it has no field (it did not parse).
    """
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        by_file.setdefault(f.file, []).append(f)
    return sorted(
        name
        for name, hits in by_file.items()
        if not name.endswith(".json")
        or (redact is not None and name not in redact)
        or any(h.field is None for h in hits)
    )


def _set_path(doc: Any, finding: Finding, replacement: str) -> Any:
    """Return ``doc`` with the string at ``finding.field`` (or that member's name) replaced."""
    if finding.field == "(root)":
        return replacement
    parent: Any = None
    node: Any = doc
    last: int | str | None = None
    for part in split_path(finding.field or ""):
        parent, last = node, part
        node = node[last]
    if parent is None or last is None:
        return doc
    if finding.key_of and isinstance(parent, dict):
        new_key = replacement
        n = 1
        while new_key in parent:
            n += 1
            new_key = f"{replacement} {n}"
        parent[new_key] = parent.pop(last)
    else:
        parent[last] = replacement
    return doc


def redact_json(data: bytes, findings: Iterable[Finding]) -> bytes:
    """Replace each offending string of a JSON document by ``[withheld: <kind>]``.

    Member names are renamed (with a counter when needed). Types stay what they were (strings),
    so a redacted ``decision.json`` still validates. Output is indented JSON (orjson).
    """
    doc = orjson.loads(data)
    # Deepest paths first, member names after values, so earlier edits do not move later ones.
    ordered = sorted(
        (f for f in findings if f.field is not None),
        key=lambda f: (-len(f.field or ""), f.key_of),
    )
    for finding in ordered:
        try:
            doc = _set_path(doc, finding, REDACTED.format(kind=finding.kind))
        except (KeyError, IndexError, TypeError):
            continue
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


@dataclass(frozen=True)
class HygieneOutcome:
    """What may be published after a scan.

    Attributes:
        kept: file name → bytes to write (redacted where listed in ``redacted``, a notice where
            listed in ``withheld``, unless the notice was turned off).
        withheld: files whose content is withheld.
        redacted: JSON files written with offending fields replaced.
        findings: every finding of the scan.
    """

    kept: dict[str, bytes]
    withheld: list[str]
    redacted: list[str]
    findings: list[Finding]


WITHHELD_NOTICE = """# {name} withheld

This file was withheld by ragwarrant's publication-hygiene check: it contained {count}
finding(s) of kind {kinds}. decision.json carries the failed run-level gate
`hard:publication-hygiene` (a decision becomes BLOCK; an ERROR record stays ERROR), and
validation_report.json lists where each finding was (file and line or field, never the content).
"""
"""What a withheld text output is replaced with (no secret: file name, counts and kinds)."""


def withhold(
    outputs: Mapping[str, bytes],
    findings: Sequence[Finding],
    *,
    redact: Collection[str] | None = None,
    notice: bool = True,
) -> HygieneOutcome:
    """Keep clean outputs; redact offending JSON outputs; withhold the content of the others.

    JSON outputs (every one, or those in ``redact``) are redacted field by field and stay valid
    against their schemas, so ``decision.json`` can still publish the BLOCK and its reasons.
    Any other output with a finding (``report.md``) is withheld: with ``notice`` it is replaced
    by ``WITHHELD_NOTICE`` (so the set of output files never changes), otherwise dropped.

    Args:
        outputs: file name → bytes, as scanned.
        findings: the scan's findings (``scan_outputs``).
        redact: JSON files to redact; None means every JSON file.
        notice: replace a withheld file by a notice instead of dropping it.
    """
    withheld = [name for name in files_to_withhold(findings, redact=redact) if name in outputs]
    kept: dict[str, bytes] = {}
    redacted: list[str] = []
    for name, data in outputs.items():
        hits = [f for f in findings if f.file == name]
        if not hits:
            kept[name] = data
        elif name not in withheld:
            kept[name] = redact_json(data, hits)
            redacted.append(name)
        elif notice:
            kinds = ", ".join(sorted({h.kind for h in hits}))
            kept[name] = WITHHELD_NOTICE.format(name=name, count=len(hits), kinds=kinds).encode()
    return HygieneOutcome(kept, withheld, sorted(redacted), list(findings))


def findings_to_checks(findings: Iterable[Finding]) -> list[dict[str, object]]:
    """Return one ``validation_report.json`` check (``ValidationCheck`` fields) per finding."""
    return [
        {
            "id": f"hygiene:{f.kind}",
            "target": "output",
            "status": "fail",
            "message": f"{f.kind} in {f.location()}; the artifact is withheld or redacted",
            "file": f.file,
            "row": f.line,
            "column": f.safe_field,
        }
        for f in findings
    ]
