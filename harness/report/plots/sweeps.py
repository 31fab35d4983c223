"""Plots over a swept parameter: QD1 write IOPS against the replication RTT (with the model
``1 / (RTT + local write latency)``), and bandwidth against numjobs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from matplotlib.axes import Axes

from harness.report.aggregate import Cell
from harness.report.formatting import format_number
from harness.report.plot_data import LatencySweep, NumjobsSweep, latency_sweeps, numjobs_sweeps
from harness.report.plots.canvas import COLUMNS, SPREAD_NOTE, colours_of, grid, minmax, new_figure, png_of
from harness.rules.bounds import expected_sync_iops
from harness.units import MIB

__all__ = ["plot_latency_sweep", "plot_numjobs_sweep"]

_MODEL_DASHES: Final[tuple[str | tuple[int, tuple[int, ...]], ...]] = ("--", (0, (6, 3, 1, 3)), "-.", (0, (2, 2)))


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
            xerr=minmax(rtts),
            yerr=minmax([p.iops for p in probed]),
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
    colours = colours_of([s.pair for s in sweeps])
    protocols = sorted({s.protocol for s in sweeps if s.protocol})
    with new_figure(580) as fig:
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
        ax.set_title(f"Latency sweep: QD1 write IOPS vs replication RTT{proto} ({SPREAD_NOTE})")
        # Below the axes: inside, any corner can hide a spread bar (a slow repeat reaches far down).
        fig.legend(loc="outside lower center", ncols=2)
        return png_of(fig)


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
            yerr=minmax(bws),
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
        per_mib = MIB / size

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
    colours = colours_of([s.label for s in sweeps])
    rows = math.ceil(len(panels) / COLUMNS)
    with new_figure(90 + 330 * rows) as fig:
        for ax, ((scenario, family), group) in zip(grid(fig, len(panels)), panels.items(), strict=True):
            _draw_numjobs(ax, group, colours)
            ax.set_title(f"{scenario}: {family}")
        fig.suptitle(f"Bandwidth vs numjobs ({SPREAD_NOTE})")
        return png_of(fig)
