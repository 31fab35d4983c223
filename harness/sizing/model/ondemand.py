"""What an Azure Premium SSD with on-demand bursting is billed for beyond its tier.

Microsoft bills a disk with on-demand bursting enabled "an hourly burst enablement flat fee" and
each burst transaction: a second's transactions are "Max((IOPS - target), (MBps - target) * 1024 /
256)", the MB/s above the tier's target translated into 256 KiB I/Os, and they are priced per
10,000 (the bursting include of Microsoft's docs, catalog reference ``azure-disk-bursting-src``).
Neither price is in a stored copy, so the model counts the transactions, and the cost line says
the charges are left out.
"""

from __future__ import annotations

from harness.sizing.catalog.azure_disks import AzureTieredDisk, azure_tier
from harness.sizing.catalog.loader import Catalog
from harness.sizing.model.cost import HOURS_PER_MONTH
from harness.sizing.scenario.question import Scenario, VolumeSpec

__all__ = ["BILLED_PER", "burst_transactions_s", "on_demand_note"]

#: burst transactions are billed in units of this many
BILLED_PER = 10_000


def burst_transactions_s(target_iops: float, target_mb_s: float, iops: float, mb_s: float) -> float:
    """Burst transactions a second of a disk doing ``iops`` and ``mb_s`` against its tier's target."""
    return max(0.0, iops - target_iops, (mb_s - target_mb_s) * 1024 / 256)


def _target(catalog: Catalog, spec: VolumeSpec) -> tuple[str, float, float] | None:
    volume = catalog.volume(spec.type)
    if not spec.on_demand_burst or not isinstance(volume, AzureTieredDisk):
        return None
    tier = azure_tier(volume, spec.size_gib or 0.0)
    return tier.name, tier.iops, tier.mb_s


def on_demand_note(scenario: Scenario, catalog: Catalog, iops: float, bs: int) -> str | None:
    """The burst transactions the primary's disks run at ``iops`` of ``bs`` bytes, or ``None``
    when its volume does not burst on demand.  Each disk of a stripe takes its share; a peer's
    disks take the writes alone."""
    spec = scenario.primary.volume
    target = _target(catalog, spec)
    if target is None:
        return None
    name, target_iops, target_mb_s = target
    per_disk = iops / spec.stripes
    per_second = burst_transactions_s(target_iops, target_mb_s, per_disk, per_disk * bs / 1e6)
    month = per_second * spec.stripes * HOURS_PER_MONTH * 3600
    return (
        f"On-demand bursting: each {name} of the primary runs {per_disk:,.0f} IOPS of {bs} B "
        f"({per_disk * bs / 1e6:,.1f} MB/s) against its target {target_iops:,.0f} IOPS / {target_mb_s:,.0f} MB/s: "
        f"{per_second:,.0f} burst transactions a second, {month / BILLED_PER:,.0f} units of {BILLED_PER:,} "
        "a month if the predicted rate ran all month, besides the hourly enablement fee (a peer's disks burst on "
        "its writes too); neither price is in a stored copy, so the cost leaves them out."
    )
