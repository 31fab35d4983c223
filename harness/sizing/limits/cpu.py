"""CPU as a limit where the catalog has per-vCPU figures, and how it slows a closed loop of writes.

A node whose catalog entry says how much CPU a replicated byte costs on its I/O path
(``virtualization.cpu_cycles_per_byte`` at ``cpu_ghz``: on a Xen guest without enhanced
networking every packet goes through the paravirtual split driver and dom0) can process at most
``vCPUs x share / cost`` writes per second, where ``share`` is 1 while a burstable instance has
CPU credits (or in unlimited mode) and its published baseline once they are spent (t2.small:
20 % of one vCPU).  That is a :class:`~harness.sizing.limits.limit.Limit` with a credit bucket of
``launch credits x 60`` vCPU-seconds, earned back at the baseline.

The CPU also lengthens each write while it is busy: ``numjobs x iodepth`` synchronous writes form
a closed loop through the primary's CPU, the peer's CPU and the fixed part of a write (disk, RTT).
:func:`~harness.sizing.limits.closedloop.closed_loop_rate` is mean-value analysis of that loop; it is
why a CPU-heavy pair loses more to a longer RTT than the CPU limit alone says.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.sizing.limits.closedloop import EXPONENTIAL, Station
from harness.sizing.limits.limit import Build, Burst, Node

__all__ = ["add_cpu_limits"]

CREDIT_SECONDS = 60.0  # one CPU credit is one vCPU at 100 % for one minute (AWS)


def add_cpu_limits(build: Build, nodes: Sequence[Node], bs: int, launch_credits: bool) -> list[Station]:
    """A CPU limit per node that has a per-byte CPU figure; ``launch_credits`` starts buckets full."""
    stations: list[Station] = []
    for node in nodes:
        virt = node.instance.virtualization
        if virt is None or virt.cpu_cycles_per_byte <= 0:
            continue
        cost = bs * virt.cpu_cycles_per_byte / (virt.cpu_ghz * 1e9)
        # the primary also serves reads, which replicate nothing: only its writes cost this path
        share = node.writes
        vcpu = float(node.instance.vcpu)
        credits = node.instance.cpu_credits
        baseline = vcpu
        burst = None
        detail = (
            f"{node.name}: {vcpu:g} vCPU at {virt.cpu_ghz:g} GHz, {virt.cpu_cycles_per_byte:g} cycles per replicated "
            f"byte on its {virt.hypervisor} network path ({cost * 1e6:.3g} us per {bs} B write)"
        )
        if credits is not None and credits.default_mode == "standard":
            baseline = vcpu * credits.baseline_per_vcpu_pct / 100
            detail += f"; standard credits: {credits.baseline_per_vcpu_pct:g} % of each vCPU once credits are spent"
            if launch_credits and credits.launch_credits > 0:
                burst = Burst(vcpu, f"{node.role}.cpu_credits", credits.launch_credits * CREDIT_SECONDS)
                detail += f", {credits.launch_credits:g} launch credits first"
        if virt.estimate:
            build.estimate(f"{node.name} CPU {virt.cpu_cycles_per_byte:g} cycles per replicated byte ({virt.note})")
        limit = build.cap(
            key=f"{node.role}.cpu",
            label=f"{node.role} {node.name} CPU",
            resource="cpu",
            units_per_io=share * cost,
            baseline=baseline,
            burst=burst,
            detail=detail,
            estimate=virt.estimate,
            sources=tuple(virt.sources),
        )
        stations.append(Station(limit, EXPONENTIAL))
    return stations
