"""The search space: every cloud x instance type x volume type x size x provisioned IOPS and
throughput x RAID0 stripe count x protocol the catalog can price.

:class:`SearchSpace` holds the grids; :func:`volume_options` lists the choices of one volume
type the provider allows (the volume rules decide, so a refused choice never enters);
:func:`candidates` enumerates the space in its canonical order, which breaks ties in price
the same way for the search and for brute force.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.sizing.catalog.gcp_disks import GcpLocalSsd
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.loader import Catalog
from harness.sizing.catalog.volume_types import (
    InstanceStoreVolume,
    ProvisionedThroughput,
    ProvisionedVolume,
    VolumeType,
)
from harness.sizing.scenario.question import VolumeSpec
from harness.sizing.volumes.rules import volume_performance

__all__ = ["Candidate", "SearchSpace", "candidates", "fits", "pairs", "volume_options"]

_SIZES_GIB = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
_IOPS = (3000, 4000, 6000, 8000, 12000, 16000, 20000, 32000, 40000, 64000, 80000)
_MIB_S = (125, 250, 500, 750, 1000, 2000, 4000)


@dataclass(frozen=True)
class SearchSpace:
    """The grids searched; an instance or volume type outside ``instance_types`` /
    ``volume_types`` (when given) is left out."""

    sizes_gib: tuple[float, ...] = _SIZES_GIB
    iops: tuple[float, ...] = _IOPS
    mib_s: tuple[float, ...] = _MIB_S
    max_stripes: int = 8
    instance_types: frozenset[str] | None = None
    volume_types: frozenset[str] | None = None


@dataclass(frozen=True)
class Candidate:
    """One configuration: both nodes alike, on ``volume`` (a stripe of ``volume.stripes``)."""

    cloud: str
    instance_type: str
    volume: VolumeSpec
    protocol: ReplicationProtocol


def _local(volume: VolumeType) -> bool:
    return isinstance(volume, InstanceStoreVolume | GcpLocalSsd)


def fits(volume: VolumeType, instance: InstanceType) -> bool:
    """Whether the provider attaches ``volume`` to ``instance`` at all (family, own disks)."""
    if volume.machine_families is not None and instance.family not in volume.machine_families:
        return False
    return not isinstance(volume, InstanceStoreVolume) or instance.instance_store is not None


def _raw_options(volume: VolumeType, name: str, space: SearchSpace) -> Iterator[VolumeSpec]:
    if isinstance(volume, InstanceStoreVolume):
        yield VolumeSpec(name)
        return
    sizes = [s for s in space.sizes_gib if (volume.min_size_gib or 0) <= s <= (volume.max_size_gib or s)]
    if isinstance(volume, GcpLocalSsd):
        sizes = [volume.device_gib * n for n in (1, 2, 4, 8, 16, 24) if n <= volume.max_devices]
    if not isinstance(volume, ProvisionedVolume):
        yield from (VolumeSpec(name, size) for size in sizes)
        return
    iops = sorted({*space.iops, *([volume.default_iops] if volume.default_iops else [])})
    mib = space.mib_s if isinstance(volume.throughput, ProvisionedThroughput) else (None,)
    for size in sizes:
        for i in iops:
            yield from (VolumeSpec(name, size, i, m) for m in mib)


def volume_options(catalog: Catalog, name: str, space: SearchSpace, instance: InstanceType) -> list[VolumeSpec]:
    """The choices of volume type ``name`` on ``instance`` the provider allows, one volume each."""
    volume = catalog.volume(name)
    allowed = []
    for spec in _raw_options(volume, name, space):
        try:
            volume_performance(name, volume, spec, instance)
        except ConfigError:
            continue
        allowed.append(spec)
    return allowed


def stripe_counts(volume: VolumeType, space: SearchSpace) -> range:
    """1..``max_stripes`` for a volume bought by the piece; 1 for the instance's own disks."""
    return range(1, 2 if _local(volume) else space.max_stripes + 1)


def pairs(catalog: Catalog, clouds: Sequence[str], space: SearchSpace) -> list[tuple[str, str]]:
    """(instance type, volume type) pairs with a price for both, in canonical order."""
    out = []
    for cloud in clouds:
        for iname in sorted(catalog.instance_types):
            instance = catalog.instance_types[iname]
            if instance.cloud != cloud or instance.price is None:
                continue
            if space.instance_types is not None and iname not in space.instance_types:
                continue
            for vname in sorted(catalog.volume_types):
                volume = catalog.volume_types[vname]
                if volume.cloud != cloud or volume.price is None or not fits(volume, instance):
                    continue
                if space.volume_types is None or vname in space.volume_types:
                    out.append((iname, vname))
    return out


def candidates(
    catalog: Catalog, clouds: Sequence[str], space: SearchSpace, protocols: Sequence[ReplicationProtocol]
) -> Iterator[Candidate]:
    """Every candidate in canonical order (what brute force walks)."""
    for iname, vname in pairs(catalog, clouds, space):
        instance = catalog.instance_types[iname]
        volume = catalog.volume_types[vname]
        for spec in volume_options(catalog, vname, space, instance):
            for stripes in stripe_counts(volume, space):
                striped = VolumeSpec(spec.type, spec.size_gib, spec.iops, spec.mib_s, stripes)
                for protocol in protocols:
                    yield Candidate(instance.cloud, iname, striped, protocol)
