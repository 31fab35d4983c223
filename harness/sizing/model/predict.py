"""Predict replicated-write throughput, IOPS and latency from published limits, naming the binding one.

The model answers the pre-sales question "will this pair sustain N MB/s of this workload?" the way
an SRE reasons about it: every resource on the write path (each node's volume, each instance's
dedicated EBS link, the primary's outbound and the peer's inbound network allowance, the single
TCP flow DRBD replicates over, and the latency of a synchronous write) allows at most some I/O
rate, and the workload gets the smallest of them.  Each limit is returned with its value, so the
answer says *which* limit binds and how much headroom the others leave.

Time matters because several AWS limits are credit buckets (gp2 I/O credits, st1 throughput
credits, the 30-minute EBS burst of smaller instances, network I/O credits).  The model starts
with full buckets, runs the workload at the rate the limits allow, drains each bucket by what the
workload uses above that bucket's baseline, and switches a limit to its baseline when its bucket
empties (or, if the workload then uses less than the baseline, at the rate that spends credits as
fast as they are earned).  The result is a list of phases ("3,000 IOPS for the first 33 minutes,
then 300").


Every part is pure: no I/O, no clock.  Measured values (local write latency and bandwidth,
RTT and rate of the replication path) enter through
:class:`~harness.sizing.scenario.question.Calibration` and replace the catalog figures they
correspond to, so the same model serves the lab and real clusters.

The parts, in the order a prediction flows through them:

* :mod:`harness.sizing.scenario`: the question (workload, nodes, volumes, placement, calibration)
  and its text forms;
* :mod:`harness.sizing.volumes`: what a volume of a catalog type delivers at a size;
* :mod:`harness.sizing.model.assemble`: a scenario's limits and credit buckets
  (:mod:`~harness.sizing.limits.storage`, :mod:`~harness.sizing.limits.network`,
  :mod:`~harness.sizing.limits.transport` for the TCP window and headers,
  :mod:`~harness.sizing.limits.cpu` for CPU, in the vocabulary of :mod:`~harness.sizing.limits.limit`;
  :mod:`~harness.sizing.catalog.clouds` for which cloud's rules apply) and its latency bound
  (:mod:`~harness.sizing.model.latency`, a closed loop through the CPUs when they are modelled);
* :mod:`harness.sizing.model.credits`: the phases of the run as the buckets drain;
* this module: :func:`predict`, which summarises the phases into a
  :class:`~harness.sizing.model.prediction.Prediction` with protocol A's lag and the pair's cost
  (:mod:`~harness.sizing.model.cost`);
* :mod:`harness.sizing.answer.search`: which instance types meet a requirement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from harness.sizing.catalog.loader import Catalog
from harness.sizing.limits.limit import LATENCY_KEY, REL_TIE, Bucket, Build, Limit
from harness.sizing.limits.transport import protocol_a_lag
from harness.sizing.model.assemble import collect, sndbuf_bytes
from harness.sizing.model.cost import PairCost, pair_cost
from harness.sizing.model.credits import simulate
from harness.sizing.model.latency import LatencyBound
from harness.sizing.model.ondemand import on_demand_note
from harness.sizing.model.prediction import LimitValue, Phase, Prediction
from harness.sizing.scenario.question import Scenario
from harness.units import MIB

__all__ = ["predict"]


def predict(scenario: Scenario, catalog: Catalog) -> Prediction:
    """Predict ``scenario``'s rate, latency and binding limit from ``catalog`` (and calibration).

    Raises ConfigError when the scenario names something the catalog lacks or a volume choice the
    provider would refuse.
    """
    workload = scenario.workload
    bs = workload.bs
    build, bound, peer, rtt = collect(scenario, catalog)
    raw = simulate(build.limits, build.buckets, bound, scenario.duration_s)
    phases = tuple(
        Phase(
            start_s=start,
            end_s=end,
            iops=rate,
            bw=rate * bs,
            latency_s=workload.outstanding / rate,
            bottleneck=key,
            limits=rates,
        )
        for start, end, rate, key, rates, _ in raw
    )
    final_path = raw[-1][5]
    basis, iops, bottleneck, values = _over_basis(scenario, build, phases)
    latency = bound.latency
    write_time = latency.write_s(final_path) if workload.write_fraction > 0 else None
    budget = None
    break_even = None
    if workload.write_fraction > 0:
        per_io_budget = workload.outstanding / iops
        budget = (per_io_budget - workload.read_fraction * latency.local_read_s) / workload.write_fraction
        if peer is not None and scenario.write_protocol != "A":
            serialization = bs / final_path if final_path else 0.0
            remote = peer.volume.write_latency_s if scenario.write_protocol == "C" else 0.0
            break_even = budget - serialization - remote - latency.overhead_s
    lag = None
    if (
        peer is not None
        and workload.write_fraction > 0
        and any(scenario.protocol_of(slot) == "A" for slot in scenario.data_peers)
    ):
        lag = protocol_a_lag(sndbuf_bytes(scenario, catalog), bs, iops * bs * workload.write_fraction)
        build.note(
            f"Protocol A: the peer may trail by the send buffer, {lag.bytes / MIB:g} MiB "
            f"= {lag.writes:,.0f} writes of {bs} B = {lag.seconds:.3g} s at this rate; a crash of the "
            "primary can lose that many acknowledged writes."
        )
    bursting = on_demand_note(scenario, catalog, iops, bs)
    if bursting is not None:
        build.note(bursting)
    return Prediction(
        scenario=scenario,
        bs=bs,
        basis=basis,
        iops=iops,
        latency_s=workload.outstanding / iops,
        bottleneck=bottleneck,
        limits=_limit_values(build=build, values=values, phases=phases, bound=bound, final_path=final_path),
        phases=phases,
        rtt_s=rtt,
        write_time_s=write_time,
        write_time_budget_s=budget,
        break_even_rtt_s=break_even,
        notes=tuple(build.notes),
        estimates=tuple(build.estimates),
        lag_bytes=lag.bytes if lag is not None else None,
        lag_s=lag.seconds if lag is not None else None,
        cost=_cost(scenario, catalog, iops * bs * workload.write_fraction),
    )


def _cost(scenario: Scenario, catalog: Catalog, written_bytes_s: float) -> PairCost | None:
    return pair_cost(scenario, catalog, written_bytes_s)


def _over_basis(
    scenario: Scenario, build: Build, phases: Sequence[Phase]
) -> tuple[Literal["steady state", "mean over run"], float, str, dict[str, float]]:
    """(basis, IOPS, binding limit, value per limit) in the steady state or over the run.

    Over a run the binding limit is the one that binds for the longest time (the later one on a
    tie).  A limit with credits allows on average what its credits fund over the run (its budget,
    :func:`_budget_values`); any other its time-weighted mean.  Either way the mean rate never
    exceeds it.
    """
    if scenario.duration_s is None:
        final = phases[-1]
        return "steady state", final.iops, final.bottleneck, _steady_limit_values(build.limits, build.buckets, final)
    total = scenario.duration_s
    weights = [(phase, (phase.length_s or 0.0) / total) for phase in phases]
    iops = sum(phase.iops * weight for phase, weight in weights)
    time_bound: dict[str, float] = {}
    for phase, weight in weights:
        time_bound[phase.bottleneck] = time_bound.get(phase.bottleneck, 0.0) + weight
    longest = max(time_bound.values())
    bottleneck = next(phase.bottleneck for phase, _ in reversed(weights) if time_bound[phase.bottleneck] == longest)
    values = {key: sum(phase.limits[key] * weight for phase, weight in weights) for key in phases[0].limits}
    values.update(_budget_values(build, total))
    return "mean over run", iops, bottleneck, values


def _budget_values(build: Build, duration_s: float) -> dict[str, float]:
    """What each limit with a credit bucket can carry on average over ``duration_s``.

    A bucket starts full with ``capacity`` units and earns ``earn`` a second, so over the run it
    funds ``(earn x duration + capacity) / units_per_io`` I/Os whichever limit draws on it; the
    limit allows that on average, never more than its burst nor less than its baseline.  The
    time-weighted mean of the allowance would say more: t3.medium's network allows 5 Gbps while
    its credits last and 0.256 Gbps after, but 2 h of it carry 0.256 + 1,423 Gb / 7,200 s =
    0.454 Gbps on average, not the 0.89 Gbps the allowance averages when the credits last 16 min.
    """
    buckets = {bucket.key: bucket for bucket in build.buckets}
    values: dict[str, float] = {}
    for limit in build.limits:
        bucket = buckets.get(limit.bucket) if limit.bucket is not None else None
        if bucket is None or limit.burst is None:
            continue
        funded = (bucket.earn * duration_s + bucket.capacity) / (bucket.units_per_io * duration_s)
        baseline = limit.baseline / limit.units_per_io
        values[limit.key] = min(limit.burst / limit.units_per_io, max(baseline, funded))
    return values


def _steady_limit_values(limits: Sequence[Limit], buckets: Sequence[Bucket], final: Phase) -> dict[str, float]:
    """What each limit allows indefinitely: its rate once every credit bucket is empty.

    A bucket the workload never drains still leaves the final phase at burst level, but that
    level is not sustainable for more load; the value reported is what a limit can give forever.
    """
    by_key = {bucket.key: bucket for bucket in buckets}
    empty = {bucket.key: 0.0 for bucket in buckets}
    values = {limit.key: limit.rate(empty, by_key) for limit in limits}
    values[LATENCY_KEY] = final.limits[LATENCY_KEY]
    return values


def _urls(catalog: Catalog, sources: Sequence[str]) -> tuple[str, ...]:
    """Reference ids resolved to URLs; URLs and free text (a calibration label) kept as they are."""
    return tuple(catalog.references[s].url if s in catalog.references else s for s in sources)


def _limit_values(
    *,
    build: Build,
    values: Mapping[str, float],
    phases: Sequence[Phase],
    bound: LatencyBound,
    final_path: float | None,
) -> tuple[LimitValue, ...]:
    """Public values of every limit, the latency bound last."""
    bs = bound.latency.bs
    outstanding = bound.latency.outstanding
    result: list[LimitValue] = []
    exhausted: dict[str, float] = {}
    for limit in build.limits:
        if limit.bucket is None or limit.burst is None:
            continue
        burst_rate = limit.burst / limit.units_per_io
        for phase in phases:
            if phase.limits[limit.key] < burst_rate * (1 - REL_TIE):
                exhausted[limit.key] = phase.start_s
                break
    for limit in build.limits:
        iops = values[limit.key]
        burst = limit.burst / limit.units_per_io if limit.burst is not None else None
        result.append(
            LimitValue(
                key=limit.key,
                label=limit.label,
                resource=limit.resource,
                iops=iops,
                bw=iops * bs,
                baseline_iops=limit.baseline / limit.units_per_io,
                burst_iops=burst,
                burst_ends_s=exhausted.get(limit.key),
                detail=limit.detail,
                estimate=limit.estimate,
                sources=_urls(build.catalog, limit.sources),
            )
        )
    latency_iops = values[LATENCY_KEY]
    result.append(
        LimitValue(
            key=LATENCY_KEY,
            label=f"latency bound ({outstanding} I/Os in flight)",
            resource="latency",
            iops=latency_iops,
            bw=latency_iops * bs,
            baseline_iops=bound.rate_at(bound.sustained_path()),
            burst_iops=None,
            burst_ends_s=None,
            detail=bound.describe(final_path, latency_iops),
            estimate=build.latency_estimated,
            sources=_urls(build.catalog, build.latency_sources),
        )
    )
    return tuple(result)
