"""Values from the inputs cannot forge or inject anything at an output boundary (issue 31).

The shipped example's decision is rewritten with hostile names (raw HTML, a newline that forges
a decision line or a table row, terminal escape sequences, characters XML 1.0 forbids, a
Cyrillic letter and a zero-width space in a policy id), then rendered at every boundary:
report.md (parsed by markdown-it-py, a CommonMark + GFM-table parser), junit.xml (parsed by
the XML parser), report.html, the ``run`` stdout line and ``ragwarrant summary``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ragwarrant.audit.junit import render_junit
from ragwarrant.audit.report import render_report
from ragwarrant.audit.report_html import render_report_html
from ragwarrant.audit.summary import summary_line
from ragwarrant.cli import main
from ragwarrant.commands.run import STDOUT_WIDTH
from ragwarrant.digests import sha256_bytes
from ragwarrant.outputs import Decision

from .conftest import Run

FORGED = "PROMOTE (exit 0): FORGED"
HOSTILE = {
    "1.0.0": f"1.0.0\n{FORGED}",  # the contract version (and a tool version)
    "ragtruth-generators": "ragtruth<img src=x onerror=alert(1)>",  # the contract id
    "gpt-3.5-turbo-0613": "gpt\x1b[31m|x|\n| forged | row |<script>alert(1)</script>",
    "mistral-7B-instruct": "mistr\u0430l\u200b-7B",  # a Cyrillic a, a zero-width space
    "QA": "Q\x07\x0b\x0c\ufffeA",  # BEL, VT, FF, U+FFFE
    "Summary": "S`x`*em*[link](http://example.org)",
}


def hostile_decision(output_dir: Path) -> Decision:
    """The run's decision with every name in ``HOSTILE`` replaced, consistently everywhere."""
    text = (output_dir / "decision.json").read_text()
    for plain, hostile in HOSTILE.items():
        text = text.replace(plain, json.dumps(hostile)[1:-1])
    return Decision.model_validate_json(text)


def _only_printable_lines(text: str) -> None:
    for line in text.split("\n"):
        assert line.isprintable() or all(c.isprintable() or c.isspace() for c in line), line
        assert "\x1b" not in line and "\x07" not in line and "\ufffe" not in line


def test_report_md_holds_no_html_no_forged_line_and_no_forged_row(pristine_run: Run) -> None:
    """report.md parses to no HTML, link or image; no line starts with a forged decision; every
    table row has its header's number of cells; invisible characters are escapes."""
    decision = hostile_decision(pristine_run.output_dir)
    report = render_report(decision)
    tokens = MarkdownIt("commonmark").enable("table").parse(report)
    inline = [child for t in tokens for child in (t.children or [])]
    kinds = {t.type for t in tokens} | {t.type for t in inline}
    assert not kinds & {"html_block", "html_inline", "image", "link_open"}
    assert not any(line.startswith(FORGED) for line in report.splitlines())
    cells_per_row: list[int] = []
    header = 0
    for t in tokens:
        if t.type == "tr_open":
            cells_per_row.append(0)
        elif t.type in ("th_open", "td_open"):
            cells_per_row[-1] += 1
        elif t.type == "thead_close":
            header = cells_per_row[-1]
        elif t.type == "table_close":
            assert set(cells_per_row) == {header}
            cells_per_row = []
    rows = sum(t.type == "tr_open" for t in tokens)
    tables = sum(t.type == "table_open" for t in tokens)
    assert rows + tables == report.count("\n|")  # each line written is one row or a delimiter
    _only_printable_lines(report)
    assert r"'mistr\u0430l\u200b-7B'" in report  # one backslash: literal before a letter


def test_junit_xml_is_well_formed(pristine_run: Run) -> None:
    """junit.xml parses although slice values hold BEL, VT, FF and U+FFFE; they are escapes."""
    junit = render_junit(hostile_decision(pristine_run.output_dir))
    root = ET.fromstring(junit)
    names = " ".join(case.get("name", "") for case in root.iter("testcase"))
    assert "@Q\\x07\\x0b\\x0c\\ufffeA" in names


def test_report_html_holds_no_raw_markup_or_control_characters(pristine_run: Run) -> None:
    """report.html escapes every value (Jinja2 autoescape) and shows control characters."""
    html = render_report_html(hostile_decision(pristine_run.output_dir))
    assert "<img" not in html and "<script" not in html
    assert "&lt;script&gt;" in html
    assert not any(c in html for c in "\x1b\x07\x0b\x0c\ufffe\u200b")


def test_run_stdout_line_is_one_visible_line(pristine_run: Run) -> None:
    """`run`'s line is one line of at most STDOUT_WIDTH characters, with no escape sequence."""
    line = summary_line(hostile_decision(pristine_run.output_dir), STDOUT_WIDTH, reasons=False)
    assert "\n" not in line and len(line) <= STDOUT_WIDTH
    assert line.isprintable()
    assert line.startswith("PROMOTE (exit 0): 'gpt\\x1b[31m|x|\\n| forged")


def test_summary_prints_one_line_per_line_it_means(
    real_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ragwarrant summary` on a hostile (but committed) decision: no forged line, no escape
    sequence, the mixed-script id shown escaped."""
    decision_path = real_run.output_dir / "decision.json"
    raw = hostile_decision(real_run.output_dir).model_dump_json(by_alias=True).encode()
    old = sha256_bytes(decision_path.read_bytes())
    decision_path.write_bytes(raw)
    manifest = real_run.output_dir / "manifest.json"
    manifest.write_text(manifest.read_text().replace(old, sha256_bytes(raw)))
    capsys.readouterr()
    assert main(["summary", str(real_run.output_dir)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    n_candidates = len(json.loads(raw)["candidates"])
    assert len(lines) == 3 + n_candidates  # decision, summary, one per candidate, next
    assert not any(line.lstrip().startswith(FORGED) for line in lines)
    assert all(line.isprintable() for line in lines)
    assert "'mistr\\u0430l\\u200b-7B'" in out
