"""Per-second bandwidth of one cell over time (fio's bandwidth log), its fault windows shaded."""

from __future__ import annotations

from typing import Final

from harness.report.plots.canvas import CURRENT_COLOUR, new_figure, png_of
from harness.runfiles.series import CellSeries

__all__ = ["plot_bandwidth_series"]

_FAULT_COLOUR: Final = "#d62728"


def plot_bandwidth_series(series: CellSeries) -> bytes | None:
    """Bandwidth per interval of one cell (sum over fio's jobs), fault windows shaded.

    ``None`` for an empty series.  The x axis spans the series and every window, so a fault
    that began before fio started, or outlasted it, is still drawn whole.
    """
    values = series.bw_mib_s
    if not values:
        return None
    edges = [i * series.interval_s for i in range(len(values) + 1)]
    x_min = min([0.0, *(w.start_s for w in series.windows)])
    x_max = max([series.duration_s, *(w.end_s for w in series.windows)])
    with new_figure(360) as fig:
        ax = fig.subplots()
        # No baseline: the outline would drop to 0 at both ends, which reads as a stall.
        ax.stairs(values, edges, baseline=None, color=CURRENT_COLOUR, linewidth=1.5, label="bandwidth (all jobs)")
        labels: set[str] = set()
        for w in series.windows:
            # One legend entry per distinct label: a repeated fault is one kind of window.
            label = w.label if w.label not in labels else None
            labels.add(w.label)
            ax.axvspan(w.start_s, w.end_s, color=_FAULT_COLOUR, alpha=0.15, label=label)
        ax.set_xlim(x_min, x_max)
        ax.set_ylim(0, max(values) * 1.15 or 1.0)
        ax.set_xlabel("time since fio started (s)")
        ax.set_ylabel(f"bandwidth (MiB/s, mean per {series.interval_s:g} s)")
        cell = " · ".join(
            [series.scenario, series.pair, series.workload]
            + ([series.impairment] if series.impairment != "none" else [])
            + ([series.mode] if series.mode != "replicated" else [])
        )
        ax.set_title(f"Bandwidth over time: {cell} (repeat {series.repeat})")
        ax.legend(loc="lower left")
        return png_of(fig)
