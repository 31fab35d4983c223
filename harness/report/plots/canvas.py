"""The plots' common ground: one figure style and size, PNG output, shared drawing helpers.

Output is deterministic: the same data gives the same bytes.  Figures are drawn with
matplotlib's default style (a user's ``matplotlibrc`` must not change a report), at a fixed
size and dpi (900 px wide: readable without scaling in the report page), and saved without the
PNG ``Software`` text, which would change with every matplotlib release.  Values shown are
medians over repeats; bars are the min–max range of the repeats.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

from harness.report.aggregate import Stat
from harness.report.comparison import METRIC_TITLES
from harness.report.page import Figure
from harness.runfiles.samples import METRICS

__all__ = [
    "COLUMNS",
    "CURRENT_COLOUR",
    "DPI",
    "SPREAD_NOTE",
    "WIDTH_PX",
    "Plot",
    "colours_of",
    "fit_x_labels",
    "grid",
    "metric_axis_label",
    "minmax",
    "new_figure",
    "png_of",
    "x_labels_overlap",
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
CURRENT_COLOUR: Final = "#1f77b4"
SPREAD_NOTE: Final = "median of repeats; bars: min–max"
#: Subplots per row in the small-multiple plots.
COLUMNS: Final = 3


@dataclass(frozen=True)
class Plot:
    """A rendered plot: ``name`` is its file stem under ``plots/``, ``title`` its caption."""

    name: str
    title: str
    png: bytes

    @property
    def figure(self) -> Figure:
        """As :func:`harness.report.page.render_html` embeds it."""
        return (self.title, self.png)


@contextmanager
def new_figure(height_px: int) -> Iterator[MplFigure]:
    # The style context must cover drawing *and* saving: some rcParams are read at save time.
    with matplotlib.style.context(["default", _STYLE]):
        fig = MplFigure(figsize=(_WIDTH_IN, height_px / DPI), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def x_labels_overlap(fig: MplFigure, ax: Axes) -> bool:
    """Whether any two of ``ax``'s x tick labels, as drawn, cover each other."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def fit_x_labels(fig: MplFigure, axes: Sequence[Axes]) -> None:
    """Slant the x tick labels of every panel whose labels, drawn level, would run into each other
    (long pair names side by side in a narrow panel); upright when slanted is not enough."""
    fig.draw_without_rendering()
    crowded = [ax for ax in axes if x_labels_overlap(fig, ax)]
    for ax in crowded:
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    if crowded:
        fig.draw_without_rendering()
    for ax in crowded:
        if x_labels_overlap(fig, ax):
            ax.tick_params(axis="x", labelrotation=90)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("center")
                label.set_rotation_mode("default")


def png_of(fig: MplFigure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def minmax(stats: Sequence[Stat]) -> list[list[float]]:
    """Asymmetric error-bar lengths (below, above the median) for min–max."""
    return [[s.median - s.min for s in stats], [s.max - s.median for s in stats]]


def colours_of(names: Sequence[str]) -> dict[str, str]:
    return {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def _unit(metric: str) -> str:
    return METRICS.get(metric, "")


def metric_axis_label(metric: str) -> str:
    title = METRIC_TITLES.get(metric, metric)
    unit = _unit(metric)
    return title if not unit or unit in title else f"{title} ({unit})"


def grid(fig: MplFigure, count: int) -> list[Axes]:
    rows = math.ceil(count / COLUMNS)
    cols = min(count, COLUMNS)
    axes = fig.subplots(rows, cols, squeeze=False)
    flat: list[Axes] = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return flat[:count]
