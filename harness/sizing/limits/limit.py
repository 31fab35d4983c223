"""The model's vocabulary: a limit, a credit bucket, a node as the limits see it, and the build.

Every resource on the write path allows at most some I/O rate: a :class:`Limit` of ``baseline``
units per second (or ``burst`` while its :class:`Bucket` holds credits), where a unit is whatever
the resource counts (bytes, 16 KiB operations, ...) and ``units_per_io`` converts to workload
I/Os.  :class:`Build` accumulates a scenario's limits, buckets, notes and estimates; its
:meth:`Build.cap` is the one way a limit (with its :class:`Burst` and that burst's bucket) is
made, by the storage, network, transport and CPU modules beside this one, which
:mod:`harness.sizing.model.assemble` drives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.loader import Catalog
from harness.sizing.scenario.question import SizedNode
from harness.sizing.volumes.performance import VolumePerformance

__all__ = ["LATENCY_KEY", "PATH_KEYS", "REL_TIE", "Bucket", "Build", "Burst", "Limit", "Node"]

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


@dataclass(frozen=True)
class Burst:
    """A limit's burst: ``rate`` units/s while bucket ``bucket`` holds credits.

    With ``credits`` the limit has a bucket of its own of that many units; without, it draws on
    the bucket another limit of the same resource fills (gp2 throughput on the I/O credits), or
    with no bucket at all the burst is only the level the resource is published with.
    """

    rate: float
    bucket: str | None = None
    credits: float | None = None


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

    def cap(
        self,
        *,
        key: str,
        label: str,
        resource: str,
        units_per_io: float,
        baseline: float,
        detail: str,
        sources: tuple[str, ...],
        burst: Burst | None = None,
        estimate: bool = False,
    ) -> Limit:
        """The limit ``key`` of ``baseline`` units/s (``units_per_io`` per workload I/O), kept
        when the workload uses the resource at all; a ``burst`` with ``credits`` first fills its
        bucket, earned back at the baseline and drained by this limit's I/Os."""
        if burst is not None and burst.bucket is not None and burst.credits is not None:
            bucket = Bucket(burst.bucket, burst.credits, baseline, units_per_io)
            if bucket.capacity > 0 and bucket.units_per_io > 0:
                self.buckets.append(bucket)
        limit = Limit(
            key=key,
            label=label,
            resource=resource,
            units_per_io=units_per_io,
            baseline=baseline,
            detail=detail,
            burst=burst.rate if burst is not None else None,
            bucket=burst.bucket if burst is not None else None,
            estimate=estimate,
            sources=sources,
        )
        if units_per_io > 0:
            self.limits.append(limit)
        return limit

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
    spec: SizedNode
    instance: InstanceType
    volume: VolumePerformance
    writes: float
    reads: float
    ebs_backed: bool

    @property
    def name(self) -> str:
        return self.spec.instance_type
