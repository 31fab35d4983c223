"""Two sides, bar by bar: same-AZ vs cross-AZ pairs per workload, and a baseline vs the current run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from matplotlib.axes import Axes
from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Patch

from harness.report.aggregate import Cell, Stat
from harness.report.comparison import ratio_of
from harness.report.formatting import format_number, format_ratio
from harness.report.plot_data import PlacementGroup, baseline_pairs, placement_groups
from harness.report.plots.canvas import (
    COLUMNS,
    CURRENT_COLOUR,
    SPREAD_NOTE,
    fit_x_labels,
    grid,
    metric_axis_label,
    minmax,
    new_figure,
    png_of,
)

__all__ = ["draw_placement", "placement_height", "plot_baseline_vs_current", "plot_placement"]

_PLACEMENT_COLOURS: Final = {"same-az": "#1f77b4", "cross-az": "#ff7f0e"}
_BASELINE_COLOUR: Final = "#9da5ad"


def plot_placement(cells: Sequence[Cell], metric: str = "bw") -> bytes | None:
    """Same-AZ vs cross-AZ pairs of ``replicated_write``, one panel per workload.

    Each workload gets its own panel and scale (4k and 1 MiB writes differ by orders of
    magnitude); a panel's title carries the cross/same ratio of medians when it has both.
    """
    groups = placement_groups(cells, metric)
    if not groups:
        return None
    with new_figure(placement_height(groups)) as fig:
        draw_placement(fig, groups, metric)
        return png_of(fig)


def placement_height(groups: Sequence[PlacementGroup]) -> int:
    """The placement figure's height in pixels: a row of panels per three workloads."""
    return 80 + 250 * math.ceil(len(groups) / COLUMNS)


def draw_placement(fig: MplFigure, groups: Sequence[PlacementGroup], metric: str) -> list[Axes]:
    """:func:`plot_placement`'s panels drawn into ``fig``; returns them."""
    axes = grid(fig, len(groups))
    for ax, group in zip(axes, groups, strict=True):
        bars = group.bars
        xs = list(range(len(bars)))
        heights = [b.stat.median for b in bars]
        ax.bar(
            xs,
            heights,
            yerr=minmax([b.stat for b in bars]),
            capsize=4,
            color=[_PLACEMENT_COLOURS[b.placement] for b in bars],
        )
        for x, h in zip(xs, heights, strict=True):
            ax.annotate(format_number(h), (x, h), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom")
        ax.set_xticks(xs, [b.pair for b in bars])
        ax.set_ylim(0, max(b.stat.max for b in bars) * 1.25 or 1.0)
        ax.set_ylabel(metric_axis_label(metric))
        same = next((b for b in bars if b.placement == "same-az"), None)
        cross = [b for b in bars if b.placement == "cross-az"]
        ratio = ratio_of(cross[0].stat.median, same.stat.median) if same and len(cross) == 1 else None
        ax.set_title(group.title + (f"\ncross/same {format_ratio(ratio)}" if ratio is not None else ""))
    handles = [Patch(facecolor=colour, label=placement) for placement, colour in _PLACEMENT_COLOURS.items()]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))
    fig.suptitle(f"Single-AZ vs multi-AZ per workload: {metric_axis_label(metric)} ({SPREAD_NOTE})")
    # four pairs' names side by side in a third of the figure's width run into each other
    fit_x_labels(fig, axes)
    return axes


def plot_baseline_vs_current(
    baseline_cells: Sequence[Cell], current_cells: Sequence[Cell], metric: str
) -> bytes | None:
    """One ``metric`` per cell: the baseline run's median next to the current run's.

    ``baseline_cells`` and ``current_cells`` are :func:`~harness.report.aggregate.aggregate_samples`
    of the two runs; cells match on their key.  Horizontal bars, one pair per cell (grey
    baseline, blue current, min–max bars), labelled with current/baseline; a cell measured on
    one side only shows one bar.  The axis turns logarithmic when the values span more than
    30×, so 4k and 1 MiB cells stay readable side by side.  ``None`` when neither side has the
    metric.  The figure grows with the number of cells.
    """
    pairs = baseline_pairs(baseline_cells, current_cells, metric)
    if not pairs:
        return None
    stats = [s for p in pairs for s in (p.baseline, p.current) if s is not None]
    low, high = min(s.min for s in stats), max(s.max for s in stats)
    log = low > 0 and high / low > 30
    height = 0.28
    with new_figure(int(110 + 46 * len(pairs))) as fig:
        ax = fig.subplots()
        ys = list(range(len(pairs)))
        sides: tuple[tuple[float, str, str, list[Stat | None]], ...] = (
            (-height / 2, _BASELINE_COLOUR, "baseline", [p.baseline for p in pairs]),
            (height / 2, CURRENT_COLOUR, "current", [p.current for p in pairs]),
        )
        for offset, colour, name, side in sides:
            rows = [(y, s) for y, s in zip(ys, side, strict=True) if s is not None]
            ax.barh(
                [y + offset for y, _ in rows],
                [s.median for _, s in rows],
                height=height,
                xerr=minmax([s for _, s in rows]),
                capsize=2,
                color=colour,
                label=name,
            )
        for y, p in zip(ys, pairs, strict=True):
            ratio = ratio_of(p.current.median, p.baseline.median) if p.current and p.baseline else None
            text = format_ratio(ratio) if ratio is not None else ("new" if p.baseline is None else "missing")
            end = max(s.max for s in (p.baseline, p.current) if s is not None)
            ax.annotate(text, (end, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(ys, [p.label for p in pairs], fontsize=8)
        ax.set_ylim(len(pairs) - 0.5, -0.5)  # first cell on top, as in the tables; no empty margins
        if log:
            ax.set_xscale("log")
            ax.set_xlim(low / 1.5, high * 3)
        else:
            ax.set_xlim(0, high * 1.2 or 1.0)  # all zero is a real result (no lost writes)
        ax.set_xlabel(metric_axis_label(metric) + (" (log scale)" if log else ""))
        ax.set_title(f"Baseline vs current: {metric_axis_label(metric)}\n{SPREAD_NOTE}; labels: current/baseline")
        ax.legend(loc="lower right")
        return png_of(fig)
