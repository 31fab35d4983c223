"""``report.html``: one self-contained page (inline CSS, no scripts, no external resources).

Verdicts are coloured, and a figures section holds the plots (:mod:`harness.report.plots`),
passed in as ``render_html(..., figures=[(title, png_bytes)])`` and embedded as data URIs, so the
page can be mailed or archived as one file.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Final

from harness.report.comparison import Column, Comparison, Row
from harness.report.engines import ENGINE_HEADERS, engine_tables
from harness.report.firstscreen import FirstScreen, first_screen
from harness.report.formatting import (
    LEGEND,
    cell_text,
    format_number,
    format_stat,
    metric_columns,
    table_caption,
    verdict_text,
)
from harness.report.header import PAIR_HEADERS, header_items, pairs_rows, run_id_text
from harness.report.htmltable import esc, html_table
from harness.report.pagetop import FIRST_SCREEN_CSS, first_screen_html
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import METRICS

__all__ = ["FIGURES_SECTION_ID", "Figure", "render_html"]

#: A plot to embed: (title, PNG bytes).  The HTML page inlines it as a base64 data URI.
Figure = tuple[str, bytes]

#: ``id`` of the HTML section plots go into; links and later tooling can rely on it.
FIGURES_SECTION_ID: Final = "figures"
_PNG_MAGIC: Final = b"\x89PNG\r\n\x1a\n"

_CSS: Final = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem 2rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin-bottom: .5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; margin: 0; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; font-family: ui-monospace, monospace; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0; font-size: .9rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; white-space: nowrap; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.ratio { text-align: right; font-variant-numeric: tabular-nums; background: #f6f8fa; }
td.verdict-pass { background: #dafbe1; color: #116329; }
td.verdict-fail { background: #ffebe9; color: #a40e26; font-weight: 600; }
td.verdict-inconclusive { background: #fff8c5; color: #7d4e00; }
li.verdict-fail { color: #a40e26; } li.verdict-inconclusive { color: #7d4e00; }
figure { margin: 1rem 0 2rem; } figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #59636e; font-size: .9rem; margin-top: .25rem; }
.placeholder, .legend { color: #59636e; font-style: italic; }
"""


def _html_cell(row: Row, column: Column, typical_n: int) -> tuple[str, str, str]:
    text = cell_text(row, column, typical_n=typical_n)
    if column.kind == "ratio":
        return text, "ratio", ""
    if column.kind == "verdict":
        assert column.group is not None
        cell = row.cells.get(column.group)
        if cell is None or cell.verdict is None:
            return text, "", ""
        return text, f"verdict-{cell.verdict}", cell.verdict_reason or ""
    if column.kind in ("metric", "rtt"):
        assert column.group is not None and column.metric is not None
        stat = row.stat(column.group, column.metric)
        title = "" if stat is None else f"median {stat.median:g}, min {stat.min:g}, max {stat.max:g}, n={stat.n}"
        return text, "num", title
    return text, "", ""


def _verdicts_forward(columns: Sequence[Column]) -> list[Column]:
    """The row's own columns, then the verdicts, then the figures: a table wider than the page
    scrolls sideways, and its verdicts must be seen without scrolling."""
    own = [c for c in columns if c.kind in ("workload", "impairment")]
    verdicts = [c for c in columns if c.kind == "verdict"]
    return [*own, *verdicts, *(c for c in columns if c not in own and c not in verdicts)]


def _figure_html(title: str, png: bytes) -> str:
    if not png.startswith(_PNG_MAGIC):
        raise ValueError(f"figure {title!r}: not PNG data")
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{esc(title)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{esc(title)}</figcaption></figure>"
    )


