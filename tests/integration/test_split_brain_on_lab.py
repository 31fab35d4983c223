"""Split brain reproduced on the lab (LINBIT's pattern, the lab only).

The test cuts single-az's replication path with the harness's own partition fault, writes on
the primary, then promotes the secondary, writes there and demotes it: both sides moved on
from the same data generation.  When the path heals, DRBD refuses the connection (StandAlone
on both) and the harness must name the split brain at once, from both nodes' generations,
without touching the data.  The test itself resolves it afterwards (discarding the
secondary's write), which the harness never does.
"""

from __future__ import annotations

import time
from typing import Literal

import pytest

from harness.cell import CellRunner
from harness.cell.partition import PARTITION, wait_resynced
from harness.errors import SplitBrain
from harness.remote import Runner

pytestmark = [pytest.mark.lab]

WRITE = ["dd", "if=/dev/urandom", "of=/dev/drbd0", "bs=4096", "count=1", "oflag=direct"]


def test_split_brain_is_named_and_left_alone(cell_runner: CellRunner) -> None:
    inv = cell_runner.inventory
    pair = inv.pairs["single-az"]
    a1, a2 = cell_runner.pool.get(pair.primary), cell_runner.pool.get(pair.secondary)
    primary = cell_runner.replication("single-az", pair.primary)
    secondary = cell_runner.replication("single-az", pair.secondary)
    primary.wait_healthy(60)
    impairer = cell_runner.faults.impairer
    sides: tuple[tuple[Runner, str, Literal["primary", "secondary"]], ...] = (
        (a1, pair.secondary, "primary"),
        (a2, pair.primary, "secondary"),
    )
    cuts = [
        (node, impairer.apply(node, iface=inv.nodes[node.name].replication.iface,
                              peer_ip=inv.nodes[peer].replication.ip, profile=PARTITION, hold_s=120, role=role))
        for node, peer, role in sides
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while primary.state().connected or secondary.state().connected:
            assert time.monotonic() < deadline, "the cut did not disconnect the pair"
            time.sleep(0.5)
        a1.run(WRITE, timeout=30)
        secondary.promote()
        a2.run([*WRITE, "seek=2"], timeout=30)
        secondary.demote()
    finally:
        for node, applied in cuts:
            if applied is not None:
                impairer.clear(node, applied)
    try:
        started = time.monotonic()
        with pytest.raises(SplitBrain, match=r"split brain on single-az: a1 .* a2 .*a human must"):
            wait_resynced(primary, secondary)
        assert time.monotonic() - started < 60, "split brain was not named at once"
        # named from the generations before DRBD's own handshake; DRBD then agrees and refuses
        # the connection itself (StandAlone on both, "Split-Brain detected but unresolved"),
        # and nothing resolves it: both sides keep their own writes
        deadline = time.monotonic() + 60
        while {primary.state().words[0], secondary.state().words[0]} != {"StandAlone"}:
            assert time.monotonic() < deadline, "DRBD did not refuse the connection"
            time.sleep(1.0)
        assert primary.diverged_from(secondary) is not None
    finally:
        # the test's own recovery (never the harness's): keep the primary's data
        a2.run(["drbdadm", "disconnect", "single-az"], timeout=30, check=False)
        a2.run(["drbdadm", "connect", "--discard-my-data", "single-az"], timeout=30)
        a1.run(["drbdadm", "disconnect", "single-az"], timeout=30, check=False)
        a1.run(["drbdadm", "connect", "single-az"], timeout=30)
        primary.wait_healthy(120)
