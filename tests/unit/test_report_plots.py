"""The report's plots, drawn from recorded lab runs, a recorded fio sweep and recorded fio logs.

A PNG's content is checked where it can be without image comparison: its size, that the same
data gives the same bytes, and the colours that must (or must not) be in it — a shaded fault
window, the bars of both placements.
"""

from __future__ import annotations

import io
import struct
from dataclasses import replace

import matplotlib
import pytest
from PIL import Image

from harness.report.aggregate import aggregate_samples
from harness.report.plots import (
    WIDTH_PX,
    plot_bandwidth_series,
    plot_baseline_vs_current,
    plot_latency_sweep,
    plot_numjobs_sweep,
    plot_placement,
    run_plots,
)
from harness.runfiles.series import FaultWindow

from .baseline_runs import LATER, SINGLE, load, scaled
from .plot_inputs import LATENCY, REPEATS_A, REPEATS_B, bw_series, cells, numjobs_samples, stop_windows

# A matplotlib warning (limits ignored, layout not applied) means a plot that looks wrong.
pytestmark = pytest.mark.filterwarnings("error")

BLUE = (0x1F, 0x77, 0xB4)  # same-az, current, first pair
ORANGE = (0xFF, 0x7F, 0x0E)  # cross-az, second pair
# The fault colour (#d62728) at 15 % over the white axes background.
FAULT_SHADE = (249, 223, 223)


def size(png: bytes) -> tuple[int, int]:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def colours(png: bytes) -> list[tuple[int, tuple[int, int, int]]]:
    """(pixel count, RGB) of every colour in the image."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    found = image.getcolors(maxcolors=image.width * image.height)
    assert found is not None
    return [(n, (c[0], c[1], c[2])) for n, c in found if isinstance(c, tuple)]


def count_near(png: bytes, colour: tuple[int, int, int], tolerance: int = 2) -> int:
    return sum(n for n, c in colours(png) if all(abs(a - b) <= tolerance for a, b in zip(c, colour, strict=True)))


def check_png(png: bytes | None) -> bytes:
    """The checks every plot passes: PNG, the report's width, no version text in the file."""
    assert png is not None
    width, _ = size(png)
    assert width == WIDTH_PX
    assert b"Software" not in png and b"atplotlib" not in png
    return png


# --------------------------------------------------------------------------------------------
# a. Latency sweep


def test_latency_sweep_plot_of_recorded_runs() -> None:
    png = check_png(plot_latency_sweep(cells(LATENCY)))
    assert size(png) == (WIDTH_PX, 580)
    # Both pairs' points are drawn in their colours.
    assert count_near(png, BLUE) > 50 and count_near(png, ORANGE) > 50


def test_latency_sweep_model_curve_needs_the_calibration() -> None:
    without = aggregate_samples(s for s in load(LATENCY) if s.metadata["scenario"] == "latency_sweep")
    with_model = check_png(plot_latency_sweep(cells(LATENCY)))
    no_model = check_png(plot_latency_sweep(without))
    assert with_model != no_model
    # The dashed model lines add pair-coloured pixels.
    assert count_near(with_model, BLUE) > count_near(no_model, BLUE)


def test_latency_sweep_with_a_stalled_cell() -> None:
    # A cell that wrote nothing (0 IOPS) cannot sit on the log axis; the plot still renders.
    stalled = scaled(load(LATENCY), 0.0, ["iops"], where=lambda m: m.get("impairment") == "rtt10ms")
    check_png(plot_latency_sweep(aggregate_samples(stalled)))


def test_no_latency_sweep_plot_without_its_cells() -> None:
    assert plot_latency_sweep(cells(REPEATS_A)) is None


# --------------------------------------------------------------------------------------------
# b. numjobs sweep


def test_numjobs_plot_of_a_recorded_fio_sweep() -> None:
    png = check_png(plot_numjobs_sweep(aggregate_samples(numjobs_samples())))
    assert size(png) == (WIDTH_PX, 90 + 330)  # two workloads: one row of panels


def test_no_numjobs_plot_for_two_values() -> None:
    assert plot_numjobs_sweep(cells(REPEATS_A)) is None


# --------------------------------------------------------------------------------------------
# c. Single-AZ vs multi-AZ


def test_placement_plot_of_three_recorded_repeats() -> None:
    png = check_png(plot_placement(cells(REPEATS_A)))
    assert size(png) == (WIDTH_PX, 80 + 250 * 2)  # six workloads, three per row
    # Solid bars of both placements.
    assert count_near(png, BLUE, 0) > 2000 and count_near(png, ORANGE, 0) > 2000


