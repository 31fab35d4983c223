"""A :class:`~harness.report.comparison.Comparison` as Markdown, CSV, HTML and terminal text.

* Markdown (``comparison.md``): header, pairs, one table per scenario, cells that did not pass;
  tabulate ``github`` so it pastes into a pull request unchanged.
* CSV (``comparison.csv``): one row per *cell* with every aggregated metric and the identity and
  provenance columns — for machines, so numbers are written at full precision and never rounded.
* HTML (``report.html``): one self-contained page (inline CSS, no scripts, no external
  resources) with verdict colouring and a figures section for the plots
  (:mod:`harness.report.plots`), passed in as ``render_html(..., figures=[(title, png_bytes)])``
  and embedded as data URIs, so the page can be mailed or archived as one file.
* Text: a compact version for pytest's terminal summary that fits a given width.

Values shown are medians over repeats, ``±x%`` is half the min–max range relative to the median,
and ratios are ratios of medians; every output states this once (:data:`LEGEND`).
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
from collections.abc import Iterable, Sequence
from typing import Any, Final

from tabulate import tabulate

from harness.jsonsafe import dumps
from harness.report.aggregate import PER_REPEAT_KEYS, Cell, Stat, Verdict
from harness.report.comparison import METRIC_LABELS, Column, Comparison, Row, ScenarioTable, Section
from harness.report.run_info import RunInfo
from harness.samples import IDENTITY_KEYS, METRICS, PROVENANCE_KEYS

__all__ = [
    "CSV_STAT_FIELDS",
    "FIGURES_SECTION_ID",
    "LEGEND",
    "Figure",
    "csv_fieldnames",
    "format_number",
    "format_ratio",
    "format_stat",
    "render_csv",
    "render_html",
    "render_markdown",
    "render_text",
]

#: A plot to embed: (title, PNG bytes).  The HTML page inlines it as a base64 data URI.
Figure = tuple[str, bytes]

#: ``id`` of the HTML section plots go into; links and later tooling can rely on it.
FIGURES_SECTION_ID: Final = "figures"

LEGEND: Final = (
    "Values are medians over repeats; ±x% is (max − min) / (2 × median); n= marks a value resting on "
    "a different number of repeats than its table states. Ratios are ratios of medians: a/b < 1 in "
    "bandwidth means a is slower, a/b > 1 in latency means a waits longer."
)

#: Per-metric CSV columns, named ``<metric>_<field>``.
CSV_STAT_FIELDS: Final[tuple[str, ...]] = ("median", "min", "max", "n", "spread")

#: Metadata columns of the CSV before any others: identity, provenance, then the cell's shape.
_CSV_META_FIRST: Final[tuple[str, ...]] = (
    *IDENTITY_KEYS,
    "run_id",
    *(k for k in PROVENANCE_KEYS if k not in IDENTITY_KEYS),
    "primary",
    "secondary",
    "az_primary",
    "az_secondary",
    "rw",
    "bs",
    "numjobs",
    "iodepth",
    "bottleneck",
)
_VERSION_KEYS: Final[tuple[tuple[str, str], ...]] = (
    ("fio", "fio_version"),
    ("kernel", "kernel"),
    ("DRBD", "drbd_version"),
)
_PNG_MAGIC: Final = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------
# Numbers


def format_number(x: float) -> str:
    """About three significant digits, never scientific for the magnitudes storage produces."""
    if not math.isfinite(x):
        return str(x)
    a = abs(x)
    if a >= 100 or a == 0:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    if a >= 0.001:
        return f"{x:.3f}"
    return f"{x:.2g}"


def _spread_text(stat: Stat) -> str:
    spread = stat.spread
    if spread is None:  # median 0 with differing values: a percentage is meaningless
        return f"({format_number(stat.min)}–{format_number(stat.max)})"
    half = spread / 2 * 100
    return f"±{half:.1f}%" if half < 1 else f"±{half:.0f}%"


def format_stat(stat: Stat | None, *, typical_n: int | None = None, show_spread: bool = True) -> str:
    """``41.2`` for one repeat, ``41.2 ±3% n=3`` for several; empty when not measured.

    With ``typical_n`` (the repeat count a table's caption already states) ``n=`` is shown only
    for a value with a different count, e.g. a repeat that produced no number.
    """
    if stat is None:
        return ""
    text = format_number(stat.median)
    if stat.n > 1 and show_spread:
        text += f" {_spread_text(stat)}"
    if (stat.n > 1) if typical_n is None else (stat.n != typical_n):
        text += f" n={stat.n}"
    return text


def format_ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}×"


def _verdict_text(cell: Cell | None, *, emphasis: bool = False) -> str:
    if cell is None or cell.verdict is None:
        return ""
    word = cell.verdict.upper() if cell.verdict == "fail" else cell.verdict
    if emphasis and cell.verdict == "fail":
        word = f"**{word}**"
    repeats = sum(cell.verdict_counts.values())
    count = cell.verdict_counts.get(cell.verdict, 0)
    # Only a split decision needs the count: "FAIL 1/3" says one repeat failed.
    return f"{word} {count}/{repeats}" if count < repeats else word


def _cell_text(row: Row, column: Column, *, typical_n: int | None = None, emphasis: bool = False) -> str:
    if column.kind == "workload":
        return row.workload
    if column.kind == "impairment":
        return row.impairment
    if column.kind == "ratio":
        assert column.ratio is not None and column.metric is not None
        return format_ratio(row.ratio(column.ratio, column.metric))
    assert column.group is not None
    if column.kind == "verdict":
        return _verdict_text(row.cells.get(column.group), emphasis=emphasis)
    if column.kind == "bottleneck":
        return row.bottleneck(column.group)
    assert column.metric is not None
    stat = row.stat(column.group, column.metric)
    if column.kind == "rtt":  # the RTT is context, not a result: its spread would be noise
        return "" if stat is None else format_number(stat.median)
    return format_stat(stat, typical_n=typical_n)


def _is_numeric(column: Column) -> bool:
    return column.kind in ("metric", "ratio", "rtt")


# ---------------------------------------------------------------------------------------------
# Header facts shared by Markdown and HTML


def _distinct_text(values: Iterable[str]) -> str:
    seen: list[str] = []
    for v in values:
        for part in v.split(" | "):
            if part and part not in seen:
                seen.append(part)
    return ", ".join(seen)


def _run_id(comparison: Comparison, run_info: RunInfo | None) -> str:
    if run_info is not None:
        return run_info.run_id
    return _distinct_text(c.value_text("run_id") for c in comparison.cells) or "-"


def _versions(comparison: Comparison, run_info: RunInfo | None) -> list[tuple[str, str]]:
    out = [(name, _distinct_text(c.value_text(key) for c in comparison.cells)) for name, key in _VERSION_KEYS]
    if run_info is not None:
        out += sorted(run_info.versions.items())
    return [(k, v) for k, v in out if v]


def _summary(comparison: Comparison) -> str:
    counts: dict[Verdict, int] = {"pass": 0, "fail": 0, "inconclusive": 0}
    for c in comparison.cells:
        if c.verdict is not None:
            counts[c.verdict] += 1
    repeats = sorted({len(c.repeats) for c in comparison.cells})
    rep = "" if repeats in ([], [1]) else f", repeats per cell: {'/'.join(str(r) for r in repeats)}"
    verdicts = f"{counts['pass']} pass, {counts['fail']} fail, {counts['inconclusive']} inconclusive"
    return f"{len(comparison.cells)} cells{rep}; {verdicts}"


def _header_items(comparison: Comparison, run_info: RunInfo | None) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = [("run id", _run_id(comparison, run_info))]
    if run_info is not None:
        if run_info.inventory_name or run_info.inventory_path:
            name = run_info.inventory_name or ""
            path = (
                f" ({run_info.inventory_path})" if run_info.inventory_path and name else run_info.inventory_path or ""
            )
            items.append(("inventory", f"{name}{path}"))
        if run_info.profile:
            items.append(("profile", run_info.profile))
        if run_info.started:
            items.append(("started", run_info.started))
        if run_info.finished:
            items.append(("finished", run_info.finished))
        if run_info.argv:
            items.append(("command", " ".join(run_info.argv)))
    items.append(("result", _summary(comparison)))
    versions = _versions(comparison, run_info)
    if versions:
        # fio reports itself as "fio-3.33": don't print "fio fio-3.33".
        items.append(
            ("versions", " · ".join(v if v.lower().startswith(k.lower()) else f"{k} {v}" for k, v in versions))
        )
    return items


_PAIR_HEADERS: Final = ("pair", "placement", "primary", "secondary", "protocol")


def _pairs_rows(comparison: Comparison) -> list[list[str]]:
    """One row per pair from the cells' metadata: the inventory as the run actually saw it."""
    by_pair: dict[str, list[Cell]] = {}
    for c in comparison.cells:
        if c.pair != "-":
            by_pair.setdefault(c.pair, []).append(c)

    def node(cells: Sequence[Cell], role: str) -> str:
        name = _distinct_text(c.value_text(role) for c in cells)
        extra = [
            _distinct_text(c.value_text(f"az_{role}") for c in cells),
            _distinct_text(c.value_text(f"instance_type_{role}") for c in cells),
        ]
        extra = [e for e in extra if e]
        return f"{name} ({', '.join(extra)})" if name and extra else name

    rows = []
    for pair, cells in by_pair.items():
        rows.append(
            [
                pair,
                # The pair's placement is that of its replicated cells; its local cells say "local".
                _distinct_text(c.value_text("placement") for c in cells if c.mode == "replicated")
                or _distinct_text(c.value_text("placement") for c in cells),
                node(cells, "primary"),
                node(cells, "secondary"),
                _distinct_text(c.value_text("protocol") for c in cells if c.mode == "replicated"),
            ]
        )
    return rows


def _varying_provenance(cell: Cell) -> list[str]:
    return [k for k in PROVENANCE_KEYS if k in cell.varying]


# ---------------------------------------------------------------------------------------------
# Markdown


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool] | None = None) -> str:
    align = None if numeric is None else tuple("right" if n else "left" for n in numeric)
    return tabulate(
        [[_md_escape(v) for v in row] for row in rows],
        headers=[_md_escape(h) for h in headers],
        tablefmt="github",
        colalign=align,
        disable_numparse=True,  # our own number formatting, not tabulate's re-parse of it
    )


