"""The storage limits of each node: its volume, its own storage cap (AWS: the dedicated EBS link;
Google, Azure: the VM disk limits), or the measured device.

A volume's IOPS count operations of up to its I/O unit (EBS splits larger I/Os), its throughput
counts bytes; gp2 and st1 bursts drain credit buckets, as do the EBS burst of smaller
instances, the Azure Premium SSD v1 bursts (IOPS and MB/s credits apart) and the Azure VM burst.
A calibration that measured the device replaces both the volume and the EBS limits
(:func:`add_calibrated_limits`): the measurement already includes both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.sizing.limits.limit import Build, Burst, Node
from harness.sizing.scenario.question import Calibration
from harness.units import GIB, KIB, MIB, TIB

__all__ = ["add_calibrated_limits", "add_ebs_limits", "add_volume_limits"]


def add_volume_limits(build: Build, node: Node, bs: int, random: bool = False) -> None:
    """``node``'s volume: its IOPS (read and write apart on instance store) and throughput, with their buckets."""
    perf = node.volume
    sources = tuple(build.catalog.volume(perf.type).sources)
    units = math.ceil(bs / perf.io_unit)
    split = f"; {bs} B I/Os count as {units} x {perf.io_unit // KIB} KiB" if units > 1 else ""
    if perf.read_iops is not None:
        _add_split_iops(build, node, perf.read_iops, units, split, sources=sources)
    else:
        _add_shared_iops(build, node, units, split, sources=sources)
    if perf.baseline_bytes_s is not None:
        _add_throughput(build, node, perf.baseline_bytes_s, bs, random, sources=sources)
    for text in perf.notes:
        build.note(f"{perf.type}: {text}")
    build.latency_sources.extend(s for s in sources if s not in build.latency_sources)
    if perf.latency_estimate:
        build.latency_estimated = True
        build.estimate(
            f"{perf.type} latency {perf.write_latency_s * 1000:g} ms write / "
            f"{perf.read_latency_s * 1000:g} ms read ({perf.latency_note})"
        )


def _add_split_iops(
    build: Build, node: Node, read_iops: float, units: int, split: str, *, sources: tuple[str, ...]
) -> None:
    """Write and read IOPS capped apart (instance store publishes each)."""
    perf = node.volume
    for kind, share, rate in (("write", node.writes, perf.baseline_iops), ("read", node.reads, read_iops)):
        build.cap(
            key=f"{node.role}.volume.{kind}_iops",
            label=f"{node.role} {perf.type} {kind} IOPS",
            resource="volume",
            units_per_io=share * units,
            baseline=rate,
            detail=f"{perf.description}: {rate:,.0f} {kind} IOPS (4 KiB){split}",
            sources=sources,
        )


def _add_shared_iops(build: Build, node: Node, units: int, split: str, sources: tuple[str, ...]) -> None:
    """One IOPS cap for reads and writes together, bursting on an I/O-credit bucket when it has one."""
    perf = node.volume
    detail = f"{perf.description}: {perf.baseline_iops:,.0f} IOPS"
    burst = Burst(perf.burst_iops) if perf.burst_iops is not None else None
    if perf.iops_bucket is not None and perf.burst_iops is not None:
        burst = Burst(perf.burst_iops, f"{node.role}.volume.io_credits", perf.iops_bucket)
        detail += (
            f" baseline, {perf.burst_iops:,.0f} burst from a {perf.iops_bucket / 1e6:g}M I/O-credit "
            f"bucket ({perf.burst_seconds() or 0:,.0f} s at full burst)"
        )
    build.cap(
        key=f"{node.role}.volume.iops",
        label=f"{node.role} {perf.type} IOPS",
        resource="volume",
        units_per_io=(node.writes + node.reads) * units,
        baseline=perf.baseline_iops,
        burst=burst,
        detail=detail + split,
        sources=sources,
    )


def _add_throughput(
    build: Build, node: Node, baseline: float, bs: int, random: bool, *, sources: tuple[str, ...]
) -> None:
    """The volume's bytes per second, bursting on the I/O credits (gp2) or a byte bucket (st1)."""
    perf = node.volume
    charged = bs
    if perf.random_io_charge is not None and random and bs < perf.random_io_charge:
        # AWS st1/sc1: a random I/O of 1 MiB or less spends 1 MiB of throughput credit.
        charged = perf.random_io_charge
    detail = f"{perf.description}: {baseline / MIB:g} MiB/s"
    if charged != bs:
        detail += f" (each random {bs} B I/O is charged as {charged // KIB} KiB)"
    burst = None
    if perf.burst_bytes_s is not None and perf.throughput_bucket == "iops":
        burst = Burst(perf.burst_bytes_s, f"{node.role}.volume.io_credits")
        detail += f", {perf.burst_bytes_s / MIB:g} MiB/s while I/O credits last"
    elif perf.burst_bytes_s is not None and perf.bytes_bucket is not None:
        burst = Burst(perf.burst_bytes_s, f"{node.role}.volume.throughput_credits", perf.bytes_bucket)
        full_burst = perf.bytes_bucket / (perf.burst_bytes_s - baseline)
        detail += (
            f" baseline, {perf.burst_bytes_s / MIB:g} MiB/s burst from {_size(perf.bytes_bucket)} of "
            f"throughput credits ({full_burst:,.0f} s at full burst)"
        )
    build.cap(
        key=f"{node.role}.volume.throughput",
        label=f"{node.role} {perf.type} throughput",
        resource="volume",
        units_per_io=(node.writes + node.reads) * charged,
        baseline=baseline,
        burst=burst,
        detail=detail,
        sources=sources,
    )


