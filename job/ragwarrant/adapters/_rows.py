"""Canonical rows: example ids from questions, each row's policy, the text table."""

from __future__ import annotations

import unicodedata
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa

from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import EvidenceError


def normalize_question(text: str) -> str:
    """Return the normalized form of a question used for question-hash pairing.

    Normalization: Unicode NFKC, then ``str.casefold``, then every run of whitespace (including
    newlines and non-breaking spaces, which NFKC maps to spaces) collapsed to one space, then
    leading and trailing whitespace removed. Punctuation is kept: "What's X?" and "Whats X" differ.
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def question_hash(text: str) -> str:
    """Return the example id derived from a question: ``qh:`` + the first 16 hex digits of
    sha256(UTF-8 of ``normalize_question(text)``).

    64 bits make an accidental collision among a million questions about 3e-8 likely; a collision
    would show as a duplicated id, which the adapters reject.
    """
    digest = sha256_bytes(normalize_question(text).encode("utf-8"))
    return f"qh:{digest[:16]}"


def check_unique_keys(
    policies: list[str], examples: list[str], rows: list[int], display: str, column: str
) -> None:
    """Raise on the first (policy, example) that occurs twice.

    Raises:
        EvidenceError: ``evidence-duplicate-id`` naming both rows, the key column and the id.
    """
    seen: dict[tuple[str, str], int] = {}
    for p, e, r in zip(policies, examples, rows, strict=True):
        first = seen.setdefault((p, e), r)
        if first != r:
            raise EvidenceError(
                "evidence-duplicate-id",
                f"{display} row {r}: example {e!r} of policy {p!r} already appears in row {first}",
                hint="each (policy, example) may appear once per file; remove the repeat or "
                "declare a distinct id column",
                file=display,
                row=r,
                column=column,
                expected="a unique example id per policy",
                found=f"{e!r} again (first in row {first})",
            )


def check_policies(
    file_policies: list[str | None],
    rows: list[int],
    *,
    declared: str | None,
    contract_policies: list[str],
    display: str,
    column: str,
) -> list[str]:
    """Decide each row's policy from what the file says and what the contract declares.

    - ``declared`` given: rows that name another policy → ``evidence-mixed-policies``; a file
      whose rows all name other policies → ``evidence-policy-missing``; rows that name none take
      the declared one.
    - ``declared`` absent: every row must name a policy (``evidence-policy-unknown`` otherwise),
      every named policy must be one of the contract's (``evidence-policy-unknown``), and every
      contract policy must appear (``evidence-policy-missing``): a file that holds one policy
      declares it with ``policy:``.

    Args:
        file_policies: the policy each row names, or None where the file says nothing.
        rows: 1-based row numbers aligned with ``file_policies``.

    Returns:
        The policy id of each row.
    """
    if declared is not None:
        named = [p for p in file_policies if p is not None]
        if named and declared not in named:
            found = sorted(set(named))
            raise EvidenceError(
                "evidence-policy-missing",
                f"{display}: the contract says this file holds policy {declared!r}, but its rows "
                f"name {', '.join(map(repr, found))} ({column})",
                hint="point the source at the file of that policy, or fix 'policy'",
                file=display,
                column=column,
                expected=declared,
                found=", ".join(found),
            )
        if not set(file_policies) <= {declared, None}:  # one pass; the loop names the row
            _refuse_other_policy(file_policies, rows, declared, display, column)
        return [declared] * len(file_policies)
    seen = set(file_policies)
    if None in seen or not seen <= set(contract_policies):  # the loop names the first row
        _refuse_unknown_policy(file_policies, rows, contract_policies, display, column)
    out = [p for p in file_policies if p is not None]  # every row names one (checked above)
    missing = [p for p in contract_policies if p not in seen]
    if missing:
        named = sorted(set(out))
        raise EvidenceError(
            "evidence-policy-missing",
            f"{display}: no row of policy {', '.join(map(repr, missing))} ({column} names only "
            f"{', '.join(map(repr, named))})",
            hint=(  # one policy named: the file may hold only it; several: the contract errs
                f"if this file holds only policy {named[0]!r}, declare 'policy: {named[0]}' on "
                "the evidence source; else give the contract's policies the ids the file uses"
                if len(named) == 1
                else f"the file names policies {', '.join(map(repr, named))}: give the "
                f"contract's {', '.join(map(repr, missing))} the id the file uses for that "
                "policy (policy ids must be the same in every evidence file), or remove it if "
                "it is not a policy"
            ),
            file=display,
            column=column,
            expected=", ".join(contract_policies),
            found=", ".join(sorted(set(out))),
        )
    return out


def _refuse_other_policy(
    file_policies: list[str | None], rows: list[int], declared: str, display: str, column: str
) -> None:
    """Raise ``evidence-mixed-policies`` at the first row naming a policy other than
    ``declared``."""
    for p, r in zip(file_policies, rows, strict=True):
        if p is not None and p != declared:
            raise EvidenceError(
                "evidence-mixed-policies",
                f"{display} row {r}: {column} is {p!r}, but the contract says every row of "
                f"this file is policy {declared!r}",
                hint="split the file per policy, or drop 'policy' from the source",
                file=display,
                row=r,
                column=column,
                expected=declared,
                found=p,
            )


def _refuse_unknown_policy(
    file_policies: list[str | None],
    rows: list[int],
    contract_policies: list[str],
    display: str,
    column: str,
) -> None:
    """Raise ``evidence-policy-unknown`` at the first row naming no policy or one the contract
    does not declare."""
    for p, r in zip(file_policies, rows, strict=True):
        if p is None:
            raise EvidenceError(
                "evidence-policy-unknown",
                f"{display} row {r}: no policy ({column} is empty) and the source declares none",
                hint="add 'policy: <id>' to the evidence source when the file holds one policy",
                file=display,
                row=r,
                column=column,
                expected="a policy id",
                found="nothing",
            )
        if p not in contract_policies:
            raise EvidenceError(
                "evidence-policy-unknown",
                f"{display} row {r}: {column} is {p!r}, which is not a policy of the contract "
                f"({', '.join(contract_policies)})",
                hint="name the policies in the contract as the file does",
                file=display,
                row=r,
                column=column,
                expected=" | ".join(contract_policies),
                found=p,
            )


def make_texts(
    policies: list[str],
    examples: list[str],
    questions: list[Any],
    responses: list[Any],
    contexts: list[list[str] | None],
    *,
    display: str,
) -> pa.Table:
    """Build the private text table (``TEXT_SCHEMA``); cited_quotes are null (no tool has them).

    Raises:
        EvidenceError: ``evidence-wrong-type`` naming the first row whose question or response
            is neither text nor empty (the value itself is private and never quoted).
    """
    from ragwarrant.evidence.schema import TEXT_SCHEMA

    for field, cells in (("question", questions), ("response", responses)):
        row = next(
            (i for i, c in enumerate(cells, 1) if c is not None and not isinstance(c, str)), 0
        )
        if row:
            raise EvidenceError(
                "evidence-wrong-type",
                f"{display} row {row}: the {field} is a {type(cells[row - 1]).__name__}, not text",
                file=display,
                row=row,
                column=field,
                expected="text or nothing",
                found=type(cells[row - 1]).__name__,
            )
    n = len(policies)
    return pa.Table.from_pydict(
        {
            "policy_id": policies,
            "example_id": examples,
            "question": questions,
            "response": responses,
            "contexts": contexts,
            "cited_quotes": [None] * n,
        },
        schema=TEXT_SCHEMA,
    )


def input_dir_of(path: Path, relative: str, display: str) -> Path:
    """Return the input directory, given a source's resolved path and its contract-relative path.

    Raises:
        EvidenceError: ``evidence-path`` when the resolved path does not end with the relative one
            (the file was reached through a symlink), so a sibling cannot be located safely.
    """
    parts = PurePosixPath(relative).parts
    if tuple(path.parts[-len(parts) :]) != parts:
        raise EvidenceError(
            "evidence-path",
            f"{display} resolves to {path.name} through a symlink; "
            "its sibling files cannot be located",
            file=display,
        )
    return path.parents[len(parts) - 1]
