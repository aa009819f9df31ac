"""``python -m ragwarrant`` is the same as the ``ragwarrant`` console script."""

from ragwarrant.cli import entry

entry()
