"""Shared fixtures for the adapter tests: a minimal contract and a request for one file."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from ragwarrant.adapters._base import AdapterRequest
from ragwarrant.contract import ReleaseContract
from ragwarrant.digests import sha256_file

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"

#: The prices behind the synthetic telemetry's cost_usd (USD per 1M tokens).
PRICES = {
    "llama-3.1-8b-instruct": {"input_usd_per_1m_tokens": 0.18, "output_usd_per_1m_tokens": 0.18},
    "llama-3.1-70b-instruct": {"input_usd_per_1m_tokens": 0.88, "output_usd_per_1m_tokens": 0.88},
}


def make_contract(
    prices: dict[str, dict[str, float]] | None = None, **source: object
) -> ReleaseContract:
    """A valid contract (policies baseline, candidate) with one evidence source from ``source``."""
    src = {"id": "src", "path": "file", "format": "csv", **source}
    return ReleaseContract.model_validate(
        {
            "id": "t",
            "version": "1",
            "baseline": {"policy_id": "baseline", "config": "policies/baseline.yaml"},
            "candidates": [{"policy_id": "candidate", "config": "policies/candidate.yaml"}],
            "evidence": [src],
            "quality_metrics": [{"id": "token_f1", "margin_abs": 0.05}],
            "claims": {"items": [{"kind": "quality-improvement", "metric": "token_f1"}]},
            "evidence_class": "development",
            "prices": prices or {},
        }
    )


def read_csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV export's header and rows, as strings (to be edited into a broken variant)."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return header, list(reader)


def write_csv_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    """Write ``header`` and ``rows`` as CSV to ``path``; return ``path``."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def without_column(
    header: list[str], rows: list[list[str]], name: str
) -> tuple[list[str], list[list[str]]]:
    """``header`` and ``rows`` with the column ``name`` removed."""
    i = header.index(name)
    return header[:i] + header[i + 1 :], [r[:i] + r[i + 1 :] for r in rows]


RequestFactory = Callable[..., AdapterRequest]


@pytest.fixture
def make_request() -> RequestFactory:
    """Return ``f(path, root=None, prices=None, **source_fields) -> AdapterRequest``.

    The source's ``path`` is ``path`` relative to ``root`` (default: its parent); ``format``
    defaults to the file's suffix.
    """

    def factory(
        path: Path,
        root: Path | None = None,
        prices: dict[str, dict[str, float]] | None = None,
        **fields: object,
    ) -> AdapterRequest:
        rel = path.relative_to(root).as_posix() if root else path.name
        fields.setdefault("format", path.suffix.lstrip("."))
        contract = make_contract(prices, path=rel, **fields)
        return AdapterRequest(contract.evidence[0], path, rel, sha256_file(path), contract)

    return factory


@pytest.fixture
def exports() -> Path:
    """The real exports copied from ../shared/exports (read-only use)."""
    return EXPORTS
