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

from harness.sizing.limits.limit import Bucket, Build, Limit, Node
from harness.sizing.scenario.question import GIB, KIB, MIB, TIB, Calibration

__all__ = ["add_calibrated_limits", "add_ebs_limits", "add_volume_limits"]


def add_volume_limits(build: Build, node: Node, bs: int, random: bool = False) -> None:
    """``node``'s volume: its IOPS (read and write apart on instance store) and throughput, with their buckets."""
    perf = node.volume
    role = node.role
    sources = tuple(build.catalog.volume(perf.type).sources)
    units = math.ceil(bs / perf.io_unit)
    split = f"; {bs} B I/Os count as {units} x {perf.io_unit // KIB} KiB" if units > 1 else ""
    if perf.read_iops is not None:
        build.add(
            Limit(
                key=f"{role}.volume.write_iops",
                label=f"{role} {perf.type} write IOPS",
                resource="volume",
                units_per_io=node.writes * units,
                baseline=perf.baseline_iops,
                detail=f"{perf.description}: {perf.baseline_iops:,.0f} write IOPS (4 KiB){split}",
                sources=sources,
            )
        )
        build.add(
            Limit(
                key=f"{role}.volume.read_iops",
                label=f"{role} {perf.type} read IOPS",
                resource="volume",
                units_per_io=node.reads * units,
                baseline=perf.read_iops,
                detail=f"{perf.description}: {perf.read_iops:,.0f} read IOPS (4 KiB){split}",
                sources=sources,
            )
        )
    else:
        share = node.writes + node.reads
        bucket_key = None
        detail = f"{perf.description}: {perf.baseline_iops:,.0f} IOPS"
        if perf.iops_bucket is not None and perf.burst_iops is not None:
            bucket_key = f"{role}.volume.io_credits"
            build.add_bucket(Bucket(bucket_key, perf.iops_bucket, perf.baseline_iops, share * units))
            detail += (
                f" baseline, {perf.burst_iops:,.0f} burst from a {perf.iops_bucket / 1e6:g}M I/O-credit "
                f"bucket ({perf.burst_seconds() or 0:,.0f} s at full burst)"
            )
        build.add(
            Limit(
                key=f"{role}.volume.iops",
                label=f"{role} {perf.type} IOPS",
                resource="volume",
                units_per_io=share * units,
                baseline=perf.baseline_iops,
                burst=perf.burst_iops,
                bucket=bucket_key,
                detail=detail + split,
                sources=sources,
            )
        )
    if perf.baseline_bytes_s is not None:
        share = node.writes + node.reads
        charged = bs
        if perf.random_io_charge is not None and random and bs < perf.random_io_charge:
            # AWS st1/sc1: a random I/O of 1 MiB or less spends 1 MiB of throughput credit.
            charged = perf.random_io_charge
        bucket_key = None
        detail = f"{perf.description}: {perf.baseline_bytes_s / MIB:g} MiB/s"
        if charged != bs:
            detail += f" (each random {bs} B I/O is charged as {charged // KIB} KiB)"
        if perf.burst_bytes_s is not None and perf.throughput_bucket == "iops":
            bucket_key = f"{role}.volume.io_credits"
            detail += f", {perf.burst_bytes_s / MIB:g} MiB/s while I/O credits last"
        elif perf.burst_bytes_s is not None and perf.bytes_bucket is not None:
            bucket_key = f"{role}.volume.throughput_credits"
            build.add_bucket(Bucket(bucket_key, perf.bytes_bucket, perf.baseline_bytes_s, share * charged))
            full_burst = perf.bytes_bucket / (perf.burst_bytes_s - perf.baseline_bytes_s)
            detail += (
                f" baseline, {perf.burst_bytes_s / MIB:g} MiB/s burst from {_size(perf.bytes_bucket)} of "
                f"throughput credits ({full_burst:,.0f} s at full burst)"
            )
        build.add(
            Limit(
                key=f"{role}.volume.throughput",
                label=f"{role} {perf.type} throughput",
                resource="volume",
                units_per_io=share * charged,
                baseline=perf.baseline_bytes_s,
                burst=perf.burst_bytes_s if bucket_key else None,
                bucket=bucket_key,
                detail=detail,
                sources=sources,
            )
        )
    for text in perf.notes:
        build.note(f"{perf.type}: {text}")
    build.latency_sources.extend(s for s in sources if s not in build.latency_sources)
    if perf.latency_estimate:
        build.latency_estimated = True
        build.estimate(
            f"{perf.type} latency {perf.write_latency_s * 1000:g} ms write / "
            f"{perf.read_latency_s * 1000:g} ms read ({perf.latency_note})"
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
    base_bytes = ebs.sustained_mbps * 1e6 / 8
    max_bytes = (ebs.max_mbps or ebs.sustained_mbps) * 1e6 / 8
    byte_bucket = None
    what = "dedicated EBS link" if node.instance.cloud == "aws" else link
    detail = f"{node.name} {what}: {ebs.sustained_mbps:,.0f} Mbps"
    if max_bytes > base_bytes:
        byte_bucket = f"{role}.ebs.byte_credits"
        build.add_bucket(Bucket(byte_bucket, (max_bytes - base_bytes) * minutes * 60, base_bytes, share * bs))
        detail += f" baseline, {ebs.max_mbps:,.0f} Mbps {_burst_rule(node, minutes)}"
    build.add(
        Limit(
            key=f"{role}.ebs.throughput",
            label=f"{role} {node.name} {link} bandwidth",
            resource="ebs",
            units_per_io=share * bs,
            baseline=base_bytes,
            burst=max_bytes if byte_bucket else None,
            bucket=byte_bucket,
            detail=detail,
            estimate=ebs.estimate,
            sources=sources,
        )
    )
    iops_bucket = None
    sustained_iops, max_iops = ebs.iops_caps(node.volume.type)
    detail = f"{node.name} {link} IOPS: {sustained_iops:,.0f}"
    if node.volume.type in ebs.max_iops_by_volume:
        detail += f" (for {node.volume.type})"
    if max_iops > sustained_iops:
        iops_bucket = f"{role}.ebs.iops_credits"
        build.add_bucket(Bucket(iops_bucket, (max_iops - sustained_iops) * minutes * 60, sustained_iops, share * units))
        detail += f" baseline, {max_iops:,.0f} {_burst_rule(node, minutes)}"
    build.add(
        Limit(
            key=f"{role}.ebs.iops",
            label=f"{role} {node.name} {link} IOPS",
            resource="ebs",
            units_per_io=share * units,
            baseline=sustained_iops,
            burst=max_iops if iops_bucket else None,
            bucket=iops_bucket,
            detail=detail + _io_size_note(node),
            estimate=ebs.estimate,
            sources=sources,
        )
    )


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
    for node in nodes:
        share = node.writes + node.reads
        if calibration.local_iops is not None:
            build.add(
                Limit(
                    key=f"{node.role}.local.iops",
                    label=f"{node.role} measured device IOPS",
                    resource="volume",
                    units_per_io=share,
                    baseline=calibration.local_iops,
                    detail=f"{calibration.label}: {calibration.local_iops:,.0f} IOPS measured on the device",
                    sources=(calibration.label,),
                )
            )
        if calibration.local_bandwidth is not None:
            build.add(
                Limit(
                    key=f"{node.role}.local.throughput",
                    label=f"{node.role} measured device bandwidth",
                    resource="volume",
                    units_per_io=share * bs,
                    baseline=calibration.local_bandwidth,
                    detail=(
                        f"{calibration.label}: {calibration.local_bandwidth / MIB:,.1f} MiB/s measured on the device"
                    ),
                    sources=(calibration.label,),
                )
            )
