"""fio's outcome as the numbers a cell records: one value per metric of
:data:`harness.runfiles.samples.METRICS`, from the job's report and its own timings.

Every cell that runs fio (a replicated write, a disk study) records these the same way; a cell
adds only what fio does not know (the RTT, a model's prediction).
"""

from __future__ import annotations

from harness.fio.outcome import FioOutcome
from harness.units import MIB

__all__ = ["fio_overhead", "fio_values"]

_NAN = float("nan")


def _ms(us: float | None) -> float:
    return _NAN if us is None else us / 1000.0


def fio_values(outcome: FioOutcome, *, wall: float) -> dict[str, float]:
    """The metrics every cell records from fio's report and its own timing (MiB/s, IOPS,
    completion latencies in ms, fio's runtime, the cell's wall time and harness overhead)."""
    stats = outcome.stats
    return {
        "bw": stats.bytes_per_s / MIB,
        "iops": stats.iops,
        "clat_mean": _ms(stats.clat_mean_us),
        "clat_p50": _ms(stats.clat_p50_us),
        "clat_p99": _ms(stats.clat_p99_us),
        "clat_p999": _ms(stats.clat_p99_9_us),
        "runtime": stats.runtime_ms / 1000.0,
        "wall": wall,
        # harness overhead: everything in the cell's wall time that is not fio running
        "overhead": wall - outcome.wall_s if outcome.wall_s is not None else _NAN,
    }


def fio_overhead(outcome: FioOutcome) -> float:
    """The ``fio_overhead`` metric: fio's own start-up and tear-down beyond ramp + runtime, in
    seconds (NaN when its timings are missing)."""
    overhead = outcome.overhead_s
    return _NAN if overhead is None else overhead
