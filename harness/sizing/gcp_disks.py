"""Google Cloud disks and their rules: Persistent Disk that scales with size, and local SSD.

* ``pd-balanced`` / ``pd-ssd``: IOPS and throughput are a baseline plus a per-GiB rate, up to a
  per-disk maximum (:class:`GcpSizeScaledDisk`); the VM's own cap, which grows with its vCPU
  count, is the machine type's disk link (``ebs`` in the catalog, whatever the cloud).
* ``hyperdisk-balanced``: IOPS and throughput provisioned within per-GiB bounds with a free
  baseline, the same shape as AWS gp3, so the catalog writes it as a ``provisioned`` volume.
* ``local-ssd``: 375 GiB NVMe devices attached to the VM, each with its own read and write IOPS
  and throughput (:class:`GcpLocalSsd`); a size is rounded up to whole devices.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.errors import ConfigError
from harness.sizing.performance import LatencyFields, VolumePerformance
from harness.sizing.records import NonNegativeFloat, PositiveFloat
from harness.sizing.volume_base import VolumeBase

__all__ = ["GcpLocalSsd", "GcpSizeScaledDisk", "gcp_local_ssd_performance", "gcp_scaled_performance"]

MIB = 1024**2


class GcpSizeScaledDisk(VolumeBase):
    """IOPS = base + per-GiB x size and MiB/s = base + per-GiB x size, each capped per disk."""

    model: Literal["gcp_size_scaled"]
    base_iops: NonNegativeFloat
    iops_per_gib: PositiveFloat
    max_iops: PositiveFloat
    base_mib_s: NonNegativeFloat
    mib_s_per_gib: PositiveFloat
    max_mib_s: PositiveFloat


class GcpLocalSsd(VolumeBase):
    """Local NVMe SSD devices of ``device_gib`` each; performance adds up per device."""

    model: Literal["gcp_local_ssd"]
    device_gib: PositiveFloat
    max_devices: Annotated[int, Field(gt=0)]
    read_iops_per_device: PositiveFloat
    write_iops_per_device: PositiveFloat
    write_mib_s_per_device: PositiveFloat

    @model_validator(mode="after")
    def _local(self) -> GcpLocalSsd:
        if self.network_attached:
            raise ValueError("local SSD is attached to the VM: set network_attached: false")
        return self


def gcp_scaled_performance(
    name: str, volume: GcpSizeScaledDisk, size_gib: float, latency: LatencyFields, notes: tuple[str, ...]
) -> VolumePerformance:
    """The limits of a ``pd-balanced`` / ``pd-ssd`` disk of ``size_gib``."""
    iops = min(volume.max_iops, volume.base_iops + volume.iops_per_gib * size_gib)
    mib_s = min(volume.max_mib_s, volume.base_mib_s + volume.mib_s_per_gib * size_gib)
    return VolumePerformance(
        type=name,
        description=f"{name} {size_gib:g} GiB ({iops:,.0f} IOPS, {mib_s:,.0f} MiB/s per disk)",
        io_unit=volume.io_unit_kib * 1024,
        baseline_iops=iops,
        baseline_bytes_s=mib_s * MIB,
        notes=notes,
        **latency,
    )


def gcp_local_ssd_performance(
    name: str, volume: GcpLocalSsd, size_gib: float, latency: LatencyFields, notes: tuple[str, ...]
) -> VolumePerformance:
    """``size_gib`` rounded up to whole devices, their IOPS and throughput summed (RAID 0)."""
    devices = math.ceil(size_gib / volume.device_gib - 1e-9)
    if devices > volume.max_devices:
        raise ConfigError(
            f"{name}: at most {volume.max_devices} devices of {volume.device_gib:g} GiB, got {size_gib:g} GiB"
        )
    return VolumePerformance(
        type=name,
        description=f"{name} {devices} x {volume.device_gib:g} GiB NVMe",
        io_unit=volume.io_unit_kib * 1024,
        baseline_iops=devices * volume.write_iops_per_device,
        read_iops=devices * volume.read_iops_per_device,
        baseline_bytes_s=devices * volume.write_mib_s_per_device * MIB,
        notes=notes,
        **latency,
    )
