"""Instance types as the catalog publishes them: network, dedicated EBS link, CPU credits, local disks."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.sizing.catalog.records import CatalogRecord, FigureSource, NonNegativeFloat, PositiveFloat, SourceList

__all__ = ["CpuCredits", "Ebs", "InstanceStore", "InstanceType", "Network", "Price", "Virtualization"]


class Network(CatalogRecord):
    """Instance network bandwidth; each direction has its own allowance."""

    label: str = ""
    baseline_gbps: PositiveFloat
    burst_gbps: PositiveFloat | None = Field(default=None, description="None: no credit burst")
    burst_minutes: PositiveFloat | None = Field(default=None, description="None: catalog default")
    estimate: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _burst_above_baseline(self) -> Network:
        if self.burst_gbps is not None and self.burst_gbps < self.baseline_gbps:
            raise ValueError("burst_gbps must not be below baseline_gbps")
        return self


class Ebs(CatalogRecord):
    """Dedicated EBS bandwidth of an EBS-optimized instance (maximum = baseline when no burst)."""

    optimized: bool
    max_mbps: PositiveFloat | None = None
    max_iops: PositiveFloat | None = None
    baseline_mbps: PositiveFloat | None = None
    baseline_iops: PositiveFloat | None = None
    burst_minutes: PositiveFloat | None = None
    #: a volume type whose instance-level IOPS cap differs from ``max_iops`` (Google: pd-ssd's
    #: per-VM cap is above pd-balanced's at 16-31 vCPUs; a C3 VM caps Hyperdisk apart from
    #: Persistent Disk); no burst applies to it
    max_iops_by_volume: dict[str, PositiveFloat] = Field(default_factory=dict)
    #: likewise for bandwidth (Mbps): a C3 VM's Hyperdisk limit is not its Persistent Disk limit
    max_mbps_by_volume: dict[str, PositiveFloat] = Field(default_factory=dict)
    estimate: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Ebs:
        figures = (self.max_mbps, self.max_iops, self.baseline_mbps, self.baseline_iops)
        if not self.optimized:
            if any(value is not None for value in figures):
                raise ValueError("an instance that is not EBS-optimized has no EBS bandwidth figures")
            return self
        if self.max_mbps is None or self.max_iops is None:
            raise ValueError("an EBS-optimized instance needs max_mbps and max_iops")
        if self.baseline_mbps is not None and self.baseline_mbps > self.max_mbps:
            raise ValueError("baseline_mbps must not exceed max_mbps")
        if self.baseline_iops is not None and self.baseline_iops > self.max_iops:
            raise ValueError("baseline_iops must not exceed max_iops")
        return self

    @property
    def sustained_mbps(self) -> float:
        """Bandwidth after the burst allowance is spent (the maximum when there is no burst)."""
        if self.max_mbps is None:
            raise ValueError("not EBS-optimized")
        return self.baseline_mbps if self.baseline_mbps is not None else self.max_mbps

    @property
    def sustained_iops(self) -> float:
        """IOPS after the burst allowance is spent (the maximum when there is no burst)."""
        if self.max_iops is None:
            raise ValueError("not EBS-optimized")
        return self.baseline_iops if self.baseline_iops is not None else self.max_iops

    def iops_caps(self, volume_type: str) -> tuple[float, float]:
        """(sustained, maximum) IOPS of the instance's cap for a volume of ``volume_type``."""
        if volume_type in self.max_iops_by_volume:
            cap = self.max_iops_by_volume[volume_type]
            return cap, cap
        return self.sustained_iops, self.max_iops or self.sustained_iops

    def mbps_caps(self, volume_type: str) -> tuple[float, float]:
        """(sustained, maximum) Mbps of the instance's cap for a volume of ``volume_type``."""
        if volume_type in self.max_mbps_by_volume:
            cap = self.max_mbps_by_volume[volume_type]
            return cap, cap
        return self.sustained_mbps, self.max_mbps or self.sustained_mbps


class CpuCredits(CatalogRecord):
    """CPU credit figures of a burstable instance (AWS T family): once the credits are spent in
    standard mode, each vCPU is held to ``baseline_per_vcpu_pct`` of its time."""

    earned_per_hour: PositiveFloat
    baseline_per_vcpu_pct: PositiveFloat
    default_mode: Literal["standard", "unlimited"]
    launch_credits: NonNegativeFloat = 0


class Virtualization(CatalogRecord):
    """How the instance's network and block I/O reach the hardware, and what that costs per I/O.

    ``hypervisor`` is ``xen`` or ``nitro``; ``enhanced_networking`` the adapter (``none`` on T2:
    packets go through the Xen netfront/netback split driver and dom0).  ``cpu_cycles_per_byte``
    is what moving one replicated payload byte through the guest's network stack and driver costs
    (native TCP/IP about 1 cycle per bit; a paravirtual path several times that) on a vCPU of
    ``cpu_ghz``; ``packet_latency_us`` the delay the host adds to a packet each way (a replicated
    write's round trip crosses each host twice).
    """

    hypervisor: str
    enhanced_networking: str
    cpu_cycles_per_byte: NonNegativeFloat = 0
    cpu_ghz: PositiveFloat = 1.0
    packet_latency_us: NonNegativeFloat = 0
    estimate: bool = False
    note: str = ""
    sources: list[str] = Field(default_factory=list)


class Price(CatalogRecord):
    """On-demand list price of an instance in one region."""

    usd_per_hour: PositiveFloat
    region: str
    sources: SourceList
    as_of: dt.date
    verified: bool = True


class InstanceStore(CatalogRecord):
    """Local NVMe disks and the 4 KiB IOPS AWS publishes for all of them together."""

    devices: Annotated[int, Field(gt=0)]
    device_size_gb: PositiveFloat
    read_iops_4k: PositiveFloat
    write_iops_4k: PositiveFloat


class InstanceType(CatalogRecord):
    """One instance type: size, network, EBS and CPU credit limits, with provenance."""

    family: str
    generation: Literal["current", "previous"] = "current"
    vcpu: Annotated[int, Field(gt=0)]
    memory_gib: PositiveFloat
    nitro: bool = Field(description="Nitro instances allow io1/io2 above 32,000 IOPS")
    network: Network
    ebs: Ebs
    cloud: str = "aws"
    cpu_credits: CpuCredits | None = None
    virtualization: Virtualization | None = None
    instance_store: InstanceStore | None = None
    price: Price | None = None
    sources: SourceList
    as_of: dt.date
    verified: bool = Field(default=True, description="false: entered without re-reading a stored copy")
    figure_sources: dict[str, FigureSource] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
