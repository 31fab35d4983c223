"""Filesystems: xfs and ext4 made fresh on a scratch device, fio on a pre-allocated file, beside
the raw device (the NVMe study's xfs vs ext4 comparison), and bonnie++ on the same fresh
filesystems (the seed study measured each volume with both tools): its sequential output,
rewrite, input, seeks and create/stat/delete rows sit beside fio's in the table, and the
report's "fio vs bonnie++" table sets the figures that measure the same thing side by side."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from harness.disk.bonnie import BonnieCellResult, BonnieCellRunner, BonnieCellSpec
from harness.disk.cell import DiskCellResult, DiskCellRunner, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, io_job
from harness.plugin.session import HarnessSession
from harness.units import MIB

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


@pytest.fixture
def measure_bonnie(
    harness_session: HarnessSession, request: pytest.FixtureRequest, record_property: Any, harness_repeat: int
) -> Callable[[BonnieCellSpec], BonnieCellResult]:
    """Run one bonnie++ cell and record its figures as JUnit properties (``<row>.<metric>``)."""

    def _measure(spec: BonnieCellSpec) -> BonnieCellResult:
        spec = dataclasses.replace(spec, repeat=harness_repeat)
        result = BonnieCellRunner(DiskCellRunner(harness_session.runner)).run(spec, test_id=request.node.nodeid)
        for key, value in result.properties():
            record_property(key, value)
        return result

    return _measure


@pytest.mark.parametrize("target", ["xfs", "ext4"])
def test_filesystem_bonnie(
    harness_session: HarnessSession,
    measure_bonnie: Callable[[BonnieCellSpec], BonnieCellResult],
    disk_node: str,
    target: str,
) -> None:
    device = harness_session.inventory.nodes[disk_node].scratch_devices[0]
    layout = DiskLayout("fs", (device,), fstype=target)  # type: ignore[arg-type]
    result = measure_bonnie(BonnieCellSpec("filesystems", disk_node, layout))
    block = result.result.phase("seq-output-block")
    assert block.rate is not None and block.rate > 0, "bonnie++ measured no block write rate"
