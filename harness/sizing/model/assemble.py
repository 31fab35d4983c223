"""A scenario's limits assembled: the nodes resolved, every limit and bucket, the latency bound.

:func:`collect` is the one place that decides which limits a scenario has: the storage limits of
each node (or the measured device), the network limits (or the measured path), the measured
replication capacities, and the latency bound over the RTT of the placement (or the measured
one), with the notes and estimates a reader needs to trust the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from harness.sizing.catalog.clouds import placement_for, same_cloud
from harness.sizing.catalog.loader import Catalog
from harness.sizing.limits.closedloop import EVEN, EXPONENTIAL, Station
from harness.sizing.limits.cpu import add_cpu_limits
from harness.sizing.limits.limit import PATH_KEYS, Build, Node
from harness.sizing.limits.network import add_measured_path, add_network_limits, add_replication_capacities
from harness.sizing.limits.storage import add_calibrated_limits, add_ebs_limits, add_volume_limits
from harness.sizing.limits.transport import add_window_limit, wire_factor
from harness.sizing.model.latency import LatencyBound, ServiceTimes
from harness.sizing.scenario.question import Scenario, SizedNode
from harness.sizing.scenario.topology import PeerSlot
from harness.sizing.volumes.performance import VolumePerformance
from harness.sizing.volumes.rules import volume_performance

__all__ = ["collect", "sndbuf_bytes"]


#: IOPS limits that queue a write where it is written, with how regular their service is: a
#: cloud's IOPS throttle spaces I/Os evenly; a measured device serves like a CPU
_THROTTLES = {"volume.iops": EVEN, "volume.write_iops": EVEN, "ebs.iops": EVEN, "local.iops": EXPONENTIAL}


def _queue_stations(build: Build, protocol: str, *, replicated: bool) -> list[Station]:
    """The limits a write queues at besides CPUs: the IOPS throttles of the disks it waits for
    (the primary's, and under protocol C the peer's) and the pair's measured replication
    capacity.

    A modelled write's time already holds one unqueued pass of each, on branches that run side
    by side (the local write beside the trip to the peer), so they form one group: the slowest
    queues, and one I/O in flight still takes exactly the write's time.  Protocol A completes
    after the local write: the replication's processing is not in that time but follows it on
    the node, a station of its own.
    """
    roles = ("primary", "peer") if replicated and protocol == "C" else ("primary",)
    stations = []
    for limit in build.limits:
        role, _, kind = limit.key.partition(".")
        if role in roles and kind in _THROTTLES:
            stations.append(Station(limit, _THROTTLES[kind], in_per_io=True, group="write"))
        elif replicated and limit.key == "replication.capacity":
            in_write = protocol != "A"
            group = "write" if in_write else ""
            stations.append(Station(limit, EXPONENTIAL, in_per_io=in_write, group=group))
    return stations


def sndbuf_bytes(scenario: Scenario, catalog: Catalog) -> float:
    """The send buffer of one replication connection: the scenario's, else the catalog's default."""
    if scenario.sndbuf_bytes is not None:
        return scenario.sndbuf_bytes
    return catalog.defaults.tcp_sndbuf_bytes.value


def collect(scenario: Scenario, catalog: Catalog) -> tuple[Build, LatencyBound, Node | None, float | None]:
    """Every limit and credit bucket of ``scenario``, its latency bound, the peer and the RTT."""
    workload = scenario.workload
    bs = workload.bs
    build = Build(catalog)
    primary, peer = _resolve_nodes(scenario, catalog)
    nodes = [primary] if peer is None else [primary, peer]
    calibration = scenario.calibration

    if calibration is not None and (calibration.local_bandwidth is not None or calibration.local_iops is not None):
        add_calibrated_limits(build, nodes, calibration, bs)
    else:
        for node in nodes:
            add_volume_limits(build, node, bs, random=workload.rw.startswith("rand"))
            add_ebs_limits(build, node, bs)

    if calibration is not None and calibration.path_rate_bits is not None:
        if peer is not None:
            add_measured_path(build, calibration.path_rate_bits, calibration.label, workload.write_fraction, bs)
    else:
        wire = wire_factor(catalog, scenario.mtu_bytes)
        add_network_limits(build, primary, peer, bs, wire=wire, peers=len(scenario.data_peers))
    if calibration is not None and peer is not None:
        add_replication_capacities(build, calibration, workload.write_fraction, bs)

    rtt = _rtt(scenario, catalog, build)
    window_rtt = _rtt(scenario, catalog, build, waited_only=False)
    if peer is not None and window_rtt is not None:
        read = calibration.tcp_window_bytes if calibration is not None and scenario.sndbuf_bytes is None else None
        add_window_limit(
            build,
            workload.write_fraction,
            bs,
            rtt_s=window_rtt,
            sndbuf=read if read is not None else sndbuf_bytes(scenario, catalog),
            explicit=scenario.sndbuf_bytes is not None,
            origin=f"{calibration.label}: the nodes' TCP buffers" if read is not None and calibration else None,
            processing=calibration.replicated_bandwidth if calibration is not None else None,
            processing_rtt_s=calibration.replicated_bandwidth_rtt_s if calibration is not None else None,
        )
    if peer is not None and len(scenario.peer_slots) > 1:
        build.note(_peers_note(scenario))
    latency = ServiceTimes(
        outstanding=workload.outstanding,
        read_fraction=workload.read_fraction,
        write_fraction=workload.write_fraction,
        local_write_s=primary.volume.write_latency_s,
        local_read_s=primary.volume.read_latency_s,
        peer_write_s=peer.volume.write_latency_s if peer is not None else None,
        rtt_s=rtt or 0.0,
        protocol=scenario.write_protocol,
        bs=bs,
        overhead_s=(calibration.replication_overhead_s or 0.0) if calibration is not None else 0.0,
        host_latency_s=_host_latency(primary, peer),
    )
    # A calibration measured the pair as it is, CPU included: no catalog CPU figure on top.
    stations = (
        add_cpu_limits(build, nodes if peer is not None else [], bs, scenario.launch_credits)
        if calibration is None
        else []
    )
    stations += _queue_stations(build, scenario.write_protocol, replicated=peer is not None)
    bound = LatencyBound(
        latency=latency,
        path_limits=tuple(limit for limit in build.limits if limit.key in PATH_KEYS),
        buckets={bucket.key: bucket for bucket in build.buckets},
        stations=tuple(stations),
    )
    _cpu_notes(build, nodes)
    if peer is not None and any(scenario.protocol_of(slot) == "A" for slot in scenario.data_peers):
        build.note(
            "Protocol A acknowledges after the local write, but DRBD's buffers fill at the "
            "network or peer-disk rate, so those limits still cap sustained throughput (LINBIT); "
            "the peer may lag by the send buffer, and a crash of the primary loses what it holds."
        )
    if any(limit.resource == "flow" for limit in build.limits):
        build.note(
            "A cluster placement group raises the single-flow cap to 10 Gbps (same AZ only); "
            "DRBD 9's lb-tcp transport spreads a peer over several flows."
        )
    return build, bound, peer, rtt


def _resolve_nodes(scenario: Scenario, catalog: Catalog) -> tuple[Node, Node | None]:
    workload = scenario.workload

    cloud = catalog.instance(scenario.primary.instance_type).cloud

    def node(role: Literal["primary", "peer"], spec: SizedNode, writes: float, reads: float) -> Node:
        instance = catalog.instance(spec.instance_type)
        volume = catalog.volume(spec.volume.type)
        same_cloud(f"{role} instance type", spec.instance_type, instance.cloud, cloud)
        same_cloud(f"{role} volume", spec.volume.type, volume.cloud, cloud)
        perf = volume_performance(spec.volume.type, volume, spec.volume, instance)
        calibration = scenario.calibration
        if calibration is not None and calibration.local_write_latency_s is not None:
            read = calibration.local_read_latency_s or calibration.local_write_latency_s
            perf = _replace_latency(perf, calibration.local_write_latency_s, read)
        elif calibration is not None and calibration.local_read_latency_s is not None:
            perf = _replace_latency(perf, perf.write_latency_s, calibration.local_read_latency_s)
        return Node(role, spec, instance, perf, writes, reads, volume.network_attached)

    primary = node("primary", scenario.primary, workload.write_fraction, workload.read_fraction)
    peer_spec = scenario.peer_node
    peer = node("peer", peer_spec, workload.write_fraction, 0.0) if peer_spec is not None else None
    return primary, peer


def _replace_latency(perf: VolumePerformance, write_s: float, read_s: float) -> VolumePerformance:
    return replace(perf, write_latency_s=write_s, read_latency_s=read_s, latency_estimate=False)


def _peers_note(scenario: Scenario) -> str:
    note = _peers_sentence(scenario)
    if len(scenario.waited_peers) < len(scenario.data_peers):
        note += " A replica under protocol A is not waited for, but its connection still carries every write."
    return note


def _peers_sentence(scenario: Scenario) -> str:
    peers, data = len(scenario.peer_slots), len(scenario.data_peers)
    if data == peers:
        return (
            f"DRBD 9 with {peers} peers: the primary sends every write once per peer (its outbound "
            "allowance carries them all); under protocol C a write completes when the slowest peer has it."
        )
    tiebreakers = (
        "1 of them a diskless tie-breaker" if peers - data == 1 else f"{peers - data} of them diskless tie-breakers"
    )
    return (
        f"DRBD 9 with {peers} peers, {tiebreakers}: the primary sends every "
        f"write once to each of the {data} with a replica (its outbound allowance carries them all) and none "
        "to a tie-breaker, which only votes for quorum; under protocol C a write completes when the slowest "
        "replica has it."
    )


def _rtt(scenario: Scenario, catalog: Catalog, build: Build, *, waited_only: bool = True) -> float | None:
    """The round trip a replicated write waits for: the measured one, else the longest of the
    replicas it waits for (a tie-breaker never, a protocol A replica not for completion; when
    every replica is under A, the longest of them).  With ``waited_only`` false, the longest of
    every replica: each connection keeps at most its send buffer in flight per round trip, so
    the farthest one's window caps the rate whatever its protocol."""
    if not scenario.replicate:
        return None
    if scenario.calibration is not None and scenario.calibration.rtt_s is not None:
        return scenario.calibration.rtt_s
    cloud = catalog.instance(scenario.primary.instance_type).cloud
    slots = (scenario.waited_peers if waited_only else ()) or scenario.data_peers
    return max(_slot_rtt(slot, cloud, catalog, build) for slot in dict.fromkeys(slots))


