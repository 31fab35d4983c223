"""numjobs sweep on a raw scratch device: how 4k random writes scale with parallel jobs (1 to
32), as the NVMe studies swept them; the report plots the curve."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.disk.cell import DiskCellResult, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.workloads import for_profile, io_job
from harness.plugin.session import HarnessSession

NUMJOBS = [1, 2, 4, 8, 16, 32]


@pytest.mark.parametrize("numjobs", NUMJOBS, ids=[f"nj{n}" for n in NUMJOBS])
def test_numjobs_sweep(
    harness_session: HarnessSession,
    measure_disk: Callable[[DiskCellSpec], DiskCellResult],
    disk_node: str,
    numjobs: int,
) -> None:
    device = harness_session.inventory.nodes[disk_node].scratch_devices[0]
    workload = for_profile(harness_session.profile, io_job("randwrite", 4096, numjobs=numjobs))
    result = measure_disk(DiskCellSpec("numjobs_sweep", disk_node, DiskLayout("raw", (device,)), workload))
    assert result.iops > 0
