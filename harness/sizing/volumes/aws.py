"""What an AWS volume delivers at a size, per performance model of
:mod:`harness.sizing.catalog.volume_types`: size-scaled burst (gp2), provisioned (gp3, io1, io2),
throughput burst (st1, sc1), fixed (magnetic, an on-prem array) and instance store.

Each rule refuses the choices AWS would refuse (IOPS above the per-GiB ratio, a throughput for a
type whose throughput follows from its IOPS, ...) with a ConfigError naming the limit.
"""

from __future__ import annotations

from harness.errors import ConfigError
from harness.sizing.catalog.volume_types import (
    FixedVolume,
    InstanceStoreVolume,
    ProvisionedThroughput,
    ProvisionedVolume,
    SizeScaledBurstVolume,
    ThroughputBurstVolume,
    ThroughputFromIops,
)
from harness.sizing.volumes.performance import Choice, VolumePerformance
from harness.units import GIB, KIB, MIB, TIB

__all__ = ["fixed", "instance_store", "provisioned", "size_scaled_burst", "throughput_burst"]


def instance_store(volume: InstanceStoreVolume, choice: Choice) -> VolumePerformance:
    """The instance's own NVMe disks, as the instance type publishes them (no size to choose)."""
    name = choice.name
    store = choice.instance.instance_store
    if store is None:
        raise ConfigError(f"{name}: this instance type has no instance store")
    if choice.spec.iops is not None or choice.spec.mib_s is not None:
        raise ConfigError(f"{name}: instance-store performance is fixed; drop the IOPS/MiBps fields")
    return VolumePerformance(
        type=name,
        description=f"{name} ({store.devices} x {store.device_size_gb:g} GB NVMe)",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=store.write_iops_4k,
        read_iops=store.read_iops_4k,
        notes=choice.notes,
        **choice.latency,
    )


def size_scaled_burst(volume: SizeScaledBurstVolume, choice: Choice, size: float) -> VolumePerformance:
    """gp2: IOPS per GiB within bounds, an I/O-credit burst while below the burst level, and the
    throughput of the size band (which bursts on the same credits)."""
    choice.no_provisioning("its IOPS and throughput follow from its size")
    baseline = min(max(volume.iops_per_gib * size, volume.min_iops), volume.max_iops)
    bursts = volume.burst_iops > baseline
    tier = [t for t in volume.throughput_tiers if t.from_gib <= size]
    chosen = tier[-1] if tier else volume.throughput_tiers[0]
    burst_tput = chosen.burst_mib_s if bursts else None
    return VolumePerformance(
        type=choice.name,
        description=choice.label(size),
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=baseline,
        burst_iops=volume.burst_iops if bursts else None,
        iops_bucket=volume.burst_bucket_io_credits if bursts else None,
        baseline_bytes_s=chosen.mib_s * MIB,
        burst_bytes_s=burst_tput * MIB if burst_tput is not None else None,
        throughput_bucket="iops" if burst_tput is not None else None,
        notes=choice.notes,
        **choice.latency,
    )


