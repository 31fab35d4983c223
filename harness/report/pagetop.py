"""The report page's first screen: what a reader of ``report.html`` sees before scrolling.

At 1440×900 it holds, in this order: the run's verdict in one line; what did not pass and why
(every failed or inconclusive cell and relative bound); the baseline's verdict and the cells that
regressed against it; the single- vs multi-AZ pairs side by side per workload; the cells'
validity.  The header facts, the figures and the tables come after it.  A long list of failures
scrolls inside its own box, so it never pushes the rest below the fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from harness.report.comparison import Comparison, ratio_of
from harness.report.firstscreen import FirstScreen
from harness.report.formatting import format_number, format_ratio
from harness.report.htmltable import esc, html_table
from harness.report.plot_data import PlacementGroup, placement_groups
from harness.runfiles.samples import METRICS

__all__ = ["FIRST_SCREEN_CSS", "first_screen_html"]

FIRST_SCREEN_CSS: Final = """
#first-screen { display: grid; grid-template-columns: repeat(auto-fit, minmax(30rem, 1fr)); gap: 0 2rem; }
#first-screen > p.verdict { grid-column: 1 / -1; font-size: 1.1rem; font-weight: 600; margin: .25rem 0; }
#first-screen h2 { font-size: 1.05rem; margin: .75rem 0 .25rem; }
#first-screen ul { margin: 0; padding-left: 1.2rem; max-height: 14rem; overflow-y: auto; }
#first-screen p { margin: .2rem 0; }
p.verdict-fail { color: #a40e26; } p.verdict-pass { color: #116329; }
"""

#: the metrics the single- vs multi-AZ summary compares, the first the run measured on both
_PLACEMENT_METRICS: Final = ("bw", "iops")


def _items(entries: Sequence[str], empty: str) -> str:
    if not entries:
        return f'<p class="placeholder">{esc(empty)}</p>'
    return "<ul>" + "".join(entries) + "</ul>"


def _not_passed(screen: FirstScreen) -> str:
    entries = [
        f'<li class="verdict-{"fail" if verdict.startswith("FAIL") else "inconclusive"}">'
        f"<strong>{esc(verdict)}</strong> <code>{esc(what)}</code>: {esc(why)}</li>"
        for verdict, what, why in screen.failed
    ]
    entries += [f'<li class="verdict-fail">{esc(problem)}</li>' for problem in screen.problems]
    return (
        '<section id="not-passed"><h2>Not passed</h2>'
        + _items(entries, "Every cell and relative bound passed.")
        + "</section>"
    )


def _baseline(screen: FirstScreen) -> str:
    out = ['<section id="baseline"><h2>Against the baseline</h2>']
    if screen.baseline is None:
        out.append('<p class="placeholder">Not compared with a baseline (--baseline-compare).</p>')
    else:
        css = "verdict-fail" if screen.regressed else "verdict-pass"
        out.append(f'<p class="{css}">{esc(screen.baseline)}</p>')
        cells = [f'<li class="verdict-fail"><code>{esc(w)}</code>: {esc(why)}</li>' for w, why in screen.regressions]
        out.append(_items(cells, "No cell regressed."))
    out.append("</section>")
    return "".join(out)


def _placement_rows(groups: Sequence[PlacementGroup], pairs: Sequence[str]) -> list[list[tuple[str, str, str]]]:
    rows = []
    for group in groups:
        medians = {bar.pair: bar.stat.median for bar in group.bars}
        row = [(group.title, "", "")]
        row += [(format_number(medians[p]) if p in medians else "–", "num", "") for p in pairs]
        same = [b.stat.median for b in group.bars if b.placement == "same-az"]
        cross = [b.stat.median for b in group.bars if b.placement == "cross-az"]
        ratio = ratio_of(cross[0], same[0]) if len(same) == 1 and len(cross) == 1 else None
        row.append((format_ratio(ratio) if ratio is not None else "–", "ratio", ""))
        rows.append(row)
    return rows


def _placement(comparison: Comparison) -> str:
    for metric in _PLACEMENT_METRICS:
        groups = placement_groups(comparison.cells, metric)
        if groups:
            pairs = list(dict.fromkeys(b.pair for g in groups for b in g.bars))
            placement = {b.pair: b.placement for g in groups for b in g.bars}
            headers = ["workload", *(f"{p} ({placement[p]})" for p in pairs), "cross/same"]
            title = f"Single- vs multi-AZ: {metric} ({METRICS.get(metric, '')}, median)"
            body = html_table(headers, _placement_rows(groups, pairs))
            break
    else:
        title = "Single- vs multi-AZ"
        body = '<p class="placeholder">The run measured no same-AZ and cross-AZ pair side by side.</p>'
    return f'<section id="placement"><h2>{esc(title)}</h2>{body}</section>'


def _validity(screen: FirstScreen) -> str:
    lines = [f"<p><strong>{esc(name)}</strong>: {esc(line)}</p>" for name, line in screen.notes]
    if not any(name == "validity" for name, _ in screen.notes):
        lines.insert(0, '<p class="placeholder">No cell carries a validity certificate.</p>')
    return '<section id="validity"><h2>Validity</h2>' + "".join(lines) + "</section>"


def first_screen_html(screen: FirstScreen, comparison: Comparison) -> str:
    """The page's first screen: the verdict, then what failed, the baseline, placement, validity."""
    failed = any(v.startswith("FAIL") for v, *_ in screen.failed) or screen.regressed or bool(screen.problems)
    verdict = f'<p class="verdict verdict-{"fail" if failed else "pass"}">{esc(screen.title)}: {esc(screen.result)}</p>'
    parts = (verdict, _not_passed(screen), _baseline(screen), _placement(comparison), _validity(screen))
    return '<section id="first-screen">' + "".join(parts) + "</section>"
