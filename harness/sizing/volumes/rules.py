"""What one volume delivers: the rule of its performance model, applied to a user's choice.

:func:`volume_performance` turns a catalog volume type and a user's size/IOPS/throughput choice
into a :class:`VolumePerformance`, refusing choices the provider would refuse.  The size bounds
every sized type shares are checked here; each performance model's own rule is in
:mod:`~harness.sizing.volumes.aws`, :mod:`~harness.sizing.volumes.gcp` or
:mod:`~harness.sizing.volumes.azure`.  The limits these figures become on the write path are
:mod:`harness.sizing.limits.storage`'.
"""

from __future__ import annotations

from harness.errors import ConfigError
from harness.sizing.catalog.azure_disks import AzureTieredDisk
from harness.sizing.catalog.gcp_disks import GcpLocalSsd, GcpSizeScaledDisk
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.volume_types import (
    FixedVolume,
    InstanceStoreVolume,
    ProvisionedVolume,
    SizeScaledBurstVolume,
    ThroughputBurstVolume,
    VolumeType,
)
from harness.sizing.scenario.question import VolumeSpec
from harness.sizing.volumes import aws, azure, gcp
from harness.sizing.volumes.performance import Choice, LatencyFields, VolumePerformance

__all__ = ["volume_performance"]


def volume_performance(name: str, volume: VolumeType, spec: VolumeSpec, instance: InstanceType) -> VolumePerformance:
    """Limits of volume type ``volume`` at ``spec``'s size/IOPS/throughput on ``instance``.

    Raises ConfigError for choices the provider would refuse (size out of range, IOPS above the
    per-GiB ratio, IOPS given for a type whose IOPS follow from its size, ...).
    """
    latency: LatencyFields = {
        "write_latency_s": volume.latency.write_ms / 1000,
        "read_latency_s": volume.latency.read_ms / 1000,
        "latency_estimate": volume.latency.estimate,
        "latency_note": volume.latency.note,
    }
    families = volume.machine_families
    if families is not None and instance.family not in families:
        raise ConfigError(
            f"{name} is offered only on the {', '.join(f.upper() for f in families)} machine families, "
            f"not on {instance.family.upper()}"
        )
    if spec.on_demand_burst and not (isinstance(volume, AzureTieredDisk) and volume.on_demand_burst is not None):
        raise ConfigError(f"{name} has no on-demand bursting: it is an Azure Premium SSD's (P30 and larger)")
    choice = Choice(name, spec, instance, latency, tuple(volume.notes))
    if isinstance(volume, InstanceStoreVolume | GcpLocalSsd) and spec.stripes > 1:
        raise ConfigError(f"{name} is the instance's own disks, already striped: it takes no RAID0 count")
    if isinstance(volume, InstanceStoreVolume):
        return aws.instance_store(volume, choice)
    return _sized(volume, choice, _size(volume, name, spec)).striped(spec.stripes)


def _size(volume: VolumeType, name: str, spec: VolumeSpec) -> float:
    """The size ``spec`` gives, within the type's bounds."""
    size = spec.size_gib
    if size is None:
        raise ConfigError(f"volume {name} needs a size, e.g. {name}:100GiB")
    if volume.min_size_gib is not None and size < volume.min_size_gib:
        raise ConfigError(f"{name} volumes are at least {volume.min_size_gib:g} GiB, got {size:g} GiB")
    if volume.max_size_gib is not None and size > volume.max_size_gib:
        raise ConfigError(f"{name} volumes are at most {volume.max_size_gib:g} GiB, got {size:g} GiB")
    return size


def _sized(volume: VolumeType, choice: Choice, size: float) -> VolumePerformance:
    """The rule of ``volume``'s performance model at ``size`` GiB."""
    if isinstance(volume, SizeScaledBurstVolume):
        return aws.size_scaled_burst(volume, choice, size)
    if isinstance(volume, ProvisionedVolume):
        return aws.provisioned(volume, choice, size)
    if isinstance(volume, ThroughputBurstVolume):
        return aws.throughput_burst(volume, choice, size)
    if isinstance(volume, GcpSizeScaledDisk):
        return gcp.size_scaled(volume, choice, size)
    if isinstance(volume, GcpLocalSsd):
        return gcp.local_ssd(volume, choice, size)
    if isinstance(volume, AzureTieredDisk):
        return azure.tiered(volume, choice, size)
    if isinstance(volume, FixedVolume):
        return aws.fixed(volume, choice, size)
    raise AssertionError(f"unhandled volume model {volume!r}")  # pragma: no cover
