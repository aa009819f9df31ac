"""The adapter registry is the one list of adapter names."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from ragwarrant.adapters import auto
from ragwarrant.adapters._base import FileShape
from ragwarrant.adapters.registry import ADAPTERS, TOOL_ADAPTERS, load_auto, load_source
from ragwarrant.contract import AdapterName
from ragwarrant.errors import EvidenceError

from .conftest import make_contract


def test_contract_literal_equals_registry_keys() -> None:
    """The contract's ``AdapterName`` literal names exactly the registry's adapters."""
    assert sorted(typing.get_args(AdapterName)) == sorted(ADAPTERS)


def test_auto_chooses_among_the_registry_tool_adapters() -> None:
    """``auto`` and ``generic`` are the only adapters auto detection never picks."""
    assert sorted(set(ADAPTERS) - set(TOOL_ADAPTERS)) == ["auto", "generic"]
    assert ADAPTERS["auto"] is load_auto


def test_auto_rules_name_only_registered_tool_adapters() -> None:
    """Every adapter a column rule can return is a registered tool adapter, and each tool's
    column rule recognises its own columns."""
    probes = {
        "trulens": ("app_version", "record_json"),
        "langsmith": ("feedback.x",),
        "phoenix": ("context.span_id", "context.trace_id"),
        "otel": ("gen_ai.usage.input_tokens", "trace_id"),
        "ragas": ("user_input", "response"),
    }
    found = {tool: auto.detect_shape(FileShape("csv", names)) for tool, names in probes.items()}
    assert {tool: hit[0] for tool, hit in found.items()} == {t: t for t in probes}
    assert set(found) <= set(TOOL_ADAPTERS)
    evaluations = auto.detect_shape(FileShape("parquet", ("span_id", "x_score")))
    assert evaluations == ("phoenix", "column span_id with x_score (Phoenix evaluations)")


def test_every_tool_adapter_declares_its_format() -> None:
    """The registry's tool adapters are exactly the tools with a ``FORMAT`` in ``auto.TOOLS``."""
    assert {m.FORMAT.adapter for m in auto.TOOLS} == set(TOOL_ADAPTERS)
    assert all(TOOL_ADAPTERS[m.FORMAT.adapter] is m.load for m in auto.TOOLS)


def test_adapter_that_opens_one_file_refuses_a_directory(tmp_path: Path) -> None:
    """An otel JSON-lines source given a dataset directory: a located evidence error."""
    root = tmp_path / "spans"
    root.mkdir()
    (root / "part-0.jsonl").write_text('{"resourceSpans": []}\n')
    contract = make_contract(path="spans", format="jsonl", adapter="otel", kind="telemetry")
    with pytest.raises(EvidenceError) as info:
        load_source(contract.evidence[0], root, "0" * 64, contract)
    assert (info.value.code, info.value.file) == ("evidence-dataset-unsupported", "spans")
