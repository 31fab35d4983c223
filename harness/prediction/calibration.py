"""What a pair's calibration found (:class:`PairCalibration`): measured by
:mod:`harness.prediction.calibrate`, kept across runs by :mod:`harness.prediction.calstore`."""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["CALIBRATION_BS", "PairCalibration"]

#: block size of the small calibration writes
CALIBRATION_BS = 4096


@dataclass(frozen=True)
class PairCalibration:
    pair: str
    protocol: str
    local_write_ms: float  # per-I/O time of a QD1 4k write on the primary's disk (1 / IOPS)
    local_iops: float  # that QD1 write's IOPS
    rtt_ms: float  # median ping over the replication path
    # the rest is measured by the full calibration only
    local_mib_s: float | None = None  # 1 MiB sequential writes, QD16
    local_capacity_iops: float | None = None  # 4k random writes, 4 jobs x QD2
    path_mbit: float | None = None  # one iperf3 flow primary -> secondary
    replicated_write_ms: float | None = None  # per-I/O time of a replicated QD1 4k write
    replicated_rtt_ms: float | None = None  # the RTT measured during that write
    replicated_capacity_iops: float | None = None  # 4k random writes, 8 jobs x QD2, replicated
    replicated_mib_s: float | None = None  # 1 MiB sequential writes, QD16, replicated
    replicated_mib_s_rtt_ms: float | None = None  # the RTT measured during those writes
    tcp_window_bytes: float | None = None  # most one replication connection keeps in flight
    notes: tuple[str, ...] = ()
    #: calibration cells measured in a disturbed window: left out and measured again, or used
    left_out: tuple[str, ...] = ()
    # which calibration this is (harness.prediction.calstore): its id, when it was measured
    # (epoch) and whether this run reused it rather than measuring
    id: str = ""
    measured_at: float = 0.0
    reused: bool = False

    @property
    def source(self) -> str:
        """Which calibration, when measured, and whether reused: for the report and JUnit."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.measured_at)) if self.measured_at else "?"
        how = "reused" if self.reused else "measured in this run"
        left = f"; left out {'; '.join(self.left_out)}" if self.left_out else ""
        return f"{self.id or 'unstored'} (measured {when}, {how}{left})"

    @property
    def full(self) -> bool:
        return self.replicated_write_ms is not None

    @property
    def path_rtt_ms(self) -> float:
        """The unimpaired path's round trip: the lower of the calibration's two medians.

        Both are of the same path, and ping noise only adds delay.  On the lab's single-az pair
        the ping beside the replicated write once read 0.148 ms against the calibration's own
        0.082 ms (and 0.048-0.081 ms in the cells after it): the higher figure left no
        replication overhead, and the model 1.6x too fast."""
        if self.replicated_rtt_ms is None:
            return self.rtt_ms
        return min(self.replicated_rtt_ms, self.rtt_ms)

    @property
    def overhead_ms(self) -> float | None:
        """Per-write time of a replicated write the RTT and the disks do not explain (>= 0)."""
        if self.replicated_write_ms is None or self.replicated_rtt_ms is None or self.protocol == "A":
            return None  # protocol A does not wait for the peer, so its writes cannot show it
        # the calibration write's 4 KiB on the wire, as the model counts it
        wire_ms = CALIBRATION_BS * 8 / (self.path_mbit * 1e3) if self.path_mbit else 0.0
        remote = self.path_rtt_ms + wire_ms + (self.local_write_ms if self.protocol == "C" else 0.0)
        return max(0.0, self.replicated_write_ms - max(self.local_write_ms, remote))