def _slot_rtt(slot: PeerSlot, cloud: str, catalog: Catalog, build: Build) -> float:
    if slot.rtt_s is not None:
        return slot.rtt_s
    name = placement_for(slot.placement, cloud)
    placement = catalog.placement_on(slot.placement, cloud)
    build.latency_sources.extend(s for s in placement.sources if s not in build.latency_sources)
    if placement.estimate:
        build.latency_estimated = True
        build.estimate(f"{name} RTT {placement.rtt_ms:g} ms ({placement.note})")
    return placement.rtt_ms / 1000


def _host_latency(primary: Node, peer: Node | None) -> float:
    """What the two hosts' packet paths add to a replicated write: each is crossed out and back."""
    if peer is None:
        return 0.0
    total = 0.0
    for node in (primary, peer):
        virt = node.instance.virtualization
        if virt is not None:
            total += 2 * virt.packet_latency_us * 1e-6
    return total


def _cpu_notes(build: Build, nodes: Sequence[Node]) -> None:
    for node in nodes:
        credits = node.instance.cpu_credits
        if credits is None:
            continue
        if credits.default_mode == "standard":
            effect = (
                "launches in standard mode: once its CPU credits are spent the CPU is held to that "
                "baseline, which can throttle fio and the replication threads"
            )
        else:
            effect = "launches in unlimited mode: CPU above the baseline is billed extra instead of throttled"
        build.note(
            f"{node.name}: burstable CPU earning {credits.earned_per_hour:g} credits/h "
            f"= {credits.baseline_per_vcpu_pct:g} % of each of {node.instance.vcpu} vCPU; {effect}. "
            + (
                "Its CPU per I/O is modelled (limit 'cpu')."
                if node.instance.virtualization is not None and node.instance.virtualization.cpu_cycles_per_byte > 0
                else "The catalog has no CPU-per-I/O figure for it: CPU is not modelled."
            )
        )
