"""How one value, verdict or table cell is written, the same in Markdown, HTML and the terminal.

Values shown are medians over repeats, ``±x%`` is half the min–max range relative to the median,
and ratios are ratios of medians; every output states this once (:data:`LEGEND`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from harness.report.aggregate import Cell, Stat
from harness.report.comparison import Column, Row, ScenarioTable
from harness.runfiles.samples import METRICS

__all__ = [
    "LEGEND",
    "cell_text",
    "format_number",
    "format_ratio",
    "format_stat",
    "is_numeric",
    "metric_columns",
    "table_caption",
    "verdict_text",
]

LEGEND: Final = (
    "Values are medians over repeats; ±x% is (max − min) / (2 × median); n= marks a value resting on "
    "a different number of repeats than its table states. Ratios are ratios of medians: a/b < 1 in "
    "bandwidth means a is slower, a/b > 1 in latency means a waits longer."
)


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


def verdict_text(cell: Cell | None, *, emphasis: bool = False) -> str:
    if cell is None or cell.verdict is None:
        return ""
    word = cell.verdict.upper() if cell.verdict == "fail" else cell.verdict
    if emphasis and cell.verdict == "fail":
        word = f"**{word}**"
    repeats = sum(cell.verdict_counts.values())
    count = cell.verdict_counts.get(cell.verdict, 0)
    # Only a split decision needs the count: "FAIL 1/3" says one repeat failed.
    return f"{word} {count}/{repeats}" if count < repeats else word


def cell_text(row: Row, column: Column, *, typical_n: int | None = None, emphasis: bool = False) -> str:
    if column.kind == "workload":
        return row.workload
    if column.kind == "impairment":
        return row.impairment
    if column.kind == "ratio":
        assert column.ratio is not None and column.metric is not None
        return format_ratio(row.ratio(column.ratio, column.metric))
    assert column.group is not None
    if column.kind == "verdict":
        return verdict_text(row.cells.get(column.group), emphasis=emphasis)
    if column.kind == "bottleneck":
        return row.bottleneck(column.group)
    assert column.metric is not None
    stat = row.stat(column.group, column.metric)
    if column.kind == "rtt":  # the RTT is context, not a result: its spread would be noise
        return "" if stat is None else format_number(stat.median)
    return format_stat(stat, typical_n=typical_n)


def is_numeric(column: Column) -> bool:
    return column.kind in ("metric", "ratio", "rtt")


# ---------------------------------------------------------------------------------------------
# Header facts shared by Markdown and HTML


def table_caption(table: ScenarioTable) -> str:
    n = table.typical_repeats
    return "One run per cell." if n == 1 else f"Median of {n} repeats per cell; ±: half the min–max range."


def metric_columns(cells: Sequence[Cell]) -> list[str]:
    present = {m for c in cells for m in c.stats}
    return [m for m in METRICS if m in present] + sorted(present - set(METRICS))
