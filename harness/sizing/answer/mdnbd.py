"""md-nbd's answer for one pair in words and as a dictionary: rate, latency, binding limit, the
bitmap's share, the NBD leg and the pair's monthly cost."""

from __future__ import annotations

from typing import Any

from harness.sizing.answer.explain import format_bw, pair_cost_line
from harness.sizing.model.mdnbd import MdNbd
from harness.sizing.model.mdnbd_pair import MdNbdPair
from harness.sizing.scenario.question import Scenario
from harness.units import GIB, MIB

__all__ = ["mdnbd_dict", "render_mdnbd"]


def _mode(pair: MdNbdPair) -> str:
    mirror = pair.mirror
    if mirror.mode == "sync":
        return "md-nbd synchronous (a write completes when the local volume and the peer's NBD device have it)"
    return (
        f"md-nbd write-behind (a write completes on the local volume; up to {mirror.write_behind} "
        "writes outstanding to the peer)"
    )


def _spread(mirror: MdNbd) -> str:
    if mirror.sequential:
        return "sequential writes dirty one new chunk per chunk written"
    return f"{mirror.working_set_bytes / GIB:g} GiB written at random"


def render_mdnbd(scenario: Scenario, pair: MdNbdPair) -> str:
    """The text answer: the pair, the rate and latency, what binds, the bitmap, the NBD leg, the cost."""
    mirror, answer = pair.mirror, pair.answer
    iops = answer.throughput_bps / mirror.bs
    workload = scenario.workload
    volume = scenario.primary.volume
    lines = [
        f"Two {scenario.primary.instance_type} ({scenario.placement if scenario.rtt_s is None else 'explicit RTT'}, "
        f"RTT {pair.rtt_s * 1000:g} ms) on {volume.type} {volume.size_gib or 0:g} GiB, {_mode(pair)}, "
        f"{workload.rw} bs={mirror.bs} B, {mirror.outstanding} I/Os in flight.",
        f"Expect {format_bw(answer.throughput_bps)} = {iops:,.0f} IOPS at {answer.write_latency_s * 1000:.3g} ms "
        "mean latency in the steady state.",
        f"Binding limit: {answer.binding}.",
        f"md's write-intent bitmap: {answer.clean_fraction:.1%} of writes find their "
        f"{mirror.bitmap_chunk_bytes / MIB:g} MiB chunk clean and first set its bit on both legs "
        f"({_spread(mirror)}, a bit cleared {mirror.dirty_s:g} s after its last write).",
        f"The NBD leg: one TCP connection; a remote write takes {answer.remote_write_s * 1000:.3g} ms "
        "(round trip, the payload on the wire, the peer's volume write).",
        "",
        pair_cost_line(pair.cost),
    ]
    return "\n".join(lines)


def mdnbd_dict(scenario: Scenario, pair: MdNbdPair) -> dict[str, Any]:
    """The answer for tools: the same figures as :func:`render_mdnbd`, in SI units and MiB/s."""
    mirror, answer = pair.mirror, pair.answer
    return {
        "replication": "md-nbd",
        "mode": mirror.mode,
        "instance_type": scenario.primary.instance_type,
        "volume": scenario.primary.volume.type,
        "rtt_ms": pair.rtt_s * 1000,
        "bw_mib_s": answer.throughput_bps / MIB,
        "iops": answer.throughput_bps / mirror.bs,
        "latency_ms": answer.write_latency_s * 1000,
        "bottleneck": answer.binding,
        "bitmap_clean_fraction": answer.clean_fraction,
        "remote_write_ms": answer.remote_write_s * 1000,
        "write_behind": mirror.write_behind if mirror.mode == "write-behind" else None,
        "working_set_bytes": mirror.working_set_bytes,
        "cost": None if pair.cost is None else pair.cost.as_dict(),
    }
