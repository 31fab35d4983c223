"""md-nbd pairs (md RAID1 over NBD, SIOS DataKeeper's architecture) on the lab, beside DRBD:
a1 → a2 inside az-a, a3 (Debian 11) → b1 (Debian 13) across.  Cells reach them through the
replication seam only, as they reach DRBD."""

from __future__ import annotations

import pytest

from harness.cell import CellRunner, CellSpec
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile

pytestmark = [pytest.mark.lab]

SECONDARY = {"single-az-md-nbd": "a2", "multi-az-md-nbd": "b1"}


@pytest.mark.parametrize("md_pair", sorted(SECONDARY))
def test_a_replicated_cell_runs_on_an_md_nbd_pair(cell_runner: CellRunner, md_pair: str) -> None:
    job = for_profile(PROFILES["quick"], write_job("randwrite", 4096))
    result = cell_runner.run(CellSpec("itest", md_pair, job))
    assert result.iops > 0 and result.metadata["replication"] == "md-nbd"
    # the export served the primary for the whole cell, and the primary still answers it
    assert cell_runner.replication(md_pair, SECONDARY[md_pair]).state().healthy


def test_an_impaired_cell_slows_the_cross_az_md_nbd_pair(cell_runner: CellRunner) -> None:
    job = for_profile(PROFILES["quick"], write_job("write", 4096))
    plain = cell_runner.run(CellSpec("itest", "multi-az-md-nbd", job))
    slowed = cell_runner.run(
        CellSpec("itest", "multi-az-md-nbd", job, impairment=NetemProfile.from_rtt("rtt8ms", 0.008))
    )
    # synchronous QD1 writes wait for the NBD leg: 8 ms more per round trip must show
    assert slowed.iops < plain.iops * 0.6, (plain.iops, slowed.iops)


def test_a_dropped_leg_resyncs_from_the_bitmap_and_both_legs_compare_equal(cell_runner: CellRunner) -> None:
    primary = cell_runner.replication("single-az-md-nbd", "a1")
    primary.disconnect()
    try:
        dropped = primary.state()
        assert not dropped.healthy and "the NBD leg was disconnected on request" in dropped.problems()
        node = cell_runner.pool.get("a1")
        # past the label zone, as fio writes: random data at sector 0 can read as a partition label
        node.run(
            ["dd", "if=/dev/urandom", "of=/dev/md/single-az-md", "bs=1M", "seek=1", "count=64", "oflag=direct"],
            timeout=120,
        )
        assert not primary.state().healthy  # the keeper leaves a leg taken out on request alone
    finally:
        primary.connect()
    assert primary.wait_healthy(120).healthy
    check = primary.verify(300, stop_bytes=128 << 20)
    assert check.identical, check.describe()
