"""``harness history --json``: the same trends as the tables, as one JSON document.

For a dashboard or a CI step that reads the history rather than a person::

    {"inventory": "lab", "metric": "bw", "database": "reports/results.sqlite",
     "min_runs": 4,
     "runs": [{"run_id": "...", "started": "2026-11-21T10:00:00+00:00"}, ...],
     "cells": [{"key": "replicated_write/multi-az/...", "label": "...", "unit": "MiB/s",
                "judged": true,
                "points": [{"run_id": "...", "started": "...", "median": 78.1, "min": 77.0,
                            "max": 79.2, "n": 3, "provenance_changed": ["fio_version: ..."]}],
                "history": {"median": 78.1, "noise": 0.8, "runs": 3},
                "change": {"run_id": "...", "before": 78.1, "after": 39.0,
                           "change": -0.5, "score": 48.7}}]}

``judged`` is false for a cell with fewer than ``min_runs`` runs, in which no change can be
found; ``change`` is null when the cell did not change (or is not judged).  A change from a
zero history has ``change`` null and ``from_zero`` true; a history without noise has ``score``
null (infinitely far).  Every value is finite: the document is strict JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from harness.history.changes import MIN_RUNS
from harness.history.trend import CellTrend, TrendPoint
from harness.resultsdb.records import StoredRun

__all__ = ["history_json"]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _point(point: TrendPoint) -> dict[str, Any]:
    stat = point.stat
    return {
        "run_id": point.run_id,
        "started": point.run.info.started,
        "median": stat.median,
        "min": stat.min,
        "max": stat.max,
        "n": stat.n,
        "provenance_changed": list(point.changed),
    }


def _change(trend: CellTrend) -> dict[str, Any] | None:
    shift, at = trend.shift, trend.changed_at
    if shift is None or at is None:
        return None
    change = {"run_id": at.run_id, "before": shift.before, "after": shift.after}
    return {**change, "change": _finite(shift.change), "from_zero": shift.before == 0, "score": _finite(shift.score)}


def _cell(trend: CellTrend) -> dict[str, Any]:
    return {
        "key": trend.key,
        "label": trend.label,
        "unit": trend.unit,
        "judged": trend.judged,
        "points": [_point(p) for p in trend.points],
        "history": {"median": trend.median, "noise": trend.noise, "runs": len(trend.history)},
        "change": _change(trend),
    }


def history_json(
    inventory: str | None, metric: str, database: str, runs: Sequence[StoredRun], trends: Sequence[CellTrend]
) -> str:
    """The document, indented, ending in a newline."""
    doc = {
        "inventory": inventory,
        "metric": metric,
        "database": database,
        "min_runs": MIN_RUNS,
        "runs": [{"run_id": r.run_id, "started": r.info.started} for r in runs],
        "cells": [_cell(t) for t in trends],
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
