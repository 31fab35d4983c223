"""Step 4 of a cell, the judge: the measurement's numbers, its validity and its verdict.

A window in which the replication did not stay healthy is *inconclusive*, never a pass and
never a regression: a number is only as good as the window it was measured in.  Otherwise the
inventory's absolute bounds and the scenario's own checks decide, and a bound that failed while
the cell's validity certificate names a disturbance (a busy CPU, swapping, a slow path) is
inconclusive too unless the policy says fail (:func:`harness.rules.inconclusive.decide`); a
clean certificate changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.cell.measure import Measurement
from harness.cell.spec import Annotator, CellContext, CellSpec
from harness.fio.result import DirectionStats
from harness.fio.samples import fio_overhead, fio_values
from harness.inventory.models import ThresholdSpec
from harness.probes.rtt import RttStats
from harness.replication import WindowVerdict
from harness.rules.bounds import BoundResult, absolute_bounds_for, check_absolute, combine, inconclusive
from harness.rules.inconclusive import DEFAULT_POLICY, Policy, decide
from harness.rules.validity import Certificate

__all__ = ["Judgement", "judge", "validity"]

ExtraChecks = Callable[[CellContext], list[BoundResult]]


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
    certificate: Certificate | None = None,
    policy: Policy = DEFAULT_POLICY,
) -> Judgement:
    outcome, rtt = measurement.fio, measurement.rtt
    stats = outcome.stats
    values = {
        **fio_values(outcome, wall=wall),
        "rtt": rtt.median_ms if rtt else float("nan"),
        "fio_overhead": fio_overhead(outcome),
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
        checks += extra_checks(CellContext(spec, ctx_rtt, outcome.result, stats))
    verdict = combine(checks)
    if certificate is not None:
        verdict = decide(verdict, certificate, policy)
    return Judgement(stats, ctx_rtt, values, valid, verdict, extra_meta)
