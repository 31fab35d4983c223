"""Online verify catches replicas that differ (LINBIT's pattern).

The test, not the harness, overwrites one 4 KiB block of the secondary's *backing* disk on the
lab's scratch resource, under DRBD's feet: the replicas now differ where DRBD does not know it.
Online verify must find exactly that block; a disconnect/connect then resyncs what verify
marked, and a second verify finds the replicas identical.  The harness itself never writes a
backing device; only this test does, on the embedded lab.
"""

from __future__ import annotations

import pytest

from harness.cell import CellRunner

pytestmark = [pytest.mark.lab]

MIB = 1024 * 1024
BLOCK_AT = 100 * MIB  # well inside the data area (internal metadata is at the end of the disk)


def test_online_verify_finds_a_block_changed_under_drbd(cell_runner: CellRunner) -> None:
    pair = cell_runner.inventory.pairs["single-az"]
    primary = cell_runner.replication("single-az", pair.primary)
    secondary = cell_runner.replication("single-az", pair.secondary)
    primary.wait_healthy(60)
    clean = primary.verify(120.0, start_bytes=BLOCK_AT - MIB, stop_bytes=BLOCK_AT + MIB)
    assert clean.identical, clean.describe()
    backing = cell_runner.pool.get(pair.secondary).run(["drbdadm", "sh-ll-dev", "single-az"], timeout=30).stdout
    assert backing.strip() == "/dev/ubda"
    cell_runner.pool.get(pair.secondary).run(
        [
            "dd", "if=/dev/urandom", "of=/dev/ubda", "bs=4096", f"seek={BLOCK_AT // 4096}", "count=1",
            "oflag=direct", "conv=notrunc",
        ],
        timeout=30,
    )  # fmt: skip
    try:
        found = primary.verify(120.0, start_bytes=BLOCK_AT - MIB, stop_bytes=BLOCK_AT + MIB)
        assert not found.identical
        assert found.out_of_sync_kib == 4, found.describe()
    finally:
        # verify marks what differs out of sync; a reconnect resyncs it from the primary
        secondary.disconnect()
        secondary.connect()
        primary.wait_healthy(120)
    again = primary.verify(120.0, start_bytes=BLOCK_AT - MIB, stop_bytes=BLOCK_AT + MIB)
    assert again.identical, again.describe()