def _caption(table: ScenarioTable) -> str:
    n = table.typical_repeats
    return "One run per cell." if n == 1 else f"Median of {n} repeats per cell; ±: half the min–max range."


def _scenario_markdown(table: ScenarioTable) -> list[str]:
    parts = [f"## {table.scenario}", "", f"_{_caption(table)}_"]
    n = table.typical_repeats
    for section in table.sections:
        headers = [c.header for c in section.columns]
        rows = [[_cell_text(r, c, typical_n=n, emphasis=True) for c in section.columns] for r in table.rows]
        parts += ["", f"**{section.title}**", "", _md_table(headers, rows, [_is_numeric(c) for c in section.columns])]
    return parts


def render_markdown(comparison: Comparison, run_info: RunInfo | None = None) -> str:
    """The whole ``comparison.md``."""
    parts = [f"# Comparison — run {_run_id(comparison, run_info)}", ""]
    parts += [f"- **{k}**: {v}" for k, v in _header_items(comparison, run_info)[1:]]
    pairs = _pairs_rows(comparison)
    if pairs:
        parts += ["", "## Pairs", "", _md_table(_PAIR_HEADERS, pairs)]
    if not comparison.tables:
        parts += ["", "_No cells: the samples file holds no measurements._"]
    for table in comparison.tables:
        parts += ["", *_scenario_markdown(table)]
    if comparison.not_passed:
        parts += ["", "## Not passed", ""]
        for c in comparison.not_passed:
            parts.append(f"- {_verdict_text(c, emphasis=True)} `{c.key}`: {c.verdict_reason or '(no reason recorded)'}")
    warnings = [(c, _varying_provenance(c)) for c in comparison.cells]
    warnings = [(c, keys) for c, keys in warnings if keys]
    if warnings:
        parts += ["", "## Warnings", ""]
        for c, keys in warnings:
            detail = "; ".join(f"{k}: {c.value_text(k)}" for k in keys)
            parts.append(f"- `{c.key}`: repeats ran with different {', '.join(keys)} ({detail})")
    parts += ["", f"_{LEGEND}_", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# CSV


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same float
    if isinstance(value, str | int):
        return str(value)
    return dumps(value, sort_keys=True)


def _csv_metrics(cells: Sequence[Cell]) -> list[str]:
    present = {m for c in cells for m in c.stats}
    return [m for m in METRICS if m in present] + sorted(present - set(METRICS))


def _csv_meta_keys(cells: Sequence[Cell]) -> list[str]:
    present = {k for c in cells for k in (*c.metadata, *c.varying)} - PER_REPEAT_KEYS
    return [k for k in _CSV_META_FIRST if k in present or k in IDENTITY_KEYS] + sorted(present - set(_CSV_META_FIRST))


def csv_fieldnames(cells: Sequence[Cell]) -> list[str]:
    """Columns of :func:`render_csv` for these cells (metadata, verdict, then per-metric stats)."""
    meta = _csv_meta_keys(cells)
    tail = ["cell", "verdict", "verdict_reason", "repeats", "test_ids"]
    stats = [f"{m}_{f}" for m in _csv_metrics(cells) for f in CSV_STAT_FIELDS]
    return [*meta, *tail, *stats]


def _csv_row(cell: Cell, meta_keys: Sequence[str], metrics: Sequence[str]) -> dict[str, str]:
    row: dict[str, str] = {}
    for k in meta_keys:
        if k in cell.metadata:
            row[k] = _csv_value(cell.metadata[k])
        elif k in cell.varying:
            row[k] = " | ".join(_csv_value(v) for v in cell.varying[k])
        else:
            row[k] = ""
    row.update(
        cell=cell.key,
        verdict=cell.verdict or "",
        verdict_reason=cell.verdict_reason or "",
        repeats=str(len(cell.repeats)),
        test_ids=" ".join(cell.test_ids),
    )
    for m in metrics:
        stat = cell.stats.get(m)
        values: tuple[float | int | None, ...] = (
            (None,) * len(CSV_STAT_FIELDS) if stat is None else (stat.median, stat.min, stat.max, stat.n, stat.spread)
        )
        row.update({f"{m}_{f}": _csv_value(v) for f, v in zip(CSV_STAT_FIELDS, values, strict=True)})
    return row


def render_csv(cells: Iterable[Cell]) -> str:
    """``comparison.csv``: one row per cell; empty fields mean "not measured"."""
    all_cells = list(cells)
    meta, metrics = _csv_meta_keys(all_cells), _csv_metrics(all_cells)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=csv_fieldnames(all_cells), lineterminator="\n")
    writer.writeheader()
    for cell in all_cells:
        writer.writerow(_csv_row(cell, meta, metrics))
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# HTML

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


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, str, str]]]) -> str:
    """Rows of (text, css class, title) cells."""
    out = ['<div class="scroll"><table>', "<thead><tr>"]
    out += [f'<th scope="col">{_esc(h)}</th>' for h in headers]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for text, css, title in row:
            attrs = (f' class="{css}"' if css else "") + (f' title="{_esc(title)}"' if title else "")
            out.append(f"<td{attrs}>{_esc(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _html_cell(row: Row, column: Column, typical_n: int) -> tuple[str, str, str]:
    text = _cell_text(row, column, typical_n=typical_n)
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


def _figure_html(title: str, png: bytes) -> str:
    if not png.startswith(_PNG_MAGIC):
        raise ValueError(f"figure {title!r}: not PNG data")
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{_esc(title)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_esc(title)}</figcaption></figure>"
    )


