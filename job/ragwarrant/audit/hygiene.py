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

import numpy as np
import orjson

from ragwarrant.gates.run import HYGIENE_BLOCKER  # the gate's home; re-exported for audit.verify
from ragwarrant.mounts import DEFAULT_MOUNTS

__all__ = [
    "ALLOWABLE_KINDS",
    "ALLOWED_NOTE_PREFIX",
    "COPY_RUN_TOKENS",
    "DEFAULT_MOUNTS",
    "HYGIENE_BLOCKER",
    "Finding",
    "HygieneOutcome",
    "ScanSettings",
    "WITHHELD_NOTICE",
    "allowed_kinds_from_note",
    "allowed_kinds_note",
    "files_to_withhold",
    "findings_to_checks",
    "private_texts_from_tables",
    "redact_event",
    "redacting_processor",
    "redact_text",
    "redact_json",
    "scan_outputs",
    "withhold",
]

COPY_RUN_TOKENS = 12
"""Consecutive tokens of a private text that make a copy."""

REDACTED = "[withheld: {kind}]"
"""What a redacted JSON string value becomes."""


@dataclass(frozen=True)
class Finding:
    """One hygiene finding; never holds the matched text.

    Attributes:
        file: output file name, e.g. ``decision.json``.
        kind: one of the kinds in the module docstring.
        field: JSON field path (``candidates[0].gates[2].reason``; a member *name* is addressed as
            ``path.<key>`` with ``key_of`` set), or None for text files.
        line: 1-based line for text files (for JSON: None).
        key_of: True when the finding is in a member name rather than its value.
    """

    file: str
    kind: str
    field: str | None = None
    line: int | None = None
    key_of: bool = False

    @property
    def safe_field(self) -> str | None:
        """The field path with any member name that is itself a finding masked as ``[<member>]``.

        Use this (never ``field``) in anything published; ``field`` addresses the value for
        ``redact_json``.
        """
        if self.field is None or self.field == "(root)":
            return self.field
        out = ""
        for part in _split_path(self.field):
            if isinstance(part, int):
                out += f"[{part}]"
            elif _pattern_kinds(part) or _SECRET_NAME.search(part) and self.key_of:
                out += "[<member>]"
            else:
                out = _join(out, part)
        return out

    def location(self) -> str:
        """Return ``file:field`` or ``file:line N`` (with ``safe_field``)."""
        if self.field is not None:
            return f"{self.file}:{self.safe_field}{' (member name)' if self.key_of else ''}"
        if self.line is not None:
            return f"{self.file}:line {self.line}"
        return self.file

    def describe(self) -> str:
        """One line for logs and reports: location and kind, never the secret."""
        return f"{self.kind} in {self.location()}"


# ---------------------------------------------------------------------------------------------
# Patterns. Each is applied to one string value (JSON) or one line (text).

_SECRET_NAME = re.compile(
    r"(?i)(?:^|[._\-\s])(pass(?:word|wd|phrase)|secret(?:[_-]?key)?|client[_-]?secret|"
    r"api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|private[_-]?key|credentials?)$"
)
"""A member or config path whose last segment names a secret."""


def is_secret_name(name: str) -> bool:
    """Whether a member name or config path (its last segment) names a secret (``db.password``)."""
    return bool(_SECRET_NAME.search(name))


"""Absolute paths that are not findings: the documented container mounts and what is under them."""

ALLOWABLE_KINDS = frozenset(
    {"absolute-path", "email-address", "ip-address", "phone-number", "national-id"}
)
"""Kinds a contract may allow (publish) with ``allowed_kinds``; credentials and copied evidence
text never can."""


