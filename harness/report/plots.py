"""The report's plots: matplotlib (Agg) figures as PNG bytes, one function per plot.

Each ``plot_*`` function takes aggregated data (cells from :mod:`harness.report.aggregate`,
series from :mod:`harness.series`) and returns the PNG, or ``None`` when there is
nothing to plot.  Which cells a plot uses is decided in :mod:`harness.report.plot_data`.

* :func:`plot_latency_sweep`: QD1 write IOPS vs the replication RTT, per pair, against the
  model ``1 / (RTT + local write latency)``;
* :func:`plot_numjobs_sweep`: bandwidth (and IOPS) vs numjobs;
* :func:`plot_placement`: single-AZ vs multi-AZ bandwidth per workload (``replicated_write``);
* :func:`plot_bandwidth_series`: per-second bandwidth of one cell, fault windows shaded;
* :func:`plot_baseline_vs_current`: one metric per cell, baseline vs current run.

:func:`run_plots` makes every plot a run has data for; the run directory saves them as
``plots/<name>.png`` and embeds them in ``report.html``.

Output is deterministic: the same data gives the same bytes.  Figures are drawn with
matplotlib's default style (a user's ``matplotlibrc`` must not change a report), at a fixed
size and dpi (900 px wide: readable without scaling in the report page), and saved without the
PNG ``Software`` text, which would change with every matplotlib release.  Values shown are
medians over repeats; bars are the min–max range of the repeats.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Patch

from harness.bounds import expected_sync_iops
from harness.report.aggregate import Cell, Stat
from harness.report.comparison import METRIC_TITLES, ratio_of
from harness.report.plot_data import (
    LatencySweep,
    NumjobsSweep,
    baseline_pairs,
    latency_sweeps,
    numjobs_sweeps,
    placement_groups,
    series_to_plot,
)
from harness.report.render import Figure, format_number, format_ratio
from harness.samples import METRICS
from harness.series import CellSeries

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

DPI: Final = 100
#: Width of every figure in pixels: the report page's reading width.
WIDTH_PX: Final = 900
_WIDTH_IN: Final = WIDTH_PX / DPI
_STYLE: Final[dict[str, Any]] = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
}
#: Pair colours in order of appearance (tab10, which stays distinguishable for colour-blind
#: readers better than a rainbow); placements keep fixed colours across plots.
_PALETTE: Final = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
_PLACEMENT_COLOURS: Final = {"same-az": "#1f77b4", "cross-az": "#ff7f0e"}
_BASELINE_COLOUR: Final = "#9da5ad"
_CURRENT_COLOUR: Final = "#1f77b4"
_FAULT_COLOUR: Final = "#d62728"
_MODEL_DASHES: Final[tuple[str | tuple[int, tuple[int, ...]], ...]] = ("--", (0, (6, 3, 1, 3)), "-.", (0, (2, 2)))
_SPREAD_NOTE: Final = "median of repeats; bars: min–max"
#: Subplots per row in the small-multiple plots.
_COLUMNS: Final = 3


@dataclass(frozen=True)
class Plot:
    """A rendered plot: ``name`` is its file stem under ``plots/``, ``title`` its caption."""

    name: str
    title: str
    png: bytes

    @property
    def figure(self) -> Figure:
        """As :func:`harness.report.render.render_html` embeds it."""
        return (self.title, self.png)


# ---------------------------------------------------------------------------------------------
# Shared drawing helpers


@contextmanager
def _figure(height_px: int) -> Iterator[MplFigure]:
    # The style context must cover drawing *and* saving: some rcParams are read at save time.
    with matplotlib.style.context(["default", _STYLE]):
        fig = MplFigure(figsize=(_WIDTH_IN, height_px / DPI), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def _png(fig: MplFigure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _spread(stats: Sequence[Stat]) -> list[list[float]]:
    """Asymmetric error-bar lengths (below, above the median) for min–max."""
    return [[s.median - s.min for s in stats], [s.max - s.median for s in stats]]


def _colours(names: Sequence[str]) -> dict[str, str]:
    return {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def _unit(metric: str) -> str:
    return METRICS.get(metric, "")


def _metric_axis_label(metric: str) -> str:
    title = METRIC_TITLES.get(metric, metric)
    unit = _unit(metric)
    return title if not unit or unit in title else f"{title} ({unit})"


def _grid(fig: MplFigure, count: int) -> list[Axes]:
    rows = math.ceil(count / _COLUMNS)
    cols = min(count, _COLUMNS)
    axes = fig.subplots(rows, cols, squeeze=False)
    flat: list[Axes] = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return flat[:count]


# ---------------------------------------------------------------------------------------------
# a. Latency sweep


def _draw_sweep(
    ax: Axes, sweep: LatencySweep, colour: str, dashes: str | tuple[int, tuple[int, ...]], x_max: float
) -> None:
    name = sweep.pair if sweep.placement is None else f"{sweep.pair} ({sweep.placement})"
    probed = [p for p in sweep.points if p.rtt is not None]
    if probed:
        rtts = [p.rtt for p in probed if p.rtt is not None]
        ax.errorbar(
            [r.median for r in rtts],
            [p.iops.median for p in probed],
            xerr=_spread(rtts),
            yerr=_spread([p.iops for p in probed]),
            fmt="o",
            color=colour,
            capsize=3,
            label=f"{name}: measured",
        )
        for p, rtt in zip(probed, rtts, strict=True):
            text = p.label if p.added_rtt_ms is None else f"+{p.added_rtt_ms:g} ms"
            ax.annotate(
                text, (rtt.median, p.iops.median), xytext=(5, 5), textcoords="offset points", fontsize=8, color=colour
            )
    # A cell without a probed RTT (the unimpaired one) has no x position: its IOPS is shown
    # as a level instead of being placed at a made-up RTT, labelled at the right end, where
    # the sweep's points are far below it (high RTT, low IOPS).
    for p in sweep.points:
        if p.rtt is None:
            ax.axhline(p.iops.median, color=colour, linestyle=":", linewidth=1.2)
            ax.annotate(
                f"{name}, {'no added delay' if p.added_rtt_ms == 0 else p.label}: "
                f"{format_number(p.iops.median)} IOPS (RTT not probed)",
                (x_max, p.iops.median),
                xytext=(-4, 3),
                textcoords="offset points",
                ha="right",
                fontsize=8,
                color=colour,
            )
    if sweep.local_write_ms is not None:
        steps = 200
        xs = [x_max * i / steps for i in range(steps + 1)]
        ys = [expected_sync_iops(x, sweep.local_write_ms) for x in xs]
        ax.plot(
            xs,
            ys,
            linestyle=dashes,
            color=colour,
            linewidth=1.2,
            label=f"{name}: model 1/(RTT + {format_number(sweep.local_write_ms)} ms local write)",
        )


def plot_latency_sweep(cells: Sequence[Cell]) -> bytes | None:
    """IOPS of the ``latency_sweep`` cells vs measured RTT, with the model curve per pair.

    x is the RTT measured over the replication path while the delay was in place (each point
    is labelled with the delay added); the model needs the pair's calibration cell and is left
    out for a pair without one.  IOPS is on a log scale: the model is ``1/x``-shaped and the
    sweep spans more than a decade.
    """
    sweeps = latency_sweeps(cells)
    if not sweeps:
        return None
    rtts = [p.rtt.max for s in sweeps for p in s.points if p.rtt is not None]
    x_max = max(rtts, default=1.0) * 1.15
    # A cell that stalled completely has 0 IOPS, which a log axis cannot place.
    iops = [v for s in sweeps for p in s.points for v in (p.iops.min, p.iops.max) if v > 0] or [1.0]
    colours = _colours([s.pair for s in sweeps])
    protocols = sorted({s.protocol for s in sweeps if s.protocol})
    with _figure(580) as fig:
        ax = fig.subplots()
        for i, s in enumerate(sweeps):
            # Pairs on similar disks have near-identical model curves: distinct dashes keep
            # both visible where the colours overlap.
            _draw_sweep(ax, s, colours[s.pair], _MODEL_DASHES[i % len(_MODEL_DASHES)], x_max)
        ax.set_yscale("log")
        # The model climbs to 1/(local write) at RTT 0, far above anything measured: the axis
        # follows the measurements and lets the curve leave the top.
        ax.set_ylim(min(iops) / 1.6, max(iops) * 2.5)
        ax.set_xlim(0, x_max)
        ax.set_xlabel("RTT on the replication path, measured with the delay in place (ms)")
        ax.set_ylabel("write IOPS at queue depth 1 (log scale)")
        proto = f", protocol {'/'.join(protocols)}" if protocols else ""
        ax.set_title(f"Latency sweep: QD1 write IOPS vs replication RTT{proto} ({_SPREAD_NOTE})")
        # Below the axes: inside, any corner can hide a spread bar (a slow repeat reaches far down).
        fig.legend(loc="outside lower center", ncols=2)
        return _png(fig)


# ---------------------------------------------------------------------------------------------
# b. numjobs sweep


def _draw_numjobs(ax: Axes, sweeps: Sequence[NumjobsSweep], colours: dict[str, str]) -> None:
    values: set[int] = set()
    for s in sweeps:
        points = [p for p in s.points if p.bw is not None]
        bws = [p.bw for p in points if p.bw is not None]
        if not points:
            continue
        values.update(p.numjobs for p in points)
        ax.errorbar(
            [p.numjobs for p in points],
            [b.median for b in bws],
            yerr=_spread(bws),
            marker="o",
            capsize=3,
            color=colours[s.label],
            label=s.label,
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(values), [str(v) for v in sorted(values)])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("numjobs (log scale)")
    ax.set_ylabel("bandwidth (MiB/s)")
    bs = {s.bs for s in sweeps}
    size = bs.pop() if len(bs) == 1 else None
    if size is not None:
        # One block size: IOPS is bandwidth rescaled, so it gets an axis rather than a panel.
        per_mib = 2**20 / size

        def to_iops(mib_s: Any) -> Any:  # numpy arrays in, numpy arrays out
            return mib_s * per_mib

        def to_mib_s(iops: Any) -> Any:
            return iops / per_mib

        ax.secondary_yaxis("right", functions=(to_iops, to_mib_s)).set_ylabel("IOPS")
    ax.legend(loc="lower right")


def plot_numjobs_sweep(cells: Sequence[Cell]) -> bytes | None:
    """Bandwidth vs numjobs for every workload swept over at least three numjobs values.

    One panel per scenario and workload (``nj*`` marks the swept part of its id), a line per
    pair/mode/impairment; with one block size the right axis reads the same points as IOPS.
    """
    sweeps = numjobs_sweeps(cells)
    if not sweeps:
        return None
    panels: dict[tuple[str, str], list[NumjobsSweep]] = {}
    for s in sweeps:
        panels.setdefault((s.scenario, s.family), []).append(s)
    colours = _colours([s.label for s in sweeps])
    rows = math.ceil(len(panels) / _COLUMNS)
    with _figure(90 + 330 * rows) as fig:
        for ax, ((scenario, family), group) in zip(_grid(fig, len(panels)), panels.items(), strict=True):
            _draw_numjobs(ax, group, colours)
            ax.set_title(f"{scenario}: {family}")
        fig.suptitle(f"Bandwidth vs numjobs ({_SPREAD_NOTE})")
        return _png(fig)


# ---------------------------------------------------------------------------------------------
# c. Single-AZ vs multi-AZ


def plot_placement(cells: Sequence[Cell], metric: str = "bw") -> bytes | None:
    """Same-AZ vs cross-AZ pairs of ``replicated_write``, one panel per workload.

    Each workload gets its own panel and scale (4k and 1 MiB writes differ by orders of
    magnitude); a panel's title carries the cross/same ratio of medians when it has both.
    """
    groups = placement_groups(cells, metric)
    if not groups:
        return None
    rows = math.ceil(len(groups) / _COLUMNS)
    with _figure(80 + 250 * rows) as fig:
        for ax, group in zip(_grid(fig, len(groups)), groups, strict=True):
            bars = group.bars
            xs = list(range(len(bars)))
            heights = [b.stat.median for b in bars]
            ax.bar(
                xs,
                heights,
                yerr=_spread([b.stat for b in bars]),
                capsize=4,
                color=[_PLACEMENT_COLOURS[b.placement] for b in bars],
            )
            for x, h in zip(xs, heights, strict=True):
                ax.annotate(
                    format_number(h), (x, h), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom"
                )
            ax.set_xticks(xs, [b.pair for b in bars])
            ax.set_ylim(0, max(b.stat.max for b in bars) * 1.25 or 1.0)
            ax.set_ylabel(_metric_axis_label(metric))
            same = next((b for b in bars if b.placement == "same-az"), None)
            cross = [b for b in bars if b.placement == "cross-az"]
            ratio = ratio_of(cross[0].stat.median, same.stat.median) if same and len(cross) == 1 else None
            ax.set_title(group.title + (f"\ncross/same {format_ratio(ratio)}" if ratio is not None else ""))
        handles = [Patch(facecolor=colour, label=placement) for placement, colour in _PLACEMENT_COLOURS.items()]
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))
        fig.suptitle(f"Single-AZ vs multi-AZ per workload: {_metric_axis_label(metric)} ({_SPREAD_NOTE})")
        return _png(fig)


# ---------------------------------------------------------------------------------------------
# d. Per-second bandwidth


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
    with _figure(360) as fig:
        ax = fig.subplots()
        # No baseline: the outline would drop to 0 at both ends, which reads as a stall.
        ax.stairs(values, edges, baseline=None, color=_CURRENT_COLOUR, linewidth=1.5, label="bandwidth (all jobs)")
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
        return _png(fig)


# ---------------------------------------------------------------------------------------------
# e. Baseline vs current


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
    with _figure(int(110 + 46 * len(pairs))) as fig:
        ax = fig.subplots()
        ys = list(range(len(pairs)))
        sides: tuple[tuple[float, str, str, list[Stat | None]], ...] = (
            (-height / 2, _BASELINE_COLOUR, "baseline", [p.baseline for p in pairs]),
            (height / 2, _CURRENT_COLOUR, "current", [p.current for p in pairs]),
        )
        for offset, colour, name, side in sides:
            rows = [(y, s) for y, s in zip(ys, side, strict=True) if s is not None]
            ax.barh(
                [y + offset for y, _ in rows],
                [s.median for _, s in rows],
                height=height,
                xerr=_spread([s for _, s in rows]),
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
        ax.set_xlabel(_metric_axis_label(metric) + (" (log scale)" if log else ""))
        ax.set_title(f"Baseline vs current: {_metric_axis_label(metric)}\n{_SPREAD_NOTE}; labels: current/baseline")
        ax.legend(loc="lower right")
        return _png(fig)


# ---------------------------------------------------------------------------------------------
# Everything a run has data for


_SLUG: Final = re.compile(r"[^a-z0-9]+")


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
            f"series-{i}-{_slug(s.key)}",
            f"Bandwidth over time: {s.key} (repeat {s.repeat})",
            plot_bandwidth_series(s),
        )
        for i, s in enumerate(series_to_plot(series), start=1)
    ]
    return [Plot(name, title, png) for name, title, png in candidates if png is not None]
