"""Adapters: one module per foreign format, each turning a file into canonical evidence.

Every adapter is a function ``load(request: AdapterRequest) -> AdapterResult``; nothing else
parses foreign formats. ``ADAPTERS`` maps the contract's ``adapter`` name to it.
"""

from ragwarrant.adapters._base import AdapterRequest, AdapterResult, SourceProvenance
from ragwarrant.adapters.registry import ADAPTERS, load_source

__all__ = ["ADAPTERS", "AdapterRequest", "AdapterResult", "SourceProvenance", "load_source"]
