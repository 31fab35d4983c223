"""RAID0 striping over N scratch volumes (md, 512 KiB chunks): the scaling table over N that
the EBS studies built by hand (1, 2, 4, 8, 16 volumes).  N runs over the powers of two up to
the disk-study nodes' number of scratch devices (the smallest, when they differ), and that
number itself."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.disk.cell import DiskCellResult, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, io_job
from harness.plugin import SESSION_KEY, disk_study_nodes
from harness.plugin.session import HarnessSession
from harness.units import MIB

WORKLOADS = [io_job("randwrite", 4096, numjobs=4, iodepth=8), io_job("write", MIB, iodepth=16)]
MAX_STRIPES = 16


def stripe_counts(devices: int) -> list[int]:
    counts = [n for n in (1, 2, 4, 8, 16) if n <= min(devices, MAX_STRIPES)]
    return counts + ([devices] if 1 < devices <= MAX_STRIPES and devices not in counts else [])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "stripes" in metafunc.fixturenames:
        inventory = metafunc.config.stash[SESSION_KEY].inventory
        fewest = min((len(inventory.nodes[n].scratch_devices) for n in disk_study_nodes(inventory)), default=0)
        counts = stripe_counts(fewest)
        metafunc.parametrize("stripes", counts, ids=[f"x{n}" for n in counts])


@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
def test_raid0(
    harness_session: HarnessSession,
    measure_disk: Callable[[DiskCellSpec], DiskCellResult],
    disk_node: str,
    workload: WorkloadSpec,
    stripes: int,
) -> None:
    devices = harness_session.inventory.nodes[disk_node].scratch_devices
    layout = DiskLayout("raid0", tuple(devices[:stripes]))
    result = measure_disk(DiskCellSpec("raid0", disk_node, layout, for_profile(harness_session.profile, workload)))
    assert result.iops > 0
