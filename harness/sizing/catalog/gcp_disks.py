"""Google Cloud disks and their rules: Persistent Disk that scales with size, and local SSD.

* ``pd-balanced`` / ``pd-ssd``: IOPS and throughput are a baseline plus a per-GiB rate, up to a
  per-disk maximum (:class:`GcpSizeScaledDisk`); the VM's own cap, which grows with its vCPU
  count, is the machine type's disk link (``ebs`` in the catalog, whatever the cloud).
* ``hyperdisk-balanced``: IOPS and throughput provisioned within per-GiB bounds with a free
  baseline, the same shape as AWS gp3, so the catalog writes it as a ``provisioned`` volume.
* ``local-ssd``: 375 GiB NVMe devices attached to the VM.  Google publishes their performance by
  device count, not per device (4 to 8 devices perform alike; 24 devices: 2.4 million read IOPS), so
  the catalog holds that table (:class:`LocalSsdRow`) and a size is rounded up to whole devices,
  then to the next count the table lists (:class:`GcpLocalSsd`).
* Persistent Disk writes leave the VM through its network egress cap (:class:`PdEgress`): each
  written byte costs about 1.16 bytes of egress, and when disk writes compete with other egress
  (DRBD's replication does, on the primary) 60 % of the cap goes to disk writes and 40 % to the
  rest; :mod:`harness.sizing.limits.network` applies it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.errors import ConfigError
from harness.sizing.catalog.records import CatalogRecord, NonNegativeFloat, PositiveFloat
from harness.sizing.catalog.volume_base import VolumeBase

__all__ = [
    "GcpLocalSsd",
    "GcpSizeScaledDisk",
    "LocalSsdRow",
    "PdEgress",
]


class PdEgress(CatalogRecord):
    """How Persistent Disk writes use the VM's network egress cap, as Google states it.

    Each byte written costs ``write_multiplier`` bytes of egress (redundant parallel writes and
    overhead); while disk writes compete with other egress, ``disk_write_share`` of the cap is
    allocated to disk writes and the rest is available to all other egress traffic.
    """

    write_multiplier: Annotated[float, Field(ge=1)]
    disk_write_share: Annotated[float, Field(gt=0, lt=1)]

    @property
    def other_share(self) -> float:
        """What is left of the egress cap for other traffic (replication) under contention."""
        return 1 - self.disk_write_share


class GcpSizeScaledDisk(VolumeBase):
    """IOPS = base + per-GiB x size and MiB/s = base + per-GiB x size, each capped per disk."""

    model: Literal["gcp_size_scaled"]
    base_iops: NonNegativeFloat
    iops_per_gib: PositiveFloat
    max_iops: PositiveFloat
    base_mib_s: NonNegativeFloat
    mib_s_per_gib: PositiveFloat
    max_mib_s: PositiveFloat
    egress: PdEgress | None = None


class LocalSsdRow(CatalogRecord):
    """The published limits of ``devices`` local SSD devices used together (the model caps reads and
    writes together at the write throughput, the lower figure)."""

    devices: Annotated[int, Field(gt=0)]
    read_iops: PositiveFloat
    write_iops: PositiveFloat
    write_mib_s: PositiveFloat


class GcpLocalSsd(VolumeBase):
    """Local NVMe SSD devices of ``device_gib`` each, performing as Google's table by device count says."""

    model: Literal["gcp_local_ssd"]
    device_gib: PositiveFloat
    by_devices: Annotated[list[LocalSsdRow], Field(min_length=1)]

    @model_validator(mode="after")
    def _local(self) -> GcpLocalSsd:
        if self.network_attached:
            raise ValueError("local SSD is attached to the VM: set network_attached: false")
        counts = [row.devices for row in self.by_devices]
        if counts != sorted(counts) or len(set(counts)) != len(counts):
            raise ValueError("by_devices must list strictly ascending device counts")
        return self

    @property
    def max_devices(self) -> int:
        return self.by_devices[-1].devices

    def row(self, devices: int) -> LocalSsdRow:
        """The row for ``devices`` devices: the smallest count listed that is at least that many."""
        for row in self.by_devices:
            if row.devices >= devices:
                return row
        raise ConfigError(f"local SSD: at most {self.max_devices} devices of {self.device_gib:g} GiB, got {devices}")
