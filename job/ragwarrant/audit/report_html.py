"""``report.html``: the decision as one self-contained page, with a forest plot per candidate.

The page is rendered by Jinja2 from the template shipped as package data
(``ragwarrant/data/templates/report.html.j2``, autoescaped); each forest plot is an inline SVG
drawn with drawsvg. Both are imported, and the template compiled, on the first page or by
``prepare_report_html`` (which ``pipeline`` calls while the self-test runs, issue 13).
Nothing is loaded from the network: no script, stylesheet, font or image outside the file. The
output is a function of the decision alone (same decision → same bytes): no clock, no random ids.

A forest plot (Lewis & Clarke 2001, BMJ 322:1479–1480) has one row per metric and protected slice:
the estimate of the oriented paired delta (positive = candidate better), the interval between
its one-sided lower and upper confidence bounds at ``alpha``, a tick at the lower bound (the bound
that decides noninferiority and claims), the gate's threshold (−margin, or 0 for a claim) and the
zero line, coloured by gate status. Above the first row, the lower-bound tick and the threshold
are named ("lower bound", "−margin = -0.05" or "0 (claim)"), so the plot reads without the legend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from ragwarrant.audit.report import decision_sentence, signed
from ragwarrant.audit.summary import (
    STATISTICAL_KINDS,
    deciding_gates,
    more_data_text,
    next_step,
    tested_candidates,
)
from ragwarrant.display import identifier, template, visible
from ragwarrant.outputs import Decision, GateResult, GateStatus

if TYPE_CHECKING:
    import drawsvg
    import jinja2

#: Fill of each gate status (colour-blind-safe ColorBrewer PuOr/RdBu hues, plus grey).
STATUS_COLOURS = {
    GateStatus.PASS: "#1b7837",
    GateStatus.FAIL: "#b2182b",
    GateStatus.INCONCLUSIVE: "#e08214",
    GateStatus.NOT_APPLICABLE: "#8c8c8c",
}
#: Claim kinds on operational metrics: their gates are the cost and latency deltas.
OPERATIONAL_CLAIMS = ("claim:cost-reduction:", "claim:latency-reduction:")

_WIDTH, _LABEL_W, _TEXT_W, _ROW_H, _AXIS_H, _TOP = 900, 150, 290, 28, 34, 22
_RIGHT = _WIDTH - _TEXT_W


def _has_interval(g: GateResult) -> bool:
    return g.estimate is not None and g.lower_bound is not None and g.upper_bound is not None


@dataclass(frozen=True)
class _ForestPlot:
    """One forest-plot panel being drawn: the drawing, the bottom of its rows, and the linear map
    from metric units (``lo`` .. ``hi``) to x pixels over the plot area."""

    d: drawsvg.Drawing
    lo: float
    hi: float
    bottom: float

    @classmethod
    def start(cls, rows: list[GateResult], title: str, panel_id: str) -> _ForestPlot:
        """An empty panel for ``rows``, scaled to their intervals, thresholds and zero."""
        import drawsvg as dw

        values = [0.0] + [
            v
            for g in rows
            if _has_interval(g)
            for v in (g.estimate, g.lower_bound, g.upper_bound, g.threshold)
            if v is not None
        ]
        lo, hi = min(values), max(values)
        pad = (hi - lo) * 0.08 or 1e-3
        bottom = _TOP + _ROW_H * len(rows)
        d = dw.Drawing(_WIDTH, bottom + _AXIS_H, id_prefix=panel_id, role="img", aria_label=title)
        return cls(d, lo - pad, hi + pad, bottom)

    def x(self, value: float) -> float:
        return round(_LABEL_W + (value - self.lo) / (self.hi - self.lo) * (_RIGHT - _LABEL_W), 2)

    def axis(self) -> None:
        import drawsvg as dw

        d, bottom = self.d, self.bottom
        raw = (self.hi - self.lo) / 5  # a 1-2-5 tick step giving about five ticks
        power = 10 ** math.floor(math.log10(raw))
        step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
        tick = math.ceil(self.lo / step) * step
        while tick <= self.hi:
            x = self.x(tick)
            d.append(dw.Line(x, _TOP, x, bottom, stroke="#e4e4e4", stroke_width=1))
            label = "0" if abs(tick) < step / 1e6 else f"{tick:+.3g}"
            d.append(dw.Text(label, 11, x, bottom + 14, text_anchor="middle", fill="#444"))
            tick += step
        zero = self.x(0.0)
        d.append(dw.Line(zero, _TOP, zero, bottom, stroke="#222", stroke_width=1.5))
        d.append(
            dw.Text(
                "Δ (positive = candidate better)",
                11,
                (_LABEL_W + _RIGHT) / 2,
                bottom + 29,
                text_anchor="middle",
                fill="#444",
            )
        )

    def row(self, group: drawsvg.Group, g: GateResult, y: float) -> None:
        import drawsvg as dw

        colour = STATUS_COLOURS[g.status]
        if g.kind == "claim":
            label = f"claim: {g.id.split(':')[1]}"
        else:
            label = "overall" if g.slice is None else f"slice {identifier(g.slice)}"
        group.append(dw.Text(label, 13, 8, y + 4, fill="#222"))
        if not _has_interval(g):
            group.append(dw.Text(g.status.value, 12, _RIGHT + 10, y + 4, fill=colour))
            return
        assert g.estimate is not None and g.lower_bound is not None and g.upper_bound is not None
        if g.threshold is not None:
            tx = self.x(g.threshold)
            group.append(
                dw.Line(
                    tx, y - 11, tx, y + 11, stroke="#555", stroke_width=2, stroke_dasharray="3,2"
                )
            )
        lcb, ucb = self.x(g.lower_bound), self.x(g.upper_bound)
        group.append(dw.Line(lcb, y, ucb, y, stroke=colour, stroke_width=4))
        group.append(dw.Line(lcb, y - 8, lcb, y + 8, stroke=colour, stroke_width=3))
        group.append(
            dw.Circle(self.x(g.estimate), y, 6, fill=colour, stroke="#fff", stroke_width=1)
        )
        text = f"{g.estimate:+.3g} [{g.lower_bound:+.3g}, {g.upper_bound:+.3g}] {g.status.value}"
        group.append(dw.Text(text, 12, _RIGHT + 10, y + 4, fill=colour))


def forest_svg(rows: list[GateResult], title: str, panel_id: str) -> str:
    """One forest-plot panel as an inline ``<svg>`` element (no XML header).

    Args:
        rows: gates of one metric (or one operational claim), one plotted row each; gates
            without an estimate and both bounds are listed with their status only.
        title: the accessible name of the plot (``aria-label`` and ``<title>``).
        panel_id: a page-unique id prefix for any generated SVG ids.
    """
    import drawsvg as dw

    plot = _ForestPlot.start(rows, title, panel_id)
    d = plot.d
    d.append(dw.Raw(f"<title>{escape(title)}</title>"))
    plot.axis()
    for i, g in enumerate(rows):
        group = dw.Group()
        group.append_title(visible(f"{g.id}: {g.reason}"))
        plot.row(group, g, _TOP + _ROW_H * i + _ROW_H / 2)
        d.append(group)
    labelled = [g for g in rows if g.kind in STATISTICAL_KINDS and g.threshold is not None]
    if labelled and _has_interval(g := labelled[0]):
        # Name the first labelled row's lower bound (the tick that decides) and threshold (the
        # dashed tick: −margin, or 0 for a claim) above the plot, each on the side away from
        # the other so the two never overlap.
        assert g.lower_bound is not None and g.threshold is not None
        lcb, tx = plot.x(g.lower_bound), plot.x(g.threshold)
        threshold = "0 (claim)" if g.kind == "claim" else f"−margin = {signed(g.threshold)}"
        for text, x, left in (("lower bound", lcb, lcb < tx), (threshold, tx, not lcb < tx)):
            anchor, dx = ("end", -3) if left else ("start", 3)
            d.append(dw.Text(text, 10, x + dx, _TOP - 6, text_anchor=anchor, fill="#444"))
    return d.as_svg(header="").strip()


def _panels(gates: list[GateResult], key_prefix: str, what: str) -> list[dict[str, str]]:
    """One forest plot (``title``, ``svg``) per metric of ``gates`` with an interval to show."""
    by_metric: dict[str, list[GateResult]] = {}
    for g in gates:
        by_metric.setdefault(g.metric or g.id, []).append(g)
    return [
        {
            "title": metric,
            "svg": forest_svg(
                rows,
                visible(f"{what} {metric}: estimate, one-sided bounds and threshold per row"),
                f"{key_prefix}{i}-",
            ),
        }
        for i, (metric, rows) in enumerate(by_metric.items())
        if any(_has_interval(g) for g in rows)
    ]


def _shown(value: object) -> object:
    """Every ``{{ }}`` of the page: text made ``visible`` (autoescape then escapes its markup);
    markup the renderer built (``|safe`` SVG) is left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


