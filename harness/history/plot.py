"""Cell trends as the history plot (:mod:`harness.report.plots.history`), PNG bytes.

Kept apart from :mod:`harness.history.trend` so that the text output never imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.history.trend import CellTrend

__all__ = ["history_png"]


def history_png(trends: Sequence[CellTrend], metric: str) -> bytes | None:
    """One panel per cell; ``None`` when there is none."""
    from harness.report.plots.history import HistorySeries, plot_history

    series = [
        HistorySeries(
            label=t.label,
            run_ids=tuple(p.run_id for p in t.points),
            stats=tuple(p.stat for p in t.points),
            provenance_changed=tuple(i for i, p in enumerate(t.points) if p.changed),
            changed_at=None if t.shift is None else t.shift.index,
            median=t.median,
            noise=t.noise,
            started=tuple(p.run.info.started for p in t.points),
        )
        for t in trends
    ]
    return plot_history(series, metric)
