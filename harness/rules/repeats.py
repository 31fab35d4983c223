"""How many repeats a cell needs: the confidence interval of its median, and when to stop.

The interval is distribution-free (no normal noise assumed: fio's figures on a shared host are
skewed, with a long slow tail).  With ``n`` repeats sorted, the true median lies between the
``l``-th smallest and the ``l``-th largest with probability ``1 − 2·P(B ≤ l − 1)``, ``B`` the
number of repeats below the median, binomial ``(n, ½)``; :func:`median_interval` takes the
tightest ``l`` whose coverage still reaches the confidence asked for.  Even the widest
interval, from the smallest repeat to the largest, covers only ``1 − 2·½ⁿ``, so a 95 % interval
needs at least 6 repeats (5 give 93.75 %; :func:`min_runs`).

``--repeat auto`` (:func:`next_step`) repeats a cell until that interval's half-width is within
``tolerance`` of its median, or ``cap`` repeats were run.  Two cells' intervals are compared
for the baseline gate by :func:`compare_intervals`: a regression only when even the most
favourable ends of the two intervals differ by more than the tolerance rule allows.  Pure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from harness.rules.tolerance import Tolerance

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_TOLERANCE",
    "IntervalChange",
    "MedianInterval",
    "RepeatPlan",
    "Step",
    "compare_intervals",
    "coverage",
    "median_interval",
    "min_runs",
    "next_step",
]

#: The usual 95 %: one cell in twenty may have its true median outside its interval.
DEFAULT_CONFIDENCE: Final = 0.95
#: ±5 %: the baseline gate's default bandwidth and IOPS tolerance, so an interval this tight can
#: tell a change the gate would flag from noise.
DEFAULT_TOLERANCE: Final = 0.05
#: Ten repeats: a 95 % interval from the 2nd smallest to the 2nd largest (97.9 % coverage); a cell
#: that has not settled by then is noisy, not under-sampled.
DEFAULT_CAP: Final = 10


def coverage(n: int, rank: int) -> float:
    """Probability that the median lies between the ``rank``-th smallest and the ``rank``-th
    largest of ``n`` independent repeats (``1 ≤ rank ≤ (n + 1) / 2``)."""
    if not 1 <= rank <= (n + 1) // 2:
        raise ValueError(f"rank must be 1..{(n + 1) // 2} for {n} repeats, got {rank}")
    below = sum(math.comb(n, k) for k in range(rank))
    return 1.0 - 2.0 * below / 2.0**n


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 is 95 %), got {confidence!r}")


def min_runs(confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The fewest repeats whose widest interval (smallest to largest) covers ``confidence``:
    the smallest ``n`` with ``1 − 2·½ⁿ ≥ confidence``."""
    _check_confidence(confidence)
    n = max(1, math.ceil(math.log2(2.0 / (1.0 - confidence))))
    while coverage(n, 1) < confidence:  # guards the float rounding of the logarithm
        n += 1
    return n


@dataclass(frozen=True)
class MedianInterval:
    """The median of ``n`` repeats and its distribution-free interval."""

    n: int
    median: float
    low: float
    high: float
    #: The interval's exact coverage (at least the confidence asked for).
    coverage: float
    #: ``low`` is the ``rank``-th smallest repeat, ``high`` the ``rank``-th largest.
    rank: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def relative_half_width(self) -> float:
        """Half-width over ``|median|``; 0 for a point interval, inf around a zero median."""
        if self.half_width == 0:
            return 0.0
        return self.half_width / abs(self.median) if self.median else math.inf


def median_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> MedianInterval | None:
    """The tightest order-statistic interval of the median covering ``confidence``; ``None``
    with fewer than :func:`min_runs` repeats (no interval reaches it)."""
    _check_confidence(confidence)
    data = sorted(float(v) for v in values)
    if any(not math.isfinite(v) for v in data):
        raise ValueError("repeats hold finite numbers only")
    n = len(data)
    if n == 0 or coverage(n, 1) < confidence:
        return None
    rank = 1
    while rank + 1 <= (n + 1) // 2 and coverage(n, rank + 1) >= confidence:
        rank += 1
    return MedianInterval(n, statistics.median(data), data[rank - 1], data[n - rank], coverage(n, rank), rank)


@dataclass(frozen=True)
class RepeatPlan:
    """``--repeat auto``: its ``--confidence``, ``--tolerance`` and the cap."""

    confidence: float = DEFAULT_CONFIDENCE
    tolerance: float = DEFAULT_TOLERANCE
    cap: int = DEFAULT_CAP

    def __post_init__(self) -> None:
        _check_confidence(self.confidence)
        if not 0 < self.tolerance < 1:
            raise ValueError(f"tolerance must be a fraction between 0 and 1 (0.05 is ±5 %), got {self.tolerance!r}")
        fewest = min_runs(self.confidence)
        if self.cap < fewest:
            raise ValueError(
                f"cap {self.cap} < {fewest} repeats, the fewest with which a "
                f"{self.confidence:.0%} interval of the median exists"
            )

    @property
    def first(self) -> int:
        """Repeats to run before the first look: none of them can stop earlier."""
        return min_runs(self.confidence)


@dataclass(frozen=True)
class Step:
    """What to do after the repeats so far."""

    stop: bool
    #: Why: ``tight`` (within the tolerance), ``cap`` (the cap reached first) or ``more``.
    why: Literal["tight", "cap", "more"]
    #: The interval of the repeats so far, ``None`` while there are too few.
    interval: MedianInterval | None


def next_step(values: Sequence[float], plan: RepeatPlan) -> Step:
    """Stop when the median's interval is within ``plan.tolerance`` of it, or at the cap."""
    interval = median_interval(values, plan.confidence)
    if interval is not None and interval.relative_half_width <= plan.tolerance:
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
