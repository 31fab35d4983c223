"""A lost SSH connection and a rebooted node are told apart from other failures and never retried
silently.

Each test is a case of the fault and bad-input map in tests/RELIABILITY_CASES.md: marked
``reliability_row(N)`` and named ``test_case_NN_*``; select one with ``-k rowNN``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.sysrq import SysrqCrasher
from harness.drbd.errors import DrbdNotReady
from harness.drbd.replication import DrbdReplication
from harness.errors import (
    ConnectionLost,
    HarnessError,
)
from harness.fio.job import FioFailed
from harness.probes.reboot import BOOT_ID_PATH, NodeRebooted, parse_boot_id, reboot_error, watch_reboots
from harness.remote import CommandResult, run_batch
from harness.remote.pool import ConnectionPool
from tests.doubles import (
    LAB,
    Answer,
    FakePool,
    FakeRunner,
    data,
    forbidden,
)
from tests.unit.reliability.support import (
    crash_node,
    sudo_node,
)


@pytest.mark.reliability_row(25)
def test_case_25_dropped_ssh_connection_is_told_apart(tmp_path: Path) -> None:
    node, conn = sudo_node(tmp_path, EOFError())
    with pytest.raises(ConnectionLost, match=r"n1: SSH connection lost or refused: during `uname -n`: EOFError"):
        node.run(["uname", "-n"], timeout=10)
    assert conn.closed and not node.connected  # the next call reconnects
    node2, _ = sudo_node(tmp_path, OSError("Socket is closed"))
    with pytest.raises(ConnectionLost, match="Socket is closed"):
        node2.run_script("true", timeout=10)


@pytest.mark.reliability_row(25)
def test_case_25_batch_cut_short_is_a_lost_connection() -> None:
    class CutShort(FakeRunner):
        def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
            full = super().run_script(script, timeout=timeout, check=check, sudo=sudo)
            return replace(full, stdout=full.stdout[: len(full.stdout) // 2], exit_code=255)

    node = CutShort("a1", batch={"a": Answer("x\n"), "b": Answer("y\n")})
    with pytest.raises(ConnectionLost, match=r"a1: .*batch output incomplete \(missing \['b'\]\); exit 255"):
        run_batch(node, {"a": ["true"], "b": ["true"]}, timeout=10)


@pytest.mark.reliability_row(25)
def test_case_25_a_lost_connection_is_not_retried_by_state_waits() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [ConnectionLost("a1", "reset by peer")]})
    with pytest.raises(ConnectionLost):
        DrbdReplication(node, "single-az").wait_healthy(60)
    assert len(node.calls) == 1


@pytest.mark.reliability_row(29)
def test_case_29_resync_after_a_node_comes_back_is_waited_for_boundedly() -> None:
    """After a reboot (or a crash test's rejoin) the resync is waited for, boundedly."""
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    resync = [
        "drbd/84-events2-now-secondary-synctarget.txt",
        "drbd/84-events2-now-secondary-after-resync-progress.txt",
        "drbd/84-events2-now-secondary-connected.txt",
    ]
    node = FakeRunner("a2", argv={events: [Answer(data(f)) for f in resync]})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    state = DrbdReplication(node, "single-az", clock=lambda: clock[0], sleep=sleep).wait_healthy(60)
    # two pauses, the poll interval's backoff from 0.05 s (harness.remote.polling)
    assert state.healthy and clock[0] == pytest.approx(0.15) and len(node.calls) == 3
    stuck = FakeRunner("a2", argv={events: [Answer(data(resync[0]))]})
    with pytest.raises(DrbdNotReady, match="not healthy after 3 s"):
        DrbdReplication(stuck, "single-az", clock=lambda: clock[0], sleep=sleep).wait_healthy(3)


BOOT_A, BOOT_B = "0b8a4f5e-1c2d-4e3f-9a0b-1c2d3e4f5a6b", "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a"


@pytest.mark.reliability_row(29)
def test_case_29_a_changed_boot_id_is_a_reboot() -> None:
    assert reboot_error({"a1": BOOT_A, "a2": BOOT_B}, {"a1": BOOT_A, "a2": BOOT_B}) is None
    assert reboot_error({"a1": BOOT_A}, {"a1": BOOT_B}) == (
        f"node a1 rebooted during the cell (boot_id {BOOT_A} → {BOOT_B}): tc state and fio are gone"
    )
    assert reboot_error({"a1": BOOT_A}, {}) == "node a1: no boot_id read after the cell"
    # a crash test: the crashed node must have rebooted, the others must not
    assert reboot_error({"a1": BOOT_A, "a2": BOOT_B}, {"a1": BOOT_B, "a2": BOOT_B}, crashed={"a1"}) is None
    assert reboot_error({"a1": BOOT_A}, {"a1": BOOT_A}, crashed={"a1"}) == (
        f"node a1 was crashed but did not reboot (boot_id {BOOT_A} unchanged)"
    )


@pytest.mark.reliability_row(29)
@given(st.uuids(), st.uuids(), st.sampled_from(["", "\n", "  \n"]))
def test_case_29_boot_ids_are_compared_as_uuids(first: object, second: object, tail: str) -> None:
    before = parse_boot_id(f"{first}{tail}")
    after = parse_boot_id(str(second).upper() + tail)  # case and whitespace do not make a reboot
    assert (reboot_error({"n": before}, {"n": after}) is None) == (first == second)


@pytest.mark.reliability_row(29)
def test_case_29_garbage_is_not_a_boot_id() -> None:
    with pytest.raises(HarnessError, match=f"a1: {BOOT_ID_PATH} printed 'cat: .*', not a boot id"):
        parse_boot_id("cat: /proc/sys/kernel/random/boot_id: No such file or directory\n", "a1")


def boot_node(name: str, *boot_ids: str | BaseException) -> FakeRunner:
    """A node answering `cat boot_id` with these values in turn (the last repeats)."""
    answers = [b if isinstance(b, BaseException) else Answer(f"{b}\n") for b in boot_ids]
    return FakeRunner(name, argv={("cat", BOOT_ID_PATH): answers})


@pytest.mark.reliability_row(29)
def test_case_29_a_reboot_during_the_cell_is_an_error() -> None:
    a1, a2 = boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, BOOT_A)
    message = re.escape(f"node a2 rebooted during the cell (boot_id {BOOT_B} → {BOOT_A}): tc state and fio are gone")
    with pytest.raises(NodeRebooted, match=message), watch_reboots([a1, a2]):
        pass
    # the primary's id can come from a batch the cell runs anyway (raw `cat` output)
    a1 = boot_node("a1", BOOT_A)
    with watch_reboots([a1, boot_node("a2", BOOT_B)], known={"a1": f"{BOOT_A}\n"}):
        pass
    assert len(a1.calls) == 1  # read once, on the way out