def _cells_detail(comparison: Comparison) -> str:
    metrics = metric_columns(list(comparison.cells))
    headers = ["cell", "verdict", "validity", "repeats", *(f"{m} ({METRICS.get(m, '')})" for m in metrics)]
    rows = []
    for c in comparison.cells:
        row = [(c.key, "", ", ".join(c.test_ids))]
        row.append((verdict_text(c), f"verdict-{c.verdict}" if c.verdict else "", c.verdict_reason or ""))
        # the certificate, its short reason shown on hover (the figures are in the samples)
        disturbed = c.validity.status == "disturbed"
        row.append((c.validity.text, "verdict-inconclusive" if disturbed else "", c.validity.reason or ""))
        row.append((str(len(c.repeats)), "num", ""))
        for m in metrics:
            stat = c.stats.get(m)
            rng = "" if stat is None or stat.n == 1 else f" [{format_number(stat.min)}–{format_number(stat.max)}]"
            row.append((format_stat(stat, typical_n=len(c.repeats), show_spread=False) + rng, "num", ""))
        rows.append(row)
    return html_table(headers, rows)


def render_html(
    comparison: Comparison,
    run_info: RunInfo | None = None,
    figures: Sequence[Figure] = (),
    screen: FirstScreen | None = None,
) -> str:
    """``report.html``: a self-contained page; ``figures`` are (title, PNG bytes) to embed.

    ``screen`` is the run's first screen (its relative bounds and baseline verdict among what did
    not pass); without it the page's first screen says what the cells alone say.
    """
    run_id = run_id_text(comparison, run_info)
    screen = screen if screen is not None else first_screen(comparison, ())
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>HA storage report — run {esc(run_id)}</title>",
        f"<style>{_CSS}{FIRST_SCREEN_CSS}</style></head><body>",
        f"<header><h1>HA storage report — run {esc(run_id)}</h1>",
        # what the reader came for, above the fold; the run's facts and the detail below it
        first_screen_html(screen, comparison),
        '<dl class="meta">',
    ]
    out += [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in header_items(comparison, run_info)[1:]]
    out.append("</dl></header>")
    if comparison.tables:
        links = " · ".join(f'<a href="#scenario-{esc(t.scenario)}">{esc(t.scenario)}</a>' for t in comparison.tables)
        out.append(f'<nav><a href="#{FIGURES_SECTION_ID}">figures</a> · {links} · <a href="#cells">cells</a></nav>')

    pairs = pairs_rows(comparison)
    if pairs:
        out.append('<section id="pairs"><h2>Pairs</h2>')
        out.append(html_table(PAIR_HEADERS, [[(v, "", "") for v in row] for row in pairs]))
        out.append("</section>")

    # Plots are rendered elsewhere (matplotlib) and only embedded here, so this module stays
    # free of plotting dependencies and the page stays one file.  They come before the
    # per-scenario tables: a run's shape is seen at a glance, its numbers are looked up.
    out.append(f'<section id="{FIGURES_SECTION_ID}"><h2>Figures</h2>')
    if figures:
        out += [_figure_html(title, png) for title, png in figures]
    else:
        out.append('<p class="placeholder">No figures in this report.</p>')
    out.append("</section>")

    out.append('<section id="comparison">')
    if not comparison.tables:
        out.append('<p class="placeholder">No cells: the samples file holds no measurements.</p>')
    for table in comparison.tables:
        out.append(f'<h2 id="scenario-{esc(table.scenario)}">{esc(table.scenario)}</h2>')
        out.append(f'<p class="legend">{esc(table_caption(table))}</p>')
        n = table.typical_repeats
        for section in table.sections:
            out.append(f"<h3>{esc(section.title)}</h3>")
            columns = _verdicts_forward(section.columns)
            headers = [c.header for c in columns]
            out.append(html_table(headers, [[_html_cell(r, c, n) for c in columns] for r in table.rows]))
    for engines in engine_tables(comparison):
        out.append(f'<h2 id="engines-{esc(engines.scenario)}">{esc(engines.scenario)}: fio vs bonnie++</h2>')
        css = ("", "", "", "num", "num", "ratio")
        out.append(
            html_table(ENGINE_HEADERS, [list(zip(r.texts(), css, ("",) * 6, strict=True)) for r in engines.rows])
        )
    out.append(f'<p class="legend">{esc(LEGEND)}</p></section>')

    out.append('<section id="cells"><h2>Cells</h2>')
    out.append(_cells_detail(comparison))
    out.append("</section></body></html>")
    return "\n".join(out) + "\n"
