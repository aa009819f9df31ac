"""The container's mount points: a leaf module, so the CLI can name them without loading more.

``/in`` holds the inputs (read only), ``/out`` receives the outputs. Their mention in an output,
a log line or an error message is not a private path (``audit.hygiene``).
"""

from __future__ import annotations

DEFAULT_MOUNTS: tuple[str, ...] = ("/in", "/out")
