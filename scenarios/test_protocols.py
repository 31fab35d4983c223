"""Replication protocols A, B and C side by side: what each costs a write.

DRBD acknowledges a write under protocol A when the local disk has it (the peer's copy is
still in the send buffer), under B when the peer has also received it (one round trip), under
C when the peer's disk has it too (a round trip plus the peer's write).  md-nbd (SIOS
DataKeeper's architecture) has the two ends: synchronous (C) and asynchronous write-behind (A).
Each pair runs a QD1 4k write (latency-bound) and a 1 MiB QD16 write (bandwidth-bound),
unimpaired and with 5 ms more round trip, once per protocol; every protocol is a section of
its own in the comparison (``protocols-A``, ``-B``, ``-C``), so the same row reads across them.

The model, asserted at QD1 with 5 ms added, within the inventory's ``latency_model_tolerance``:
B and C cannot complete a write faster than the added round trip (median completion latency
≥ 5 ms); A does not wait for the round trip at all (median < half the measured RTT).
Unimpaired cells are measured only: a ping's round trip there is no floor for the kernel's.

The lab switches the pair's protocol for each cell and back afterwards.  A real cluster runs
only the protocol its inventory gives the pair: the harness never changes a real cluster's
replication configuration.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.cell import CellContext, CellResult, CellSpec
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, io_job, write_job
from harness.impair.profile import NetemProfile
from harness.plugin.session import HarnessSession
from harness.rules.bounds import BoundResult
from harness.units import MIB

PROTOCOLS = ["A", "B", "C"]
ADDED_RTT_MS = [0, 5]
WORKLOADS = [write_job("write", 4096), io_job("write", MIB, iodepth=16)]


def protocol_model(protocol: str, added_rtt_ms: int, tolerance: float) -> Callable[[CellContext], list[BoundResult]]:
    """The QD1 latency check of one protocol (nothing to check for deeper queues)."""

    def check(ctx: CellContext) -> list[BoundResult]:
        p50_us = ctx.stats.clat_p50_us
        if ctx.spec.workload.iodepth * ctx.spec.workload.numjobs != 1 or p50_us is None:
            return []
        # Unimpaired, a ping's round trip (two user-space wake-ups on each guest) is longer than
        # the kernel-to-kernel one a replicated write waits for: measured, a protocol B write
        # took 0.09 ms with a 0.13 ms fastest ping.  Only an added delay gives a sure floor.
        if not added_rtt_ms:
            return []
        median_ms = p50_us / 1000
        rtt_ms = ctx.rtt.median_ms
        if protocol == "A":
            limit = rtt_ms / 2
            ok = median_ms < limit
            why = f"protocol A median write {median_ms:.2f} ms {'<' if ok else '≥'} half the RTT ({limit:.2f} ms)"
        else:
            floor = added_rtt_ms * (1 - tolerance)
            ok = median_ms >= floor
            why = (
                f"protocol {protocol} median write {median_ms:.2f} ms {'≥' if ok else '<'} the added {added_rtt_ms} ms "
                f"round trip - {tolerance:.0%} ({floor:.2f} ms): it waits for the peer"
            )
        return [BoundResult("pass" if ok else "fail", why)]

    return check


@pytest.mark.parametrize("added_rtt_ms", ADDED_RTT_MS, ids=[f"rtt+{r}ms" for r in ADDED_RTT_MS])
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[f"protocol-{p}" for p in PROTOCOLS])
def test_protocols(
    harness_session: HarnessSession,
    measure: Callable[..., CellResult],
    pair: str,
    *,
    protocol: str,
    workload: WorkloadSpec,
    added_rtt_ms: int,
) -> None:
    parts = harness_session.failover_parts(pair)
    refusal = parts.protocols.refusal(protocol)
    if refusal is not None:
        pytest.skip(refusal)
    impairment = NetemProfile.from_rtt(f"rtt{added_rtt_ms}ms", added_rtt_ms / 1000) if added_rtt_ms else None
    tolerance = harness_session.inventory.thresholds.latency_model_tolerance
    inventory_protocol = harness_session.inventory.pairs[pair].protocol
    spec = CellSpec(
        f"protocols-{protocol}",
        pair,
        for_profile(harness_session.profile, workload),
        impairment=impairment,
        protocol=protocol,
    )
    if protocol != inventory_protocol:
        parts.protocols.set(protocol)
    try:
        measure(spec, extra_checks=protocol_model(protocol, added_rtt_ms, tolerance))
    finally:
        if protocol != inventory_protocol:
            parts.protocols.set(inventory_protocol)
