"""Ctrl-C and SIGTERM: one interrupt, a cleanup no later signal abandons, a forced
exit that names what is left, and undo steps that run on every node at once.

The signal handling end to end (a pytest run signalling itself) is in
``tests/plugin/test_plugin_signals.py``; the lab runs in ``tests/integration/test_kill_on_lab.py``.
"""

from __future__ import annotations

import signal
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import _pytest.hookspec
import pluggy
import pytest

from harness.errors import ConnectionLost, InfraError
from harness.plugin.interrupt import InterruptGuard, mark_interrupted
from harness.remote.command import WAIT_ONLY_MARK, CommandResult
from harness.remote.detached import DetachedJob, stop_script
from harness.remote.pernode import each_node
from harness.runfiles.ledger import Ledger
from harness.safety.lock import ClusterLock, local_owner
from tests.doubles import Answer, FakeRunner, LocalRunner
from tests.unit.reliability.support import RUN_ID


def _ledger(tmp_path: Path) -> Ledger:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    ledger.record("impair-intent", {"node": "a1", "iface": "vec1", "token": "a1-vec1-1"})
    ledger.record("impair-applied", {"node": "a1", "token": "a1-vec1-1"})
    ledger.record("impair-intent", {"node": "a2", "iface": "vec1", "token": "a2-vec1-2"})
    ledger.record("impair-cleared", {"node": "a2", "token": "a2-vec1-2", "problems": []})
    ledger.record("fio-start", {"node": "a1", "cell": "c1", "deadline_s": 36})
    ledger.record("fio-start", {"node": "a3", "cell": "c0", "deadline_s": 36})
    ledger.record("fio-exit", {"node": "a3", "cell": "c0", "rc": 0})
    ledger.record("drbd-disconnect", {"node": "a1", "resource": "single-az"})
    return ledger


@pytest.mark.reliability_row(27)
def test_case_27_the_second_interrupt_waits_and_the_third_exits_naming_what_is_left(tmp_path: Path) -> None:
    said: list[str] = []
    exits: list[int] = []
    ledger = _ledger(tmp_path)
    guard = InterruptGuard(
        leftovers=lambda: (ledger.unfinished(), "harness cleanup --run-id X"), say=said.append, force_exit=exits.append
    )
    guard.running = "scenarios/test_x.py::test_y[a]"
    with pytest.raises(KeyboardInterrupt):
        guard.handle(signal.SIGINT)
    guard.running = None  # pytest goes on to the teardown
    assert guard.describe() == "scenarios/test_x.py::test_y[a] by SIGINT" and said == [] and exits == []
    guard.handle(signal.SIGTERM)  # CI's SIGTERM after its SIGINT: no exception, the cleanup goes on
    assert len(said) == 1 and "cleaning up, please wait" in said[0] and exits == []
    guard.handle(signal.SIGINT)
    assert exits == [130]
    assert (
        "Left: fault on a1 vec1 (a1-vec1-1); fio on a1 (c1); single-az disconnected on a1. "
        "Remove with: harness cleanup --run-id X" in said[1]
    )


@pytest.mark.reliability_row(28)
def test_case_28_undo_steps_run_on_every_node_at_once_and_one_failure_stops_no_other() -> None:
    started: list[float] = []
    done: list[str] = []
    barrier = threading.Barrier(3, timeout=5)

    def step(name: str, fail: bool) -> None:
        started.append(time.monotonic())
        barrier.wait()  # all three must be running at once, or this times out
        if fail:
            raise ConnectionLost(name, "reset by peer")
        done.append(name)

    with pytest.raises(ConnectionLost, match="a2"):
        each_node([(n, lambda n=n: step(n, n == "a2")) for n in ("a1", "a2", "b1")])  # type: ignore[misc]
    assert sorted(done) == ["a1", "b1"]
    with pytest.raises(InfraError, match=r"a1: .*; b1: "):
        barrier.reset()
        each_node([(n, lambda n=n: step(n, n != "a2")) for n in ("a1", "a2", "b1")])  # type: ignore[misc]


@pytest.mark.reliability_row(28)
def test_case_28_stopping_a_job_waits_only_as_long_as_it_lives(tmp_path: Path) -> None:
    # run for real with this machine's sh: a job that ends at SIGTERM is stopped without
    # waiting out the grace (600 s here: the 20 s command timeout would end the test first);
    # one that ignores SIGTERM is killed once the grace is over
    node = LocalRunner()
    pid_file = str(tmp_path / "job.pid")
    for script, grace in (("sleep 31", 600.0), ("trap '' TERM; sleep 32", 0.3)):
        job = DetachedJob.of_script(script, deadline_s=60, pid_file=pid_file)
        node.run_script(job.start_script(), timeout=10)
        session = node.run_script(f"sleep 0.2; cat {pid_file}", timeout=10).stdout.strip()
        node.run_script(stop_script(pid_file, grace_s=grace), timeout=20)
        states = node.run_script(f"ps -o stat= -s {session} || true", timeout=5).stdout.split()
        assert [s for s in states if not s.startswith("Z")] == [], script


