"""Concurrent runs are refused by the cluster lock, and durations never mix clocks.

Each test is a case of the fault and bad-input map in tests/RELIABILITY_CASES.md: marked
``reliability_row(N)`` and named ``test_case_NN_*``; select one with ``-k rowNN``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.fio.outcome import FioOutcome
from harness.fio.runner import FioRunner
from harness.fio.spec import WorkloadSpec
from harness.runfiles.ledger import Ledger
from harness.safety.lock import ClusterLock, LockHeld, LockOwner, local_owner, read_lock
from tests.doubles import (
    Answer,
    FakeRunner,
    data,
)
from tests.unit.reliability.support import (
    OTHER_RUN_ID,
    RUN_ID,
    finding,
    lab_node,
    preflight,
)


def _fio_outcome(tmp_path: Path, times: str) -> FioOutcome:
    """A job over a node whose exit round trip prints ``times`` as fio's start and end stamps
    (and a recorded fio report as its JSON)."""
    node = FakeRunner(
        "a1",
        scripts=[("", Answer())],
        batch={
            "rc": Answer("0\n"),
            "fio": Answer(data("fio/fio-3.33-randwrite-4k-libaio.json")),
            "times": Answer(times),
        },
    )
    fio = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID))
    return fio.start(node, WorkloadSpec(name="w", rw="randwrite", size=1 << 20), "/dev/drbd0", "c").wait()


@pytest.mark.reliability_row(30)
def test_case_30_durations_never_mix_clocks(tmp_path: Path) -> None:
    # fio's wall time comes from two stamps of the *node's* clock, whatever its offset from ours
    skewed = f"{time.time() + 3600:.9f}\n{time.time() + 3612.25:.9f}\n"
    seconds = _fio_outcome(tmp_path, skewed).wall_s
    assert seconds is not None and abs(seconds - 12.25) < 0.01
    assert _fio_outcome(tmp_path, "1763718300.5\n").wall_s is None  # fio never ended: no duration
    # the lock lease compares the node's `date` with the node's file mtime
    watchdog = ClusterLock(local_owner(RUN_ID, "inv.yaml"))._watchdog()
    assert "$(date +%s) - $(stat -c %Y /run/harness/lock/owner.json)" in watchdog


def _holder(*, host: str = "ctl-other", boot_id: str = "b0", pid: int = 4242) -> LockOwner:
    """The owner record another run's harness wrote (LockOwner's own JSON format)."""
    return LockOwner(OTHER_RUN_ID, "ci", host, boot_id, pid, time.time() - 120, "inventories/lab.yaml")


def lock_node(name: str, try_answer: str) -> FakeRunner:
    return FakeRunner(name, scripts=[("if mkdir /run/harness/lock", Answer(try_answer)), ("grep -qF", Answer())])


@pytest.mark.reliability_row(31)
def test_case_31_concurrent_run_is_refused_naming_the_holder() -> None:
    a1 = lock_node("a1", "ACQUIRED\n")
    a2 = lock_node("a2", "HELD\n" + _holder().to_json() + "\n")
    lock = ClusterLock(local_owner(RUN_ID, "inv.yaml"))
    with pytest.raises(LockHeld) as info:
        lock.acquire([a2, a1])  # any order: nodes are locked in sorted order
    assert str(info.value) == (
        f"a2 is locked by run {OTHER_RUN_ID} by ci@ctl-other pid 4242, 2 min ago (inventories/lab.yaml); "
        "wait for it to finish, or stop it"
    )
    assert info.value.exit_code == 3
    assert "if mkdir /run/harness/lock" in a1.calls[0] and len(a2.calls) == 1
    # what this run took is given back, and only if it is still ours
    assert f'"run_id": "{RUN_ID}"' in a1.calls[1] and "rm -rf /run/harness/lock" in a1.calls[1]
    assert lock.held == []


@pytest.mark.reliability_row(31)
def test_case_31_stale_lock_is_named_stale_and_never_taken_over() -> None:
    me = local_owner(RUN_ID, "inv.yaml")
    dead = _holder(host=me.host, boot_id=me.boot_id, pid=2**30)  # beyond pid_max: no such process
    a1 = lock_node("a1", "HELD\n" + dead.to_json() + "\n")
    with pytest.raises(LockHeld, match=r"its owner process is gone \(stale\): .*--break-lock"):
        ClusterLock(me).acquire([a1])
    assert len(a1.calls) == 1
    garbled = lock_node("a1", "HELD\n<no owner file>\n")
    with pytest.raises(LockHeld, match="exists with no readable owner"):
        ClusterLock(me).acquire([garbled])


@pytest.mark.reliability_row(31)
def test_case_31_preflight_shows_the_lock_holder() -> None:
    holder = _holder()
    a1 = lab_node("a1")
    a1.scripts[1] = ("owner.json 2>/dev/null ||", Answer(holder.to_json() + "\n"))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    lock = finding(report, "a1", "lock")
    assert lock.status == "BLOCK" and lock.detail.startswith(f"held: run {OTHER_RUN_ID} by ci@ctl-other pid 4242")
    assert read_lock(FakeRunner("a1", scripts=[("owner.json", Answer(holder.to_json() + "\n"))])) == holder
