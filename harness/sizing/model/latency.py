"""How long one write takes, per DRBD protocol, and the limit that puts on the I/O rate.

With ``outstanding`` I/Os in flight and each taking ``t`` seconds, at most ``outstanding / t``
complete per second.  :class:`ServiceTimes` owns ``t``: the local write, and for protocols B and
C the round trip, the time on the wire, the replication overhead and (C) the peer's write.
:class:`LatencyBound` makes that a limit whose value follows the replication path's byte rate,
which itself changes as the path's credit buckets drain (:mod:`harness.sizing.model.credits`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.fields import ReplicationProtocol
from harness.sizing.limits.closedloop import Station, closed_loop_rate, station_demands
from harness.sizing.limits.limit import REL_TIE, Bucket, Limit

__all__ = ["LatencyBound", "ServiceTimes"]


@dataclass(frozen=True)
class ServiceTimes:
    """Per-I/O service times the latency bound is built from."""

    outstanding: int
    read_fraction: float
    write_fraction: float
    local_write_s: float
    local_read_s: float
    peer_write_s: float | None
    rtt_s: float
    protocol: ReplicationProtocol
    bs: int
    overhead_s: float = 0.0
    host_latency_s: float = 0.0

    def per_io(self, path_rate: float | None) -> float:
        """Mean service time of one I/O given the replication path's current byte rate."""
        return self.read_fraction * self.local_read_s + self.write_fraction * self.write_s(path_rate)

    def write_s(self, path_rate: float | None) -> float:
        """Time until a write completes, per DRBD protocol (local and remote start together)."""
        if self.peer_write_s is None or self.protocol == "A":
            return self.local_write_s
        serialization = self.bs / path_rate if path_rate else 0.0
        remote = self.rtt_s + serialization + self.overhead_s + self.host_latency_s
        if self.protocol == "C":
            remote += self.peer_write_s
        return max(self.local_write_s, remote)

    def describe(self, path_rate: float | None) -> str:
        ms = 1000.0
        write = self.write_s(path_rate)
        if self.peer_write_s is None:
            how = f"local write {self.local_write_s * ms:.3g} ms"
        elif self.protocol == "A":
            how = f"protocol A waits for the local write only ({self.local_write_s * ms:.3g} ms)"
        else:
            ser = self.bs / path_rate if path_rate else 0.0
            parts = f"RTT {self.rtt_s * ms:.3g} ms"
            if ser > 0:
                parts += f" + {ser * ms:.2g} ms on the wire"
            if self.overhead_s > 0:
                parts += f" + replication overhead {self.overhead_s * ms:.3g} ms"
            if self.host_latency_s > 0:
                parts += f" + hosts' packet path {self.host_latency_s * ms:.3g} ms"
            if self.protocol == "C":
                parts += f" + peer write {self.peer_write_s * ms:.3g} ms"
            how = (
                f"protocol {self.protocol}: max(local write {self.local_write_s * ms:.3g} ms, "
                f"{parts}) = {write * ms:.3g} ms"
            )
        if self.read_fraction > 0:
            how += f"; reads {self.local_read_s * ms:.3g} ms locally"
        return f"{self.outstanding} I/Os in flight / {self.per_io(path_rate) * ms:.3g} ms per I/O ({how})"


@dataclass(frozen=True)
class LatencyBound:
    """The latency limit, whose value depends on how fast the replication path moves a write.

    The path runs at burst speed while its credit buckets hold credits and at baseline once they
    are spent.  A spent bucket refills whenever the workload uses less than the baseline, so a
    path bucket that is empty but would refill at the resulting rate counts as available; if
    reviving it pushes usage above the baseline again, the rate settles where usage equals the
    baseline (the same fluid view :meth:`Limit.rate` takes).  Without this, the steady state
    would depend on which bucket happened to run dry first.
    """

    latency: ServiceTimes
    path_limits: tuple[Limit, ...]
    buckets: Mapping[str, Bucket]
    stations: tuple[Station, ...] = ()

    def rate_at(self, path_rate: float | None, balances: Mapping[str, float] | None = None) -> float:
        """I/Os per second the latency allows; with stations, the closed loop through them
        (:mod:`harness.sizing.limits.closedloop`)."""
        per_io = self.latency.per_io(path_rate)
        if not self.stations:
            return self.latency.outstanding / per_io
        queues = station_demands(self.stations, balances or {})
        # A pass the per-I/O time already holds is not a second delay on top of it.  When that
        # pass is longer than the whole per-I/O time (a throttle's interval longer than the
        # write), the rest of the I/O's path overlaps it: a rate limiter's tokens accrue while
        # the I/O is at a CPU.  The delay then goes negative by that overlap, so that one I/O
        # in flight cycles in max(throttle interval, its own path) and not in their sum.
        held = sum(demand for station, demand in queues if station.in_per_io)
        return closed_loop_rate(
            self.latency.outstanding,
            [demand for _, demand in queues],
            per_io - held,
            [station.cv2 for station, _ in queues],
        )

    def describe(self, path_rate: float | None, rate: float) -> str:
        """How the bound came about; ``rate`` is what it allowed (below ``outstanding / per-I/O
        time`` when the I/Os queue at the stations)."""
        text = self.latency.describe(path_rate)
        unqueued = self.latency.outstanding / self.latency.per_io(path_rate)
        if self.stations and rate < unqueued * (1 - 1e-6):
            queues = [station.limit.label for station, _ in station_demands(self.stations, {})]
            text += (
                f"; they queue at the {', '.join(queues)} (mean-value analysis of the closed loop), "
                f"which leaves {rate:,.0f} IOPS"
            )
        return text

    def sustained_path(self) -> float | None:
        return min((limit.baseline for limit in self.path_limits), default=None)

    def evaluate(self, balances: Mapping[str, float], others: float) -> tuple[float, float | None]:
        """(I/Os per second the latency allows, path byte rate used) given the other limits' min."""
        caps: dict[str, float] = {}
        spent: list[tuple[Limit, Bucket]] = []
        for limit in self.path_limits:
            bucket = self.buckets.get(limit.bucket) if limit.bucket is not None else None
            if limit.burst is None or bucket is None:
                caps[limit.key] = limit.baseline
            elif balances.get(bucket.key, 0.0) > 0:
                caps[limit.key] = limit.burst
            else:
                caps[limit.key] = limit.baseline
                spent.append((limit, bucket))
        path = min(caps.values(), default=None)
        first = self.rate_at(path, balances)
        rate = min(others, first)
        revived = [(lim, b) for lim, b in spent if rate * b.units_per_io < b.earn * (1 - REL_TIE)]
        if not revived:
            return first, path
        for limit, _ in revived:
            caps[limit.key] = limit.burst or limit.baseline
        faster_path = min(caps.values(), default=None)
        second = self.rate_at(faster_path, balances)
        rate = min(others, second)
        over = [b for _, b in revived if rate * b.units_per_io > b.earn * (1 + REL_TIE)]
        if not over:
            return second, faster_path
        settle = min(b.earn / b.units_per_io for b in over)
        return max(first, min(second, settle)), path