@dataclass(frozen=True)
class ScanSettings:
    """What a scan reports.

    Attributes:
        allowed_kinds: finding kinds not reported (a subset of ``ALLOWABLE_KINDS``); every kind
            is on by default.
        mounts: absolute paths that are not ``absolute-path`` findings, with everything under
            them (the run's input and output mounts).
        mounts_cover_private_roots: whether a mount also covers a path under a private root
            (``/home``, ``/tmp``...). False for outputs, which are published and verified
            elsewhere (such a path is always a finding); True for what goes back to the user who
            named the directories on the command line (``redact_text``: stderr and logs).

    Raises:
        ValueError: an allowed kind is not in ``ALLOWABLE_KINDS``, or a mount is not absolute.
    """

    allowed_kinds: frozenset[str] = frozenset()
    mounts: tuple[str, ...] = DEFAULT_MOUNTS
    mounts_cover_private_roots: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.allowed_kinds) - ALLOWABLE_KINDS)
        if unknown:
            raise ValueError(
                f"hygiene kinds {unknown} cannot be allowed; allowable: {sorted(ALLOWABLE_KINDS)}"
            )
        relative = [m for m in self.mounts if not m.startswith("/")]
        if relative:
            raise ValueError(f"mounts must be absolute paths, got {relative}")


DEFAULT_SETTINGS = ScanSettings()

ALLOWED_NOTE_PREFIX = "allowed: "
"""How the ``publication-hygiene`` check of ``validation_report.json`` records, in its
``expected`` field, the kinds a contract allowed (so ``verify`` rescans with the same switches)."""


def allowed_kinds_note(allowed_kinds: Collection[str]) -> str | None:
    """Return ``"allowed: ip-address,phone-number"`` for the check's ``expected``; None if none."""
    return ALLOWED_NOTE_PREFIX + ",".join(sorted(allowed_kinds)) if allowed_kinds else None


def allowed_kinds_from_note(note: str | None) -> frozenset[str]:
    """Invert ``allowed_kinds_note``, keeping only ``ALLOWABLE_KINDS`` (anything else: none)."""
    if not note or not note.startswith(ALLOWED_NOTE_PREFIX):
        return frozenset()
    return frozenset(note[len(ALLOWED_NOTE_PREFIX) :].split(",")) & ALLOWABLE_KINDS


_Validator = Callable[[str, ScanSettings], bool]


_ENCODED_SEGMENT = re.compile(r"(?=[^/]*[a-z])(?=[^/]*[A-Z])(?=[^/]*\d)[A-Za-z0-9]{24,}")


def _outside_mounts(path: str, settings: ScanSettings) -> bool:
    """A path is private unless it is a mount or lies under one, or is encoded data.

    A segment of 24 or more letters and digits mixing upper case, lower case and digits is a
    base64 run (a signature or payload holds ``/`` between such runs), not a directory name.
    """
    if any(_ENCODED_SEGMENT.fullmatch(part) for part in path.split("/")):
        return False
    clean = path.rstrip("/")
    return not any(
        clean == m.rstrip("/") or clean.startswith(m.rstrip("/") + "/") for m in settings.mounts
    )


def _outside_mount_dirs(path: str, settings: ScanSettings) -> bool:
    """A path under a private root (``/home``, ``/tmp``...) or a Windows or UNC path is a finding,
    unless mounts cover private roots (stderr and logs) and it is a mount or lies under one."""
    if not settings.mounts_cover_private_roots:
        return True
    clean = path.rstrip("/.,;:)]}")
    return not any(
        clean == m.rstrip("/") or clean.startswith(m.rstrip("/") + "/") for m in settings.mounts
    )


def _not_version_like(address: str, settings: ScanSettings) -> bool:
    """An IPv4 address, unless every octet is one digit (``1.0.0.0``: a version) or it is a
    loopback or unspecified address."""
    octets = address.split(".")
    if all(len(o) == 1 for o in octets):
        return False
    return octets[0] not in ("0", "127")


def _ipv6_like(address: str, settings: ScanSettings) -> bool:
    """At least three groups (``2001:db8::1``), or two around ``::`` with four hex digits in all
    (``fe80::1ff``): not a clock time or a ``module::name``."""
    groups = [g for g in address.split(":") if g]
    if ":::" in address:
        return False
    return len(groups) >= 3 or (len(groups) == 2 and sum(len(g) for g in groups) >= 4)


def _phone_digits(number: str, settings: ScanSettings) -> bool:
    """E.164 allows 8 to 15 digits with the country code."""
    return 8 <= sum(c.isdigit() for c in number) <= 15


def _mixed_token(token: str, settings: ScanSettings) -> bool:
    """A real ``sk-`` key mixes digits and letters; ``sk-management-of-evaluations`` does not."""
    body = token[3:]
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


