"""Audit: output models, atomic writing, manifest, report, and (later) ledger and hygiene."""

__all__: list[str] = []
