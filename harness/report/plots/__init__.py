"""The report's plots: matplotlib (Agg) figures as PNG bytes, one function per plot.

Each ``plot_*`` function takes aggregated data (cells from :mod:`harness.report.aggregate`,
series from :mod:`harness.runfiles.series`) and returns the PNG, or ``None`` when there is nothing to
plot; which cells a plot uses is decided in :mod:`harness.report.plot_data`.

* :mod:`~.canvas`: style, size and PNG output shared by every plot (deterministic bytes);
* :mod:`~.sweeps`: :func:`plot_latency_sweep` (QD1 write IOPS vs RTT, with the model) and
  :func:`plot_numjobs_sweep` (bandwidth vs numjobs);
* :mod:`~.bars`: :func:`plot_placement` (single-AZ vs multi-AZ per workload) and
  :func:`plot_baseline_vs_current`;
* :mod:`~.timeline`: :func:`plot_bandwidth_series` (per-second bandwidth, fault windows shaded);
* :mod:`~.run`: :func:`run_plots`, every plot a run has data for, which the report saves as
  ``plots/<name>.png`` and embeds in ``report.html``.
"""

from harness.report.plots.bars import plot_baseline_vs_current, plot_placement
from harness.report.plots.canvas import DPI, WIDTH_PX, Plot
from harness.report.plots.run import run_plots
from harness.report.plots.sweeps import plot_latency_sweep, plot_numjobs_sweep
from harness.report.plots.timeline import plot_bandwidth_series

__all__ = [
    "DPI",
    "WIDTH_PX",
    "Plot",
    "plot_bandwidth_series",
    "plot_baseline_vs_current",
    "plot_latency_sweep",
    "plot_numjobs_sweep",
    "plot_placement",
    "run_plots",
]