_GLUED_V = r"(?<=\bv)"
"""Lets a pattern whose left edge must not follow a word character start right after a lone
``v`` (report.md writes ``v<version>``): formatting must not hide a token."""

_PATH_TAIL = r"[^\s\"'<>|;,()\[\]{}`]*"
"""The rest of a path after its private root or drive, so a redaction withholds it whole."""

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_HEX4 = r"[0-9A-Fa-f]{1,4}"

# Credential patterns have no left word boundary: formatting glued to a token (report.md writes
# ``v<version>``) must not hide it. Each prefix is distinctive enough on its own.
_PATTERNS: tuple[tuple[str, re.Pattern[str], _Validator | None], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), None),
    (
        "aws-access-key",
        re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
        None,
    ),
    (
        "aws-access-key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*(?:[\"']\s*)?[:=]\s*[\"']?[A-Za-z0-9/+=]{40}"),
        None,
    ),
    (
        "github-token",
        re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        None,
    ),
    ("api-token", re.compile(r"sk-[A-Za-z0-9_\-]{20,}"), _mixed_token),
    ("api-token", re.compile(r"(?:sk|rk)_live_[A-Za-z0-9]{16,}"), None),
    ("api-token", re.compile(r"AIza[0-9A-Za-z_\-]{35}"), None),
    ("api-token", re.compile(r"xox[abposr]-[A-Za-z0-9\-]{10,}"), None),
    (
        "api-token",
        re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        None,
    ),
    ("bearer-token", re.compile(r"(?i)bearer\s+[A-Za-z0-9\-._~+/]{16,}=*"), None),
    ("bearer-token", re.compile(r"(?i)authorization\s*[:=]\s*basic\s+[A-Za-z0-9+/]{8,}=*"), None),
    (
        "password-in-url",
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@\"'<>]+:[^\s/@\"'<>]+@[^\s/\"'<>]+"
        ),
        None,
    ),
    (
        "secret-assignment",
        re.compile(
            r"(?i)(?:password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|"
            r"client[_-]?secret)\b\s*(?:[\"']\s*)?[:=]\s*[\"']?[^\s\"',;]{8,}"
        ),
        None,
    ),
    (
        # A path under a private root (the whole path, so a mount the user named is told apart).
        "absolute-path",
        re.compile(
            rf"(?:(?<![\w.~\-+])|{_GLUED_V})"
            r"/(?:home|Users|root|tmp|var/tmp|var/folders|private|mnt)(?=/|\b)(?![+=])"
            rf"{_PATH_TAIL}"
        ),
        _outside_mount_dirs,
    ),
    (
        # A Windows drive or UNC path, withheld whole (the user name follows the drive).
        "absolute-path",
        re.compile(
            rf"(?:(?:(?<![A-Za-z0-9])|{_GLUED_V})[A-Za-z]:\\{_PATH_TAIL}"
            rf"|(?:(?<![A-Za-z0-9])|{_GLUED_V})[A-Za-z]:/(?=[A-Za-z]){_PATH_TAIL}"
            rf"|\\\\[A-Za-z0-9._\-]+\\{_PATH_TAIL})"
        ),
        None,
    ),
    (
        # Any other absolute POSIX path of two or more segments (/srv/x, /opt/x, /data/x),
        # outside the run's mounts. Not after a word character, ``:``, ``/`` or ``+`` (URLs,
        # a/b/c, 2026/11/29, base64), nor as the fragment of a file name (``contract.yaml#/
        # statistics/alpha``: a JSON pointer, RFC 6901 section 6), and not ending inside a
        # base64 run (signatures and payloads in decision.intoto.json hold ``/`` between letters).
        "absolute-path",
        re.compile(
            rf"(?:(?<![\w.~\-:/+])(?<!\w#)|{_GLUED_V}(?<![\w.~\-:/+#]v))"
            r"/[A-Za-z0-9._\-]+(?:/[A-Za-z0-9._\-]+)+"
            r"(?![A-Za-z0-9._\-+/=])"
        ),
        _outside_mounts,
    ),
    (
        "email-address",
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
            r"\.(?!(?:json|jsonl|yaml|yml|csv|parquet|md|txt|py)\b)[A-Za-z]{2,}\b"
        ),
        None,
    ),
    (
        "ip-address",
        re.compile(rf"(?<![\d])(?<!\d\.){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\d)"),
        _not_version_like,
    ),
    (
        "ip-address",
        re.compile(
            rf"(?<![0-9A-Fa-f:])(?:(?:{_HEX4}:){{7}}{_HEX4}"
            rf"|(?:{_HEX4}(?::{_HEX4})*)?::(?:{_HEX4}(?::{_HEX4})*)?)(?![0-9A-Fa-f:])"
        ),
        _ipv6_like,
    ),
    (
        # International (E.164) numbers with spaces, dashes or parentheses; US/NANP numbers
        # written (555) 123-4567 or 555-123-4567. Decimal points are never separators.
        "phone-number",
        re.compile(
            rf"(?:(?<![\w+.])|{_GLUED_V})"
            r"\+[1-9][0-9]{0,2}(?:[ \-]?\(?[0-9]{1,4}\)?){2,5}(?![\w.])"
            rf"|(?:(?<![\w.\-])|{_GLUED_V})"
            r"(?:\([0-9]{3}\) ?|[0-9]{3}-)[0-9]{3}-[0-9]{4}(?![\w\-])"
        ),
        _phone_digits,
    ),
    (
        # US Social Security numbers (dashed; never 000, 666 or 9xx in the area, 00 in the
        # group, 0000 in the serial) and UK National Insurance numbers (two prefix letters
        # from the HMRC set, six digits, suffix A-D).
        "national-id",
        re.compile(
            rf"(?:(?<![\w\-])|{_GLUED_V})"
            r"(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![\w\-])"
            rf"|(?:(?<![A-Za-z0-9])|{_GLUED_V})"
            r"(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
            r" ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?![A-Za-z0-9])"
        ),
        None,
    ),
)

