"""Copied text: outputs that hold ``COPY_RUN_TOKENS`` consecutive tokens of the evidence's private
texts, found with hashed 12-token shingles (numpy), never by quoting the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from ragwarrant.audit._findings import Finding, Site

COPY_RUN_TOKENS = 12
"""Consecutive tokens of a private text that make a copy."""


_TOKEN = re.compile(r"\w+")
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


def _output_shingles(sites: Sequence[Site]) -> tuple[np.ndarray, np.ndarray] | None:
    """Return (sorted shingle hashes, site index of each) of the outputs; None when none.

    Each site is shingled alone, and each text output also as a whole (a copy may run across
    its lines), each window then owned by the line it starts on.
    """
    site_hashes: list[np.ndarray] = []
    site_index: list[np.ndarray] = []
    for i, site in enumerate(sites):
        h, _ = _shingles(_token_hashes(site.text))
        if h.size:
            site_hashes.append(h)
            site_index.append(np.full(h.size, i, dtype=np.int64))
    lines_of: dict[str, list[int]] = {}
    for i, site in enumerate(sites):
        if site.line is not None:
            lines_of.setdefault(site.file, []).append(i)
    for indices in lines_of.values():
        toks = [_token_hashes(sites[i].text) for i in indices]
        if sum(t.size for t in toks) < COPY_RUN_TOKENS:
            continue
        owner_site = np.concatenate(
            [np.full(t.size, i, np.int64) for t, i in zip(toks, indices, strict=True)]
        )
        h, starts = _shingles(np.concatenate(toks))
        site_hashes.append(h)
        site_index.append(owner_site[starts])
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


def copied_text(sites: Sequence[Site], private_texts: Iterable[str]) -> list[Finding]:
    """Return a ``copied-text`` finding for each site holding ``COPY_RUN_TOKENS`` consecutive
    tokens of a private text, in site order.

    The private texts are streamed once (any iterable), in batches of about a million tokens
    checked against the sorted shingles of the outputs; texts under 12 tokens hold no copy.
    """
    shingled = _output_shingles(sites)
    if shingled is None:
        return []
    out_h, out_site = shingled
    hit_sites: set[int] = set()
    batch: list[np.ndarray] = []
    batch_tokens = 0
    for text in private_texts:
        tok = _token_hashes(text) if text else None
        if tok is None or tok.size < COPY_RUN_TOKENS:
            continue
        batch.append(tok)
        batch_tokens += tok.size
        if batch_tokens >= 1_000_000:
            hit_sites |= _batch_hits(out_h, out_site, batch)
            batch, batch_tokens = [], 0
    if batch:
        hit_sites |= _batch_hits(out_h, out_site, batch)
    return [
        Finding(sites[i].file, "copied-text", sites[i].field, sites[i].line, sites[i].key_of)
        for i in sorted(hit_sites)
    ]
