"""Run-level progress: one line per finished cell with how many are left and an ETA.

Cells take seconds to minutes each, so pytest's dots say little about when a run ends.  The
controller (or the only process) knows the measuring tests it collected (xdist reports them,
each with its ``@group``, through ``pytest_xdist_node_collection_finished``), times each one,
and prints a line such as
``[harness 12:01:02] 17/38 cells, last single-az-randwrite-4k-nj8-qd1 8.1 s, ETA 3m10s (nodes-a3 last)``.
The ETA is the slowest xdist group's (:mod:`harness.plugin.eta`), from what each cell took
in the inventory's previous run (:func:`previous_durations`) and this run's cells so far.  Lines only, no carriage
returns, so CI logs stay readable.

Every process also times the calibration a cell ran before measuring (:func:`calibrating`)
and sends it with the cell's report (``harness_calibration_s``, which xdist's report
serialisation carries to the controller), so a pair's calibration is not taken for the time
of its cells.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError
from harness.plugin.eta import GroupEta, groups_of, prior_durations
from harness.plugin.session import SESSION_KEY
from harness.runfiles.rundir import list_runs
from harness.runfiles.samples import read_samples

__all__ = [
    "CALIBRATION_S",
    "ProgressPlugin",
    "RunProgress",
    "calibrating",
    "format_eta",
    "previous_durations",
    "register",
]

#: seconds the cell spent calibrating its pair (on the item while it runs)
CALIBRATION_S = pytest.StashKey[float]()
#: the report attribute that carries them
_REPORTED = "harness_calibration_s"


def format_eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


#: how many of the newest runs are searched for the inventory's previous one
_LOOK_BACK = 20


def previous_durations(reports_root: Path, inventory: str, run_id: str) -> dict[str, float]:
    """What each cell took in the newest earlier run of ``inventory`` under ``reports_root``
    (empty when there is none, or its samples cannot be read: the ETA then learns as it goes)."""
    for run in reversed(list_runs(reports_root)[-_LOOK_BACK:]):
        try:
            info = run.read_run_info()
            if run.run_id == run_id or info is None or info.inventory_name != inventory:
                continue
            if run.samples_ndjson.exists():
                return prior_durations(read_samples(run.samples_ndjson), inventory)
        except (ConfigError, OSError):
            continue
    return {}


@contextmanager
def calibrating(item: pytest.Item) -> Iterator[None]:
    """Count the time of the block as the cell's calibration."""
    start = time.monotonic()
    try:
        yield
    finally:
        item.stash[CALIBRATION_S] = item.stash.get(CALIBRATION_S, 0.0) + time.monotonic() - start


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.when == "call" and CALIBRATION_S in item.stash:
        setattr(report, _REPORTED, item.stash[CALIBRATION_S])
    return report


@dataclass
class RunProgress:
    """Counts finished cells and estimates the rest per xdist group (:class:`GroupEta`)."""

    estimate: GroupEta
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)

    @property
    def total(self) -> int:
        return len(self.estimate.cells)

    def started(self, nodeid: str) -> None:
        self.estimate.started(nodeid, time.monotonic())

    def finished(self, nodeid: str, seconds: float, calibration_s: float = 0.0) -> str | None:
        """Cell ``nodeid`` ended after ``seconds``: say so (``None`` for a test that is no cell)."""
        if nodeid not in self.estimate.cells:
            return None
        self.estimate.finished(nodeid, seconds, calibration_s=calibration_s)
        done = self.estimate.done
        name = nodeid.rsplit("::", 1)[-1]
        line = f"[harness {time.strftime('%H:%M:%S')}] {done}/{self.total} cells, last {name} {seconds:.1f} s"
        now = time.monotonic()
        eta = self.estimate.eta(now)
        if done < self.total and eta is not None:
            line += f", ETA {format_eta(eta)}"
            slowest = self.estimate.slowest(now)
            if slowest is not None:
                line += f" ({slowest} last)"
        self.say(line)
        return line


class ProgressPlugin:
    """Registered on the controller (or the only process) of a measuring run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.progress: RunProgress | None = None
        #: the tests counted toward the total and not reported yet: each counts once, others never
        self.pending: set[str] = set()
        #: the time and calibration time of the phases reported so far, by cell
        self.phases: dict[str, tuple[float, float]] = {}

    def _start(self, cells: dict[str, str], workers: int) -> None:
        if cells:
            hs = self.config.stash[SESSION_KEY]
            prior = previous_durations(hs.reports_root, hs.inventory.name, hs.run_id)
            self.progress = RunProgress(GroupEta(cells, list(hs.inventory.pairs), workers, prior))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if getattr(self.config.option, "numprocesses", None):
            return  # xdist: the controller learns the items from its workers (below)
        marked = {}
        for item in session.items:
            group = item.get_closest_marker("xdist_group")
            if item.get_closest_marker("cell") is not None:
                marked[item.nodeid] = str(group.kwargs.get("name", item.nodeid)) if group else item.nodeid
        self.pending = set(marked)
        self._start(groups_of(marked.keys(), marked), 1)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if self.progress is not None:
            return  # every worker collects the same items; the first one is enough
        # the controller has no items of its own: the scenario tests, grouped by their @group
        self.pending = {nodeid for nodeid in ids if nodeid.startswith("scenarios/")}
        workers = int(getattr(self.config.option, "numprocesses", 1) or 1)
        self._start(groups_of(i for i in ids if i in self.pending), workers)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        # under xdist the controller hears of each worker's start too
        if self.progress is not None:
            self.progress.started(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.progress is None or report.nodeid not in self.pending:
            return
        # a cell's time is all its phases' (its fixtures' setup and teardown are the run's time
        # too), so it counts once its teardown is reported; a worker that crashed sends one
        # report of its own kind for the cell and no teardown
        seconds, calibration_s = self.phases.get(report.nodeid, (0.0, 0.0))
        seconds += report.duration
        calibration_s += float(getattr(report, _REPORTED, 0.0))
        if report.when in ("setup", "call"):
            self.phases[report.nodeid] = (seconds, calibration_s)
            return
        self.pending.discard(report.nodeid)
        self.phases.pop(report.nodeid, None)
        self.progress.finished(report.nodeid, seconds, calibration_s)


def register(config: pytest.Config) -> None:
    """Show run progress on this process (call on the controller of a measuring run)."""
    config.pluginmanager.register(ProgressPlugin(config), "harness-progress")
