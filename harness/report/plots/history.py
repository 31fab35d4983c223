"""A metric across runs: one panel per cell, run medians with their min–max, the history's noise band.

Per panel: x is time, each run at its start (a run of last week sits a week left of today's),
or the run's place when a run has no start time on record (labelled with the run id's time and
tail); y the cell's median with min–max bars over its repeats; a grey band is the history's median ± its noise
(1.4826 · MAD of the run medians before any change); a dotted vertical line marks a run whose
provenance differs from the previous one (fio, kernel, DRBD, instance types, profile, harness);
the run where the cell changed, and every run after it, is drawn in red and the panel's title
says ``changed``.  The data comes in as :class:`HistorySeries` (built by :mod:`harness.history`),
so this module stays below it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from harness.report.aggregate import Stat
from harness.report.plots.canvas import COLUMNS, CURRENT_COLOUR, grid, metric_axis_label, minmax, new_figure, png_of

__all__ = ["HistorySeries", "plot_history", "time_axis"]

_CHANGED_COLOUR: Final = "#d62728"
_BAND_COLOUR: Final = "#9da5ad"
_PROVENANCE_COLOUR: Final = "#7f7f7f"


@dataclass(frozen=True)
class HistorySeries:
    """One cell's points, oldest first."""

    label: str
    run_ids: tuple[str, ...]
    stats: tuple[Stat, ...]
    #: Indexes of runs whose provenance differs from the run before.
    provenance_changed: tuple[int, ...]
    #: Index of the first run of a new level, when the cell changed.
    changed_at: int | None
    #: The history's median and noise (of the runs before any change).
    median: float
    noise: float
    #: Each run's start (ISO 8601), where recorded.
    started: tuple[str | None, ...] = ()


def time_axis(started: Sequence[str | None]) -> list[datetime] | None:
    """The runs' start times, oldest first, when every run has one that reads as a time, they
    are in order and span some time; ``None`` otherwise (the plot then spaces runs evenly: a
    time axis of one instant has no scale)."""
    try:
        times = [datetime.fromisoformat(s) for s in started if s]
        ordered = all(a <= b for a, b in itertools.pairwise(times))
    except (ValueError, TypeError):  # not a time, or naive beside aware times
        return None
    return times if times and len(times) == len(started) and ordered and times[0] < times[-1] else None


def _between(xs: Sequence[Any], i: int) -> Any:
    """Where the line between run ``i - 1`` and run ``i`` goes."""
    if isinstance(xs[i], datetime):
        return xs[i - 1] + (xs[i] - xs[i - 1]) / 2
    return i - 0.5


def _tick(run_id: str) -> str:
    # Generated ids are <date>-<time>-<tail>: the time and tail tell runs of a day apart.
    parts = run_id.split("-")
    return "-".join(parts[1:]) if len(parts) == 3 and parts[0].isdigit() else run_id


def _x_ticks(ax: Any, xs: Sequence[Any], run_ids: Sequence[str], *, dated: bool) -> None:
    if not dated:
        ax.set_xticks(xs, [_tick(r) for r in run_ids], rotation=45, ha="right", fontsize=7)
        return
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator()  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.tick_params(axis="x", labelsize=7)


def plot_history(series: Sequence[HistorySeries], metric: str) -> bytes | None:
    """The history plot of ``metric``; ``None`` when there is no cell."""
    if not series:
        return None
    rows = math.ceil(len(series) / COLUMNS)
    with new_figure(110 + 280 * rows) as fig:
        for ax, s in zip(grid(fig, len(series)), series, strict=True):
            times = time_axis(s.started)
            xs: list[Any] = list(range(len(s.stats))) if times is None else list(times)
            cut = len(xs) if s.changed_at is None else s.changed_at
            ax.axhspan(s.median - s.noise, s.median + s.noise, color=_BAND_COLOUR, alpha=0.3, linewidth=0)
            ax.axhline(s.median, color=_BAND_COLOUR, linewidth=1)
            for part, colour in ((slice(0, cut), CURRENT_COLOUR), (slice(cut, None), _CHANGED_COLOUR)):
                stats = list(s.stats[part])
                if stats:
                    ax.errorbar(
                        xs[part], [t.median for t in stats], yerr=minmax(stats), fmt="o-", color=colour, capsize=3
                    )
            for i in s.provenance_changed:
                if i > 0:
                    ax.axvline(_between(xs, i), color=_PROVENANCE_COLOUR, linestyle=":", linewidth=1.2)
            _x_ticks(ax, xs, s.run_ids, dated=times is not None)
            ax.set_ylabel(metric_axis_label(metric))
            # Two lines: the scenario, then what tells the panels apart (pair, workload...).
            title = s.label.replace(" · ", "\n", 1)
            if s.changed_at is not None:
                title += f"\nCHANGED at {_tick(s.run_ids[s.changed_at])}"
            ax.set_title(title, fontsize=8, color=_CHANGED_COLOUR if s.changed_at is not None else "black")
            top = max(t.max for t in s.stats)
            ax.set_ylim(0, max(top, s.median + s.noise) * 1.15 or 1.0)
        fig.suptitle(
            f"{metric_axis_label(metric)} per run, {len(series)} cells: median of repeats, bars min–max; "
            "grey band: history median ± noise (1.4826·MAD)\ndotted line: provenance changed; red: the run "
            "where the cell changed and after",
            fontsize=9,
        )
        return png_of(fig)