def _template() -> jinja2.Template:
    return template("report.html.j2", (("signed", signed),), autoescape=True, finalize=_shown)


def prepare_report_html() -> None:
    """Import Jinja2 and drawsvg and compile the page's template, ahead of the first page.

    Rendering does this itself when it was not done; the template is compiled once per process.
    """
    import drawsvg  # noqa: F401  (the forest plots' module, loaded now rather than mid-render)

    _template()


def render_report_html(decision: Decision) -> str:
    """Render ``report.html`` from a decision: one self-contained page, deterministic.

    The first sentence states the decision and its scope; each tested candidate follows with
    its deciding gates, a forest plot of its quality gates, its cost and latency deltas, the
    step that would change its outcome, and every other gate folded in ``<details>``.
    """
    views = []
    for i, c in enumerate(tested_candidates(decision)):
        # a cost or latency delta: a cost/latency claim, or an informational operational gate
        # ("operational" is the kind the engine is to add, wire notes)
        operational = [
            g
            for g in c.gates
            if str(g.kind) == "operational"
            or (g.kind == "claim" and g.id.startswith(OPERATIONAL_CLAIMS))
        ]
        quality = [g for g in c.gates if g.kind in STATISTICAL_KINDS and g not in operational]
        views.append(
            {
                "candidate": c,
                "quality_panels": _panels(quality, f"c{i}q", "quality"),
                "operational": operational,
                "operational_panels": _panels(operational, f"c{i}o", "operational"),
            }
        )
    return _template().render(
        d=decision,
        views=views,
        decision_sentence=decision_sentence,
        deciding_gates=deciding_gates,
        next_step=next_step,
        more_data_text=more_data_text,
        STATUS_COLOURS={k.value: v for k, v in STATUS_COLOURS.items()},
    )
