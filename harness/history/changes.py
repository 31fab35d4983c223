"""Change detection on one cell's series of run medians: did its latest runs leave their own noise?

A robust one-step change-point test.  For every candidate split ``k`` (at least
``min_history`` runs before it), the runs before ``k`` are the history: their median ``m`` and
their noise, the median absolute deviation scaled to a standard deviation
(``s = 1.4826 · MAD``, so one wild run among them moves neither).  The runs from ``k`` to the
newest have *changed* when every one of them lies on the same side of ``m``, each

* further than ``threshold · s`` from it (3.5, Iglewicz and Hoaglin's cut-off for the modified
  z-score: a point that far out is an outlier of the history), and
* further than ``min_change · |m|`` (a history that barely varies, MAD ≈ 0, must not turn a
  0.1 % wobble into a "change").

The earliest such ``k`` is the run where the cell changed (:func:`detect_shift`).  Because every
run after it must have moved, a single outlier in the middle of the history is never named; a
newest run that moved on its own is (it is the change a nightly gate wants to see first).  A
series can change more than once (a kernel upgrade, then a slow link): :func:`detect_shifts`
starts again from each change with the new level as the history, so the last shift it returns
is where the current level began, judged against the level before it.  Pure: floats in,
:class:`Shift` values out.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAD_SCALE",
    "MIN_CHANGE",
    "MIN_HISTORY",
    "MIN_RUNS",
    "THRESHOLD",
    "Detector",
    "Shift",
    "detect_shift",
    "detect_shifts",
    "robust_noise",
]

#: MAD × this estimates the standard deviation of normally distributed noise.
MAD_SCALE: Final = 1.4826
#: Modified z-score beyond which a run is out of its history's noise (Iglewicz & Hoaglin, 1993).
THRESHOLD: Final = 3.5
#: Smallest relative move that counts as a change, whatever the noise.
MIN_CHANGE: Final = 0.10
#: Runs needed before a split for the history to have a noise at all.
MIN_HISTORY: Final = 3
#: Runs a series needs before any change can be found in it: a history and one new run.
MIN_RUNS: Final = MIN_HISTORY + 1


def robust_noise(values: Sequence[float]) -> float:
    """``1.4826 · median(|x − median(x)|)``: the series' noise, unmoved by a few wild values."""
    centre = statistics.median(values)
    return MAD_SCALE * statistics.median(abs(v - centre) for v in values)


@dataclass(frozen=True)
class Shift:
    """The series changed at ``index`` (the first run of the new level)."""

    index: int
    #: Median of the runs before the change, and of the runs from it on.
    before: float
    after: float
    #: The history's noise (:func:`robust_noise` of the runs before).
    noise: float
    #: How far out the new level is, in units of ``noise`` (inf: no noise): here the smallest
    #: distance of a changed run from ``before``; for E-divisive, that of the new level's median.
    score: float

    @property
    def change(self) -> float:
        """``after / before − 1``; ±inf from a zero history."""
        if self.before == 0:
            return math.copysign(math.inf, self.after)
        return self.after / self.before - 1


#: A change detector: a series of run medians, oldest first, to its level changes.
Detector = Callable[[Sequence[float]], list[Shift]]


def _moved(value: float, centre: float, noise: float, threshold: float, min_change: float) -> float | None:
    """Signed distance of ``value`` from ``centre`` when it is out of the noise, else ``None``."""
    distance = value - centre
    if abs(distance) <= threshold * noise or abs(distance) < min_change * abs(centre) or distance == 0:
        return None
    return distance


def detect_shift(
    values: Sequence[float],
    *,
    threshold: float = THRESHOLD,
    min_change: float = MIN_CHANGE,
    min_history: int = MIN_HISTORY,
) -> Shift | None:
    """The earliest run from which every run moved out of the noise of the runs before it, in
    one direction; ``None`` when the newest runs are inside it (or there are too few runs)."""
    series = [float(v) for v in values]
    if any(not math.isfinite(v) for v in series):
        raise ValueError("a history series holds finite numbers only")
    for k in range(max(min_history, 1), len(series)):
        before, after = series[:k], series[k:]
        centre, noise = statistics.median(before), robust_noise(before)
        moves = [_moved(v, centre, noise, threshold, min_change) for v in after]
        if any(m is None for m in moves):
            continue
        signs = {math.copysign(1.0, m) for m in moves if m is not None}
        if len(signs) != 1:
            continue
        nearest = min(abs(m) for m in moves if m is not None)
        score = nearest / noise if noise > 0 else math.inf
        return Shift(k, centre, statistics.median(after), noise, score)
    return None


def detect_shifts(
    values: Sequence[float],
    *,
    threshold: float = THRESHOLD,
    min_change: float = MIN_CHANGE,
    min_history: int = MIN_HISTORY,
) -> list[Shift]:
    """Every level change in order: the first by :func:`detect_shift`, each next one in the runs
    from the previous change on (indexes into ``values``); empty when the series never changed."""
    shifts: list[Shift] = []
    start = 0
    while True:
        shift = detect_shift(values[start:], threshold=threshold, min_change=min_change, min_history=min_history)
        if shift is None:
            return shifts
        start += shift.index
        shifts.append(dataclasses.replace(shift, index=start))
