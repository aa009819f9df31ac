"""report.html: self-contained, deterministic, decision first, a forest plot a browser shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ragwarrant.audit.report import decision_sentence
from ragwarrant.audit.report_html import STATUS_COLOURS, render_report_html
from ragwarrant.outputs import Decision, GateStatus

from .conftest import Run
from .decisions import inconclusive_variant, load_decision


@pytest.fixture()
def decision(pristine_run: Run) -> Decision:
    """The shipped example's decision (PROMOTE, with a cost-reduction claim)."""
    return load_decision(pristine_run.output_dir)


def test_same_decision_same_bytes(decision: Decision) -> None:
    """Rendering twice, or from a JSON round trip of the decision, gives identical bytes."""
    again = Decision.model_validate_json(decision.model_dump_json(by_alias=True))
    assert render_report_html(decision) == render_report_html(again)


def test_page_is_self_contained(decision: Decision) -> None:
    """No script, stylesheet link, external URL, import or remote font: nothing leaves the file."""
    page = render_report_html(inconclusive_variant(decision))
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page and "url(" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert "default-src 'none'" in page  # the page forbids loads even if text sneaks one in


def test_first_sentence_states_decision_and_scope(decision: Decision) -> None:
    """The lead paragraph is the decision sentence followed by the claim scope."""
    page = render_report_html(decision)
    lead = re.search(r'<p class="lead" id="decision-sentence">(.*?)</p>', page, re.S)
    assert lead is not None
    text = lead.group(1)
    assert text.startswith(decision_sentence(decision).replace("'", "&#39;"))
    assert decision.claim_scope is not None and decision.claim_scope in text
    assert page.index('id="decision-sentence"') < page.index("<svg")


def test_one_forest_row_per_metric_and_slice(decision: Decision) -> None:
    """Each quality gate with bounds is one plotted row (one dot); the cost claim has its own."""
    # The promoted candidate alone (the example's mistral-7B-instruct is BLOCK, without a delta).
    page = render_report_html(decision.model_copy(update={"candidates": decision.candidates[:1]}))
    plotted = [
        g
        for g in decision.candidates[0].gates
        if g.kind in ("noninferiority", "claim", "operational") and g.lower_bound is not None
    ]
    assert len(plotted) == 6  # overall + 3 slices + the cost claim + the cost delta
    assert page.count("<circle") == len(plotted)
    assert page.count("<svg") == 2  # no_hallucination panel, cost_usd panel (claim and delta)
    assert "no cost or latency delta" not in page


def test_each_plot_names_its_lower_bound_and_threshold(decision: Decision) -> None:
    """The quality panel names the lower-bound tick and the −margin line, placed at their x; the
    cost panel names its claim's threshold 0."""
    page = render_report_html(decision.model_copy(update={"candidates": decision.candidates[:1]}))
    quality, cost = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    first = next(g for g in decision.candidates[0].gates if g.kind == "noninferiority")
    labels = dict(
        (text, float(x))
        for x, text in re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', quality)
    )
    assert "lower bound" in labels and f"−margin = {first.threshold:+.4g}" in labels
    # The ticks: the dashed threshold line and the lower-bound tick, beside their labels.
    dashed = re.search(r'<path d="M([\d.]+),[\d.]+ L[\d.]+,[\d.]+"[^>]*stroke-dasharray', quality)
    assert dashed and abs(float(dashed.group(1)) - labels[f"−margin = {first.threshold:+.4g}"]) <= 3
    assert ">0 (claim)</text>" in cost and ">lower bound</text>" in cost


def test_rows_are_coloured_by_gate_status(decision: Decision) -> None:
    """A failed and an inconclusive gate are drawn in their own colours."""
    page = render_report_html(inconclusive_variant(decision))
    svg = page[page.index("<svg") : page.index("</svg>")]
    for status in (GateStatus.PASS, GateStatus.FAIL, GateStatus.INCONCLUSIVE):
        assert f'fill="{STATUS_COLOURS[status]}"' in svg, status


