"""Benchmark: change detectors scored on real history series with injected regressions.

Each detector of ``harness history --detector`` (and any other given) is replayed on every
series by :func:`harness.history.scoring.score_detector`, once per injected change (5 % and
10 %): recall, false-alarm rate and runs to detect, side by side.  The series are the run
medians of cells over a stretch of history taken as clean (:func:`series_from_trends` turns
``harness history``'s trends into them).  Printed, never asserted: the figures are properties
of the lab's noise as much as of the detectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate

from harness.history.changes import Detector
from harness.history.detectors import DETECTORS, detector
from harness.history.scoring import HORIZON, INJECTED_CHANGES, score_detector
from harness.history.trend import CellTrend
from harness.rules.tolerance import Direction

__all__ = ["change_detection_bench", "render_change_detection", "series_from_trends"]


def series_from_trends(trends: Sequence[CellTrend]) -> dict[str, list[float]]:
    """Each cell's run medians, oldest first, by cell key."""
    return {t.key: t.medians for t in trends}


def change_detection_bench(
    series: Mapping[str, Sequence[float]],
    *,
    direction: Direction = "higher",
    changes: Sequence[float] = INJECTED_CHANGES,
    detectors: Mapping[str, Detector] | None = None,
    horizon: int = HORIZON,
) -> list[dict[str, Any]]:
    """One row per detector and injected change: its score over every series."""
    chosen = detectors if detectors is not None else {name: detector(name) for name in DETECTORS}
    rows = []
    for name, detect in chosen.items():
        for change in changes:
            score = score_detector(series.values(), detect, change, direction=direction, horizon=horizon)
            rows.append(
                {
                    "detector": name,
                    "change": change,
                    "series": len(series),
                    "injections": score.injections,
                    "recall": score.recall,
                    "nights": score.nights,
                    "false_alarm_rate": score.false_alarm_rate,
                    "median_runs_to_detect": score.median_runs_to_detect,
                }
            )
    return rows


def render_change_detection(rows: Sequence[Mapping[str, Any]]) -> str:
    table = [
        [
            r["detector"],
            f"{r['change']:.0%}",
            f"{r['recall']:.0%} of {r['injections']}",
            f"{r['false_alarm_rate']:.0%} of {r['nights']}",
            "–" if r["median_runs_to_detect"] is None else f"{r['median_runs_to_detect']:g}",
        ]
        for r in rows
    ]
    headers = ["detector", "injected", "recall", "false alarms", "runs to detect (median)"]
    return tabulate(table, headers=headers, tablefmt="simple", disable_numparse=True)
