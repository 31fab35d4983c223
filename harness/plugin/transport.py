"""Where a run's nodes answer from: SSH, SSH recorded into a file, or a recorded file alone.

``--record-session PATH``: every node the session's pool hands out is a
:class:`~harness.remote.recorder.RecordingNode`, and so is the lab's host (its guest crashes and
restarts, :class:`~harness.lab.crash.LabHost`); at the end of the run the recording is written to
``PATH``, with what the run chose for itself that its replay must reuse: its run id, the lock
owner it wrote on the nodes, its start time, and whether the lab ran DRBD 9.

``--replay-session PATH``: the pool is a :class:`~harness.remote.replay.ReplayPool` of that
recording and nothing connects anywhere: no lab boots, no lock lease is kept alive (a lease is
the nodes' clock, and there are no nodes), no doctor looks at the lab at the end.  The run takes
the recorded run id and lock owner, and its clock is a
:class:`~harness.remote.replayclock.ReplayClock` that follows the recorded durations.  A
command the recording lacks fails the test that sent it, naming the command, whatever the test
made of the error (a thread of the harness may have swallowed it, or a broad ``except`` turned it
into another failure): the test's verdict would otherwise be a guess.

One transport per process; a recording is one process's, so neither option runs under xdist.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError
from harness.inventory.models import Inventory
from harness.remote.command import Runner
from harness.remote.pool import ConnectionPool, NodePool
from harness.remote.recorder import Capture, RecordingPool
from harness.remote.replay import Recording, ReplayPool
from harness.remote.replayclock import ReplayClock
from harness.remote.spec import SshSpec
from harness.safety.lock import LockOwner, local_owner
from harness.userfiles.outfile import check_output

__all__ = ["LiveTransport", "RecordTransport", "ReplayTransport", "Transport", "session_transport"]


class LiveTransport:
    """The nodes over SSH, as every run but a recorded or replayed one."""

    replaying = False

    def begin(self, run_id: str) -> None:
        """The run is ``run_id``."""

    def pool(self, specs: Mapping[str, SshSpec]) -> NodePool:
        return ConnectionPool(specs)

    def lab_host(self, make: Callable[[], Runner]) -> Runner:
        """The lab's host (``make`` builds the live one)."""
        return make()

    def owner(self, run_id: str, inventory: str) -> LockOwner:
        return local_owner(run_id, inventory)

    def drbd9(self, inventory: Inventory) -> bool | None:
        """Whether the lab runs DRBD 9 (None: as the modules named say)."""
        return None

    def finish(self) -> None:
        """Nothing to write."""


class RecordTransport(LiveTransport):
    """The nodes over SSH, every answer kept and written to ``path`` by :meth:`finish`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.capture = Capture()
        self.capture.session["started"] = time.time()

    def begin(self, run_id: str) -> None:
        self.capture.session["run_id"] = run_id

    def pool(self, specs: Mapping[str, SshSpec]) -> NodePool:
        return RecordingPool(ConnectionPool(specs), self.capture)

    def lab_host(self, make: Callable[[], Runner]) -> Runner:
        return self.capture.node(make())

    def owner(self, run_id: str, inventory: str) -> LockOwner:
        owner = local_owner(run_id, inventory)
        self.capture.session["lock_owner"] = dataclasses.asdict(owner)
        return owner

    def drbd9(self, inventory: Inventory) -> bool | None:
        from harness.lab.drbd9 import modules_dir

        if inventory.lab is not None:
            self.capture.session["drbd9"] = modules_dir(inventory.lab) is not None
        return None

    def finish(self) -> None:
        self.capture.write(self.path)


class ReplayTransport:
    """The nodes as the recording in ``path`` has them; the recorded session's clock."""

    replaying = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recording = Recording.load(path)
        session = self.recording.session
        run_id, started = session.get("run_id"), session.get("started")
        if not isinstance(run_id, str) or not isinstance(started, int | float):
            raise ConfigError(f"{path}: session must give the recorded run's run_id and started (its start time)")
        self.run_id = run_id
        self.clock = ReplayClock(float(started))
        self.recording.on_answer = self.clock.answered
        self._reported = 0  # how many of the recording's misses a test report has named

    def begin(self, run_id: str) -> None:
        """The run is the recorded one (its id was given to the run directory)."""

    def pool(self, specs: Mapping[str, SshSpec]) -> NodePool:
        return ReplayPool(self.recording, sorted(specs))

    def lab_host(self, make: Callable[[], Runner]) -> Runner:
        from harness.lab.crash import LAB_HOST

        return self.recording.node(LAB_HOST)

    def owner(self, run_id: str, inventory: str) -> LockOwner:
        recorded: Any = self.recording.session.get("lock_owner")
        try:
            return LockOwner(**recorded)
        except TypeError:
            raise ConfigError(f"{self.path}: session.lock_owner must be the lock owner the run wrote") from None

    def drbd9(self, inventory: Inventory) -> bool | None:
        recorded = self.recording.session.get("drbd9")
        return recorded if isinstance(recorded, bool) else None

    def finish(self) -> None:
        self.clock.uninstall()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
        """A test phase that asked what the recording lacks fails, naming each such command."""
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        missed, self._reported = self.recording.missed[self._reported :], len(self.recording.missed)
        if missed:
            said = "the replay diverged from the recorded session: " + "; ".join(missed)
            report.outcome = "failed"
            report.longrepr = f"{said}\n\n{report.longrepr}" if report.longrepr else said


Transport = LiveTransport | ReplayTransport


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness")
    group.addoption(
        "--record-session",
        metavar="PATH",
        default=None,
        help="keep every command sent to the nodes with its answer, and write them to PATH at the end",
    )
    group.addoption(
        "--replay-session",
        metavar="PATH",
        default=None,
        help="answer every command from the recording PATH (made by --record-session); nothing connects",
    )


def _record_path(path: Path) -> Path:
    """``path`` if a recording can be written there at the end; refused before any node is asked
    (a recording is never written over another file)."""
    if os.path.lexists(path):
        raise pytest.UsageError(f"--record-session {path}: the file exists; choose another file")
    try:
        check_output(path, {}, force=False, option="--record-session")
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    return path


def session_transport(config: pytest.Config) -> Transport:
    """The transport the options ask for; a replay's run id is the recorded one."""
    record, replay = config.getoption("--record-session"), config.getoption("--replay-session")
    if record and replay:
        raise pytest.UsageError("--record-session and --replay-session: give one of them")
    if (record or replay) and (hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None)):
        raise pytest.UsageError("--record-session and --replay-session record one process: run without -n")
    if record:
        return RecordTransport(_record_path(Path(record)))
    if not replay:
        return LiveTransport()
    try:
        transport = ReplayTransport(Path(replay))
    except ConfigError as exc:
        raise pytest.UsageError(f"--replay-session: {exc}") from None
    given = config.getoption("--run-id")
    if given not in (None, transport.run_id):
        raise pytest.UsageError(f"--run-id {given}: the replayed session ran as {transport.run_id}; give no --run-id")
    config.option.run_id = transport.run_id
    transport.clock.install()
    config.pluginmanager.register(transport, "harness-replay-session")
    return transport