def test_deciding_gates_come_before_the_folded_table(decision: Decision) -> None:
    """The deciding gate is tabled before the <details> that folds every other gate."""
    page = render_report_html(inconclusive_variant(decision))
    section = page[page.index('id="candidate-1"') :]
    assert section.index("<h3>Deciding gates</h3>") < section.index('<details class="all-gates">')
    deciding = section[section.index("<h3>Deciding gates</h3>") : section.index("<details")]
    assert "<code>noninferiority:no_hallucination</code>" in deciding
    assert "hard:duplicate-rows" not in deciding
    folded = section[section.index('<details class="all-gates">') :]
    assert "<code>hard:duplicate-rows</code>" in folded


def test_what_would_change_an_inconclusive(decision: Decision) -> None:
    """An inconclusive gate's more_paired_n is shown as the step that would change the class."""
    page = render_report_html(inconclusive_variant(decision, more=412))
    assert "gather about 412 more clusters" in page  # the gate resampled clusters
    assert "about 412 more clusters (at the observed effect, alpha 0.05, 80 % power)" in page
    section = page[page.index('id="candidate-1"') :]
    assert section.index("<h3>Next step</h3>") < section.index("<h3>What would change this</h3>")


def test_a_promote_shows_its_next_step_not_what_would_change_it(decision: Decision) -> None:
    """A PROMOTE's "release …" step is its next step; no "What would change this" list."""
    assert decision.candidates[0].decision_class.value == "PROMOTE"
    section = render_report_html(decision).split('id="candidate-1"')[1].split('id="candidate-2"')[0]
    nxt = section[section.index("<h3>Next step</h3>") :]
    assert nxt.split("</p>")[0].endswith("within the run&#39;s claim scope")
    assert "What would change this" not in section


def test_missing_cost_delta_is_said(decision: Decision) -> None:
    """Without a cost or latency claim or delta, the page says decision.json holds no such delta."""
    cand = decision.candidates[0]
    gates = [g for g in cand.gates if not g.id.startswith(("claim:cost-reduction", "operational:"))]
    bare = decision.model_copy(
        update={"candidates": [cand.model_copy(update={"gates": gates}), *decision.candidates[1:]]}
    )
    page = render_report_html(bare)
    assert "decision.json holds no cost or latency delta for this candidate" in page
    assert page.count("<svg") == 1


def test_text_is_escaped(decision: Decision) -> None:
    """A policy id or reason holding markup is escaped, in the page and in the plot."""
    cand = decision.candidates[0]
    gates = [
        g.model_copy(update={"reason": "<script>alert(1)</script>"}) if g.slice == "QA" else g
        for g in cand.gates
    ]
    evil = cand.model_copy(update={"policy_id": "<b>x</b>", "gates": gates})
    page = render_report_html(decision.model_copy(update={"candidates": [evil]}))
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;" in page


# --- in a real browser --------------------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    message = "chromium is not installed (apt-get install chromium)"
    if os.environ.get("RAGWARRANT_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _screenshot(html: str, tmp_path: Path, name: str) -> Path:
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1000,2200",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return shot


def _pixels_of(shot: Path, colour: str) -> int:
    image = pytest.importorskip("PIL.Image")
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
    with image.open(shot) as im:
        pixels = np.asarray(im.convert("RGB"))
    return int(np.all(pixels == rgb, axis=-1).sum())


def test_chromium_shows_the_forest_plot(decision: Decision, tmp_path: Path) -> None:
    """Chromium renders the page and the plot's status colours cover many pixels.

    The same page with its plots removed has almost none of the inconclusive colour: the
    count comes from the plot, so the check bites.
    """
    html = render_report_html(inconclusive_variant(decision))
    shot = _screenshot(html, tmp_path, "report")
    amber = STATUS_COLOURS[GateStatus.INCONCLUSIVE]
    plotted = _pixels_of(shot, amber)
    no_plot = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    bare = _pixels_of(_screenshot(no_plot, tmp_path, "bare"), amber)
    assert plotted > 500, plotted
    assert plotted > 5 * max(bare, 1), (plotted, bare)
    assert _pixels_of(shot, STATUS_COLOURS[GateStatus.PASS]) > 500
