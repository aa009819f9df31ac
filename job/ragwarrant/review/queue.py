"""The review queue: the record of a random draw of examples for human labelling.

``ragwarrant review sample`` writes it; the job reads it back to check that the labels it is
given answer this draw and no other. Each item shows the two policies' outputs as A and B in
an order shuffled per item, so the reviewer cannot tell the candidate from the baseline;
``shown`` records which policy is A and which is B.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import EvidenceError
from ragwarrant.limits import MAX_REVIEW_FILE_BYTES
from ragwarrant.sidefiles import read_regular

Role = Literal["candidate", "baseline"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DrawnItem(_Frozen):
    """One drawn example, blinded.

    Attributes:
        item_id: the id the reviewer sees (carries no policy or example information):
            ``<draw tag>-r0001``..., the tag (``draw_tag``) unique to the draw.
        example_id: the evidence's example id.
        slice: the example's slice value, if any.
        shown: which policy's output is shown as A and which as B.
    """

    item_id: str = Field(min_length=1)
    example_id: str = Field(min_length=1)
    slice: str | None = None
    shown: tuple[Role, Role]


class EvidenceDigest(_Frozen):
    """An evidence file the draw was made from, with its sha256."""

    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ReviewQueue(_Frozen):
    """The draw: seed, metric, policies, the evidence's sha256 and the blinded items.

    Attributes:
        metric: the quality metric the reviewers label, on its own scale.
        baseline, candidate: the two policies compared.
        seed: the seed of the draw (``numpy.random.default_rng``).
        stratified_by_slice: whether the draw was proportional within each slice.
        population: examples the draw was made from (both policies present).
        evidence: the evidence files read, with their sha256.
        items: the drawn items, in the order shown to reviewers.
    """

    schema_version: Literal["1"] = "1"
    metric: str
    baseline: str
    candidate: str
    seed: int = Field(ge=0)
    stratified_by_slice: bool = False
    population: int = Field(ge=0)
    evidence: list[EvidenceDigest]
    items: list[DrawnItem]


def draw_tag(seed: int, evidence: list[EvidenceDigest], n: int, meta: tuple[str, str, str]) -> str:
    """The first 8 hex digits of the sha256 of the draw's identity, prefixing its item ids.

    Args:
        seed: the draw's seed; evidence: the evidence files drawn from (their sha256 only,
            sorted, count); n: items drawn; meta: (metric, baseline, candidate).

    Returns:
        8 lowercase hex digits: two draws differ in them unless they are the same draw, so
        labels written for one draw's items are never taken for another's.
    """
    shas = ",".join(sorted(e.sha256 for e in evidence))
    return sha256_bytes(f"{seed}|{shas}|{n}|{'|'.join(meta)}".encode())[:8]


def queue_tag(queue: ReviewQueue) -> str:
    """``draw_tag`` of a queue read back."""
    meta = (queue.metric, queue.baseline, queue.candidate)
    return draw_tag(queue.seed, queue.evidence, len(queue.items), meta)


def read_review_file(path: Path, relative: str) -> bytes:
    """The bytes of a review queue or labels file, bounded like the evidence it answers.

    Raises:
        EvidenceError: ``review-file-unreadable``: not a readable regular file, or larger
            than ``limits.MAX_REVIEW_FILE_BYTES`` (refused unread).
    """
    try:
        return read_regular(path, limit=MAX_REVIEW_FILE_BYTES)
    except OSError as exc:
        raise EvidenceError(
            "review-file-unreadable",
            f"{relative} cannot be read: {exc.strerror}",
            hint="pass the files 'ragwarrant review sample' wrote and the reviewers filled in",
            file=relative,
            expected=f"a regular file of at most {MAX_REVIEW_FILE_BYTES:,} bytes",
        ) from None


def read_queue(path: Path, relative: str) -> ReviewQueue:
    """Read and validate a review queue JSON file.

    Raises:
        EvidenceError: ``review-file-unreadable`` (see ``read_review_file``);
            ``review-queue-invalid`` naming the file and the first invalid field.
    """
    data = read_review_file(path, relative)
    try:
        return ReviewQueue.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise EvidenceError(
            "review-queue-invalid",
            f"{relative} is not a review queue: {first['msg']} at /{where}",
            hint="pass the queue JSON that 'ragwarrant review sample' wrote, unchanged",
            file=relative,
            column=where or None,
        ) from None
