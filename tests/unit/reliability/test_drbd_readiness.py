"""DRBD's state: not ready, changing during a run, or split brain is refused or invalidates the
cell, never repaired (rows 14, 22, 32).

Rows of the fault table in tests/RELIABILITY_CASES.md; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a row with ``-k rowNN``.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cell import CellSpec
from harness.cell.judge import validity
from harness.drbd.errors import DrbdNotReady
from harness.drbd.fold import resource_from_events2
from harness.drbd.replication import DrbdReplication
from harness.drbd.state import Connection, ResourceState
from harness.drbd.validity import check_capture
from harness.fio.spec import WorkloadSpec
from tests.doubles import (
    Answer,
    FakeRunner,
    data,
    forbidden,
    mutations,
    recorded_replication,
)
from tests.unit.reliability.support import (
    RUN_ID,
    finding,
    lab_node,
    preflight,
)

NOT_READY = [
    ("drbd/84-events2-now-primary-standalone.txt", "connection to node 0 is StandAlone"),
    ("drbd/84-events2-now-primary-standalone-outofsync.txt", "replication to node 0 volume 0 is Off"),
    ("drbd/84-events2-now-primary-syncsource.txt", "replication to peer volume 0 is SyncSource"),
    ("drbd/84-events2-now-secondary-synctarget.txt", "local disk of volume 0 is Inconsistent"),
    ("drbd/84-events2-now-secondary-connected.txt", "a1 is Secondary, the inventory says Primary"),
    ("drbd/9-events2-no-resources.txt", "resource single-az not configured on a1"),
    # a3's multi-az resource with its peer gone: the single-az resource is not on this node at all
    ("drbd/84-events2-now-primary-peer-gone-connecting.txt", "resource single-az not configured on a1"),
]


@pytest.mark.reliability_row(14)
@pytest.mark.parametrize(("events", "problem"), NOT_READY, ids=[Path(e).stem for e, _ in NOT_READY])
def test_case_14_drbd_not_ready_is_refused_and_never_repaired(events: str, problem: str) -> None:
    a1, a2 = lab_node("a1", events=events), lab_node("a2")
    report = preflight({"a1": a1, "a2": a2})
    drbd = finding(report, "single-az (a1)", "drbd")
    assert drbd.status == "BLOCK" and problem in drbd.detail
    assert mutations(a1, a2) == [] and forbidden(a1, a2) == []


@pytest.mark.reliability_row(14)
def test_case_14_healthy_resource_passes() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert finding(report, "single-az (a1)", "drbd").detail == "Connected UpToDate/UpToDate Primary/Secondary"


@pytest.mark.reliability_row(14)
def test_case_14_bounded_wait_then_refusal_without_repair() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [Answer(data("drbd/84-events2-now-primary-syncsource.txt"))]})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    replication = DrbdReplication(node, "single-az", clock=lambda: clock[0], sleep=sleep)
    with pytest.raises(DrbdNotReady, match=r"not healthy after 5 s.*SyncSource") as info:
        replication.wait_healthy(5)
    assert info.value.exit_code == 3 and clock[0] == pytest.approx(5.0)
    assert set(node.calls) == {shlex.join(events)}  # it only looked


@pytest.mark.reliability_row(22)
@pytest.mark.parametrize(
    ("capture", "when"),
    [
        ("84-events2-stream-primary-disconnect-resync.txt", "2026-11-21T09:48:02.743260"),
        ("84-events2-stream-secondary-disconnect-resync.txt", "2026-11-21T09:48:02.740644"),
    ],
)
def test_case_22_drbd_state_change_during_a_run_invalidates_it(capture: str, when: str) -> None:
    text = data(f"drbd/{capture}")
    verdict = check_capture(text, resource="single-az")
    assert not verdict.valid and when in verdict.reason and verdict.event is not None
    spec = CellSpec("s", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20))
    watch = recorded_replication(FakeRunner("a1")).watch(RUN_ID, spec.id, max_duration_s=60)

    def judged(capture: str) -> str:
        return validity(spec, watch.judge(f"harness-watch alive=1\n{capture}")).verdict

    in_window = validity(spec, watch.judge(f"harness-watch alive=1\n{text}"))
    assert in_window.verdict == "inconclusive" and when in in_window.reason
    assert judged("") == "inconclusive"
    assert judged(data("drbd/84-events2-now-primary-connected.txt")) == "pass"
    # the watcher was gone before fio ended: the end of the window was not seen
    gone = watch.judge(f"harness-watch alive=0\n{data('drbd/84-events2-now-primary-connected.txt')}")
    assert validity(spec, gone).verdict == "inconclusive"
    disconnected = CellSpec("s", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20), mode="disconnected")
    assert validity(disconnected, None).reason == "disconnected by design"


@pytest.mark.reliability_row(32)
def test_case_32_standalone_after_a_partition_is_reported_not_resolved() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [Answer(data("drbd/84-events2-now-primary-standalone-outofsync.txt"))]})
    with pytest.raises(DrbdNotReady, match=r"StandAlone does not reconnect by itself.*never forces a connection"):
        DrbdReplication(node, "single-az").wait_healthy(2)
    assert set(node.calls) == {shlex.join(events)}  # no connect, no --discard-my-data


@pytest.mark.reliability_row(32)
def test_case_32_split_brain_flag_is_a_problem_and_fails_at_once() -> None:
    standalone = resource_from_events2(data("drbd/84-events2-now-primary-standalone.txt"), "single-az")
    assert standalone is not None
    split = replace(standalone, connections=(Connection(0, "peer", "StandAlone", sync_state="SplitBrain"),))
    assert "split brain with peer" in split.problems() and split.describe().endswith("SplitBrain")

    class SplitBrained(DrbdReplication):
        def state(self, *, timeout: float | None = None) -> ResourceState:
            return split

    node = FakeRunner("a1")
    with pytest.raises(DrbdNotReady, match=r"split brain .*the harness does not resolve it"):
        SplitBrained(node, "single-az", sleep=lambda _s: None).wait_healthy(300)
    assert node.calls == []
