"""Step 4 of a cell, the judge: the measurement's numbers, its validity and its verdict.

A window in which the replication did not stay healthy is *inconclusive*, never a pass and
never a regression (a number is only as good as its validity); otherwise the
inventory's absolute bounds and the scenario's own checks decide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.cell.measure import Measurement
from harness.cell.spec import Annotator, CellContext, CellSpec
from harness.fio.result import DirectionStats
from harness.inventory.models import ThresholdSpec
from harness.probes.rtt import RttStats
from harness.replication import WindowVerdict
from harness.rules.bounds import BoundResult, absolute_bounds_for, check_absolute, combine, inconclusive
from harness.units import MIB

__all__ = ["Judgement", "fio_values", "judge", "validity"]

ExtraChecks = Callable[[CellContext], list[BoundResult]]


def _ms(us: float | None) -> float:
    return float("nan") if us is None else us / 1000.0


def fio_values(stats: DirectionStats, *, wall: float, fio_wall: float | None) -> dict[str, float]:
    """The metrics every cell records from fio's report and its own timing (MiB/s, IOPS,
    completion latencies in ms, fio's runtime, the cell's wall time and harness overhead)."""
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
        "overhead": wall - fio_wall if fio_wall is not None else float("nan"),
    }


def validity(spec: CellSpec, window: WindowVerdict | None) -> BoundResult:
    """Pass when the replication stayed healthy for the whole window (or was cut on purpose)."""
    if spec.mode != "replicated" or window is None:
        return BoundResult("pass", "disconnected by design")
    if window.valid:
        return BoundResult("pass", window.reason)
    return inconclusive(window.reason)


@dataclass(frozen=True)
class Judgement:
    """The cell's numbers (with the model's, when annotated), validity and verdict."""

    stats: DirectionStats
    rtt: RttStats  # 0 ms when nothing measured it
    values: dict[str, float]
    validity: BoundResult
    verdict: BoundResult
    #: what the annotator adds to the cell's metadata
    extra_metadata: dict[str, Any]


def judge(
    spec: CellSpec,
    measurement: Measurement,
    *,
    wall: float,
    limits: ThresholdSpec,
    extra_checks: ExtraChecks | None = None,
    annotate: Annotator | None = None,
) -> Judgement:
    fio, rtt, fio_wall = measurement.fio, measurement.rtt, measurement.fio_wall_s
    stats = fio.write if spec.workload.is_write else fio.read
    runtime_s = stats.runtime_ms / 1000.0
    ramp = float(spec.workload.ramp_s)
    values = {
        **fio_values(stats, wall=wall, fio_wall=fio_wall),
        "rtt": rtt.median_ms if rtt else float("nan"),
        # fio's own start-up and tear-down beyond ramp + runtime (large on UML guests)
        "fio_overhead": fio_wall - runtime_s - ramp if fio_wall is not None else float("nan"),
    }
    extra_meta: dict[str, Any] = {}
    if annotate is not None:
        extra_values, extra_meta = annotate(spec, rtt, dict(values))
        values.update(extra_values)
    valid = validity(spec, measurement.window)
    checks = [
        valid,
        check_absolute(
            absolute_bounds_for(
                f"{spec.workload.id()}@{spec.impairment_name}", limits.min_mib_s, limits.min_iops, limits.max_p99_ms
            ),
            mib_s=values["bw"],
            iops=values["iops"],
            p99_ms=values["clat_p99"],
        ),
    ]
    ctx_rtt = rtt if rtt is not None else RttStats((0.0,), 1, 1)
    if extra_checks is not None and valid.passed:
        checks += extra_checks(CellContext(spec, ctx_rtt, fio, stats))
    return Judgement(stats, ctx_rtt, values, valid, combine(checks), extra_meta)
