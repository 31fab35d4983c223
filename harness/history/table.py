"""``harness history`` as text: per cell, its runs as a table, then the cells that changed.

Per cell one table (tabulate's ``simple`` format): run, start time, median, min–max and repeats,
a ``*`` on a run whose provenance differs from the cell's previous run (what changed is
listed under the table), and ``<- changed`` on the run where the cell changed; below it the
history's median and noise (1.4826 · MAD of the run medians before any change).  Then one
table of every changed cell: where it changed, from what to what, and by how much.
"""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from harness.history.changes import MIN_HISTORY, MIN_RUNS
from harness.history.trend import CellTrend, TrendPoint
from harness.report.comparison import METRIC_TITLES
from harness.report.formatting import format_number
from harness.rules.tolerance import format_percent

__all__ = ["render_changes", "render_too_few", "render_trend", "render_trends"]


def _range(point: TrendPoint) -> str:
    stat = point.stat
    return format_number(stat.min) if stat.n == 1 else f"{format_number(stat.min)}–{format_number(stat.max)}"


def _mark(trend: CellTrend, index: int, point: TrendPoint) -> str:
    marks = []
    if point.changed:
        marks.append("* provenance")
    for shift in trend.shifts:
        if shift.index == index:
            marks.append("<- changed" if shift is trend.shift else "<- level changed (earlier)")
    return ", ".join(marks)


def _noise_text(trend: CellTrend) -> str:
    median, noise = trend.median, trend.noise
    relative = f" ({format_percent(noise / abs(median), signed=False)})" if median else ""
    runs = len(trend.history)
    level = f"{format_number(median)} {trend.unit}"
    return f"history: median {level}, noise ±{format_number(noise)}{relative} over {runs} runs"


def render_trend(trend: CellTrend) -> str:
    title = METRIC_TITLES.get(trend.metric, trend.metric)
    rows = [
        [p.run_id, p.run.info.started or "", format_number(p.stat.median), _range(p), str(p.stat.n), _mark(trend, i, p)]
        for i, p in enumerate(trend.points)
    ]
    table = tabulate(
        rows,
        headers=["run", "started", f"median {trend.unit}", "min–max", "n", ""],
        tablefmt="simple",
        disable_numparse=True,
        colalign=("left", "left", "right", "right", "right", "left"),
    )
    lines = [f"{trend.label}: {title}", table]
    for point in trend.points:
        for change in point.changed:
            lines.append(f"  * {point.run_id}: {change}")
    lines.append(_noise_text(trend))
    return "\n".join(lines)


def render_too_few(trends: Sequence[CellTrend]) -> str | None:
    """The cells too short for the change detection, in one sentence; ``None`` when none is."""
    short = [t for t in trends if not t.judged]
    if not short:
        return None
    most = max(len(t.points) for t in short)
    return (
        f"TOO FEW RUNS: {len(short)} of {len(trends)} cells have fewer than {MIN_RUNS} runs (the most {most}): "
        f"a change needs {MIN_HISTORY} runs of history and a new one, so none can be found in them yet"
    )


def render_changes(trends: Sequence[CellTrend]) -> str:
    """The changed cells as one table; a sentence when none changed; the cells too short to
    judge said apart, never counted as "inside the noise"."""
    changed = [t for t in trends if t.shift is not None and t.changed_at is not None]
    judged = sum(1 for t in trends if t.judged)
    too_few = render_too_few(trends)
    if not changed:
        lines = [f"no change: the newest run of each of {judged} cells is inside its history's noise"] if judged else []
        return "\n".join([*lines, *([too_few] if too_few else [])])
    rows = []
    for t in changed:
        assert t.shift is not None and t.changed_at is not None
        change = format_percent(t.shift.change) if abs(t.shift.change) != float("inf") else "from 0"
        score = "∞" if t.shift.score == float("inf") else f"{t.shift.score:.1f}"
        rows.append(
            [t.label, t.changed_at.run_id, format_number(t.shift.before), format_number(t.shift.after), change, score]
        )
    table = tabulate(
        rows,
        headers=["cell", "changed at run", "before", "after", "change", "noise ×"],
        tablefmt="simple",
        disable_numparse=True,
    )
    head = f"CHANGED: {len(changed)} of {len(trends)} cells moved beyond their history's noise\n{table}"
    return head if too_few is None else f"{head}\n{too_few}"


def render_trends(trends: Sequence[CellTrend]) -> str:
    return "\n\n".join(render_trend(t) for t in trends)
