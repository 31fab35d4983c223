"""Disk-study cells on the lab: RAID0 and filesystem layouts are built, measured and torn down
without a trace, reads obey the scratch guard like writes, and the guard refuses DRBD's own
disks even when an inventory names them as scratch."""

from __future__ import annotations

import pytest

from harness.cell import CellRunner
from harness.disk.cell import DiskCellRunner, DiskCellSpec
from harness.disk.layout import DiskLayout
from harness.errors import InfraError, RefusedError
from harness.fio.spec import RwMode, WorkloadSpec
from harness.fio.workloads import io_job
from harness.safety.device import guard_scratch_device
from harness.safety.leftovers import find_leftovers, remove_leftovers
from harness.units import MIB

pytestmark = [pytest.mark.lab]


def _job(rw: RwMode, bs: int, numjobs: int = 1, iodepth: int = 4) -> WorkloadSpec:
    return io_job(rw, bs, numjobs=numjobs, iodepth=iodepth).replace(size=32 * MIB, runtime_s=3, ramp_s=0)


def _assert_scratch_clean(runner: CellRunner, node: str, devices: tuple[str, ...]) -> None:
    ssh = runner.pool.get(node)
    assert [item.describe() for item in find_leftovers(ssh) if item.kind in ("md", "mount")] == []
    for device in devices:
        # the guard passes again: no md superblock, filesystem signature, holder or mount left
        guard_scratch_device(ssh, device=device, scratch=devices, needed_bytes=MIB)


@pytest.mark.parametrize(
    "layout",
    [
        DiskLayout("raid0", ("/dev/ubdb", "/dev/ubdc")),
        DiskLayout("fs", ("/dev/ubdb",), fstype="xfs"),
        DiskLayout("fs", ("/dev/ubdc",), fstype="ext4"),
    ],
    ids=lambda layout: layout.label,
)
def test_layouts_are_measured_and_leave_nothing(cell_runner: CellRunner, layout: DiskLayout) -> None:
    result = DiskCellRunner(cell_runner).run(DiskCellSpec("itest", "a1", layout, _job("randwrite", 4096, 2)))
    assert result.iops > 0 and result.metadata["mode"] == layout.label
    assert result.metadata["devices"] == list(layout.devices)
    _assert_scratch_clean(cell_runner, "a1", ("/dev/ubdb", "/dev/ubdc"))


def test_reads_and_a_fill_run_on_scratch_devices_only(cell_runner: CellRunner) -> None:
    disk = DiskCellRunner(cell_runner)
    read = disk.run(DiskCellSpec("itest", "a1", DiskLayout("raw", ("/dev/ubdb",)), _job("randread", 4096)))
    assert read.iops > 0 and read.metadata["rw"] == "randread"
    filled = disk.run(DiskCellSpec("itest", "a1", DiskLayout("raw", ("/dev/ubdc",)), _job("write", MIB), fill_pct=10))
    assert filled.metadata["mode"] == "raw-fill10"
    ledger = [e["event"] for e in cell_runner.ledger.entries()]
    assert "precondition" in ledger
    # /dev/ubda backs the DRBD resources: not a scratch device, for reads either
    with pytest.raises(RefusedError, match="not one of the scratch devices"):
        disk.run(DiskCellSpec("itest", "a1", DiskLayout("raw", ("/dev/ubda",)), _job("randread", 4096)))


def test_the_guard_refuses_drbd_disks_an_inventory_calls_scratch(cell_runner: CellRunner) -> None:
    node = cell_runner.pool.get("a1")
    with pytest.raises(RefusedError, match="backs a DRBD resource"):
        guard_scratch_device(node, device="/dev/ubda", scratch=("/dev/ubda",), needed_bytes=MIB)
    with pytest.raises(RefusedError, match="is a DRBD device"):
        guard_scratch_device(node, device="/dev/drbd0", scratch=("/dev/drbd0",), needed_bytes=MIB)


def test_an_array_still_open_at_teardown_fails_the_cell_and_is_stopped_once_released(cell_runner: CellRunner) -> None:
    """The stop is retried while the array is busy, and a stop that never succeeds is an error
    naming the array (never a silent leftover that refuses the next cell its members)."""
    disk = DiskCellRunner(cell_runner)
    layout = DiskLayout("raid0", ("/dev/ubdb", "/dev/ubdc"))
    node = cell_runner.pool.get("a1")
    busy = disk.prepared("itest-busy", "a1", layout, needed_bytes=MIB, file_bytes=None)
    with pytest.raises(InfraError, match="still in use") as failed, busy as ready:
        # a reader holding the array open past the teardown's retries (3 × mdadm's own 5 s)
        node.run_script(f"(setsid sleep 22 < {ready.target} >/dev/null 2>&1 &)", timeout=15)
    assert "tearing down /dev/md/" in str(failed.value)
    with pytest.raises(RefusedError, match="is held by"):
        guard_scratch_device(node, device="/dev/ubdb", scratch=layout.devices, needed_bytes=MIB)
    node.run_script("pkill -f '^sleep 22$'; sleep 1", timeout=30)  # the reader goes
    # what `harness cleanup` does with the leftover array, once nothing holds it
    arrays = [item for item in find_leftovers(node) if item.kind == "md"]
    assert len(arrays) == 1
    assert remove_leftovers(node, arrays)
    _assert_scratch_clean(cell_runner, "a1", layout.devices)
