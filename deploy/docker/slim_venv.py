"""Remove from a venv's site-packages every path matching a glob of slim.txt (the image build).

Usage: python slim_venv.py SITE_PACKAGES SLIM_TXT. Prints the megabytes removed.
"""

import shutil
import sys
from pathlib import Path


def main(site: Path, patterns: Path) -> None:
    """Delete the matches of each non-comment line of ``patterns`` under ``site``."""
    removed = 0
    for line in patterns.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        for path in sorted(site.glob(line.strip()), reverse=True):
            if not path.exists():
                continue
            if path.is_dir():
                removed += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
                shutil.rmtree(path)
            else:
                removed += path.stat().st_size
                path.unlink()
    print(f"slim_venv: removed {removed / 1e6:.1f} MB")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
