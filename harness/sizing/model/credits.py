"""Time-stepping over credit buckets: the phases of a run as burst credits run out.

The simulation starts with full buckets, runs the workload at the rate the limits allow, drains
each bucket by what the workload uses above that bucket's baseline, and switches a limit to its
baseline when its bucket empties (or, if the workload then uses less than the baseline, to the
rate that spends credits as fast as they are earned: :meth:`Limit.rate`).  Each step ends when
the next bucket runs dry, so the answer is a short list of phases ("3,000 IOPS for the first
33 minutes, then 300").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from harness.sizing.limits.limit import LATENCY_KEY, REL_TIE, Bucket, Limit
from harness.sizing.model.latency import LatencyBound

__all__ = ["RawPhase", "simulate"]

#: (start, end or None for the open last phase, IOPS, binding key, IOPS allowed per limit, path byte rate)
RawPhase = tuple[float, float | None, float, str, dict[str, float], float | None]


def _binding(rates: Mapping[str, float], order: Sequence[str]) -> tuple[str, float]:
    """The smallest rate and its key; near-ties go to the earliest key in ``order``."""
    lowest = min(rates.values())
    for key in order:
        if rates[key] <= lowest * (1 + REL_TIE):
            return key, lowest
    raise AssertionError("no binding limit")  # pragma: no cover


def simulate(
    limits: Sequence[Limit],
    buckets: Sequence[Bucket],
    latency: LatencyBound,
    duration_s: float | None,
) -> list[RawPhase]:
    """Phases as (start, end, iops, binding key, iops allowed per limit, path byte rate)."""
    balances = {bucket.key: bucket.capacity for bucket in buckets}
    by_key = {bucket.key: bucket for bucket in buckets}
    order = [limit.key for limit in limits] + [LATENCY_KEY]
    phases: list[RawPhase] = []
    now = 0.0
    for _ in range(len(buckets) + 2):
        rates = {limit.key: limit.rate(balances, by_key) for limit in limits}
        rates[LATENCY_KEY], path = latency.evaluate(balances, min(rates.values(), default=math.inf))
        key, rate = _binding(rates, order)
        drains = {
            bucket.key: rate * bucket.units_per_io - bucket.earn for bucket in buckets if balances[bucket.key] > 0
        }
        until_empty = {k: balances[k] / d for k, d in drains.items() if d > 0}
        step = min(until_empty.values(), default=math.inf)
        end = now + step
        if duration_s is not None:
            end = min(end, duration_s)
        if math.isinf(end):
            phases.append((now, None, rate, key, rates, path))
            return phases
        phases.append((now, end, rate, key, rates, path))
        if duration_s is not None and end >= duration_s:
            return phases
        for bucket_key, drain in drains.items():
            if drain > 0:
                balances[bucket_key] = max(0.0, balances[bucket_key] - drain * (end - now))
        for bucket_key, seconds in until_empty.items():
            if seconds <= step * (1 + REL_TIE):
                balances[bucket_key] = 0.0
        now = end
    raise AssertionError("bucket simulation did not settle")  # pragma: no cover
