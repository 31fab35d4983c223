"""Bandwidth cap: the replication path limited to 128 Mbit/s (a t2.small's network baseline).

Large sequential writes can go no faster than the network lets DRBD ship them (protocol C
waits for the peer), so throughput must land between 80 % and 100 % of the cap (payload is
a little below the wire rate: TCP/IP and DRBD headers).  The band comes from the inventory.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.cell import CellContext, CellResult, CellSpec
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.plugin.session import HarnessSession
from harness.rules.bounds import BoundResult, check_rate_cap
from harness.units import parse_rate_bits

CAP = "128mbit"


def test_bandwidth_cap(harness_session: HarnessSession, measure: Callable[..., CellResult], pair: str) -> None:
    cap_bits = parse_rate_bits(CAP)
    band = harness_session.inventory.thresholds.rate_cap_band
    impairment = NetemProfile.from_text(f"cap-{CAP}", rate=CAP, direction="primary")

    def cap(ctx: CellContext) -> list[BoundResult]:
        return [check_rate_cap(ctx.stats.bytes_per_s * 8, cap_bits, band)]

    workload = for_profile(harness_session.profile, write_job("write", 1024 * 1024, iodepth=4))
    result = measure(CellSpec("bandwidth_cap", pair, workload, impairment=impairment), extra_checks=cap)
    assert result.bw_mib_s * 8 * 2**20 <= cap_bits * band[1]
