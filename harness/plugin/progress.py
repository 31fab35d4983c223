"""Run-level progress: one line per finished cell with how many are left and an ETA.

Cells take seconds to minutes each, so pytest's dots say little about when a run ends.  The
controller (or the only process) counts the measuring tests it collected (xdist reports them
through ``pytest_xdist_node_collection_finished``), times each one, and prints a line such as
``[harness 12:01:02] 17/38 cells, last single-az-randwrite-4k-nj8-qd1 8.1 s, ETA 3m10s``.
Lines only, no carriage returns, so CI logs stay readable.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

__all__ = ["ProgressPlugin", "RunProgress", "format_eta", "register"]


def format_eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass
class RunProgress:
    """Counts finished cells and estimates the rest from their median duration."""

    total: int
    workers: int = 1
    durations: list[float] = field(default_factory=list)
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)

    def finished(self, name: str, seconds: float) -> str:
        self.durations.append(seconds)
        done = len(self.durations)
        left = max(0, self.total - done)
        eta = statistics.median(self.durations) * left / max(1, self.workers)
        line = f"[harness {time.strftime('%H:%M:%S')}] {done}/{self.total} cells, last {name} {seconds:.1f} s"
        if left:
            line += f", ETA {format_eta(eta)}"
        self.say(line)
        return line


class ProgressPlugin:
    """Registered on the controller (or the only process) of a measuring run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.progress: RunProgress | None = None
        #: the tests counted toward the total and not reported yet: each counts once, others never
        self.pending: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if getattr(self.config.option, "numprocesses", None):
            return  # xdist: the controller learns the items from its workers (below)
        cells = [i for i in session.items if i.get_closest_marker("cell") is not None]
        if cells:
            self.pending = {i.nodeid for i in cells}
            self.progress = RunProgress(len(self.pending))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if self.progress is not None:
            return  # every worker collects the same items; the first one is enough
        # the controller has no items of its own: count the scenario tests
        self.pending = {nodeid for nodeid in ids if nodeid.startswith("scenarios/")}
        if self.pending:
            workers = int(getattr(self.config.option, "numprocesses", 1) or 1)
            self.progress = RunProgress(len(self.pending), workers)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.progress is None or report.nodeid not in self.pending:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.pending.discard(report.nodeid)
            self.progress.finished(report.nodeid.rsplit("::", 1)[-1], report.duration)


def register(config: pytest.Config) -> None:
    """Show run progress on this process (call on the controller of a measuring run)."""
    config.pluginmanager.register(ProgressPlugin(config), "harness-progress")
