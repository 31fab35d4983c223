"""What each harness metric is called in Prometheus: the quantity measured and its base unit.

A name says what was measured, never which scenario or protocol measured it (those are
labels): ``harness_write_bandwidth_bytes_per_second``, ``harness_write_latency_seconds``,
``harness_replication_round_trip_seconds``.  The rules are Prometheus' "Metric and label
naming", as ``promtool check metrics`` enforces them:

* base units only: bytes not MiB, seconds not milliseconds, ratios not percentages; the unit
  is the name's suffix (``_bytes_per_second``, ``_seconds``, ``_ratio``), spelled out (an
  abbreviation such as ``_b_`` or ``_ms`` is refused);
* every family is a gauge: a run's figure is a measurement, not a count that only grows, so
  no ``_total`` (the suffix promtool keeps for counters).

A fio cell's numbers are of one I/O direction (its reads, or the writes of a writing or mixed
job, as the cell's judge reads them), which is the name's first word; a cell whose direction
is unknown (bonnie++'s phases) is ``io``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from harness.fio.spec import RW_MODES
from harness.units import KIB, MIB

__all__ = ["MEASURES", "METRIC_PREFIX", "Measure", "direction", "metric_name"]

METRIC_PREFIX: Final = "harness"
_NAME_RE: Final = re.compile(r"\A[a-z_][a-z0-9_]*\Z")
#: fio's reading modes; every other mode writes, and a mixed job's numbers are its writes
_READS: Final = frozenset({"read", "randread"})
#: where a name takes the cell's I/O direction
_DIRECTION: Final = "{io}"


@dataclass(frozen=True)
class Measure:
    """How one harness metric is exported: the name (``{io}`` stands for the cell's I/O
    direction), the factor from the harness's unit to the base unit, and the help text."""

    name: str
    scale: float
    help: str
    #: value of the ``statistic`` label, for metrics that are statistics of one quantity
    statistic: str | None = None

    def to_base(self, value: float) -> float:
        # divide by 1000 rather than multiply by 0.001: 12.078 ms is 0.012078 s, not 0.012078000000000001
        return value / (1.0 / self.scale) if self.scale < 1 else value * self.scale

    def family(self, io: str) -> str:
        """The family's full name for a cell of direction ``io``."""
        return metric_name(self.name.replace(_DIRECTION, io))


MS: Final = 1e-3
_LATENCY: Final = "fio completion latency of the cell's I/O direction (median over repeats)"

#: harness metric → export.  A metric not listed here is not exported (it has no agreed unit).
MEASURES: Final[Mapping[str, Measure]] = {
    "bw": Measure(
        "{io}_bandwidth_bytes_per_second", float(MIB), "Bandwidth of the cell's I/O direction (median over repeats)"
    ),
    "iops": Measure(
        "{io}_operations_per_second", 1.0, "I/O operations per second of the cell's I/O direction (median)"
    ),
    "clat_mean": Measure("{io}_latency_seconds", MS, _LATENCY, "mean"),
    "clat_p50": Measure("{io}_latency_seconds", MS, _LATENCY, "p50"),
    "clat_p99": Measure("{io}_latency_seconds", MS, _LATENCY, "p99"),
    "clat_p999": Measure("{io}_latency_seconds", MS, _LATENCY, "p99.9"),
    "rtt": Measure("replication_round_trip_seconds", MS, "Round-trip time of the replication path during the cell"),
    "runtime": Measure("fio_runtime_seconds", 1.0, "fio's own runtime of the cell"),
    "wall": Measure("cell_duration_seconds", 1.0, "Wall time of the whole cell"),
    "overhead": Measure("cell_overhead_seconds", 1.0, "Cell wall time not spent in fio"),
    "predicted_bw": Measure(
        "predicted_{io}_bandwidth_bytes_per_second", float(MIB), "The sizing model's predicted bandwidth"
    ),
    "predicted_iops": Measure(
        "predicted_{io}_operations_per_second", 1.0, "The sizing model's predicted I/O operations per second"
    ),
    "model_ratio": Measure("model_fit_ratio", 1.0, "Measured over predicted bandwidth"),
    "ss_attained": Measure("fio_steady_state_attained", 1.0, "1 when fio's steady-state criterion was met"),
    "lost_writes": Measure("lost_acknowledged_write_blocks", 1.0, "Acknowledged blocks missing after failover"),
    "acked_writes": Measure("acknowledged_write_blocks", 1.0, "Blocks acknowledged before the crash"),
    "ops": Measure("filesystem_operations_per_second", 1.0, "bonnie++ seeks or file operations per second"),
    "cpu": Measure("cpu_usage_ratio", 0.01, "bonnie++ CPU use of the phase (1 = one CPU)"),
    "lat_max": Measure("max_operation_latency_seconds", MS, "bonnie++ longest single operation of the phase"),
    "cut": Measure("replication_cut_seconds", 1.0, "How long the replication path was cut"),
    "stall": Measure("write_stall_seconds", 1.0, "The longest write while the replication path was cut"),
    "detect": Measure("peer_loss_detection_seconds", 1.0, "Until the primary declared its peer lost"),
    "behind": Measure("out_of_sync_bytes", float(MIB), "Out of sync on the primary when the path healed"),
    "resync_time": Measure("resync_duration_seconds", 1.0, "From the heal until both replicas were current"),
    "verify_out_of_sync": Measure(
        "verify_out_of_sync_bytes", float(KIB), "What online verify found different after the heal"
    ),
}


def metric_name(quantity: str) -> str:
    """``harness_<quantity>``; ``quantity`` is one of the project's own snake_case names."""
    name = f"{METRIC_PREFIX}_{quantity}"
    if not _NAME_RE.match(name):
        raise ValueError(f"not a Prometheus metric name: {name!r}")
    return name


def direction(rw: object) -> str:
    """``read``, ``write`` or ``io``: the I/O direction of a cell's numbers, from fio's ``rw``."""
    if rw in _READS:
        return "read"
    return "write" if rw in RW_MODES else "io"