def add_ebs_limits(build: Build, node: Node, bs: int) -> None:
    """``node``'s own storage cap (AWS: the dedicated EBS link of an EBS-optimized instance; Google
    and Azure: the VM's disk limits) for network-attached volumes: bandwidth and IOPS."""
    ebs = node.instance.ebs
    if not node.ebs_backed or not ebs.optimized:
        return
    role = node.role
    share = node.writes + node.reads
    units = math.ceil(bs / node.volume.io_unit)
    defaults = build.catalog.defaults
    minutes = ebs.burst_minutes if ebs.burst_minutes is not None else defaults.ebs_burst_minutes.value
    sources = tuple(node.instance.sources)
    link = _link(node)
    sustained_mbps, max_mbps = ebs.mbps_caps(node.volume.type)
    base_bytes = sustained_mbps * 1e6 / 8
    max_bytes = max_mbps * 1e6 / 8
    what = "dedicated EBS link" if node.instance.cloud == "aws" else link
    detail = f"{node.name} {what}: {sustained_mbps:,.0f} Mbps"
    if node.volume.type in ebs.max_mbps_by_volume:
        detail += f" (for {node.volume.type})"
    bytes_burst = _timed_burst(f"{role}.ebs.byte_credits", base_bytes, max_bytes, minutes)
    if bytes_burst is not None:
        detail += f" baseline, {max_mbps:,.0f} Mbps {_burst_rule(node, minutes)}"
    build.cap(
        key=f"{role}.ebs.throughput",
        label=f"{role} {node.name} {link} bandwidth",
        resource="ebs",
        units_per_io=share * bs,
        baseline=base_bytes,
        burst=bytes_burst,
        detail=detail,
        estimate=ebs.estimate,
        sources=sources,
    )
    sustained_iops, max_iops = ebs.iops_caps(node.volume.type)
    detail = f"{node.name} {link} IOPS: {sustained_iops:,.0f}"
    if node.volume.type in ebs.max_iops_by_volume:
        detail += f" (for {node.volume.type})"
    iops_burst = _timed_burst(f"{role}.ebs.iops_credits", sustained_iops, max_iops, minutes)
    if iops_burst is not None:
        detail += f" baseline, {max_iops:,.0f} {_burst_rule(node, minutes)}"
    build.cap(
        key=f"{role}.ebs.iops",
        label=f"{role} {node.name} {link} IOPS",
        resource="ebs",
        units_per_io=share * units,
        baseline=sustained_iops,
        burst=iops_burst,
        detail=detail + _io_size_note(node),
        estimate=ebs.estimate,
        sources=sources,
    )


def _timed_burst(bucket: str, sustained: float, maximum: float, minutes: float) -> Burst | None:
    """The instance-level burst: ``maximum`` for ``minutes`` from a full bucket, when above ``sustained``."""
    if maximum <= sustained:
        return None
    return Burst(maximum, bucket, (maximum - sustained) * minutes * 60)


def _link(node: Node) -> str:
    """What the provider calls the instance's own storage cap."""
    return "EBS" if node.instance.cloud == "aws" else "VM disk cap"


def _burst_rule(node: Node, minutes: float) -> str:
    """How the provider describes the instance-level burst (the model: a full bucket at the start, no refill)."""
    if node.instance.cloud == "azure":
        # Microsoft: VM-level bursting is credit-based; a full bucket bursts 30 min at the maximum
        # rate and refills from the bandwidth/IOPS the VM leaves unused (catalog-azure.yaml).
        return (
            f"on burst credits ({minutes:g} min at full burst from a full bucket; "
            "credits refill while the VM runs below its limit)"
        )
    return f"for {minutes:g} min per 24 h"


def _io_size_note(node: Node) -> str:
    """AWS states EBS-optimized IOPS at 16 KiB I/O; Google and Azure state no I/O size for the VM caps."""
    return " (published at 16 KiB I/O)" if node.instance.cloud == "aws" else ""


def _size(n_bytes: float) -> str:
    """A credit balance in the binary unit that reads best: ``117 GiB``, ``1.5 TiB``."""
    return f"{n_bytes / TIB:.3g} TiB" if n_bytes >= TIB else f"{n_bytes / GIB:.3g} GiB"


def add_calibrated_limits(build: Build, nodes: Sequence[Node], calibration: Calibration, bs: int) -> None:
    """The measured device's IOPS and bandwidth on each node, in place of its volume and EBS limits."""
    label = calibration.label
    for node in nodes:
        share = node.writes + node.reads
        if calibration.local_iops is not None:
            build.cap(
                key=f"{node.role}.local.iops",
                label=f"{node.role} measured device IOPS",
                resource="volume",
                units_per_io=share,
                baseline=calibration.local_iops,
                detail=f"{label}: {calibration.local_iops:,.0f} IOPS measured on the device",
                sources=(label,),
            )
        if calibration.local_bandwidth is not None:
            build.cap(
                key=f"{node.role}.local.throughput",
                label=f"{node.role} measured device bandwidth",
                resource="volume",
                units_per_io=share * bs,
                baseline=calibration.local_bandwidth,
                detail=f"{label}: {calibration.local_bandwidth / MIB:,.1f} MiB/s measured on the device",
                sources=(label,),
            )
