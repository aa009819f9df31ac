"""The output escapes of ``ragwarrant.display``: each boundary's function on hostile values."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from ragwarrant.audit.hygiene import scan_outputs
from ragwarrant.display import cut, identifier, markdown, markdown_code, number, visible, xml_text
from tests.audit.test_hygiene import PLANTED


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain id-1.0", "plain id-1.0"),
        ("v1\nPROMOTE (exit 0): FORGED", "v1\\nPROMOTE (exit 0): FORGED"),
        ("red \x1b[31m bell \x07", "red \\x1b[31m bell \\x07"),
        ("zero\u200bwidth \u202eevil", "zero\\u200bwidth \\u202eevil"),
        ("line\u2028sep \ufffe", "line\\u2028sep \\ufffe"),
        ("café 日本語 C:\\x", "café 日本語 C:\\x"),
    ],
)
def test_visible_escapes_only_invisible_characters(raw: str, shown: str) -> None:
    """Controls, format characters, separators and non-characters become escapes; the rest stays."""
    assert visible(raw) == shown
    assert visible(raw).isprintable() or " " in visible(raw)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("candidate", "candidate"),
        ("c\u0430ndidate", "'c\\u0430ndidate'"),  # a Cyrillic a among Latin letters
        ("cand\u200bidate", "'cand\\u200bidate'"),  # a zero-width space
        ("no\u00a0break", "'no\\xa0break'"),  # looks like a space
        ("café-v2", "café-v2"),  # one script with an accent
        ("日本語のモデル", "日本語のモデル"),  # Han, Hiragana and Katakana write one language
        ("model\u0391", "'model\\u0391'"),  # a Greek capital alpha
        ("\u0441\u043e\u0440", "'\\u0441\\u043e\\u0440'"),  # Cyrillic letters drawn like "cop"
        ("привет", "привет"),  # an ordinary Cyrillic word
        ("fa\u0131thfulness", "'fa\\u0131thfulness'"),  # a Latin dotless i drawn like i
        ("kıyı", "'k\\u0131y\\u0131'"),  # so is a Turkish word: escaped, never confused
    ],
)
def test_identifier_shows_lookalikes_escaped(name: str, shown: str) -> None:
    """Two names that look alike read differently: invisible or mixed-script ones are escaped."""
    assert identifier(name) == shown


def test_identifier_quoted_matches_repr_for_plain_names() -> None:
    """``quoted`` gives ``repr`` for a plain name (as "did you mean 'x'?" messages show it)."""
    assert identifier("baseline", quoted=True) == "'baseline'"
    assert identifier("b\u0430seline", quoted=True) == "'b\\u0430seline'"


def _inline(md: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    return [c.type for t in tokens for c in (t.children or [])] + [t.type for t in tokens]


@pytest.mark.parametrize(
    "value",
    [
        "<img src=x onerror=alert(1)>",
        "<script>alert(1)</script>",
        "![pixel](http://example.org/p.png)",
        "[click](javascript:alert(1))",
        "<http://example.org>",
        "&lt;b&gt; `code` *em* \\",
        "# heading",
        "- item",
    ],
)
def test_markdown_renders_the_value_as_text(value: str) -> None:
    """Inline Markdown of a hostile value parses to text only, and renders as the value."""
    md = markdown(value)
    types = _inline(f"- {md}")
    assert not {"html_inline", "html_block", "image", "link_open", "code_inline", "em_open"} & set(
        types
    )
    assert not {"heading_open"} & set(types)
    rendered = MarkdownIt("commonmark").renderInline(md)
    unescaped = rendered.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    assert unescaped.replace("&amp;", "&") == value


def test_markdown_in_a_table_cell_keeps_the_row() -> None:
    """A ``|`` or a newline in a value neither splits the cell nor starts a row."""
    value = "a | b\n| forged | row |"
    table = f"| x | y |\n|---|---|\n| {markdown(value)} | {markdown_code(value, table=True)} |\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(table)
    assert sum(t.type == "tr_open" for t in tokens) == 2
    assert sum(t.type == "td_open" for t in tokens) == 2


@pytest.mark.parametrize("value", ["plain", "one ` tick", "``two``", "`edge", "a|b"])
def test_markdown_code_span_holds_any_backticks(value: str) -> None:
    """The fence is longer than any backtick run: the span holds the value whole."""
    tokens = MarkdownIt("commonmark").parse(markdown_code(value))
    (code,) = [c for t in tokens for c in (t.children or []) if c.type == "code_inline"]
    assert code.content == value


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_markdown_keeps_every_hygiene_finding_visible(kind: str, secret: str) -> None:
    """Escaping never hides a credential, path or address from the publication-hygiene scan."""
    report = f"- {markdown(secret)}\n| {markdown_code(secret, table=True)} |\n".encode()
    kinds = {f.kind for f in scan_outputs({"report.md": report}, iter(()))}
    assert kind in kinds


def test_markdown_keeps_a_copied_text_visible() -> None:
    """A private text with markup characters, escaped for Markdown, is still a 12-token copy."""
    private = "the <b>patient</b> & her doctor agreed [on] the *dose* | of 5 mg twice daily"
    report = f"- {markdown(private)}\n".encode()
    kinds = {f.kind for f in scan_outputs({"report.md": report}, iter([private]))}
    assert "copied-text" in kinds


def test_xml_text_makes_every_document_well_formed() -> None:
    """Characters XML 1.0 forbids become escapes; tab, newline and markup are left as they are."""
    value = "a\x1b\x07\x0b\x0c\ufffe\uffff\ud800<&>\t\nb"
    element = ET.Element("case", name=xml_text(value))
    element.text = xml_text(value)
    parsed = ET.fromstring(ET.tostring(element))
    assert parsed.text == "a\\x1b\\x07\\x0b\\x0c\\ufffe\\uffff\\ud800<&>\t\nb"


def test_console_log_lines_show_control_characters() -> None:
    """On the console renderer a logged value from the inputs stays on its line, unobeyed."""
    import io

    import structlog

    from ragwarrant.logging import configure_logging
    from tests.conftest import reset_logging

    stream = io.StringIO()
    try:
        configure_logging(json=False, stream=stream)
        structlog.get_logger().info("inputs_read", contract="c\x1b[2J\nFORGED")
    finally:
        reset_logging()
    out = stream.getvalue()
    assert out.count("\n") == 1 and "\x1b" not in out
    assert "contract=c\\x1b[2J\\nFORGED" in out


def test_an_escape_sequence_in_markdown_is_no_unc_path() -> None:
    """An ESC in an id renders as ``\\x1b`` with one backslash, so report.md does not hold the
    double backslash of a Windows UNC path and is not withheld as a leaked host path."""
    text = markdown("q\x1b[2Jz")
    assert "\\\\" not in text
    rendered = MarkdownIt("commonmark").renderInline(text)
    assert rendered == visible("q\x1b[2Jz")
    report = f"duplicate example id {text}\n".encode()
    assert {f.kind for f in scan_outputs({"report.md": report}, iter(()))} == set()


def test_visible_keep_leaves_only_the_named_characters():
    """keep="\\n": line feeds stay, ESC, CR and bidi controls are still escaped."""
    assert visible("a\nb\x1b\r\u202e\u2066", keep="\n") == "a\nb\\x1b\\r\\u202e\\u2066"
    assert visible("a\nb") == "a\\nb"


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.05, "0.05"), (1.0, "1"), (-3.0, "-3"), (1e15, "1e+15"), (1e15 + 1, "1000000000000001.0"),
     (0.1 + 0.2, "0.30000000000000004"), (1e-300, "1e-300")],
)  # fmt: skip
def test_number_is_short_and_reads_back(x, text):
    """``:g`` when it reads back as the number, else the shortest round-trip repr."""
    assert number(x) == text and float(number(x)) == x


def test_every_lookalike_the_fold_reads_is_shown_escaped() -> None:
    """One table: each non-ASCII character the near-miss fold reads as a Latin letter
    (``LATIN_OF``) makes a name beside ASCII letters show as its escape."""
    from ragwarrant.display import LATIN_OF

    for ch in (chr(k) for k in LATIN_OF if not chr(k).isascii()):
        assert identifier(f"ab{ch}cd") == ascii(f"ab{ch}cd"), ch


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short", 5, "short"),
        ("x" * 30, 20, "x" * 13 + "… (+17)"),
        ("abcdef", 3, "… (+6)"),
    ],
)
def test_cut_keeps_what_fits_and_counts_the_rest(text: str, width: int, expected: str) -> None:
    """A text that fits is whole; a longer one keeps its start and says how many were cut."""
    assert cut(text, width, "… (+{})") == expected
