"""``--repeat auto``: a cell run again until the interval of its median bandwidth is tight.

A fixed ``--repeat N`` is a collection-time parametrization (N test items); how many repeats a
cell needs is only known while it runs, so here one test runs its cell again and again
(:func:`run_until_tight`) until :func:`harness.rules.repeats.next_step` says stop: the
interval of the median (lognormal, or order-statistic with ``--interval order``) is within the
tolerance, or the cap is reached.  Every repeat records its own samples under its own repeat
index, as a fixed repeat does; the decision is recorded beside them (:func:`interval_samples`):
the repeats needed, the confidence asked for, the method (``interval_lognormal``: 1, or 0 for
the order-statistic interval) and the interval of the median bandwidth, so the report, JUnit
and the baseline gate read the same figures.

A repeat that does not pass ends the loop: a failed bound fails the cell as one run would, and
an inconclusive repeat (a disturbed window, a resync) is not a figure to narrow an interval with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.cell.result import CellResult
from harness.cell.spec import CellSpec
from harness.rules.repeats import RepeatPlan, Step, next_step
from harness.runfiles.samples import METRICS, Sample

__all__ = ["INTERVAL_METRIC", "METHOD_METRIC", "Repeated", "fio_seconds", "interval_samples", "run_until_tight"]

#: the metric whose median's interval decides when to stop
INTERVAL_METRIC = "bw"
#: the sample that says which interval the cell was repeated to: 1 lognormal, 0 order-statistic
METHOD_METRIC = "interval_lognormal"


@dataclass(frozen=True)
class Repeated:
    """The repeats a cell ran, and the last decision taken on them."""

    results: tuple[CellResult, ...]
    step: Step

    @property
    def last(self) -> CellResult:
        return self.results[-1]

    @property
    def fio_s(self) -> float:
        """fio's own wall time over every repeat (seconds): what the repeats cost the nodes."""
        return sum(fio_seconds(r) for r in self.results)


def fio_seconds(result: CellResult) -> float:
    """fio's wall time on the node in one cell: the cell's wall time less the harness's
    overhead, or fio's own runtime when the node's stamps were missing."""
    values = {s.metric: s.value for s in result.samples}
    fio = values.get("wall", math.nan) - values.get("overhead", math.nan)
    return fio if math.isfinite(fio) else values.get("runtime", 0.0)


def run_until_tight(run_once: Callable[[CellSpec], CellResult], spec: CellSpec, plan: RepeatPlan) -> Repeated:
    """Run ``spec`` as repeat 0, 1, … until ``plan`` says stop or a repeat does not pass."""
    values: list[float] = []
    results: list[CellResult] = []
    step = next_step(values, plan)
    for index in range(plan.cap):
        result = run_once(replace(spec, repeat=index))
        results.append(result)
        if not result.verdict.passed:
            break
        values.append(result.bw_mib_s)
        step = next_step(values, plan)
        if step.stop:
            break
    return Repeated(tuple(results), step)


def interval_samples(repeated: Repeated, plan: RepeatPlan) -> list[Sample]:
    """What the loop decided, as samples of the cell's last repeat (its metadata): the repeats
    needed, the confidence, the interval's method, and the interval of the median bandwidth
    when there is one."""
    meta = repeated.last.metadata
    interval = repeated.step.interval
    method = plan.method if interval is None else interval.method
    values = {
        "repeats_needed": float(len(repeated.results)),
        "interval_confidence": plan.confidence,
        METHOD_METRIC: 1.0 if method == "lognormal" else 0.0,
    }
    if interval is not None:
        values.update(interval_low=interval.low, interval_high=interval.high)
    return [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
