"""Filled devices: random writes on a scratch device filled to 99 % first, with fio's
steady-state detection, beside the same writes on the device as it comes (the NVMe study
filled its device to 99 % before random writes).  Whether steady state was attained is
reported per cell (``steady_state`` in the samples, the JUnit properties and the CSV)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from harness.disk.cell import DiskCellResult, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.fio.options import SteadyState
from harness.fio.workloads import for_profile, io_job
from harness.plugin.session import HarnessSession

FILL = [None, 99]


@pytest.mark.parametrize("fill_pct", FILL, ids=["as-is" if f is None else f"fill{f}" for f in FILL])
def test_precondition(
    harness_session: HarnessSession,
    measure_disk: Callable[[DiskCellSpec], DiskCellResult],
    disk_node: str,
    fill_pct: int | None,
) -> None:
    device = harness_session.inventory.nodes[disk_node].scratch_devices[0]
    workload = for_profile(harness_session.profile, io_job("randwrite", 4096, numjobs=4, iodepth=8))
    assert workload.runtime_s is not None
    # IOPS within ±10 % of their mean over the last part of the run (fio --ss=iops:10%)
    steady = SteadyState("iops", 10.0, duration_s=max(2, workload.runtime_s // 2))
    workload = dataclasses.replace(workload, steady_state=steady)
    result = measure_disk(DiskCellSpec("precondition", disk_node, DiskLayout("raw", (device,)), workload, fill_pct))
    assert result.iops > 0
    assert result.metadata["steady_state"] in ("attained", "not attained")
