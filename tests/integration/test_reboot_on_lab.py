"""A node that reboots in the middle of a cell, on the lab.

The secondary of the single-az pair is crashed (SIGKILL of its guest: a power cut) and booted
again while fio writes through an impairment on both nodes.  The cell must fail with
``NodeRebooted`` naming it, its undo must still run on the node that stayed up, both nodes are
rechecked for what the run left, and nothing is left.  The pair resyncs before the test ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.bench.killtrial import node_leftovers
from harness.cell import CellRunner
from harness.lab.lifecycle import Lab
from harness.probes.reboot import NodeRebooted

from .conftest import CellInThread, impaired_cell

pytestmark = [pytest.mark.lab]


@pytest.fixture
def resynced(cell_runner: CellRunner) -> Iterator[CellRunner]:
    yield cell_runner
    # the rebooted secondary rejoins with the writes it missed: the next test starts healthy
    cell_runner.replication("single-az", "a1").wait_healthy(300)


def test_a_node_rebooted_mid_cell_fails_it_and_leaves_nothing(default_lab: Lab, resynced: CellRunner) -> None:
    runner = resynced
    cell = CellInThread(runner, impaired_cell("reboot"))
    cell.wait_for("fio-running")
    assert cell.worker.is_alive(), cell.outcome
    default_lab.crash_guest("a2")  # a power cut of the secondary while fio writes...
    default_lab.restart_guest("a2")  # ...and it boots again, keeping its disks
    error = cell.error(timeout_s=240)
    print(f"the cell said: {error}")
    assert isinstance(error, NodeRebooted), error
    assert "node a2 rebooted during the cell" in str(error)
    assert "rechecked after the reboot: a1: nothing of this run left / a2: nothing of this run left" in str(error)
    assert node_leftovers(runner.inventory, runner.pool, ["a1", "a2"]) == []