def provisioned(volume: ProvisionedVolume, choice: Choice, size: float) -> VolumePerformance:
    """gp3, io1, io2: the IOPS bought within the per-GiB and absolute bounds, held to the
    non-Nitro cap on an older instance, and the throughput bought or following from the IOPS."""
    name = choice.name
    label = choice.label(size)
    iops = choice.spec.iops if choice.spec.iops is not None else volume.default_iops
    if iops is None:
        raise ConfigError(f"{name} needs provisioned IOPS, e.g. {name}:{size:g}GiB:3000")
    # The per-GiB ratio limits what may be bought; IOPS included in the price (gp3's 3,000)
    # come with any size, so a 1-5 GiB gp3 volume is allowed.
    ceiling = max(min(volume.max_iops, volume.max_iops_per_gib * size), volume.default_iops or 0)
    if not volume.min_iops <= iops <= ceiling:
        raise ConfigError(
            f"{label} allows {volume.min_iops:g}..{ceiling:g} IOPS "
            f"({volume.max_iops_per_gib:g} IOPS/GiB, at most {volume.max_iops:g}), got {iops:g}"
        )
    extra_notes: tuple[str, ...] = ()
    effective = iops
    if volume.max_iops_non_nitro is not None and not choice.instance.nitro and iops > volume.max_iops_non_nitro:
        effective = volume.max_iops_non_nitro
        extra_notes = (
            f"{name} above {volume.max_iops_non_nitro:g} IOPS needs a Nitro instance; this one gets {effective:g}.",
        )
    throughput = volume.throughput
    if isinstance(throughput, ProvisionedThroughput):
        mib_s = _bought_mib_s(throughput, choice, label, iops)
    else:
        mib_s = _mib_s_from_iops(throughput, choice, effective)
    return VolumePerformance(
        type=name,
        description=f"{label}, {iops:g} IOPS",
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=effective,
        baseline_bytes_s=mib_s * MIB,
        notes=choice.notes + extra_notes,
        **choice.latency,
    )


def _bought_mib_s(throughput: ProvisionedThroughput, choice: Choice, label: str, iops: float) -> float:
    """gp3: the MiB/s bought (or included), at most a share per provisioned IOPS and an absolute cap."""
    mib_s = choice.spec.mib_s if choice.spec.mib_s is not None else throughput.default_mib_s
    ceiling = min(throughput.max_mib_s, throughput.max_mib_s_per_iops * iops)
    if not 0 < mib_s <= ceiling:
        raise ConfigError(
            f"{label} with {iops:g} IOPS allows up to {ceiling:g} MiB/s "
            f"({throughput.max_mib_s_per_iops:g} MiB/s per IOPS, at most "
            f"{throughput.max_mib_s:g}), got {mib_s:g}"
        )
    return mib_s


def _mib_s_from_iops(throughput: ThroughputFromIops, choice: Choice, iops: float) -> float:
    """io1/io2: the throughput the IOPS step gives (IOPS x KiB per IOPS, capped); none may be bought."""
    if choice.spec.mib_s is not None:
        raise ConfigError(f"{choice.name} throughput follows from its IOPS; drop the MiBps field")
    step = next((s for s in throughput.steps if iops <= s.up_to_iops), throughput.steps[-1])
    return min(step.max_mib_s, iops * step.kib_per_iops / 1024)


def throughput_burst(volume: ThroughputBurstVolume, choice: Choice, size: float) -> VolumePerformance:
    """st1, sc1: a baseline and a burst throughput per TiB, both capped, the burst drawing on a
    byte bucket that also scales with size; each random I/O is charged a whole credit unit."""
    choice.no_provisioning("its throughput follows from its size")
    tib = size * GIB / TIB
    baseline_mib = min(volume.max_mib_s, volume.baseline_mib_s_per_tib * tib)
    burst_mib = min(volume.max_mib_s, volume.burst_mib_s_per_tib * tib)
    bursts = burst_mib > baseline_mib
    return VolumePerformance(
        type=choice.name,
        description=choice.label(size),
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=volume.max_iops,
        baseline_bytes_s=baseline_mib * MIB,
        burst_bytes_s=burst_mib * MIB if bursts else None,
        throughput_bucket="bytes" if bursts else None,
        bytes_bucket=volume.bucket_tib_per_tib * tib * TIB if bursts else None,
        random_io_charge=volume.credit_unit_kib * KIB,
        notes=choice.notes,
        **choice.latency,
    )


def fixed(volume: FixedVolume, choice: Choice, size: float) -> VolumePerformance:
    """Magnetic, or a user's on-prem array: the same IOPS and throughput at any size."""
    choice.no_provisioning("its performance is fixed")
    return VolumePerformance(
        type=choice.name,
        description=choice.label(size),
        io_unit=volume.io_unit_kib * KIB,
        baseline_iops=volume.iops,
        baseline_bytes_s=volume.mib_s * MIB,
        notes=choice.notes,
        **choice.latency,
    )