_CREDENTIAL_KINDS = frozenset(
    {
        "private-key",
        "aws-access-key",
        "github-token",
        "api-token",
        "bearer-token",
        "password-in-url",
    }
)


def _pattern_matches(
    text: str, settings: ScanSettings = DEFAULT_SETTINGS
) -> Iterator[tuple[str, re.Match[str]]]:
    """Yield (kind, match) for every accepted match in one string, in pattern order.

    An e-mail match inside a credential match (``user:pw@host.com``) is not reported twice;
    allowed kinds are not reported at all.
    """
    credential_spans: list[tuple[int, int]] = []
    for kind, pattern, valid in _PATTERNS:
        if kind in settings.allowed_kinds:
            continue
        for m in pattern.finditer(text):
            if valid is not None and not valid(m.group(0), settings):
                continue
            if kind == "email-address" and any(s <= m.start() < e for s, e in credential_spans):
                continue
            if kind in _CREDENTIAL_KINDS:
                credential_spans.append(m.span())
            yield kind, m


def _pattern_kinds(text: str, settings: ScanSettings = DEFAULT_SETTINGS) -> list[str]:
    """Return the kinds found in one string, each at most once, in pattern order."""
    return list(dict.fromkeys(kind for kind, _ in _pattern_matches(text, settings)))


# ---------------------------------------------------------------------------------------------
# Walking the outputs: one "site" per JSON string (value or member name) or text line.


@dataclass(frozen=True)
class _Site:
    file: str
    text: str
    field: str | None
    line: int | None
    key_of: bool


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_:@/+\-]+$")


def _join(path: str, key: object) -> str:
    """Append a member name to a field path; names with dots or brackets are quoted."""
    k = str(key)
    if _PLAIN_KEY.match(k):
        return f"{path}.{k}" if path else k
    return f"{path}[{orjson.dumps(k).decode()}]"


_PATH_PART = re.compile(r'\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([^.\[\]]+)')


def _split_path(field: str) -> list[int | str]:
    """Invert ``_join``: ``a.b[0]["c.d"]`` → ``["a", "b", 0, "c.d"]``."""
    parts: list[int | str] = []
    for index, quoted, plain in _PATH_PART.findall(field):
        if index:
            parts.append(int(index))
        elif quoted:
            parts.append(orjson.loads(quoted))
        else:
            parts.append(plain)
    return parts


