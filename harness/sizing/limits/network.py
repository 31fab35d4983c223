"""The network limits of a replicated write: each instance's allowance, the single flow, the path.

Every write leaves the primary once more, to the peer; the primary's outbound and the peer's
inbound allowance each carry it (twice on an instance without dedicated EBS bandwidth, whose EBS
traffic shares the NIC), and DRBD replicates over one TCP flow, capped outside a cluster
placement group.  On Google Cloud, Persistent Disk writes leave through the VM's egress cap too
(:func:`_add_disk_egress_limit`), which Google splits 60/40 between disk writes and the rest (the
replication) while they compete.  A calibration's measured path rate replaces all of these
(:func:`add_measured_path`), and its measured replicated bandwidth and IOPS add the pair's own
processing capacity (:func:`add_replication_capacities`).
"""

from __future__ import annotations

from typing import Literal

from harness.sizing.catalog.gcp_disks import GcpSizeScaledDisk, PdEgress
from harness.sizing.limits.limit import Build, Burst, Node
from harness.sizing.scenario.question import Calibration
from harness.units import MIB

__all__ = ["add_measured_path", "add_network_limits", "add_replication_capacities"]


def _gbps(value: float) -> float:
    return value * 1e9 / 8


def _add_network_limit(
    build: Build, node: Node, direction: Literal["in", "out"], bytes_per_io: float, why: str, *, share: float = 1.0
) -> None:
    """``node``'s allowance in one direction; ``share`` < 1 when only that part of it is left (GCP
    egress while Persistent Disk writes compete for it)."""
    network = node.instance.network
    defaults = build.catalog.defaults
    base = _gbps(network.baseline_gbps) * share
    burst = _gbps(network.burst_gbps) * share if network.burst_gbps is not None else None
    key = f"{node.role}.network.{direction}"
    detail = f"{node.name} network ({network.label or 'no label'}): {network.baseline_gbps:g} Gbps"
    if share < 1:
        detail += f" x {share:.0%} left to it"
    allowance_burst = None
    if burst is not None and burst > base:
        if network.burst_minutes is not None:
            minutes = network.burst_minutes
        else:
            minutes = defaults.network_burst_minutes.value
            if defaults.network_burst_minutes.estimate:
                build.estimate(
                    f"network burst lasts {minutes:g} min at full rate ({defaults.network_burst_minutes.note})"
                )
        allowance_burst = Burst(burst, f"{key}_credits", (burst - base) * minutes * 60)
        detail += f" baseline, {network.burst_gbps:g} Gbps burst (~{minutes:g} min at full burst)"
    detail += f" {direction}bound; carries {why}"
    _note_estimate(build, node)
    build.cap(
        key=key,
        label=f"{node.role} {node.name} network {direction}",
        resource="network",
        units_per_io=bytes_per_io,
        baseline=base,
        burst=allowance_burst,
        detail=detail,
        estimate=network.estimate,
        sources=tuple(node.instance.sources),
    )


def add_network_limits(
    build: Build, primary: Node, peer: Node | None, bs: int, *, wire: float = 1.0, peers: int = 1
) -> None:
    """The primary's outbound and the peer's inbound allowance, the shared-NIC EBS traffic, the single flow.

    ``wire`` is bytes on the wire per payload byte (IP and TCP headers); with ``peers`` > 1 (DRBD
    9) the primary sends every write once per peer, each over its own connection.
    """
    writes = primary.writes
    payload = bs
    bs = round(bs * wire) if wire != 1.0 else bs
    # The primary: replication out; on an instance without dedicated EBS bandwidth its EBS
    # writes leave through the same interface and its EBS reads arrive through it.
    shared_primary = primary.ebs_backed and not primary.instance.ebs.optimized
    out_parts: list[str] = []
    out_bytes = 0.0
    if peer is not None:
        out_bytes += writes * bs * peers
        out_parts.append("every write to the peer" if peers == 1 else f"every write to each of {peers} peers")
    if shared_primary:
        out_bytes += writes * bs
        out_parts.append("every write to EBS (not EBS-optimized: EBS shares the NIC)")
        build.note(
            f"{primary.name} is not EBS-optimized: EBS traffic shares its network interface "
            "(AWS), so the primary's outbound allowance carries each write twice when replicating."
        )
    # GCP Persistent Disk: the primary's disk writes leave through the same egress cap; Google
    # allocates it 60/40 between disk writes and all other egress while they compete.
    disk_egress = _pd_egress(build, primary) if writes > 0 else None
    contended = disk_egress is not None and out_bytes > 0
    if out_bytes > 0:
        share = disk_egress.other_share if disk_egress is not None and contended else 1.0
        why = " and ".join(out_parts) + (
            " (Persistent Disk writes take the rest of the egress cap)" if contended else ""
        )
        _add_network_limit(build, primary, "out", out_bytes, why, share=share)
    if disk_egress is not None:
        _add_disk_egress_limit(build, primary, disk_egress, payload, contended)
    if shared_primary and primary.reads > 0:
        _add_network_limit(build, primary, "in", primary.reads * bs, "every read from EBS")
    if peer is None:
        return
    _add_network_limit(build, peer, "in", peer.writes * bs, "every replicated write")
    peer_egress = _pd_egress(build, peer) if peer.writes > 0 else None
    if peer_egress is not None:
        _add_disk_egress_limit(build, peer, peer_egress, payload, contended=False)
    if peer.ebs_backed and not peer.instance.ebs.optimized:
        _add_network_limit(build, peer, "out", peer.writes * bs, "the peer's writes to EBS (not EBS-optimized)")
        build.note(f"{peer.name} is not EBS-optimized: the peer's EBS writes share its network interface.")
    if primary.instance.cloud != "aws":
        return  # the 5 Gbps single-flow limit is EC2's; Google and Azure publish per-VM limits only
    flow = build.catalog.defaults.single_flow_gbps
    build.cap(
        key="replication.flow",
        label="single TCP flow cap",
        resource="flow",
        units_per_io=writes * bs,
        baseline=_gbps(flow.value),
        detail=(
            f"one 5-tuple flow is limited to {flow.value:g} Gbps outside a cluster placement "
            "group; DRBD replicates over one TCP connection per peer"
            + (f"; {payload} B writes take {bs} B on the wire" if bs != payload else "")
        ),
        estimate=flow.estimate,
        sources=tuple(flow.sources),
    )