def _cells_detail(comparison: Comparison) -> str:
    metrics = _csv_metrics(list(comparison.cells))
    headers = ["cell", "verdict", "repeats", *(f"{m} ({METRICS.get(m, '')})" for m in metrics)]
    rows = []
    for c in comparison.cells:
        row = [(c.key, "", ", ".join(c.test_ids))]
        row.append((_verdict_text(c), f"verdict-{c.verdict}" if c.verdict else "", c.verdict_reason or ""))
        row.append((str(len(c.repeats)), "num", ""))
        for m in metrics:
            stat = c.stats.get(m)
            rng = "" if stat is None or stat.n == 1 else f" [{format_number(stat.min)}–{format_number(stat.max)}]"
            row.append((format_stat(stat, typical_n=len(c.repeats), show_spread=False) + rng, "num", ""))
        rows.append(row)
    return _html_table(headers, rows)


def render_html(
    comparison: Comparison,
    run_info: RunInfo | None = None,
    figures: Sequence[Figure] = (),
) -> str:
    """``report.html``: a self-contained page; ``figures`` are (title, PNG bytes) to embed."""
    run_id = _run_id(comparison, run_info)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>HA storage report — run {_esc(run_id)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f'<header><h1>HA storage report — run {_esc(run_id)}</h1><dl class="meta">',
    ]
    out += [f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in _header_items(comparison, run_info)[1:]]
    out.append("</dl></header>")
    if comparison.tables:
        links = " · ".join(f'<a href="#scenario-{_esc(t.scenario)}">{_esc(t.scenario)}</a>' for t in comparison.tables)
        out.append(f'<nav><a href="#{FIGURES_SECTION_ID}">figures</a> · {links} · <a href="#cells">cells</a></nav>')

    pairs = _pairs_rows(comparison)
    if pairs:
        out.append('<section id="pairs"><h2>Pairs</h2>')
        out.append(_html_table(_PAIR_HEADERS, [[(v, "", "") for v in row] for row in pairs]))
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
        out.append(f'<h2 id="scenario-{_esc(table.scenario)}">{_esc(table.scenario)}</h2>')
        out.append(f'<p class="legend">{_esc(_caption(table))}</p>')
        n = table.typical_repeats
        for section in table.sections:
            out.append(f"<h3>{_esc(section.title)}</h3>")
            headers = [c.header for c in section.columns]
            out.append(_html_table(headers, [[_html_cell(r, c, n) for c in section.columns] for r in table.rows]))
    out.append(f'<p class="legend">{_esc(LEGEND)}</p></section>')

    if comparison.not_passed:
        out.append('<section id="not-passed"><h2>Not passed</h2><ul>')
        for c in comparison.not_passed:
            out.append(
                f'<li class="verdict-{c.verdict}"><strong>{_esc(_verdict_text(c))}</strong> '
                f"<code>{_esc(c.key)}</code>: {_esc(c.verdict_reason or '(no reason recorded)')}</li>"
            )
        out.append("</ul></section>")

    out.append('<section id="cells"><h2>Cells</h2>')
    out.append(_cells_detail(comparison))
    out.append("</section></body></html>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Terminal


def _clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def _text_wide(table: ScenarioTable, section: Section) -> str:
    """One metric's section side by side, verdicts folded in where they are not a pass."""
    show_impairment = any(r.impairment != "none" for r in table.rows)
    columns = [c for c in section.columns if c.kind != "impairment" or show_impairment]
    rows = []
    for r in table.rows:
        line = []
        for c in columns:
            text = _cell_text(r, c, typical_n=table.typical_repeats)
            if c.kind == "metric" and c.group is not None:
                cell = r.cells.get(c.group)
                if cell is not None and cell.verdict not in (None, "pass"):
                    text += f" {_verdict_text(cell)}"
            line.append(text)
        rows.append(line)
    headers = [c.group.short_label if c.kind == "metric" and c.group else c.header for c in columns]
    align = tuple("right" if _is_numeric(c) else "left" for c in columns)
    return tabulate(rows, headers=headers, tablefmt="simple", colalign=align, disable_numparse=True)


def _text_long(table: ScenarioTable) -> str:
    """One line per cell: narrower than side by side, used when that does not fit."""
    metrics = [s.metric for s in table.sections if s.metric is not None]
    headers = ["workload", "impairment", "pair", *(METRIC_LABELS.get(m, m) for m in metrics), "RTT ms", "verdict"]
    rows = []
    for r in table.rows:
        for g in table.groups:
            cell = r.cells.get(g)
            if cell is None:
                continue
            rtt = cell.stats.get("rtt") if g.mode == "replicated" else None
            rows.append(
                [
                    r.workload,
                    r.impairment,
                    g.label,
                    *(format_stat(cell.stats.get(m), typical_n=table.typical_repeats) for m in metrics),
                    "" if rtt is None else format_number(rtt.median),
                    _verdict_text(cell),
                ]
            )
    align = ("left", "left", "left", *("right",) * (len(metrics) + 1), "left")
    return tabulate(rows, headers=headers, tablefmt="simple", colalign=align, disable_numparse=True)


def render_text(comparison: Comparison, width: int = 120) -> str:
    """Compact tables for the terminal summary; no line is longer than ``width``."""
    if not comparison.tables:
        return "no cells measured"
    out: list[str] = []
    for table in comparison.tables:
        n = table.typical_repeats
        median = f", median of {n} repeats" if n > 1 else ""
        section = next((s for s in table.sections if s.metric is not None), None)
        text = "" if section is None else _text_wide(table, section)
        if section is not None and max(len(line) for line in text.splitlines()) <= width:
            out.append(f"{table.scenario}: {section.title}{median}")
        else:
            out.append(f"{table.scenario}{median}")
            text = _text_long(table)
        out += [*text.splitlines(), ""]
    for c in comparison.not_passed:
        out.append(f"{_verdict_text(c)} {c.key}: {c.verdict_reason or '(no reason recorded)'}")
    out.append(f"result: {_summary(comparison)}")
    return "\n".join(_clip(line, width) for line in out)
