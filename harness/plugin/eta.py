"""How long a run has left: per xdist group, from the cells left in it and what finished cells took.

Under ``--dist loadgroup`` every group's cells run one after the other on one worker, and the
groups are unequal (the lab's same-AZ pairs carry the failover studies, the cross-AZ pairs
the disk studies): a run ends when its slowest group does, so the run's estimate is that
group's, not the median cell times the cells left over the workers.  With more groups than
workers, the groups are laid on the workers as xdist hands them out, each to the first
worker free (:func:`schedule`).

A group's time left is the sum, over its cells left, of each cell's expected time, plus one
calibration for each of its pairs that has not had a cell yet.  A cell's expected time is the
first of:

1. what the same cell took in the inventory's previous run (its ``wall``,
   :func:`prior_durations`) at this run's pace so far (the median of finished cells' time over
   their previous time);
2. the mean time of this run's finished cells of the same test function: the mean, not the
   median, as what is left is a sum, and a sum counts the few long cells (a module's first,
   which sets its fixtures up) that a median leaves out;
3. the mean time of the previous run's cells of that test function (other pairs' cells of it),
   at this run's pace;
4. a typical test function's: the median over this run's test functions of their mean time.
   Most cells left are short measurements of functions not run yet; the mean of all finished
   cells would take each of them for a failover trial or a pair's first cell.

A pair's calibration runs
inside its first predicted cell and can be longer than the cell: a cell's time is counted
without it, and a pair's calibration time (the median over the pairs that had theirs, 0 for
one reused from the store) is added to the group of each pair with cells left and none
finished.  A cell that is running is left by what it has not run yet: its expected time
(with its pair's calibration, when that is still to come) less the time since it started.

Pure: told what was collected, what the previous run took and what finished, it says what is left.
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.runfiles.samples import Sample

__all__ = ["GroupEta", "cell_kind", "groups_of", "pair_of", "prior_durations", "schedule"]


def cell_kind(nodeid: str) -> str:
    """A cell's test function: ``scenarios/t.py::test_y[multi-az-...]@nodes-a1`` → ``scenarios/t.py::test_y``."""
    return nodeid.split("[", 1)[0].split("@", 1)[0]


def _cell_id(nodeid: str) -> str:
    """The id without xdist's ``@group`` (a group's name follows the inventory, not the cell)."""
    return nodeid.rpartition("@")[0] or nodeid


def prior_durations(samples: Iterable[Sample], inventory: str) -> dict[str, float]:
    """What each cell of an earlier run of ``inventory`` took (its ``wall``, the median over
    repeats), by test id without its group."""
    walls: dict[str, list[float]] = {}
    for sample in samples:
        test_id = sample.metadata.get("test_id")
        if sample.metric == "wall" and test_id and sample.metadata.get("inventory") == inventory:
            walls.setdefault(_cell_id(str(test_id)), []).append(sample.value)
    return {test_id: statistics.median(values) for test_id, values in walls.items()}


def pair_of(nodeid: str, pairs: Iterable[str]) -> str | None:
    """The pair a cell's id names: its parameters start with the pair (the plugin parametrizes
    ``pair`` first), the longest name that fits (``single-az-md-nbd`` before ``single-az``)."""
    _, bracket, rest = nodeid.partition("[")
    params = rest.rsplit("]", 1)[0] if bracket else ""
    fits = [p for p in pairs if params == p or params.startswith(p + "-")]
    return max(fits, key=len) if fits else None


def schedule(left: Sequence[float], workers: int) -> float:
    """When the last of the groups (time left of each, in the order they are handed out) ends
    on ``workers`` workers, each group to the worker that frees first."""
    free = [0.0] * max(1, min(workers, len(left)))
    for seconds in left:
        heapq.heapreplace(free, free[0] + seconds)
    return max(free) if left else 0.0