def test_no_placement_plot_with_one_placement() -> None:
    single = aggregate_samples(s for s in load(REPEATS_A) if s.metadata["pair"] == "single-az")
    assert plot_placement(single) is None


# --------------------------------------------------------------------------------------------
# d. Per-second bandwidth


def test_series_plot_shades_the_fault_window() -> None:
    stopped = bw_series("stop-nj2", windows=stop_windows())
    shaded = check_png(plot_bandwidth_series(stopped))
    plain = check_png(plot_bandwidth_series(replace(stopped, windows=())))
    assert count_near(shaded, FAULT_SHADE) > 5000
    assert count_near(plain, FAULT_SHADE) == 0


def test_series_plot_of_an_empty_series_is_none() -> None:
    assert plot_bandwidth_series(replace(bw_series("ramp-nj2"), bw_mib_s=())) is None


def test_window_outside_the_series_still_plots() -> None:
    # A fault in place before fio started and after it ended, as a failover cell records it.
    series = bw_series("ramp-nj2", windows=(FaultWindow(-2.0, 1.0, "before"), FaultWindow(2.5, 6.0, "after")))
    assert count_near(check_png(plot_bandwidth_series(series)), FAULT_SHADE) > 5000


# --------------------------------------------------------------------------------------------
# e. Baseline vs current


def test_baseline_vs_current_of_two_recorded_run_sets() -> None:
    png = check_png(plot_baseline_vs_current(cells(REPEATS_A), cells(REPEATS_B), "bw"))
    assert size(png) == (WIDTH_PX, 110 + 46 * 12)  # grows with the 12 cells
    assert count_near(png, BLUE, 0) > 1000  # current bars
    assert count_near(png, (0x9D, 0xA5, 0xAD), 0) > 1000  # baseline bars


def test_baseline_vs_current_with_cells_on_one_side_only() -> None:
    png = check_png(plot_baseline_vs_current(cells(REPEATS_A), cells(REPEATS_B, LATENCY), "iops"))
    assert size(png) == (WIDTH_PX, 110 + 46 * (12 + 10 + 2))  # + sweep and calibration cells


def test_baseline_vs_current_of_all_zero_values() -> None:
    # The recorded failover cell lost no acknowledged write, in both runs.
    png = check_png(plot_baseline_vs_current(cells(SINGLE), cells(LATER), "lost_writes"))
    assert size(png) == (WIDTH_PX, 110 + 46)


def test_baseline_vs_current_without_the_metric_is_none() -> None:
    assert plot_baseline_vs_current(cells(REPEATS_A), cells(REPEATS_B), "lost_writes") is None
    assert plot_baseline_vs_current([], [], "bw") is None


# --------------------------------------------------------------------------------------------
# Determinism and the whole run


def test_same_data_same_bytes_whatever_the_users_matplotlib_settings() -> None:
    current = cells(REPEATS_B)
    first = plot_baseline_vs_current(cells(REPEATS_A), current, "bw")
    with matplotlib.rc_context({"lines.linewidth": 7, "font.size": 20, "figure.dpi": 33, "axes.grid": False}):
        second = plot_baseline_vs_current(cells(REPEATS_A), current, "bw")
    assert first == second


def test_run_plots_names_titles_and_order() -> None:
    series = [
        bw_series("write-1m-nj2", scenario="replicated_write"),  # no fault, no impairment: no plot
        bw_series("stop-nj2", windows=stop_windows(), impairment="crash"),
    ]
    plots = run_plots(cells(LATENCY, REPEATS_A), series)
    assert [p.name for p in plots] == [
        "latency-sweep",
        "single-vs-multi-az",
        "series-1-failover-integrity-single-az-replicated-write-1m-nj2-qd4-crash",
    ]
    assert plots[2].title == (
        "Bandwidth over time: failover_integrity/single-az/replicated/write-1m-nj2-qd4/crash (repeat 0)"
    )
    for p in plots:
        check_png(p.png)
        assert p.figure == (p.title, p.png)


@pytest.mark.parametrize("runs", [(), (REPEATS_A,)])
def test_run_plots_without_data_for_some(runs: tuple[str, ...]) -> None:
    plots = run_plots(cells(*runs))
    assert [p.name for p in plots] == (["single-vs-multi-az"] if runs else [])
