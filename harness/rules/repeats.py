"""How many repeats a cell needs: when ``--repeat auto`` stops, and two cells' intervals compared.

``--repeat auto`` (:func:`next_step`) repeats a cell until the interval of its median
(:mod:`harness.rules.medianinterval`: lognormal by default, or the distribution-free
order-statistic one) has a half-width within ``tolerance`` of the median, or ``cap`` repeats
were run.  Two cells' intervals are compared for the baseline gate by :func:`compare_intervals`:
a regression only when even the most favourable ends of the two intervals differ by more than
the tolerance rule allows.  Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from harness.rules.medianinterval import (
    DEFAULT_CONFIDENCE,
    DEFAULT_METHOD,
    IntervalMethod,
    MedianInterval,
    check_confidence,
    check_method,
    fitting_method,
    median_interval,
    min_runs,
)
from harness.rules.tolerance import Tolerance

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_METHOD",
    "DEFAULT_TOLERANCE",
    "LOGNORMAL_FIRST_LOOK",
    "IntervalChange",
    "RepeatPlan",
    "Step",
    "compare_intervals",
    "next_step",
]

#: ±5 %: the baseline gate's default bandwidth and IOPS tolerance, so an interval this tight can
#: tell a change the gate would flag from noise.
DEFAULT_TOLERANCE: Final = 0.05
#: Ten repeats: a 95 % order-statistic interval from the 2nd smallest to the 2nd largest (97.9 %
#: coverage); a cell that has not settled by then is noisy, not under-sampled.
DEFAULT_CAP: Final = 10
#: The lognormal interval exists from 2 repeats, but two that agree by chance (fio reports whole
#: KiB/s) give it zero width whatever the noise: the first look waits for a third.
LOGNORMAL_FIRST_LOOK: Final = 3


@dataclass(frozen=True)
class RepeatPlan:
    """``--repeat auto``: its ``--confidence``, ``--tolerance``, the cap and ``--interval``."""

    confidence: float = DEFAULT_CONFIDENCE
    tolerance: float = DEFAULT_TOLERANCE
    cap: int = DEFAULT_CAP
    method: IntervalMethod = DEFAULT_METHOD

    def __post_init__(self) -> None:
        check_confidence(self.confidence)
        check_method(self.method)
        if not 0 < self.tolerance < 1:
            raise ValueError(f"tolerance must be a fraction between 0 and 1 (0.05 is ±5 %), got {self.tolerance!r}")
        if self.cap < self.first:
            why = (
                f"the fewest with which a {self.confidence:.0%} order-statistic interval of the median exists"
                if self.method == "order"
                else "the fewest the lognormal interval of the median is judged on"
            )
            raise ValueError(f"cap {self.cap} < {self.first} repeats, {why}")

    @property
    def first(self) -> int:
        """Repeats to run before the first look: none of them can stop earlier."""
        if self.method == "lognormal":
            return LOGNORMAL_FIRST_LOOK
        return min_runs(self.confidence, "order")


@dataclass(frozen=True)
class Step:
    """What to do after the repeats so far."""

    stop: bool
    #: Why: ``tight`` (within the tolerance), ``cap`` (the cap reached first) or ``more``.
    why: Literal["tight", "cap", "more"]
    #: The interval of the repeats so far, ``None`` while there are too few.
    interval: MedianInterval | None


def next_step(values: Sequence[float], plan: RepeatPlan) -> Step:
    """Stop when the median's interval is within ``plan.tolerance`` of it, from ``plan.first``
    repeats on, or at the cap.  A repeat of 0 MiB/s, which the lognormal interval cannot take,
    turns the cell to the order-statistic one (its interval says so)."""
    interval = median_interval(values, plan.confidence, fitting_method(plan.method, values))
    if len(values) >= plan.first and interval is not None and interval.relative_half_width <= plan.tolerance:
        return Step(True, "tight", interval)
    if len(values) >= plan.cap:
        return Step(True, "cap", interval)
    return Step(False, "more", interval)


@dataclass(frozen=True)
class IntervalChange:
    """A cell's interval against its baseline's, under one tolerance rule."""

    verdict: Literal["regressed", "improved", "unchanged"]
    #: ``log(current / reference)`` at the ends of the intervals most and least favourable to
    #: the current run.
    best_log_ratio: float
    worst_log_ratio: float
    overlap: bool


def _log_ratio(current: float, reference: float) -> float:
    if current < 0 or reference < 0:
        raise ValueError(f"interval ends must be ≥ 0 to compare as ratios, got {current!r} and {reference!r}")
    if current == reference:
        return 0.0
    if current == 0 or reference == 0:
        return -math.inf if current == 0 else math.inf
    return math.log(current) - math.log(reference)


def compare_intervals(current: MedianInterval, reference: MedianInterval, rule: Tolerance) -> IntervalChange:
    """``regressed`` when even the current interval's best end is worse than the reference's
    worst end by more than ``rule`` allows; ``improved`` in mirror; otherwise ``unchanged``
    (the intervals overlap, or are apart by less than the tolerance)."""
    if rule.direction == "higher":
        best, worst = _log_ratio(current.high, reference.low), _log_ratio(current.low, reference.high)
    else:
        best, worst = _log_ratio(current.low, reference.high), _log_ratio(current.high, reference.low)
    overlap = current.low <= reference.high and reference.low <= current.high
    verdict: Literal["regressed", "improved", "unchanged"] = "unchanged"
    if rule.is_regression(best):
        verdict = "regressed"
    elif rule.is_improvement(worst):
        verdict = "improved"
    return IntervalChange(verdict, best, worst, overlap)