@dataclass
class GroupEta:
    """The estimate of one run: its cells by group, its pairs by group, what finished."""

    #: every cell of the run (its test id) and its group, in collection order
    cells: Mapping[str, str]
    #: the inventory's pairs
    pairs: Collection[str] = ()
    workers: int = 1
    #: what each cell took in the inventory's previous run (:func:`prior_durations`)
    prior: Mapping[str, float] = field(default_factory=dict)
    _done: dict[str, float] = field(default_factory=dict)
    _running: dict[str, float] = field(default_factory=dict)  # cell -> when it started
    _by_kind: dict[str, list[float]] = field(default_factory=dict)
    _calibrations: dict[str, float] = field(default_factory=dict)
    _prior_kinds: dict[str, list[float]] | None = None  # the previous run's times by test function

    def started(self, nodeid: str, at: float) -> None:
        """Cell ``nodeid`` started at time ``at`` (any clock, the one :meth:`eta` is asked with)."""
        if nodeid in self.cells:
            self._running[nodeid] = at

    def finished(self, nodeid: str, seconds: float, *, calibration_s: float = 0.0) -> None:
        """Cell ``nodeid`` took ``seconds``, ``calibration_s`` of them calibrating its pair."""
        own = max(0.0, seconds - calibration_s)
        self._running.pop(nodeid, None)
        self._done[nodeid] = own
        self._by_kind.setdefault(cell_kind(nodeid), []).append(own)
        pair = pair_of(nodeid, self.pairs)
        if pair is not None:
            self._calibrations[pair] = self._calibrations.get(pair, 0.0) + max(0.0, calibration_s)

    @property
    def done(self) -> int:
        return len(self._done)

    def _pace(self) -> float | None:
        """This run's time over the previous run's, for the finished cells that had one."""
        ratios = [own / p for n, own in self._done.items() if (p := self.prior.get(_cell_id(n), 0.0)) > 0]
        return statistics.median(ratios) if ratios else None

    def _cell_s(self, nodeid: str, pace: float | None) -> float:
        kind = cell_kind(nodeid)
        before = self.prior.get(_cell_id(nodeid))
        if before is not None and pace is not None:
            return before * pace
        same = self._by_kind.get(kind)
        if same:
            return statistics.fmean(same)
        previous = self._prior_by_kind().get(kind)
        if previous and pace is not None:
            return statistics.fmean(previous) * pace
        return statistics.median([statistics.fmean(times) for times in self._by_kind.values()])

    def _prior_by_kind(self) -> dict[str, list[float]]:
        if self._prior_kinds is None:
            self._prior_kinds = {}
            for test_id, seconds in self.prior.items():
                self._prior_kinds.setdefault(cell_kind(test_id), []).append(seconds)
        return self._prior_kinds

    def _calibration_s(self) -> float:
        return statistics.median(self._calibrations.values()) if self._calibrations else 0.0

    def left_by_group(self, now: float | None = None) -> dict[str, float]:
        """Seconds left at time ``now`` in each group that has cells left (empty before any cell
        finished); a running cell is left by what it has not run yet (all of it, without ``now``)."""
        if not self._done:
            return {}
        left: dict[str, float] = {}
        to_calibrate: dict[str, str] = {}  # pair -> its group, for pairs with no cell finished
        running: dict[str, float] = {}  # group -> its running cell's expected time (calibration too)
        pace, calibration = self._pace(), self._calibration_s()
        for nodeid, group in self.cells.items():
            if nodeid in self._done:
                continue
            expected = self._cell_s(nodeid, pace)
            pair = pair_of(nodeid, self.pairs)
            pending = False
            if pair is not None and pair not in self._calibrations:
                to_calibrate[pair], pending = group, True
            if nodeid in self._running and now is not None:
                elapsed = max(0.0, now - self._running[nodeid])
                running[group] = min(elapsed, expected + (calibration if pending else 0.0))
            left[group] = left.get(group, 0.0) + expected
        for group in to_calibrate.values():
            left[group] += calibration
        return {group: seconds - running.get(group, 0.0) for group, seconds in left.items()}

    def eta(self, now: float | None = None) -> float | None:
        """Seconds from ``now`` until the run ends; ``None`` before any cell finished."""
        if not self._done:
            return None
        left = self.left_by_group(now)
        started = {self.cells[n] for n in [*self._done, *self._running]}
        # the groups under way hold their workers; the others follow in collection order
        order = sorted(left, key=lambda g: (g not in started, _first_index(self.cells, g)))
        return schedule([left[g] for g in order], self.workers)

    def slowest(self, now: float | None = None) -> str | None:
        """The group that ends last, when there are several with cells left."""
        left = self.left_by_group(now)
        return max(left, key=lambda g: left[g]) if len(left) > 1 else None


def _first_index(cells: Mapping[str, str], group: str) -> int:
    return next((i for i, g in enumerate(cells.values()) if g == group), len(cells))


def groups_of(nodeids: Iterable[str], marked: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each cell's group: the ``@group`` xdist appends to a test id under ``--dist loadgroup``,
    else ``marked`` (the ``xdist_group`` marks, without xdist), else the cell itself."""
    out = {}
    for nodeid in nodeids:
        _, at, group = nodeid.rpartition("@")
        out[nodeid] = group if at else (marked or {}).get(nodeid, nodeid)
    return out