def _json_sites(file: str, node: Any, path: str) -> Iterator[_Site]:
    if isinstance(node, str):
        yield _Site(file, node, path or "(root)", None, False)
    elif isinstance(node, dict):
        for key, value in node.items():
            sub = _join(path, key)
            yield _Site(file, str(key), sub, None, True)
            yield from _json_sites(file, value, sub)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _json_sites(file, value, f"{path}[{i}]")


_NOT_A_SECRET = re.compile(
    r"^(?:\[withheld: [a-z\-]+\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|env:[A-Za-z_][A-Za-z0-9_]*|"
    r"\*+|<redacted>|redacted|none|null|false|true|default|required|optional|unset)$",
    re.IGNORECASE,
)
"""Values of secret-named members that are references or placeholders, not secrets."""


def _secret_value(value: object) -> bool:
    return isinstance(value, str) and value.strip() != "" and not _NOT_A_SECRET.match(value.strip())


def _secret_diff_values(file: str, node: Mapping[str, Any], path: str) -> Iterator[Finding]:
    """A config difference whose path names a secret: its baseline and candidate values."""
    diff_path = node.get("path")
    if isinstance(diff_path, str) and _SECRET_NAME.search(diff_path):
        for k in ("baseline", "candidate"):
            if _secret_value(node.get(k)):
                yield Finding(file, "secret-assignment", _join(path, k))


def _secret_members(file: str, node: Any, path: str) -> Iterator[Finding]:
    """Members named like a secret, and config differences whose path names one."""
    if isinstance(node, list):
        for i, value in enumerate(node):
            yield from _secret_members(file, value, f"{path}[{i}]")
        return
    if not isinstance(node, dict):
        return
    yield from _secret_diff_values(file, node, path)
    for key, value in node.items():
        sub = _join(path, key)
        if not (isinstance(value, str) and _SECRET_NAME.search(str(key))):
            yield from _secret_members(file, value, sub)
        elif _secret_value(value):
            yield Finding(file, "secret-assignment", sub)


def _is_json_name(name: str) -> bool:
    return name.endswith(".json")


def _sites(outputs: Mapping[str, bytes]) -> tuple[list[_Site], list[Finding]]:
    sites: list[_Site] = []
    findings: list[Finding] = []
    for name in sorted(outputs):
        data = outputs[name]
        if _is_json_name(name):
            try:
                doc = orjson.loads(data)
            except orjson.JSONDecodeError:
                doc = None
            else:
                sites.extend(_json_sites(name, doc, ""))
                findings.extend(_secret_members(name, doc, ""))
                continue
        text = data.decode("utf-8", errors="replace")
        for i, line in enumerate(text.splitlines(), start=1):
            sites.append(_Site(name, line, None, i, False))
    return sites, findings


# ---------------------------------------------------------------------------------------------
# Copied text: 12-token shingles.

_TOKEN = re.compile(r"\w+")
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_BASE = np.uint64(1_000_003)
_POWERS = [
    np.uint64(pow(1_000_003, COPY_RUN_TOKENS - 1 - j, 2**64)) for j in range(COPY_RUN_TOKENS)
]


def _token_hashes(text: str) -> np.ndarray:
    """Return the per-token 64-bit hashes of a text's lowercased ``\\w+`` tokens (uint64[n])."""
    tokens = _TOKEN.findall(text.lower())
    return np.fromiter((hash(t) for t in tokens), dtype=np.int64, count=len(tokens)).view(np.uint64)


def _shingles(tok: np.ndarray, owner: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return (hash per 12-token window, start index of each window that stays within one owner).

    The hash is a polynomial over the window's token hashes modulo 2**64 (wrapping uint64
    arithmetic); ``owner`` (int[n]) marks which text each token belongs to, so windows that
    cross from one text into the next are dropped.
    """
    n = tok.shape[0] - COPY_RUN_TOKENS + 1
    if n <= 0:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(COPY_RUN_TOKENS):
            h += tok[j : j + n] * _POWERS[j]
    starts = np.arange(n)
    if owner is not None:
        keep = owner[:n] == owner[COPY_RUN_TOKENS - 1 :]
        h, starts = h[keep], starts[keep]
    return h, starts


def _text_file_shingles(sites: Sequence[_Site]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Shingles of each text output as a whole (a copy may run across lines), with their sites."""
    by_file: dict[str, list[int]] = {}
    for i, site in enumerate(sites):
        if site.line is not None:
            by_file.setdefault(site.file, []).append(i)
    for indices in by_file.values():
        toks = [_token_hashes(sites[i].text) for i in indices]
        if sum(t.size for t in toks) < COPY_RUN_TOKENS:
            continue
        owner_site = np.concatenate(
            [np.full(t.size, i, np.int64) for t, i in zip(toks, indices, strict=True)]
        )
        h, starts = _shingles(np.concatenate(toks))
        yield h, owner_site[starts]


