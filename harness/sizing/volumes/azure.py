"""What an Azure Premium SSD v1 disk delivers at a size: its tier's limits and credit bursts, or its
on-demand burst target when the user enables on-demand bursting (the records and the tier lookup
are :mod:`harness.sizing.catalog.azure_disks`)."""

from __future__ import annotations

from harness.errors import ConfigError
from harness.sizing.catalog.azure_disks import AzureTier, AzureTieredDisk, azure_tier
from harness.sizing.volumes.performance import Choice, VolumePerformance
from harness.units import KIB

__all__ = ["tiered"]


def tiered(volume: AzureTieredDisk, choice: Choice, size: float) -> VolumePerformance:
    """The tier's limits, each burst with its own credit bucket that lasts ``burst_minutes`` at full burst.

    Microsoft accrues and spends IOPS credits and MB/s credits separately (a burst consumes the
    credits of the IOPS or of the bandwidth it exceeds, each on its own), so the throughput burst
    drains a byte bucket of (burst MB/s - baseline MB/s) x ``burst_minutes``, not the I/O-credit
    bucket.
    """
    choice.no_provisioning("its IOPS and throughput follow from its tier")
    tier = azure_tier(volume, size)
    if choice.spec.on_demand_burst:
        return _on_demand(volume, choice, size, tier)
    seconds = volume.burst_minutes * 60
    iops_bursts = tier.burst_iops is not None and tier.burst_iops > tier.iops
    bytes_bursts = tier.burst_mb_s is not None and tier.burst_mb_s > tier.mb_s
    burst_iops = tier.burst_iops if iops_bursts else None
    burst_bytes = tier.burst_mb_s * 1e6 if bytes_bursts and tier.burst_mb_s is not None else None
    return VolumePerformance(
        type=choice.name,
        description=f"{choice.name} {tier.name} ({size:g} GiB billed as {tier.up_to_gib:g} GiB)",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=tier.iops,
        burst_iops=burst_iops,
        iops_bucket=(burst_iops - tier.iops) * seconds if burst_iops is not None else None,
        baseline_bytes_s=tier.mb_s * 1e6,
        burst_bytes_s=burst_bytes,
        throughput_bucket="bytes" if burst_bytes is not None else None,
        bytes_bucket=(burst_bytes - tier.mb_s * 1e6) * seconds if burst_bytes is not None else None,
        notes=choice.notes,
        **choice.latency,
    )


def _on_demand(volume: AzureTieredDisk, choice: Choice, size: float, tier: AzureTier) -> VolumePerformance:
    """A tier with on-demand bursting enabled: its burst target for as long as the workload needs
    (no credits), every I/O above the tier's own target a billed burst transaction."""
    burst = volume.on_demand_burst
    if burst is None or tier.burst_iops is not None:
        raise ConfigError(
            f"{choice.name} {tier.name} ({size:g} GiB) cannot burst on demand: Microsoft offers it on Premium SSDs "
            "larger than 512 GiB (P30 and up); P20 and smaller burst on credits, which the model applies unasked"
        )
    note = (
        f"On-demand bursting enabled: {tier.name} reaches {burst.iops:,.0f} IOPS and {burst.mb_s:,.0f} MB/s for "
        f"as long as the workload needs, its own target {tier.iops:,.0f} IOPS and {tier.mb_s:,.0f} MB/s; every I/O "
        "above the target is a burst transaction (MB/s above it count as 256 KiB transactions), billed per "
        "10,000 with an hourly enablement fee."
    )
    return VolumePerformance(
        type=choice.name,
        description=f"{choice.name} {tier.name} ({size:g} GiB billed as {tier.up_to_gib:g} GiB), on-demand bursting",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=burst.iops,
        baseline_bytes_s=burst.mb_s * 1e6,
        notes=(*choice.notes, note),
        **choice.latency,
    )
