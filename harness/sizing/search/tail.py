"""The p99 of a write: the unqueued write's own spread, plus the tail of its wait in queues.

At ``n`` I/Os in flight the mean response is ``R = n / X`` (Little's law on the closed loop);
the write itself takes ``S`` unqueued (:attr:`Prediction.write_time_s`), so it waits
``W = R - S`` on average.  A queue served evenly (a cloud's IOPS or byte throttle) makes that
wait nearly constant; one served like a CPU makes it exponential, whose p99 is ``ln 100 = 4.6``
times its mean.  Between the two the tail factor follows the binding queue's squared
coefficient of variation.  The unqueued write has no spread in the model (its p99 is ``S``);
a measured latency distribution (fio's JSON of a QD1 write on the pair) gives it its measured
p99 / mean instead, and the answer says which source it used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.fio.report import parse_fio_json
from harness.sizing.limits.closedloop import EVEN, EXPONENTIAL
from harness.sizing.model.prediction import Prediction

__all__ = ["MeasuredTail", "load_tail", "p99_write_latency"]

#: the p99 of an exponential wait over its mean
_EXPONENTIAL_P99 = math.log(100)
#: limits that release I/Os like a CPU serves them; every other resource is a throttle
_CPU_LIKE = frozenset({"cpu"})


@dataclass(frozen=True)
class MeasuredTail:
    """A measured write latency distribution: its p99 over its mean, and where it came from."""

    p99_over_mean: float
    source: str


def load_tail(path: Path) -> MeasuredTail:
    """The write direction's clat p99 / mean of an fio JSON output."""
    try:
        write = parse_fio_json(path.read_text(encoding="utf-8")).only_group.write
    except OSError as exc:
        raise ConfigError(f"--latency-from {str(path)!r}: {exc.strerror}") from None
    mean, p99 = write.clat_mean_us, write.clat_p99_us
    if mean is None or p99 is None or mean <= 0:
        raise ConfigError(f"--latency-from {str(path)!r}: no write completion latency mean and p99 in it")
    return MeasuredTail(max(1.0, p99 / mean), f"measured: {path.name} write p99/mean {p99 / mean:.2f}")


def _queue_cv2(prediction: Prediction) -> float:
    binding = prediction.limit(prediction.phases[-1].bottleneck).resource
    if binding in _CPU_LIKE or (binding == "latency" and any(v.resource in _CPU_LIKE for v in prediction.limits)):
        return EXPONENTIAL
    return EVEN


def p99_write_latency(prediction: Prediction, tail: MeasuredTail | None) -> tuple[float, str]:
    """(p99 seconds, its source) of a write in the run's lowest phase."""
    response = prediction.phases[-1].latency_s
    unqueued = min(prediction.write_time_s or response, response)
    wait = response - unqueued
    factor = 1.0 + (_EXPONENTIAL_P99 - 1.0) * _queue_cv2(prediction)
    spread = tail.p99_over_mean if tail is not None else 1.0
    source = tail.source if tail is not None else "model: queueing only (the unqueued write has no spread)"
    return unqueued * spread + wait * factor, source
