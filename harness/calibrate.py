"""Calibration: what the pair's own parts do, measured, so models use facts, not catalog values.

* local write latency and bandwidth of the scratch device: a short QD1 4k random write and
  a 1 MiB sequential write with replication disconnected (the primary's disk alone);
* RTT of the replication path: the median ping over that path.

Calibration cells are ordinary cells (scenario ``calibration``), so their samples land in
the run like any other and their provenance is kept.  Results are cached per pair for the
process (xdist keeps a pair's cells on one worker).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cell import CellRunner, CellSpec
from harness.fio.spec import Profile
from harness.workloads import write_job

__all__ = ["PairCalibration", "calibrate_pair"]


@dataclass(frozen=True)
class PairCalibration:
    pair: str
    local_write_ms: float  # mean completion latency of a QD1 4k write on the primary's disk
    local_iops: float
    local_mib_s: float | None  # 1 MiB sequential writes, QD16 (measured only when asked)
    rtt_ms: float  # median ping over the replication path


_cache: dict[tuple[str, str], PairCalibration] = {}


def calibrate_pair(runner: CellRunner, pair: str, profile: Profile, *, bandwidth: bool = False) -> PairCalibration:
    """Measure once per pair and process; ``bandwidth`` adds the 1 MiB sequential cell."""
    key = (runner.run_id, pair)
    cached = _cache.get(key)
    if cached is not None and (cached.local_mib_s is not None or not bandwidth):
        return cached
    small = runner.run(CellSpec("calibration", pair, profile.apply(write_job("randwrite", 4096)), mode="disconnected"))
    big = (
        runner.run(
            CellSpec(
                "calibration", pair, profile.apply(write_job("write", 1024 * 1024, iodepth=16)), mode="disconnected"
            )
        )
        if bandwidth
        else None
    )
    nodes = runner.inventory.pairs[pair]
    peer_ip = runner.inventory.nodes[nodes.secondary].replication.ip
    rtt = runner.baseline_rtt(runner.pool.get(nodes.primary), peer_ip)
    clat = small.stats.clat_mean_us
    result = PairCalibration(
        pair=pair,
        local_write_ms=(clat / 1000.0) if clat is not None else 1000.0 / max(small.iops, 1e-9),
        local_iops=small.iops,
        local_mib_s=big.bw_mib_s if big is not None else None,
        rtt_ms=rtt.median_ms,
    )
    _cache[key] = result
    return result
