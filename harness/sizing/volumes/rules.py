"""What one volume delivers: its IOPS and throughput limits, burst bucket and latency at a size.

:func:`volume_performance` turns a catalog volume type and a user's size/IOPS/throughput choice
into a :class:`VolumePerformance`, refusing choices the provider would refuse.  It knows each
performance model of :mod:`harness.sizing.catalog.volume_types` (size-scaled burst, provisioned,
throughput burst, fixed, instance store); the limits these figures become on the write path are
:mod:`harness.sizing.limits.storage`'.
"""

from __future__ import annotations

from harness.errors import ConfigError
from harness.sizing.catalog.azure_disks import AzureTieredDisk, azure_tiered_performance
from harness.sizing.catalog.gcp_disks import (
    GcpLocalSsd,
    GcpSizeScaledDisk,
    gcp_local_ssd_performance,
    gcp_scaled_performance,
)
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.volume_types import (
    FixedVolume,
    InstanceStoreVolume,
    ProvisionedThroughput,
    ProvisionedVolume,
    SizeScaledBurstVolume,
    ThroughputBurstVolume,
    VolumeType,
)
from harness.sizing.scenario.question import GIB, KIB, MIB, TIB, VolumeSpec
from harness.sizing.volumes.performance import LatencyFields, VolumePerformance

__all__ = ["VolumePerformance", "volume_performance"]


