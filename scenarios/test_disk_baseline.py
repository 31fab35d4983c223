"""The bottom of the stack: what a node's raw scratch device does, before DRBD or the network.

The studies this product grew from measured each volume alone with fio: 4k sequential and
random read and write IOPS, large-block bandwidth, and a block-size-range workload modelled on
a real service.  Here every one of those runs on the first scratch device of each disk-study
node (one node per instance type); the table's rows are the workloads, its columns the node
and layout (``a1 (raw)``), as in the studies.  Reads run only on scratch devices, under the
same guard as writes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.disk.cell import DiskCellResult, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, io_job
from harness.plugin.session import HarnessSession
from harness.units import MIB

WORKLOADS = [
    io_job("randwrite", 4096, numjobs=4, iodepth=8),
    io_job("randread", 4096, numjobs=4, iodepth=8),
    io_job("write", 4096, numjobs=4, iodepth=8),
    io_job("read", 4096, numjobs=4, iodepth=8),
    io_job("write", MIB, iodepth=16),
    io_job("read", MIB, iodepth=16),
    io_job("randwrite", 4096, numjobs=4, iodepth=4, bs_max=32 * 1024),
]


@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
def test_disk_baseline(
    harness_session: HarnessSession,
    measure_disk: Callable[[DiskCellSpec], DiskCellResult],
    disk_node: str,
    workload: WorkloadSpec,
) -> None:
    device = harness_session.inventory.nodes[disk_node].scratch_devices[0]
    spec = DiskCellSpec(
        "disk_baseline", disk_node, DiskLayout("raw", (device,)), for_profile(harness_session.profile, workload)
    )
    result = measure_disk(spec)
    assert result.iops > 0 and result.bw_mib_s > 0
