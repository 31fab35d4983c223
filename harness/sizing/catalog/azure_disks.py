"""Azure managed disks and their rules: Premium SSD v1 tiers with credit or on-demand bursting.

* Premium SSD (v1): the size is rounded up to a tier (P10 = 128 GiB, P20 = 512 GiB, ...), each
  with fixed IOPS and MB/s; tiers up to P20 burst on credits (3,500 IOPS, 170 MB/s) for up to
  30 minutes at full burst, credits accruing while the disk runs below its baseline; IOPS credits
  and MB/s credits are separate buckets (:class:`AzureTieredDisk`).
* On-demand bursting (:class:`OnDemandBurst`): a Premium SSD larger than 512 GiB (P30 and up,
  the tiers without credits) the user enables it on bursts to 30,000 IOPS and 1,000 MB/s for as
  long as the workload needs, every I/O above its tier's target a billed burst transaction.
* Premium SSD v2 and Ultra Disk: IOPS and throughput provisioned within per-GiB bounds (v2 with
  3,000 IOPS and 125 MB/s included), the shape AWS gp3/io2 have, so the catalog writes them as
  ``provisioned`` volumes.
* The VM's own caps (uncached disk IOPS and MB/s with their 30-minute burst, cached limits for
  host-cached reads) are the size's disk link (``ebs`` in the catalog).  DRBD writes go to the
  disk uncached: host caching ReadWrite would acknowledge writes the peer has not got.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.errors import ConfigError
from harness.sizing.catalog.records import CatalogRecord, NonNegativeFloat, PositiveFloat
from harness.sizing.catalog.volume_base import VolumeBase

__all__ = ["AzureTier", "AzureTieredDisk", "OnDemandBurst", "azure_tier"]


class AzureTier(CatalogRecord):
    """One Premium SSD v1 tier: sizes up to ``up_to_gib``, their IOPS, MB/s, burst and monthly price."""

    name: str
    up_to_gib: PositiveFloat
    iops: PositiveFloat
    mb_s: PositiveFloat
    burst_iops: PositiveFloat | None = None
    burst_mb_s: PositiveFloat | None = None
    usd_month: NonNegativeFloat | None = None


class OnDemandBurst(CatalogRecord):
    """What a tier without credit bursting reaches with on-demand bursting enabled, indefinitely."""

    iops: PositiveFloat
    mb_s: PositiveFloat


class AzureTieredDisk(VolumeBase):
    """A disk billed and performing by tier; credit bursting for tiers that have a burst, on-demand
    bursting (when ``on_demand_burst`` is given and the user enables it) for the tiers that do not."""

    model: Literal["azure_tiered"]
    tiers: Annotated[list[AzureTier], Field(min_length=1)]
    burst_minutes: PositiveFloat = 30
    on_demand_burst: OnDemandBurst | None = None

    @model_validator(mode="after")
    def _tiers_ascend(self) -> AzureTieredDisk:
        sizes = [tier.up_to_gib for tier in self.tiers]
        if sizes != sorted(sizes) or len(set(sizes)) != len(sizes):
            raise ValueError("tiers must have strictly ascending up_to_gib")
        return self


def azure_tier(volume: AzureTieredDisk, size_gib: float) -> AzureTier:
    """The tier a disk of ``size_gib`` is billed and performs as (the next size up)."""
    for tier in volume.tiers:
        if size_gib <= tier.up_to_gib:
            return tier
    raise ConfigError(f"Azure tiered disks are at most {volume.tiers[-1].up_to_gib:g} GiB, got {size_gib:g} GiB")
