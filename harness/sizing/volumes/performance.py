"""What one volume delivers at a size: its IOPS and throughput limits, burst bucket and latency.

:class:`VolumePerformance` is the record every cloud's disk rules produce (:mod:`~harness.sizing.volumes.aws`,
:mod:`~harness.sizing.volumes.gcp`, :mod:`~harness.sizing.volumes.azure`) and the storage limits read;
:class:`Choice` is what those rules are given: the user's choice of a volume type on an instance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, TypedDict

from harness.errors import ConfigError
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.scenario.question import VolumeSpec

__all__ = ["Choice", "LatencyFields", "VolumePerformance"]


class LatencyFields(TypedDict):
    """The latency figures of a volume type, as :class:`VolumePerformance` takes them."""

    write_latency_s: float
    read_latency_s: float
    latency_estimate: bool
    latency_note: str


@dataclass(frozen=True)
class VolumePerformance:
    """A volume's IOPS and throughput limits for one size/IOPS choice, with its burst bucket.

    ``iops`` count operations of up to ``io_unit`` bytes (EBS splits larger I/Os).  When
    ``read_iops`` is set, reads and writes have separate caps (instance store); otherwise they
    share ``baseline_iops``.  ``throughput_bucket`` says what gates ``burst_bytes_s``: the
    I/O-credit bucket (``"iops"``, gp2), a byte bucket (``"bytes"``, st1) or nothing.
    ``random_io_charge`` is the byte count a random I/O of that size or less is charged against
    the throughput limit and its credits (st1/sc1: 1 MiB; sequential I/Os are merged first).
    """

    type: str
    description: str
    io_unit: int
    baseline_iops: float
    burst_iops: float | None = None
    iops_bucket: float | None = None
    read_iops: float | None = None
    baseline_bytes_s: float | None = None
    burst_bytes_s: float | None = None
    throughput_bucket: Literal["iops", "bytes"] | None = None
    bytes_bucket: float | None = None
    random_io_charge: int | None = None
    write_latency_s: float = 0.001
    read_latency_s: float = 0.001
    latency_estimate: bool = False
    latency_note: str = ""
    notes: tuple[str, ...] = ()

    def striped(self, stripes: int) -> VolumePerformance:
        """A RAID0 of ``stripes`` such volumes: every rate and every credit bucket times
        ``stripes`` (md spreads the I/Os evenly), the latency of one volume."""
        if stripes == 1:
            return self

        def times(value: float | None) -> float | None:
            return None if value is None else value * stripes

        return replace(
            self,
            description=f"RAID0 of {stripes} x {self.description}",
            baseline_iops=self.baseline_iops * stripes,
            burst_iops=times(self.burst_iops),
            iops_bucket=times(self.iops_bucket),
            read_iops=times(self.read_iops),
            baseline_bytes_s=times(self.baseline_bytes_s),
            burst_bytes_s=times(self.burst_bytes_s),
            bytes_bucket=times(self.bytes_bucket),
        )

    def burst_seconds(self, iops: float | None = None) -> float | None:
        """How long a full I/O-credit bucket lasts at ``iops`` (default: the burst rate).

        AWS gp2: burst duration = credit balance / (burst IOPS - 3 x size in GiB).
        ``None`` when there is no bucket or the rate does not exceed the baseline.
        """
        if self.iops_bucket is None or self.burst_iops is None:
            return None
        rate = self.burst_iops if iops is None else min(iops, self.burst_iops)
        if rate <= self.baseline_iops:
            return None
        return self.iops_bucket / (rate - self.baseline_iops)


@dataclass(frozen=True)
class Choice:
    """A user's choice of the volume type ``name`` on ``instance`` at ``spec``'s size, IOPS and
    throughput, with the type's latency and notes that every result carries."""

    name: str
    spec: VolumeSpec
    instance: InstanceType
    latency: LatencyFields
    notes: tuple[str, ...]

    def label(self, size_gib: float) -> str:
        """``gp3 500 GiB``: how a sized volume is named in limits and errors."""
        return f"{self.name} {size_gib:g} GiB"

    def no_provisioning(self, why: str) -> None:
        """Refuse IOPS or MiB/s given for a type whose performance follows from something else."""
        if self.spec.iops is not None or self.spec.mib_s is not None:
            raise ConfigError(f"{self.name} takes no provisioned IOPS or MiB/s: {why}")
