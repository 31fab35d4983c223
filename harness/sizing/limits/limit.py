"""The model's vocabulary: a limit, a credit bucket, a node as the limits see it, and the build.

Every resource on the write path allows at most some I/O rate: a :class:`Limit` of ``baseline``
units per second (or ``burst`` while its :class:`Bucket` holds credits), where a unit is whatever
the resource counts (bytes, 16 KiB operations, ...) and ``units_per_io`` converts to workload
I/Os.  :class:`Build` accumulates a scenario's limits, buckets, notes and estimates;
:mod:`harness.sizing.limits.storage` and :mod:`harness.sizing.limits.network` add to it and
:mod:`harness.sizing.model.assemble` drives them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.loader import Catalog
from harness.sizing.scenario.question import NodeSpec
from harness.sizing.volumes.performance import VolumePerformance

__all__ = ["LATENCY_KEY", "PATH_KEYS", "REL_TIE", "Bucket", "Build", "Limit", "Node"]

#: relative tolerance under which two rates count as a tie
REL_TIE = 1e-9

#: limits that carry replication traffic; their raw rate also delays each replicated write
PATH_KEYS = ("primary.network.out", "peer.network.in", "replication.flow", "replication.path")
#: the key of the latency bound, beside the limits
LATENCY_KEY = "latency"


@dataclass(frozen=True)
class Bucket:
    """A credit bucket: ``capacity`` units, refilled at ``earn`` units/s, drained per I/O."""

    key: str
    capacity: float
    earn: float
    units_per_io: float


@dataclass(frozen=True)
class Limit:
    """A cap of ``baseline`` (or ``burst`` while ``bucket`` has credits) units per second."""

    key: str
    label: str
    resource: str
    units_per_io: float
    baseline: float
    detail: str
    burst: float | None = None
    bucket: str | None = None
    estimate: bool = False
    sources: tuple[str, ...] = ()

    def rate(self, balances: Mapping[str, float], buckets: Mapping[str, Bucket]) -> float:
        """Workload I/Os per second this limit allows given the current bucket balances.

        With credits left the limit runs at its burst level.  With its bucket empty it runs at the
        rate that spends credits exactly as fast as they are earned (never below its baseline):
        a fluid view of "burst, run dry, refill a little, burst again".  For most limits that is
        the baseline; for gp2 throughput in the 171-333 GiB band it is the baseline IOPS x the
        I/O size when that exceeds the 128 MiB/s floor.
        """
        baseline = self.baseline / self.units_per_io
        if self.burst is None or self.bucket is None:
            return baseline
        burst = self.burst / self.units_per_io
        if balances.get(self.bucket, 0.0) > 0:
            return burst
        bucket = buckets.get(self.bucket)
        if bucket is None:
            return baseline
        return max(baseline, min(burst, bucket.earn / bucket.units_per_io))


@dataclass
class Build:
    """Accumulates limits, buckets, notes and estimates while a scenario is resolved."""

    catalog: Catalog
    limits: list[Limit] = field(default_factory=list)
    buckets: list[Bucket] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    estimates: list[str] = field(default_factory=list)
    latency_estimated: bool = False
    latency_sources: list[str] = field(default_factory=list)

    def add(self, limit: Limit) -> None:
        if limit.units_per_io > 0:
            self.limits.append(limit)

    def add_bucket(self, bucket: Bucket) -> None:
        if bucket.capacity > 0 and bucket.units_per_io > 0:
            self.buckets.append(bucket)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def estimate(self, text: str) -> None:
        if text not in self.estimates:
            self.estimates.append(text)


@dataclass(frozen=True)
class Node:
    """One node of the pair as its limits see it: instance, volume, and its share of the I/Os."""

    role: Literal["primary", "peer"]
    spec: NodeSpec
    instance: InstanceType
    volume: VolumePerformance
    writes: float
    reads: float
    ebs_backed: bool

    @property
    def name(self) -> str:
        return self.spec.instance_type