def _pd_egress(build: Build, node: Node) -> PdEgress | None:
    """The egress rule of ``node``'s volume when its writes leave through the VM's network (GCP PD)."""
    volume = build.catalog.volume(node.volume.type)
    return volume.egress if isinstance(volume, GcpSizeScaledDisk) else None


def _add_disk_egress_limit(build: Build, node: Node, egress: PdEgress, bs: int, contended: bool) -> None:
    """``node``'s Persistent Disk writes against its egress cap: ``write_multiplier`` bytes per byte
    written, within the disk writes' share while replication competes, else the whole cap."""
    network = node.instance.network
    share = egress.disk_write_share if contended else 1.0
    volume = build.catalog.volume(node.volume.type)
    cited = volume.figure_sources.get("egress")
    detail = f"{node.name} egress cap {network.baseline_gbps:g} Gbps"
    if contended:
        detail += f" x {share:.0%} allocated to Persistent Disk writes while replication competes"
    detail += f"; each written byte costs {egress.write_multiplier:g} bytes of egress (Google)"
    _note_estimate(build, node)
    build.cap(
        key=f"{node.role}.network.disk_writes",
        label=f"{node.role} {node.name} egress for {node.volume.type} writes",
        resource="network",
        units_per_io=node.writes * bs * egress.write_multiplier,
        baseline=_gbps(network.baseline_gbps) * share,
        detail=detail,
        estimate=network.estimate,
        sources=tuple(cited.sources if cited is not None else volume.sources) + tuple(node.instance.sources),
    )


def _note_estimate(build: Build, node: Node) -> None:
    """Note once that ``node``'s network allowance is an estimate, where the catalog says so."""
    network = node.instance.network
    if network.estimate:
        build.estimate(f"{node.name} network: {network.note}")


def add_measured_path(build: Build, rate_bits: float, label: str, writes: float, bs: int) -> None:
    """The replication path at the rate (bits/s) a calibration measured, in place of the network limits."""
    build.cap(
        key="replication.path",
        label="measured replication path",
        resource="path",
        units_per_io=writes * bs,
        baseline=rate_bits / 8,
        detail=f"{label}: {rate_bits / 1e6:,.1f} Mbit/s measured",
        sources=(label,),
    )


def write_cost(calibration: Calibration, bs: int) -> float | None:
    """What a ``bs``-byte write costs the replication, in the calibration's small writes.

    Processing a write takes a fixed part and a part per byte.  The small-write capacity gives
    ``1 / iops`` at ``replicated_iops_bs``; the large-write bandwidth, measured with 1 MiB
    writes, gives ``1 MiB / bandwidth``; the line through both points gives any size.  None
    when either measurement is missing or the two points do not make the cost grow with size.
    """
    iops, bandwidth, small = (
        calibration.replicated_iops,
        calibration.replicated_bandwidth,
        calibration.replicated_iops_bs,
    )
    if iops is None or bandwidth is None or iops <= 0 or bandwidth <= 0 or small >= MIB:
        return None
    per_small, per_mib = 1 / iops, MIB / bandwidth
    if per_mib <= per_small:
        return None
    per_byte = (per_mib - per_small) / (MIB - small)
    return (per_small + (bs - small) * per_byte) / per_small


def add_replication_capacities(build: Build, calibration: Calibration, writes: float, bs: int) -> None:
    """What the pair's replication itself sustains, measured: large-write bandwidth and
    small-write IOPS (CPU and DRBD's threads on both nodes, not the disk or the wire)."""
    label = calibration.label
    bandwidth, iops = calibration.replicated_bandwidth, calibration.replicated_iops
    bandwidth_detail = (
        f"replicated {(bandwidth or 0) / MIB:,.1f} MiB/s of large writes (DRBD's processing on both nodes, "
        "below the bare path rate)"
    )
    capacity_units = writes
    capacity_detail = (
        f"sustained {iops or 0:,.0f} replicated small writes/s with many in flight (CPU and DRBD's threads, "
        "not the disk or the wire)"
    )
    cost = write_cost(calibration, bs)
    if cost is not None and abs(cost - 1) > 1e-9:
        capacity_units = writes * cost
        capacity_detail += (
            f"; a {bs:,} B write costs {cost:.2f} of those {calibration.replicated_iops_bs:,} B writes "
            "(its fixed and per-byte processing, through the measured small-write and 1 MiB points)"
        )
    measured = (
        ("replication.bandwidth", "measured replicated bandwidth", writes * bs, bandwidth, bandwidth_detail),
        ("replication.capacity", "measured replicated IOPS capacity", capacity_units, iops, capacity_detail),
    )
    for key, what, units, rate, detail in measured:
        if rate is not None:
            build.cap(
                key=key,
                label=what,
                resource="cpu",
                units_per_io=units,
                baseline=rate,
                detail=f"{label}: the pair {detail}",
                sources=(label,),
            )
