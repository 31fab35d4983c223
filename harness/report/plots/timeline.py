"""Per-second bandwidth of one cell over time (fio's bandwidth log), its fault windows shaded."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from harness.report.plots.canvas import CURRENT_COLOUR, new_figure, png_of
from harness.runfiles.series import CellSeries, FaultWindow

__all__ = ["MAX_STEPS", "plot_bandwidth_series"]

_FAULT_COLOUR: Final = "#d62728"
#: Steps one plot draws: a few per pixel of the figure's width.  A longer series is drawn as
#: the mean over a whole number of its intervals (the axis says over how long), so a day of
#: seconds (or a file of millions) costs what an hour does, not a minute of drawing.
MAX_STEPS: Final = 4096


def _coarser(values: Sequence[float], interval_s: float) -> tuple[list[float], float]:
    """``values`` as means over ``k`` consecutive intervals, k the least that gives at most
    :data:`MAX_STEPS` steps (1 for a short series); and the interval they then cover."""
    k = math.ceil(len(values) / MAX_STEPS)
    if k == 1:
        return list(values), interval_s
    chunks = [values[i : i + k] for i in range(0, len(values), k)]
    return [math.fsum(chunk) / len(chunk) for chunk in chunks], interval_s * k


def _by_label(windows: Sequence[FaultWindow]) -> dict[str, list[tuple[float, float]]]:
    spans: dict[str, list[tuple[float, float]]] = {}
    for w in windows:
        spans.setdefault(w.label, []).append((w.start_s, w.end_s - w.start_s))
    return spans


def plot_bandwidth_series(series: CellSeries) -> bytes | None:
    """Bandwidth per interval of one cell (sum over fio's jobs), fault windows shaded.

    ``None`` for an empty series.  The x axis spans the series and every window, so a fault
    that began before fio started, or outlasted it, is still drawn whole.
    """
    if not series.bw_mib_s:
        return None
    values, interval_s = _coarser(series.bw_mib_s, series.interval_s)
    edges = [i * interval_s for i in range(len(values))] + [series.duration_s]
    x_min = min([0.0, *(w.start_s for w in series.windows)])
    x_max = max([series.duration_s, *(w.end_s for w in series.windows)])
    with new_figure(360) as fig:
        ax = fig.subplots()
        # No baseline: the outline would drop to 0 at both ends, which reads as a stall.
        ax.stairs(values, edges, baseline=None, color=CURRENT_COLOUR, linewidth=1.5, label="bandwidth (all jobs)")
        # One shape and one legend entry per distinct label: a repeated fault is one kind of window.
        for label, spans in _by_label(series.windows).items():
            shade = ax.get_xaxis_transform()  # x in seconds, y the whole height
            ax.broken_barh(spans, (0, 1), transform=shade, color=_FAULT_COLOUR, alpha=0.15, linewidth=0, label=label)
        ax.set_xlim(x_min, x_max)
        ax.set_ylim(0, max(values) * 1.15 or 1.0)
        ax.set_xlabel("time since fio started (s)")
        ax.set_ylabel(f"bandwidth (MiB/s, mean per {interval_s:g} s)")
        cell = " · ".join(
            [series.scenario, series.pair, series.workload]
            + ([series.impairment] if series.impairment != "none" else [])
            + ([series.mode] if series.mode != "replicated" else [])
        )
        ax.set_title(f"Bandwidth over time: {cell} (repeat {series.repeat})")
        ax.legend(loc="lower left")
        return png_of(fig)