def _output_shingles(sites: Sequence[_Site]) -> tuple[np.ndarray, np.ndarray] | None:
    """Return (sorted shingle hashes, site index of each) of the outputs; None when none."""
    site_hashes: list[np.ndarray] = []
    site_index: list[np.ndarray] = []
    for i, site in enumerate(sites):
        h, _ = _shingles(_token_hashes(site.text))
        if h.size:
            site_hashes.append(h)
            site_index.append(np.full(h.size, i, dtype=np.int64))
    for h, owners in _text_file_shingles(sites):
        site_hashes.append(h)
        site_index.append(owners)
    if not site_hashes:
        return None
    out_h = np.concatenate(site_hashes)
    out_site = np.concatenate(site_index)
    order = np.argsort(out_h, kind="stable")
    return out_h[order], out_site[order]


def _batch_hits(out_h: np.ndarray, out_site: np.ndarray, batch: list[np.ndarray]) -> set[int]:
    """Sites whose shingles occur in a batch of private texts' token hashes."""
    owner = np.concatenate([np.full(t.size, k, np.int64) for k, t in enumerate(batch)])
    h, _ = _shingles(np.concatenate(batch), owner)
    pos_c = np.minimum(np.searchsorted(out_h, h), out_h.size - 1)
    hit_sites: set[int] = set()
    for value in np.unique(h[out_h[pos_c] == h]):
        lo = np.searchsorted(out_h, value, side="left")
        hi = np.searchsorted(out_h, value, side="right")
        hit_sites.update(int(s) for s in out_site[lo:hi])
    return hit_sites


def _token_batches(private_texts: Iterable[str]) -> Iterator[list[np.ndarray]]:
    """Token hashes of the private texts of 12+ tokens, in batches of about a million tokens."""
    batch: list[np.ndarray] = []
    batch_tokens = 0
    for text in private_texts:
        tok = _token_hashes(text) if text else None
        if tok is None or tok.size < COPY_RUN_TOKENS:
            continue
        batch.append(tok)
        batch_tokens += tok.size
        if batch_tokens >= 1_000_000:
            yield batch
            batch, batch_tokens = [], 0
    if batch:
        yield batch


def _copied_text(sites: Sequence[_Site], private_texts: Iterable[str]) -> list[Finding]:
    shingled = _output_shingles(sites)
    if shingled is None:
        return []
    out_h, out_site = shingled
    hit_sites: set[int] = set()
    for batch in _token_batches(private_texts):
        hit_sites |= _batch_hits(out_h, out_site, batch)
    return [
        Finding(sites[i].file, "copied-text", sites[i].field, sites[i].line, sites[i].key_of)
        for i in sorted(hit_sites)
    ]


# ---------------------------------------------------------------------------------------------
# Public API.


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
    sites, findings = _sites(outputs)
    found = set(findings)
    kinds_of: dict[str, list[str]] = {}  # the same text recurs across files and fields
    for site in sites:
        kinds = kinds_of.get(site.text)
        if kinds is None:
            kinds = kinds_of[site.text] = _pattern_kinds(site.text, settings)
        for kind in kinds:
            found.add(Finding(site.file, kind, site.field, site.line, site.key_of))
    found.update(_copied_text(sites, private_texts))
    return sorted(found, key=_finding_order)


def _private_spans(text: str, private_texts: Iterable[str]) -> Iterator[tuple[int, int, str]]:
    for private in private_texts:
        if len(private) < _MIN_PRIVATE_LEN:
            continue
        start = text.find(private)
        while start != -1:
            yield start, start + len(private), "private-text"
            start = text.find(private, start + 1)


