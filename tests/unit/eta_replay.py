"""Replay a recorded run's timeline through an ETA (tests/data/eta): how far off the estimate
is at a fraction of the run.

A run's timeline is its ``junit.xml``: pytest writes the test cases in the order they finished
(one xdist group runs on one worker, one cell after the other) with each one's time, so the
cells run back to back from 0.  A pair's calibration runs inside the first cell of that pair
and is told apart by the calibration ``wall`` samples of the run's ``samples.ndjson``.

Two estimates are replayed: the harness's (:class:`harness.plugin.eta.GroupEta`, per xdist
group, with or without the previous run's cell times) and the one it replaced, the median
finished cell times the cells left over the workers, which knows nothing of groups.
"""

from __future__ import annotations

import statistics
import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.plugin.eta import GroupEta, groups_of, pair_of
from harness.runfiles.samples import read_samples

__all__ = ["METHODS", "Cell", "Replay", "junit_timeline", "regrouped"]

#: what an estimate is given (the cells by group, the pairs, the workers, the previous run's
#: cell times) and, once fed the cells started and finished by ``now``, answers at ``now``
Method = Callable[["Replay", float], "float | None"]


@dataclass(frozen=True)
class Cell:
    nodeid: str
    start: float
    end: float
    calibration_s: float = 0.0


def _nodeid(case: ET.Element, group: str) -> str:
    name = case.get("name", "")
    path = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
    return f"{path}::{name}" + ("" if "@" in name else f"@{group}")


def _run_group(walls: Path) -> str:
    """The one xdist group the run's cells carry in their samples' test ids."""
    groups = {str(s.metadata["test_id"]).rpartition("@")[2] for s in read_samples(walls) if s.metadata.get("test_id")}
    (group,) = groups
    return group


def junit_timeline(junit: Path, walls: Path, pairs: Collection[str]) -> list[Cell]:
    """The run's cells in the order they ran, back to back from 0, each with its pair's
    calibration when it was that pair's first cell."""
    calibration: dict[str, float] = {}
    for sample in read_samples(walls):
        if sample.metric == "wall" and not sample.metadata.get("test_id"):
            calibrated = str(sample.metadata["pair"])
            calibration[calibrated] = calibration.get(calibrated, 0.0) + sample.value
    group = _run_group(walls)
    cells: list[Cell] = []
    clock = 0.0
    for case in ET.parse(junit).getroot().iter("testcase"):
        nodeid = _nodeid(case, group)
        seconds = float(case.get("time", "0"))
        pair = pair_of(nodeid, pairs)
        cells.append(Cell(nodeid, clock, clock + seconds, calibration.pop(pair, 0.0) if pair else 0.0))
        clock += seconds
    return cells


def regrouped(cells: Sequence[Cell], group_of: Callable[[str], str | None]) -> list[Cell]:
    """The same cells under other groups (``None``: not in any, left out), each group's cells
    back to back in their recorded order and times, all groups starting at 0: how
    ``--dist loadgroup`` lays them out when there are as many workers as groups."""
    clock: dict[str, float] = {}
    out = []
    for cell in cells:
        group = group_of(cell.nodeid)
        if group is not None:
            start = clock.get(group, 0.0)
            clock[group] = start + (cell.end - cell.start)
            out.append(Cell(f"{cell.nodeid.rpartition('@')[0]}@{group}", start, clock[group], cell.calibration_s))
    return out


@dataclass(frozen=True)
class Replay:
    cells: Sequence[Cell]
    pairs: Collection[str]
    workers: int
    #: what each cell took in the inventory's previous run
    prior: Mapping[str, float]

    @property
    def end(self) -> float:
        return max(c.end for c in self.cells)

    def error(self, method: Method, now: float) -> float | None:
        """(estimate − time really left) / time really left, at ``now`` (``None`` while the
        estimate has none: before any cell finished)."""
        eta = method(self, now)
        return None if eta is None else eta / (self.end - now) - 1

    def error_at(self, method: Method, fraction: float) -> float | None:
        """The error at ``fraction`` of the run."""
        return self.error(method, fraction * self.end)

    def first_error(self, method: Method) -> float | None:
        """The error of the first estimate the run prints: as its first cell ends."""
        return self.error(method, min(c.end for c in self.cells))


def _group_eta(replay: Replay, now: float, prior: Mapping[str, float]) -> float | None:
    estimate = GroupEta(groups_of(c.nodeid for c in replay.cells), replay.pairs, replay.workers, prior)
    for cell in sorted(replay.cells, key=lambda c: c.start):
        if cell.start <= now:
            estimate.started(cell.nodeid, cell.start)
        if cell.end <= now:
            estimate.finished(cell.nodeid, cell.end - cell.start, calibration_s=cell.calibration_s)
    return estimate.eta(now)


def per_group_with_previous_run(replay: Replay, now: float) -> float | None:
    return _group_eta(replay, now, replay.prior)


def per_group_this_run_only(replay: Replay, now: float) -> float | None:
    return _group_eta(replay, now, {})


def median_cell_over_workers(replay: Replay, now: float) -> float | None:
    """The estimate before groups: the median finished cell (calibration and all) times the
    cells not finished, over the workers."""
    done = [c.end - c.start for c in replay.cells if c.end <= now]
    left = len(replay.cells) - len(done)
    return statistics.median(done) * left / max(1, replay.workers) if done else None


#: the estimates replayed, by the name the README's table gives them
METHODS: Final[dict[str, Method]] = {
    "per group, with the previous run": per_group_with_previous_run,
    "per group, this run only": per_group_this_run_only,
    "median cell × cells left / workers": median_cell_over_workers,
}
