"""What the publication-hygiene scan looks for and reports: the kinds, their patterns, ``Finding``.

Each pattern is applied to one string value (JSON) or one line (text); ``audit.hygiene`` walks the
outputs and documents every kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

import orjson

from ragwarrant.mounts import DEFAULT_MOUNTS


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
        for part in split_path(self.field):
            if isinstance(part, int):
                out += f"[{part}]"
            elif pattern_kinds(part) or is_secret_name(part) and self.key_of:
                out += "[<member>]"
            else:
                out = join_path(out, part)
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


_SECRET_NAME = re.compile(
    r"(?i)(?:^|[._\-\s])(pass(?:word|wd|phrase)|secret(?:[_-]?key)?|client[_-]?secret|"
    r"api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|private[_-]?key|credentials?)$"
)
"""A member or config path whose last segment names a secret."""


def is_secret_name(name: str) -> bool:
    """Whether a member name or config path (its last segment) names a secret (``db.password``)."""
    return bool(_SECRET_NAME.search(name))


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
    return not _in_mounts(path.rstrip("/"), settings)


def _outside_mount_dirs(path: str, settings: ScanSettings) -> bool:
    """A path under a private root (``/home``, ``/tmp``...) or a Windows or UNC path is a finding,
    unless mounts cover private roots (stderr and logs) and it is a mount or lies under one."""
    if not settings.mounts_cover_private_roots:
        return True
    return not _in_mounts(path.rstrip("/.,;:)]}"), settings)


def _in_mounts(path: str, settings: ScanSettings) -> bool:
    return any(
        path == m.rstrip("/") or path.startswith(m.rstrip("/") + "/") for m in settings.mounts
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

_NOT_MARKUP = r"(?<!=\")(?<!=')(?<!=\\\")(?<!=&\#34;)(?<!=&quot;)(?<!=&\#39;)(?<!&lt;)"
"""Not an HTML attribute's quoted value (``href="/x/y"``, raw, JSON- or HTML-escaped) nor an
escaped closing tag (``&lt;/b/c``): markup text, not a path."""

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
        # a/b/c, 2026/11/29, base64), nor as the fragment of a file name or URL (``contract.yaml#/
        # statistics/alpha``: a JSON pointer, RFC 6901 section 6; ``https://host/#/runs/42``),
        # nor as markup: an
        # attribute's value (``href="/docs/x"``, raw or HTML/JSON-escaped) or a closing tag
        # (``</b/c>``, ``&lt;/b/c``). Each exclusion is a fixed-width lookbehind: linear time.
        # A private root (/home, /tmp...) in these places is still found by the pattern above.
        # It must not end inside a base64 run (signatures and payloads in decision.intoto.json
        # hold ``/`` between letters).
        "absolute-path",
        re.compile(
            rf"(?:(?<![\w.~\-:/+<])(?<![\w/]#){_NOT_MARKUP}"
            rf"|{_GLUED_V}(?<![\w.~\-:/+#]v))"
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


def pattern_matches(
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


def pattern_kinds(text: str, settings: ScanSettings = DEFAULT_SETTINGS) -> list[str]:
    """Return the kinds found in one string, each at most once, in pattern order."""
    return list(dict.fromkeys(kind for kind, _ in pattern_matches(text, settings)))


@dataclass(frozen=True)
class Site:
    file: str
    text: str
    field: str | None
    line: int | None
    key_of: bool


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_:@/+\-]+$")


def join_path(path: str, key: object) -> str:
    """Append a member name to a field path; names with dots or brackets are quoted."""
    k = str(key)
    if _PLAIN_KEY.match(k):
        return f"{path}.{k}" if path else k
    return f"{path}[{orjson.dumps(k).decode()}]"


_PATH_PART = re.compile(r'\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([^.\[\]]+)')


def split_path(field: str) -> list[int | str]:
    """Invert ``join_path``: ``a.b[0]["c.d"]`` → ``["a", "b", 0, "c.d"]``."""
    parts: list[int | str] = []
    for index, quoted, plain in _PATH_PART.findall(field):
        if index:
            parts.append(int(index))
        elif quoted:
            parts.append(orjson.loads(quoted))
        else:
            parts.append(plain)
    return parts
