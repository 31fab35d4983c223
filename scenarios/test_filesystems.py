"""Filesystems: xfs and ext4 made fresh on a scratch device, fio on a pre-allocated file, beside
the raw device (the NVMe study's xfs vs ext4 comparison)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.disk.cell import DiskCellResult, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.spec import WorkloadSpec
from harness.plugin.session import HarnessSession
from harness.workloads import MIB, for_profile, io_job

WORKLOADS = [io_job("randwrite", 4096, numjobs=4, iodepth=8), io_job("write", MIB, iodepth=16)]
TARGETS = ["raw", "xfs", "ext4"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
def test_filesystem(
    harness_session: HarnessSession,
    measure_disk: Callable[[DiskCellSpec], DiskCellResult],
    disk_node: str,
    workload: WorkloadSpec,
    target: str,
) -> None:
    device = harness_session.inventory.nodes[disk_node].scratch_devices[0]
    layout = DiskLayout("raw", (device,)) if target == "raw" else DiskLayout("fs", (device,), fstype=target)  # type: ignore[arg-type]
    result = measure_disk(
        DiskCellSpec("filesystems", disk_node, layout, for_profile(harness_session.profile, workload))
    )
    assert result.iops > 0
