"""One metric of every cell across an inventory's last runs: the points, the provenance, the change.

:func:`cell_trends` turns a :class:`~harness.resultsdb.queries.RunHistory` into one
:class:`CellTrend` per cell: per run the cell's statistic (median and min–max of its repeats,
as that run's report showed it), the provenance it was measured with (fio, kernel, DRBD
versions, protocol, instance types, placement; the run's profile and controller-side tool
versions) and which of those changed since the cell's previous run; then the change detection
(:mod:`harness.history.detectors`) on the series of run medians.  Pure: no database, no printing.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from harness.history.changes import MIN_RUNS, Detector, Shift, robust_noise
from harness.history.detectors import DEFAULT_DETECTOR, detector
from harness.report.aggregate import Cell, Stat, cell_sort_key
from harness.report.plot_data import cell_label
from harness.resultsdb.queries import RunHistory
from harness.resultsdb.records import StoredRun
from harness.runfiles.samples import PROVENANCE_KEYS

__all__ = ["CellTrend", "TrendPoint", "cell_trends"]

#: Controller-side versions from run.json that belong to a point's provenance.
_RUN_TOOLS: Final = ("harness", "python")


@dataclass(frozen=True)
class TrendPoint:
    """One run of one cell."""

    run: StoredRun
    stat: Stat
    provenance: Mapping[str, str]
    #: ``key: old → new`` for every provenance value that differs from the cell's previous run.
    changed: tuple[str, ...] = ()

    @property
    def run_id(self) -> str:
        return self.run.run_id


@dataclass(frozen=True)
class CellTrend:
    """A cell's metric over the runs that measured it, oldest first, and where it changed."""

    key: str
    label: str
    metric: str
    unit: str
    points: tuple[TrendPoint, ...]
    #: Every level change, oldest first; the last is where the current level began.
    shifts: tuple[Shift, ...] = ()

    @property
    def shift(self) -> Shift | None:
        """The latest change: the newest runs against the level before them."""
        return self.shifts[-1] if self.shifts else None

    @property
    def judged(self) -> bool:
        """The cell has the runs a change could be found in (:data:`MIN_RUNS`); with fewer,
        "no change" would mean only "too few runs"."""
        return len(self.points) >= MIN_RUNS

    @property
    def medians(self) -> list[float]:
        return [p.stat.median for p in self.points]

    @property
    def changed_at(self) -> TrendPoint | None:
        """The first run of the new level, when the cell changed."""
        return None if self.shift is None else self.points[self.shift.index]

    @property
    def history(self) -> list[float]:
        """The run medians the latest level is judged against: the level before the latest
        change (from the change before it, if any); all runs when the cell never changed."""
        medians = self.medians
        if not self.shifts:
            return medians
        start = self.shifts[-2].index if len(self.shifts) > 1 else 0
        return medians[start : self.shifts[-1].index]

    @property
    def median(self) -> float:
        return statistics.median(self.history)

    @property
    def noise(self) -> float:
        return robust_noise(self.history)


def _provenance(cell: Cell, run: StoredRun) -> dict[str, str]:
    out = {k: cell.value_text(k) for k in PROVENANCE_KEYS if cell.value_text(k)}
    if run.info.profile:
        out["profile"] = run.info.profile
    out.update({k: v for k, v in run.info.versions.items() if k in _RUN_TOOLS})
    return out


def _changes(previous: Mapping[str, str] | None, current: Mapping[str, str]) -> tuple[str, ...]:
    if previous is None:
        return ()
    # A value one side did not record (an older harness) is unknown, not changed.
    return tuple(f"{k}: {previous[k]} → {v}" for k, v in current.items() if k in previous and previous[k] != v)


def _trend(key: str, metric: str, found: Sequence[tuple[StoredRun, Cell]], detect: Detector) -> CellTrend:
    points: list[TrendPoint] = []
    previous: Mapping[str, str] | None = None
    for run, cell in found:
        stat = cell.stats[metric]
        provenance = _provenance(cell, run)
        points.append(TrendPoint(run, stat, provenance, _changes(previous, provenance)))
        previous = provenance
    shifts = detect([p.stat.median for p in points])
    first = found[0][1]
    return CellTrend(key, cell_label(first), metric, first.stats[metric].unit, tuple(points), tuple(shifts))


def cell_trends(
    history: RunHistory,
    metric: str,
    *,
    scenario: str | None = None,
    match: str | None = None,
    detect: Detector | None = None,
) -> list[CellTrend]:
    """Every cell with ``metric`` in any of the runs (of ``scenario``; whose key contains
    ``match``), in report order, with its points and the changes ``detect`` finds (the
    default detector with its defaults when ``None``)."""
    by_key: dict[str, list[tuple[StoredRun, Cell]]] = {}
    latest: dict[str, Cell] = {}
    for run in history.runs:
        for key, cell in history.cells[run.run_id].items():
            if metric not in cell.stats or (scenario is not None and cell.scenario != scenario):
                continue
            if match is not None and match not in key:
                continue
            by_key.setdefault(key, []).append((run, cell))
            latest[key] = cell
    order = sorted(by_key, key=lambda k: cell_sort_key(latest[k]))
    chosen = detect or detector(DEFAULT_DETECTOR)
    return [_trend(k, metric, by_key[k], chosen) for k in order]
