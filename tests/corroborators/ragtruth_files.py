"""Tiny RAGTruth copies (official and sample layout) for the reader, benchmark and command tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

GROUNDED = "Alpha beta gamma delta epsilon."  # 0 of 5 content tokens unsupported
UNSUPPORTED = "Alpha beta xray yankee zulu."  # 3 of 5
PARTLY = "Alpha beta gamma xray yankee."  # 2 of 5
SLIGHTLY = "Alpha beta gamma delta xray."  # 1 of 5

SOURCES: list[dict[str, Any]] = [
    {
        "source_id": "1",
        "task_type": "QA",
        "source_info": {"question": "alpha beta?", "passages": "passage 1: gamma delta epsilon"},
    },
    {"source_id": "2", "task_type": "Summary", "source_info": "alpha beta gamma delta epsilon"},
    {
        "source_id": "3",
        "task_type": "Data2txt",
        "source_info": {
            "name": "Alpha",
            "attributes": {"beta": True},
            "text": "gamma delta epsilon",
        },
    },
]
HALLUCINATION = {"start": 0, "end": 5, "text": "Alpha", "meta": "", "label_type": "Evident"}


def label(implicit_true: bool) -> dict[str, Any]:
    return {**HALLUCINATION, "implicit_true": implicit_true, "due_to_null": False}


def response(sid: str, text: str, labels: list[dict[str, Any]], split: str, quality: str = "good"):
    return {
        "id": "x",
        "source_id": sid,
        "model": "m",
        "temperature": 0.7,
        "labels": labels,
        "split": split,
        "quality": quality,
        "response": text,
    }


def official_responses() -> list[dict[str, Any]]:
    """Train calibrates coverage at 0.6; the test response at 0.4 is then a false negative."""
    return [
        response("1", GROUNDED, [], "train"),
        response("2", GROUNDED, [], "train"),
        response("1", UNSUPPORTED, [label(False)], "train"),
        response("3", UNSUPPORTED, [label(False)], "train"),
        response("2", SLIGHTLY, [label(True)], "train"),  # implicit_true: supported
        response("1", GROUNDED, [], "test"),
        response("2", UNSUPPORTED, [label(False)], "test"),
        response("3", PARTLY, [label(False)], "test"),
        response("1", UNSUPPORTED, [], "test", quality="truncated"),  # dropped
    ]


def write_jsonl(path: Path, rows: list[Any], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if gz:
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_official(tmp_path: Path, responses: list[Any] | None = None, sources=None) -> Path:
    write_jsonl(
        tmp_path / "response.jsonl", official_responses() if responses is None else responses
    )
    write_jsonl(tmp_path / "source_info.jsonl", SOURCES if sources is None else sources)
    return tmp_path


def make_sample(tmp_path: Path, n_sources: int = 12) -> Path:
    """Sample layout (gz, no split/quality): per source one grounded, one unsupported answer."""
    sources, responses = [], []
    for i in range(n_sources):
        sid = str(100 + i)
        sources.append(
            {
                "source_id": sid,
                "task_type": "Summary",
                "source_info": "alpha beta gamma delta epsilon",
            }
        )
        for text, labels in ((GROUNDED, []), (UNSUPPORTED, [label(False)])):
            responses.append(
                {
                    "source_id": sid,
                    "task_type": "Summary",
                    "model": "m",
                    "response": text,
                    "labels": labels,
                }
            )
    write_jsonl(tmp_path / "sample_response.jsonl.gz", responses, gz=True)
    write_jsonl(tmp_path / "sample_source_info.jsonl.gz", sources, gz=True)
    return tmp_path
