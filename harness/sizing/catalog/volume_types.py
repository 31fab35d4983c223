"""Volume types as the catalog publishes them, one record per performance model.

A volume type's IOPS and throughput follow from its size (gp2, st1), are provisioned within
bounds (gp3, io1, io2), are fixed (magnetic, an on-prem array), or are the instance's own disks
(instance store).  These records only validate the published figures; what a volume of a type
delivers at a size is :mod:`harness.sizing.volumes`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.sizing.catalog.azure_disks import AzureTieredDisk
from harness.sizing.catalog.gcp_disks import GcpLocalSsd, GcpSizeScaledDisk
from harness.sizing.catalog.records import CatalogRecord, PositiveFloat
from harness.sizing.catalog.volume_base import Latency, VolumeBase, VolumePrice

__all__ = [
    "FixedVolume",
    "InstanceStoreVolume",
    "IopsThroughputStep",
    "Latency",
    "ProvisionedThroughput",
    "ProvisionedVolume",
    "SizeScaledBurstVolume",
    "ThroughputBurstVolume",
    "ThroughputFromIops",
    "ThroughputTier",
    "VolumePrice",
    "VolumeType",
]


class ThroughputTier(CatalogRecord):
    """A size band of a size-scaled volume's throughput cap (gp2)."""

    from_gib: PositiveFloat
    mib_s: PositiveFloat
    burst_mib_s: PositiveFloat | None = None


class SizeScaledBurstVolume(VolumeBase):
    """IOPS proportional to size plus an I/O-credit burst bucket (gp2)."""

    model: Literal["size_scaled_burst"]
    iops_per_gib: PositiveFloat
    min_iops: PositiveFloat
    max_iops: PositiveFloat
    burst_iops: PositiveFloat
    burst_bucket_io_credits: PositiveFloat
    throughput_tiers: Annotated[list[ThroughputTier], Field(min_length=1)]

    @model_validator(mode="after")
    def _tiers_ascend(self) -> SizeScaledBurstVolume:
        starts = [tier.from_gib for tier in self.throughput_tiers]
        if starts != sorted(starts) or len(set(starts)) != len(starts):
            raise ValueError("throughput_tiers must have strictly ascending from_gib")
        return self


class ProvisionedThroughput(CatalogRecord):
    """Throughput provisioned separately from IOPS (gp3)."""

    kind: Literal["provisioned"]
    default_mib_s: PositiveFloat
    max_mib_s: PositiveFloat
    max_mib_s_per_iops: PositiveFloat


class IopsThroughputStep(CatalogRecord):
    """Up to ``up_to_iops`` provisioned IOPS, throughput is IOPS x ``kib_per_iops``, capped."""

    up_to_iops: PositiveFloat
    kib_per_iops: PositiveFloat
    max_mib_s: PositiveFloat


class ThroughputFromIops(CatalogRecord):
    """Throughput that follows from the provisioned IOPS (io1/io2)."""

    kind: Literal["from_iops"]
    steps: Annotated[list[IopsThroughputStep], Field(min_length=1)]


class ProvisionedVolume(VolumeBase):
    """IOPS chosen at creation within per-GiB and absolute bounds; no burst (gp3, io1, io2)."""

    model: Literal["provisioned"]
    min_iops: PositiveFloat
    max_iops: PositiveFloat
    max_iops_per_gib: PositiveFloat
    max_iops_non_nitro: PositiveFloat | None = None
    default_iops: PositiveFloat | None = None
    throughput: Annotated[ProvisionedThroughput | ThroughputFromIops, Field(discriminator="kind")]


class ThroughputBurstVolume(VolumeBase):
    """Throughput proportional to size with a throughput-credit bucket (st1)."""

    model: Literal["throughput_burst"]
    max_iops: PositiveFloat
    baseline_mib_s_per_tib: PositiveFloat
    burst_mib_s_per_tib: PositiveFloat
    max_mib_s: PositiveFloat
    bucket_tib_per_tib: PositiveFloat
    credit_unit_kib: Annotated[
        int, Field(gt=0, description="AWS: every random I/O of this size or less spends this much credit")
    ] = 1024


class FixedVolume(VolumeBase):
    """Fixed IOPS and throughput whatever the size (magnetic, or a user's on-prem array)."""

    model: Literal["fixed"]
    iops: PositiveFloat
    mib_s: PositiveFloat


class InstanceStoreVolume(VolumeBase):
    """The instance's local disks; their limits come from the instance's ``instance_store``."""

    model: Literal["instance_store"]

    @model_validator(mode="after")
    def _local(self) -> InstanceStoreVolume:
        if self.network_attached:
            raise ValueError("an instance-store volume is local: set network_attached: false")
        return self


VolumeType = Annotated[
    SizeScaledBurstVolume
    | ProvisionedVolume
    | ThroughputBurstVolume
    | FixedVolume
    | InstanceStoreVolume
    | GcpSizeScaledDisk
    | GcpLocalSsd
    | AzureTieredDisk,
    Field(discriminator="model"),
]
