"""What a Google Cloud disk delivers at a size: Persistent Disk scaled per GiB, local SSD by
device count (the records and their rules are :mod:`harness.sizing.catalog.gcp_disks`)."""

from __future__ import annotations

import math

from harness.errors import ConfigError
from harness.sizing.catalog.gcp_disks import GcpLocalSsd, GcpSizeScaledDisk
from harness.sizing.volumes.performance import Choice, VolumePerformance
from harness.units import KIB, MIB

__all__ = ["local_ssd", "size_scaled"]


def size_scaled(volume: GcpSizeScaledDisk, choice: Choice, size: float) -> VolumePerformance:
    """The limits of a ``pd-balanced`` / ``pd-ssd`` disk of ``size`` GiB."""
    choice.no_provisioning("its IOPS and throughput follow from its size")
    name = choice.name
    iops = min(volume.max_iops, volume.base_iops + volume.iops_per_gib * size)
    mib_s = min(volume.max_mib_s, volume.base_mib_s + volume.mib_s_per_gib * size)
    return VolumePerformance(
        type=name,
        description=f"{name} {size:g} GiB ({iops:,.0f} IOPS, {mib_s:,.0f} MiB/s per disk)",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=iops,
        baseline_bytes_s=mib_s * MIB,
        notes=choice.notes,
        **choice.latency,
    )


def local_ssd(volume: GcpLocalSsd, choice: Choice, size: float) -> VolumePerformance:
    """``size`` GiB rounded up to whole devices, then to a count Google lists; that row's limits (RAID 0)."""
    choice.no_provisioning("its performance follows from the number of devices")
    name = choice.name
    needed = math.ceil(size / volume.device_gib - 1e-9)
    if needed > volume.max_devices:
        raise ConfigError(
            f"{name}: at most {volume.max_devices} devices of {volume.device_gib:g} GiB, got {size:g} GiB"
        )
    row = volume.row(needed)
    rounded = "" if row.devices == needed else f"; {size:g} GiB needs {needed}, the next count Google lists"
    return VolumePerformance(
        type=name,
        description=f"{name} {row.devices} x {volume.device_gib:g} GiB NVMe{rounded}",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=row.write_iops,
        read_iops=row.read_iops,
        baseline_bytes_s=row.write_mib_s * MIB,
        notes=choice.notes,
        **choice.latency,
    )
