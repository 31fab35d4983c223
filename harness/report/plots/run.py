"""Every plot one run has data for, in report order, named for ``plots/<name>.png``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from harness.report.aggregate import Cell
from harness.report.plot_data import series_to_plot
from harness.report.plots.bars import plot_placement
from harness.report.plots.canvas import Plot
from harness.report.plots.sweeps import plot_latency_sweep, plot_numjobs_sweep
from harness.report.plots.timeline import plot_bandwidth_series
from harness.runfiles.series import CellSeries

__all__ = ["run_plots"]


_SLUG: Final = re.compile(r"[^a-z0-9]+")
#: A series plot's name is built from its cell's key, which a run's data may make any length:
#: cut so that ``<name>.png`` and the ``.<name>.png.<pid>.tmp`` it is written through stay
#: within the 255 bytes of a file name (the number in front keeps cut names apart).
_MAX_PLOT_NAME: Final = 200


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")


def run_plots(cells: Sequence[Cell], series: Sequence[CellSeries] = ()) -> list[Plot]:
    """Every plot the run's cells and series have data for, in report order.

    Per-second plots are limited to :data:`~harness.report.plot_data.MAX_SERIES_PLOTS` cells,
    chosen by :func:`~harness.report.plot_data.series_to_plot`; all series stay in series.ndjson.
    """
    candidates: list[tuple[str, str, bytes | None]] = [
        (
            "latency-sweep",
            "Latency sweep: QD1 write IOPS vs replication RTT, with the model",
            plot_latency_sweep(cells),
        ),
        ("numjobs-sweep", "Bandwidth vs numjobs", plot_numjobs_sweep(cells)),
        ("single-vs-multi-az", "Single-AZ vs multi-AZ bandwidth per workload", plot_placement(cells)),
    ]
    candidates += [
        (
            f"series-{i}-{_slug(s.key)}"[:_MAX_PLOT_NAME].rstrip("-"),
            f"Bandwidth over time: {s.key} (repeat {s.repeat})",
            plot_bandwidth_series(s),
        )
        for i, s in enumerate(series_to_plot(series), start=1)
    ]
    return [Plot(name, title, png) for name, title, png in candidates if png is not None]
