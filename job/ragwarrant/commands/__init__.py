"""Subcommands. Each module's ``register(subparsers)`` adds its parser with a ``handler``."""

__all__: list[str] = []
