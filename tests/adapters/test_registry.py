"""The adapter registry is the one list of adapter names."""

from __future__ import annotations

import typing

from ragwarrant.adapters import auto
from ragwarrant.adapters.registry import ADAPTERS, TOOL_ADAPTERS, load_auto
from ragwarrant.contract import AdapterName


def test_contract_literal_equals_registry_keys() -> None:
    """The contract's ``AdapterName`` literal names exactly the registry's adapters."""
    assert sorted(typing.get_args(AdapterName)) == sorted(ADAPTERS)


def test_auto_chooses_among_the_registry_tool_adapters() -> None:
    """``auto`` and ``generic`` are the only adapters auto detection never picks."""
    assert sorted(set(ADAPTERS) - set(TOOL_ADAPTERS)) == ["auto", "generic"]
    assert ADAPTERS["auto"] is load_auto


def test_auto_rules_name_only_registered_tool_adapters() -> None:
    """Every adapter a column rule can return is a registered tool adapter."""
    probes = [
        ["app_version", "record_json"],
        ["feedback.x"],
        ["context.span_id", "context.trace_id"],
        ["span_id", "x_score"],
        ["gen_ai.usage.input_tokens", "trace_id"],
        ["user_input", "response"],
    ]
    found = {auto._detect_columns(p)[0] for p in probes}  # type: ignore[index]
    assert found <= set(TOOL_ADAPTERS)
    assert len(found) == 5
