"""``python -m ragwarrant`` is the same as the ``ragwarrant`` console script."""

from ragwarrant.cli import main

raise SystemExit(main())