@pytest.mark.reliability_row(29)
def test_case_29_a_reboot_explains_the_failure_it_caused(monkeypatch: pytest.MonkeyPatch) -> None:
    # a node still down after the failure is read a few times, without waiting here
    monkeypatch.setattr("harness.probes.reboot._BEHIND_PAUSE_S", 0.0)
    lost = ConnectionLost("a2", "during `tc qdisc del dev vec1 root`: EOFError")
    nodes = [boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, BOOT_A)]
    with pytest.raises(NodeRebooted, match="node a2 rebooted during the cell") as info, watch_reboots(nodes):
        raise lost
    assert info.value.__cause__ is lost
    # still booting: the boot_id cannot be read, so the original failure is what is reported
    still_down = ConnectionLost("a2", "cannot connect to 10.213.0.12:22: [Errno 113] No route to host")
    nodes = [boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, still_down)]
    with pytest.raises(ConnectionLost) as original, watch_reboots(nodes):
        raise lost
    assert original.value is lost
    # a failure without a reboot stays itself
    with pytest.raises(FioFailed), watch_reboots([boot_node("a1", BOOT_A), boot_node("a2", BOOT_B)]):
        raise FioFailed("a1: fio exited 1")


@pytest.mark.reliability_row(29)
def test_case_29_a_crashed_node_must_come_back_with_a_new_boot_id_and_drbd_up() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    down = ConnectionLost("a1", "cannot connect to 10.213.0.11:22: [Errno 113] No route to host")
    node = crash_node("a1", boot=f"{BOOT_A}\n")
    node.argv = {
        ("cat", BOOT_ID_PATH): [down, down, Answer(f"{BOOT_B}\n")],
        # the node's boot did not bring DRBD up: events2 knows no resource
        events: [Answer(data("drbd/9-events2-no-resources.txt"))],
        ("drbdadm", "up", "single-az"): [Answer()],
    }
    pool = FakePool({"a1": node})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    crasher = SysrqCrasher(cast(ConnectionPool, pool), LAB.pairs["single-az"], sleep=sleep, clock=lambda: clock[0])
    crasher.prepare("a1")
    crasher.recover("a1")
    assert node.calls[-1] == "drbdadm up single-az" and clock[0] == 10.0  # two polls of 5 s
    assert forbidden(node) == []
    # never back: bounded, then an error naming what was last seen
    gone = crash_node("a1", boot=f"{BOOT_A}\n")
    gone.argv = {("cat", BOOT_ID_PATH): [Answer(f"{BOOT_A}\n")]}
    crasher = SysrqCrasher(
        cast(ConnectionPool, FakePool({"a1": gone})),
        LAB.pairs["single-az"],
        boot_timeout_s=60,
        sleep=sleep,
        clock=lambda: clock[0],
    )
    crasher.prepare("a1")
    with pytest.raises(HarnessError, match=r"a1 did not come back with a new boot_id within 60 s .* the crash did not"):
        crasher.recover("a1")