def volume_performance(name: str, volume: VolumeType, spec: VolumeSpec, instance: InstanceType) -> VolumePerformance:
    """Limits of volume type ``volume`` at ``spec``'s size/IOPS/throughput on ``instance``.

    Raises ConfigError for choices the provider would refuse (size out of range, IOPS above the
    per-GiB ratio, IOPS given for a type whose IOPS follow from its size, ...).
    """
    size = spec.size_gib
    latency: LatencyFields = {
        "write_latency_s": volume.latency.write_ms / 1000,
        "read_latency_s": volume.latency.read_ms / 1000,
        "latency_estimate": volume.latency.estimate,
        "latency_note": volume.latency.note,
    }
    notes = tuple(volume.notes)
    if isinstance(volume, InstanceStoreVolume):
        store = instance.instance_store
        if store is None:
            raise ConfigError(f"{name}: this instance type has no instance store")
        if spec.iops is not None or spec.mib_s is not None:
            raise ConfigError(f"{name}: instance-store performance is fixed; drop the IOPS/MiBps fields")
        return VolumePerformance(
            type=name,
            description=f"{name} ({store.devices} x {store.device_size_gb:g} GB NVMe)",
            io_unit=volume.io_unit_kib * KIB,
            baseline_iops=store.write_iops_4k,
            read_iops=store.read_iops_4k,
            notes=notes,
            **latency,
        )

    if size is None:
        raise ConfigError(f"volume {name} needs a size, e.g. {name}:100GiB")
    if volume.min_size_gib is not None and size < volume.min_size_gib:
        raise ConfigError(f"{name} volumes are at least {volume.min_size_gib:g} GiB, got {size:g} GiB")
    if volume.max_size_gib is not None and size > volume.max_size_gib:
        raise ConfigError(f"{name} volumes are at most {volume.max_size_gib:g} GiB, got {size:g} GiB")
    unit = volume.io_unit_kib * KIB
    label = f"{name} {size:g} GiB"

    if isinstance(volume, SizeScaledBurstVolume):
        _no_provisioning(name, spec, "its IOPS and throughput follow from its size")
        baseline = min(max(volume.iops_per_gib * size, volume.min_iops), volume.max_iops)
        bursts = volume.burst_iops > baseline
        tier = [t for t in volume.throughput_tiers if t.from_gib <= size]
        chosen = tier[-1] if tier else volume.throughput_tiers[0]
        burst_tput = chosen.burst_mib_s if bursts else None
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=baseline,
            burst_iops=volume.burst_iops if bursts else None,
            iops_bucket=volume.burst_bucket_io_credits if bursts else None,
            baseline_bytes_s=chosen.mib_s * MIB,
            burst_bytes_s=burst_tput * MIB if burst_tput is not None else None,
            throughput_bucket="iops" if burst_tput is not None else None,
            notes=notes,
            **latency,
        )

    if isinstance(volume, ProvisionedVolume):
        iops = spec.iops if spec.iops is not None else volume.default_iops
        if iops is None:
            raise ConfigError(f"{name} needs provisioned IOPS, e.g. {name}:{size:g}GiB:3000")
        # The per-GiB ratio limits what may be bought; IOPS included in the price (gp3's 3,000)
        # come with any size, so a 1-5 GiB gp3 volume is allowed (AWS, 2025).
        ceiling = max(min(volume.max_iops, volume.max_iops_per_gib * size), volume.default_iops or 0)
        if not volume.min_iops <= iops <= ceiling:
            raise ConfigError(
                f"{label} allows {volume.min_iops:g}..{ceiling:g} IOPS "
                f"({volume.max_iops_per_gib:g} IOPS/GiB, at most {volume.max_iops:g}), got {iops:g}"
            )
        extra_notes: list[str] = []
        effective = iops
        if volume.max_iops_non_nitro is not None and not instance.nitro and iops > volume.max_iops_non_nitro:
            effective = volume.max_iops_non_nitro
            extra_notes.append(
                f"{name} above {volume.max_iops_non_nitro:g} IOPS needs a Nitro instance; this one gets {effective:g}."
            )
        throughput = volume.throughput
        if isinstance(throughput, ProvisionedThroughput):
            mib_s = spec.mib_s if spec.mib_s is not None else throughput.default_mib_s
            tput_ceiling = min(throughput.max_mib_s, throughput.max_mib_s_per_iops * iops)
            if not 0 < mib_s <= tput_ceiling:
                raise ConfigError(
                    f"{label} with {iops:g} IOPS allows up to {tput_ceiling:g} MiB/s "
                    f"({throughput.max_mib_s_per_iops:g} MiB/s per IOPS, at most "
                    f"{throughput.max_mib_s:g}), got {mib_s:g}"
                )
        else:
            if spec.mib_s is not None:
                raise ConfigError(f"{name} throughput follows from its IOPS; drop the MiBps field")
            step = next((s for s in throughput.steps if effective <= s.up_to_iops), throughput.steps[-1])
            mib_s = min(step.max_mib_s, effective * step.kib_per_iops / 1024)
        return VolumePerformance(
            type=name,
            description=f"{label}, {iops:g} IOPS",
            io_unit=unit,
            baseline_iops=effective,
            baseline_bytes_s=mib_s * MIB,
            notes=notes + tuple(extra_notes),
            **latency,
        )

    if isinstance(volume, ThroughputBurstVolume):
        _no_provisioning(name, spec, "its throughput follows from its size")
        tib = size * GIB / TIB
        baseline_mib = min(volume.max_mib_s, volume.baseline_mib_s_per_tib * tib)
        burst_mib = min(volume.max_mib_s, volume.burst_mib_s_per_tib * tib)
        bursts = burst_mib > baseline_mib
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=volume.max_iops,
            baseline_bytes_s=baseline_mib * MIB,
            burst_bytes_s=burst_mib * MIB if bursts else None,
            throughput_bucket="bytes" if bursts else None,
            bytes_bucket=volume.bucket_tib_per_tib * tib * TIB if bursts else None,
            random_io_charge=volume.credit_unit_kib * KIB,
            notes=notes,
            **latency,
        )

    if isinstance(volume, GcpSizeScaledDisk):
        _no_provisioning(name, spec, "its IOPS and throughput follow from its size")
        return gcp_scaled_performance(name, volume, size, latency, notes)
    if isinstance(volume, GcpLocalSsd):
        _no_provisioning(name, spec, "its performance follows from the number of devices")
        return gcp_local_ssd_performance(name, volume, size, latency, notes)
    if isinstance(volume, AzureTieredDisk):
        _no_provisioning(name, spec, "its IOPS and throughput follow from its tier")
        return azure_tiered_performance(name, volume, size, latency, notes)
    if isinstance(volume, FixedVolume):
        _no_provisioning(name, spec, "its performance is fixed")
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=volume.iops,
            baseline_bytes_s=volume.mib_s * MIB,
            notes=notes,
            **latency,
        )
    raise AssertionError(f"unhandled volume model {volume!r}")  # pragma: no cover


def _no_provisioning(name: str, spec: VolumeSpec, why: str) -> None:
    if spec.iops is not None or spec.mib_s is not None:
        raise ConfigError(f"{name} takes no provisioned IOPS or MiB/s: {why}")