_MIN_PRIVATE_LEN = 4
"""Shorter private strings are not replaced literally (they would mangle ordinary words)."""


def _merged(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans merged (the first span's kind names the merged one), in text order."""
    out: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]), out[-1][2])
        else:
            out.append((start, end, kind))
    return out


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
    spans = [(m.start(), m.end(), kind) for kind, m in _pattern_matches(text, settings)]
    spans += _private_spans(text, private_texts)
    for start, end, kind in reversed(_merged(spans)):
        text = text[:start] + REDACTED.format(kind=kind) + text[end:]
    return text


def redact_event(logger: object, method_name: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """A structlog processor: ``redact_text`` on every string in the event (nested included).

    Put it last before the renderer: ``structlog.configure(processors=[..., redact_event,
    renderer])``. Values of members named like a secret (``api_key``...) are withheld whole.
    ``redacting_processor`` makes one with other mounts.
    """
    return {key: _redact_value(key, value, DEFAULT_MOUNTS) for key, value in event_dict.items()}


def redacting_processor(mounts: tuple[str, ...] = DEFAULT_MOUNTS) -> Callable[..., dict[str, Any]]:
    """``redact_event`` with ``mounts`` (e.g. the directories the command line names)."""

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


def _finding_order(f: Finding) -> tuple[object, ...]:
    field = [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in _split_path(f.field or "")]
    return (f.file, f.line or 0, field, f.key_of, f.kind)


_TEXT_COLUMNS = ("question", "response")
_TEXT_LIST_COLUMNS = ("contexts", "cited_quotes")


def _column_texts(table: Any, column: str) -> Iterator[str]:
    if column not in table.column_names:
        return
    for value in table.column(column).to_pylist():
        if column in _TEXT_LIST_COLUMNS:
            yield from (v for v in value or () if v)
        elif value:
            yield value


def private_texts_from_tables(tables: Iterable[Any]) -> Iterator[str]:
    """Yield every question, response, context and cited quote of private text tables.

    Args:
        tables: pyarrow tables with (some of) the ``TEXT_SCHEMA`` columns ``question``,
            ``response``, ``contexts`` (list of strings), ``cited_quotes`` (list of strings).
    """
    for table in tables:
        for column in (*_TEXT_COLUMNS, *_TEXT_LIST_COLUMNS):
            yield from _column_texts(table, column)


def _redactable(name: str, hits: Sequence[Finding], redact: Collection[str] | None) -> bool:
    return (
        _is_json_name(name)
        and (redact is None or name in redact)
        and all(h.field is not None for h in hits)
    )


def files_to_withhold(
    findings: Iterable[Finding], *, redact: Collection[str] | None = None
) -> list[str]:
    """Return the output files whose content is withheld (not redacted) for these findings.

    Args:
        findings: the scan's findings.
        redact: JSON files to redact field by field; None means every JSON file.
    """
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        by_file.setdefault(f.file, []).append(f)
    return sorted(name for name, hits in by_file.items() if not _redactable(name, hits, redact))


def _set_path(doc: Any, finding: Finding, replacement: str) -> Any:
    """Return ``doc`` with the string at ``finding.field`` (or that member's name) replaced."""
    if finding.field == "(root)":
        return replacement
    parent: Any = None
    node: Any = doc
    last: int | str | None = None
    for part in _split_path(finding.field or ""):
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
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        by_file.setdefault(f.file, []).append(f)
    kept: dict[str, bytes] = {}
    withheld: list[str] = []
    redacted: list[str] = []
    for name, data in outputs.items():
        hits = by_file.get(name)
        if not hits:
            kept[name] = data
        elif _redactable(name, hits, redact):
            kept[name] = redact_json(data, hits)
            redacted.append(name)
        else:
            withheld.append(name)
            if notice:
                kinds = ", ".join(sorted({h.kind for h in hits}))
                text = WITHHELD_NOTICE.format(name=name, count=len(hits), kinds=kinds)
                kept[name] = text.encode()
    return HygieneOutcome(kept, sorted(withheld), sorted(redacted), list(findings))


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
