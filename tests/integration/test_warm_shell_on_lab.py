"""The warm shell on a real node: a command's output, errors and exit code come back as over a
fresh channel, a command cannot read the next one, the node-side deadline still holds, a
second thread is not blocked by the first, and a shell that died is not trusted with a result."""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Iterator

import pytest

from harness.errors import CommandTimeout, ConnectionLost
from harness.inventory import Inventory
from harness.lab.lifecycle import Lab
from harness.remote import SshNode, run_batch

pytestmark = [pytest.mark.lab]


@pytest.fixture
def a1(default_lab: Lab, lab_inventory: Inventory) -> Iterator[SshNode]:
    node = SshNode("a1", lab_inventory.nodes["a1"].ssh)
    yield node
    node.close()


def test_output_errors_and_exit_code_come_back_apart(a1: SshNode) -> None:
    res = a1.run_script("printf out; printf err >&2; exit 3", timeout=10, check=False)
    assert (res.exit_code, res.stdout, res.stderr) == (3, "out", "err")
    big = a1.run_script("head -c 3000000 /dev/zero | tr '\\0' x; head -c 500000 /dev/zero | tr '\\0' y >&2", timeout=30)
    assert (big.stdout, big.stderr) == ("x" * 3_000_000, "y" * 500_000)
    batch = run_batch(a1, {"kernel": ["uname", "-s"], "missing": ["cat", "/nonexistent"]}, timeout=10)
    assert batch["kernel"].stdout == "Linux\n"
    assert batch["missing"].exit_code == 1 and "/nonexistent" in batch["missing"].stderr


def test_a_command_reading_stdin_gets_nothing_of_the_commands_after_it(a1: SshNode) -> None:
    assert a1.run_script("cat; echo read-nothing", timeout=10).stdout == "read-nothing\n"
    assert a1.run(["echo", "next"], timeout=10).stdout == "next\n"


def test_the_node_side_deadline_still_stops_a_command_and_the_node_stays_usable(a1: SshNode) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimeout):
        a1.run(["sleep", "30.123"], timeout=2)
    assert time.monotonic() - started < 10
    assert a1.run(["pgrep", "-f", "^sleep 30.123$"], timeout=10, check=False).stdout == ""
    assert a1.run(["echo", "after"], timeout=10).stdout == "after\n"


def test_a_second_thread_runs_beside_a_long_command(a1: SshNode) -> None:
    a1.run(["true"], timeout=10)  # the warm shell exists
    long = threading.Thread(target=a1.run, args=(["sleep", "3"],), kwargs={"timeout": 10})
    long.start()
    time.sleep(0.5)
    started = time.monotonic()
    assert a1.run(["echo", "beside"], timeout=10).stdout == "beside\n"
    assert time.monotonic() - started < 2.5, "the second command waited for the first"
    long.join()


def test_a_shell_killed_mid_command_is_a_lost_connection_then_a_new_shell(a1: SshNode) -> None:
    with pytest.raises(ConnectionLost):
        # kill the warm shell itself (the parent of the command's `timeout`) mid-command
        a1.run_script("kill -9 $(ps -o ppid= -p $(ps -o ppid= -p $$)); sleep 5", timeout=20)
    assert a1.run(["echo", "again"], timeout=10).stdout == "again\n"


def test_an_interrupt_beside_a_busy_warm_shell_is_raised_once_the_command_ended(a1: SshNode) -> None:
    """The warm shell is busy (the lock's heartbeat), so a start takes a fresh channel: the
    interrupt must still end the call, and only once the command ended, so that the start it
    interrupted is known and its undo, which runs next, stops what it started."""
    a1.run(["true"], timeout=10)
    long = threading.Thread(target=a1.run, args=(["sleep", "3"],), kwargs={"timeout": 10})
    long.start()
    time.sleep(0.5)
    mark = f"/tmp/harness-interrupt-{time.monotonic_ns()}"
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            a1.run_script(f"sleep 1; echo ended > {mark}", timeout=10)
        assert a1.run(["cat", mark], timeout=10).stdout == "ended\n"
        assert a1.run(["echo", "after"], timeout=10).stdout == "after\n"
    finally:
        timer.cancel()
        long.join()
        a1.run(["rm", "-f", mark], timeout=10)
