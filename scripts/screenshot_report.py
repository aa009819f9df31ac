"""Regenerate docs/report-html.png: run the shipped example, render report.html, screenshot it.

Usage: .venv/bin/python scripts/screenshot_report.py [--chromium PATH] [--output PNG]
Needs Chromium (Debian: apt-get install chromium). The page is rendered by
ragwarrant.audit.report_html.render_report_html from the example's decision.json.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ragwarrant.audit.report_html import render_report_html
from ragwarrant.outputs import Decision
from ragwarrant.pipeline import run_job

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Write the screenshot; return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "report-html.png")
    parser.add_argument("--example", type=Path, default=ROOT / "examples" / "ragtruth-generators")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        run_job(args.example, out, on_stage=lambda event, **fields: None)
        decision = Decision.model_validate_json((out / "decision.json").read_bytes())
        page = Path(tmp) / "report.html"
        page.write_text(render_report_html(decision), encoding="utf-8")
        subprocess.run(
            [
                args.chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={Path(tmp) / 'profile'}",
                "--window-size=1000,1500",
                f"--screenshot={args.output}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
