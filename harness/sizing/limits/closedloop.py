"""The closed loop of synchronous writes: ``numjobs x iodepth`` I/Os, each passing a fixed delay
(disk, RTT) and the stations that queue them (CPUs, a volume's IOPS throttle, the pair's
replication capacity).

Far from every station's capacity the loop runs at ``outstanding / per-I/O time``; at a station's
capacity it runs at that capacity.  Between the two, I/Os queue at the station and the loop
runs below both: how far below depends on how regular the station's service is.
:func:`closed_loop_rate` is mean-value analysis (MVA): with ``n`` I/Os in flight an arriving
I/O finds the queue the loop had with ``n - 1`` (the arrival theorem) and waits for the whole
service of those waiting and the *remaining* service of the one being served: ``S (1 + c²) / 2``
for a service time of mean ``S`` and squared coefficient of variation ``c²`` (the residual
life of the Pollaczek-Khinchine formula).  A CPU's service varies like an exponential's
(``c² = 1``, where this is exact MVA); a rate limiter such as an EBS IOPS throttle releases
I/Os evenly spaced (``c² = 0``).  The rate never exceeds the busiest station's capacity (the
asymptotic bound, which the residual approximation alone can pass near saturation), and within
1 % of it counts as that capacity (:data:`SATURATED`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.sizing.limits.limit import Limit

__all__ = ["EVEN", "EXPONENTIAL", "SATURATED", "Station", "closed_loop_rate", "station_demands"]

#: squared coefficient of variation of a CPU's (or a pair's processing) service
EXPONENTIAL = 1.0
#: of a rate limiter's: it releases I/Os at even intervals
EVEN = 0.0
#: a loop within 1 % of its busiest station's capacity counts as running at it: the station,
#: not the latency, is what binds (with finitely many I/Os in flight the analysis only nears it)
SATURATED = 0.99


@dataclass(frozen=True)
class Station:
    """A queue in the loop: the capacity ``limit`` meters (one I/O takes its ``units_per_io``),
    how regular its service is, and whether the per-I/O time already holds one unqueued pass
    (then the loop's fixed delay is the per-I/O time less that pass, so that one I/O in
    flight still takes exactly the per-I/O time)."""

    limit: Limit
    cv2: float = EXPONENTIAL
    in_per_io: bool = False
    #: stations of one non-empty group serve each I/O side by side (the two volumes of a
    #: protocol C write, a volume and its instance's EBS cap): only the slowest of them queues
    group: str = ""


def station_demands(stations: Sequence[Station], balances: Mapping[str, float]) -> list[tuple[Station, float]]:
    """Each queueing station with the seconds it is busy per I/O at its current capacity (burst
    while its bucket holds credits, else baseline); of a group, only the slowest."""
    slowest: dict[str, tuple[Station, float]] = {}
    out: list[tuple[Station, float]] = []
    for station in stations:
        limit = station.limit
        capacity = (
            limit.burst if limit.burst is not None and balances.get(limit.bucket or "", 0.0) > 0 else limit.baseline
        )
        demand = limit.units_per_io / capacity if capacity > 0 else float("inf")
        if not station.group:
            out.append((station, demand))
        elif station.group not in slowest or demand > slowest[station.group][1]:
            slowest[station.group] = (station, demand)
    return out + list(slowest.values())


def closed_loop_rate(
    outstanding: int, demands: Sequence[float], think_s: float, cv2: Sequence[float] | None = None
) -> float:
    """I/Os per second of ``outstanding`` jobs cycling through queueing stations and a fixed delay.

    ``cv2`` gives each station's squared coefficient of variation (default: all exponential,
    which is exact MVA).
    """
    variation = list(cv2) if cv2 is not None else [EXPONENTIAL] * len(demands)
    if any(d == float("inf") for d in demands):
        return 0.0
    ceiling = 1 / max(demands) if demands and max(demands) > 0 else float("inf")
    queues = [0.0] * len(demands)
    busy = [0.0] * len(demands)
    rate = 0.0
    for jobs in range(1, outstanding + 1):
        residence = [
            demand * (1 + queue - u) + u * demand * (1 + c2) / 2
            for demand, queue, u, c2 in zip(demands, queues, busy, variation, strict=True)
        ]
        cycle = think_s + sum(residence)
        rate = min(jobs / cycle, ceiling) if cycle > 0 else ceiling
        queues = [rate * r for r in residence]
        if demands and rate >= ceiling:
            # held at the busiest station's capacity: the I/Os Little's law does not place
            # elsewhere wait there
            b = demands.index(max(demands))
            queues[b] = max(queues[b], jobs - rate * (think_s + sum(residence) - residence[b]))
        busy = [min(rate * demand, 1.0) for demand in demands]
    return ceiling if rate >= ceiling * SATURATED else rate