@pytest.mark.reliability_row(28)
def test_case_28_only_a_wait_is_abandoned_on_interrupt() -> None:
    job = DetachedJob.of_argv(["fio", "--name=x"], deadline_s=60, pid_file="/run/harness/r/fio.pid", rc_file="/x.rc")
    assert WAIT_ONLY_MARK in job.wait_script(5.0)
    for changing in (job.start_script(), job.stop_script()):
        assert WAIT_ONLY_MARK not in changing


#: the shapes pytest 9 wrote: a run interrupted in its second test's call (an empty testcase,
#: tests/plugin/test_plugin_signals.py), and one interrupted in the last test's teardown
#: (--verify-after on the lab: the testcase exists already)
_IN_CALL = (
    b'<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" '
    b'errors="0" failures="0" skipped="0" tests="1" time="0.171"><testcase classname="test_signal" '
    b'name="test_done" time="0.000" /><testcase time="0.000" /></testsuite></testsuites>'
)
_IN_TEARDOWN = (
    b'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
    b'skipped="0" tests="1"><testcase classname="scenarios.test_replicated_write" '
    b'name="test_replicated_write[multi-az-randwrite-4k-nj1-qd1]" time="7.910" /></testsuite></testsuites>'
)


@pytest.mark.reliability_row(27)
@pytest.mark.parametrize(
    ("written", "nodeid", "cases", "tests"),
    [
        (_IN_CALL, "test_signal.py::test_cell", 2, "2"),
        (
            _IN_TEARDOWN,
            "scenarios/test_replicated_write.py::test_replicated_write[multi-az-randwrite-4k-nj1-qd1]",
            1,
            "2",
        ),
    ],
    ids=["in-call", "in-teardown"],
)
def test_case_27_the_interrupted_test_is_an_interrupted_testcase_in_junit(
    written: bytes, nodeid: str, cases: int, tests: str
) -> None:
    marked = mark_interrupted(written, nodeid, f"{nodeid} by SIGTERM")
    root = ET.fromstring(marked)
    found = list(root.iter("testcase"))
    assert len(found) == cases and all(case.get("name") for case in found)
    errors = [e for e in root.iter("error") if e.get("type") == "interrupted"]
    assert [e.get("message") for e in errors] == [f"interrupted: {nodeid} by SIGTERM"]
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("errors"), suite.get("tests")) == ("1", tests)


class _SignalledDuringLock(FakeRunner):
    """A node whose lock round trip a Ctrl-C cuts short: the lock may be taken on the node."""

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        if "if mkdir /run/harness/lock" in script:
            self.calls.append(script)
            raise KeyboardInterrupt
        return super().run_script(script, timeout=timeout, check=check, sudo=sudo)


@pytest.mark.reliability_row(27)
def test_case_27_a_lock_taken_while_interrupted_is_released() -> None:
    # a node joins the held list before its lock round trip answers, so an interrupt inside
    # the round trip cannot leave the lock behind
    a1 = FakeRunner("a1", scripts=[("if mkdir /run/harness/lock", Answer("ACQUIRED\n")), ("grep -qF", Answer())])
    a2 = _SignalledDuringLock("a2", scripts=[("grep -qF", Answer())])
    lock = ClusterLock(local_owner(RUN_ID, "inv.yaml"))
    with pytest.raises(KeyboardInterrupt):
        lock.acquire([a1, a2])
    assert [n.name for n in lock.held] == ["a1", "a2"]
    assert lock.release() == []
    for node in (a1, a2):  # released on both, and only if the owner is this run
        assert f'grep -qF \'"run_id": "{RUN_ID}"\'' in node.calls[-1] and "rm -rf /run/harness/lock" in node.calls[-1]


def test_case_27_the_guard_is_a_plugin_pytest_can_set_aside() -> None:
    """pytest keeps plugins in sets (a conftest's hooks are subset out for items elsewhere): an
    unhashable guard stopped a whole `./run tests` with an INTERNALERROR at the first test after
    a directory with a conftest."""
    manager = pluggy.PluginManager("pytest")
    manager.add_hookspecs(_pytest.hookspec)
    guard = InterruptGuard()
    manager.register(guard, "harness-interrupt")
    other = manager.subset_hook_caller("pytest_runtestloop", remove_plugins=[guard])
    assert other.get_hookimpls() == []
