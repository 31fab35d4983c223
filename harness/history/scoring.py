"""How good a change detector is on real series: recall, false alarms, runs to detect.

A detector is scored on series known to hold no change (a cell's run medians over a quiet
stretch of history) by replaying them night by night, as ``harness history
--fail-on-change`` would see them:

* **false alarms**: on every prefix of a clean series (from ``min_history + 1`` runs on), did
  the detector name any change?  A nightly gate that did would have gone red that night for
  nothing; the false-alarm rate is those nights over all nights replayed.
* **recall** and **runs to detect**: a regression of ``change`` (5 %, 10 %: a drop for a
  higher-is-better metric, a rise for a lower-is-better one) is injected from run ``k`` on,
  for every ``k`` that leaves ``min_history`` clean runs before it; the replay goes on night
  by night up to ``horizon`` regressed runs.  The injection is detected on the first night the
  detector names a change at or after ``k`` that it does not name on the clean series that
  night (a false alarm there is not a detection); runs to detect is that night's count of
  regressed runs (1: flagged on the first regressed run).  Recall is detected injections
  over all injections.

Pure: a detector is any function from a series to its :class:`~harness.history.changes.Shift` values.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from harness.history.changes import MIN_HISTORY, Detector
from harness.rules.tolerance import Direction

__all__ = ["HORIZON", "INJECTED_CHANGES", "DetectionScore", "score_detector"]

#: The regressions a benchmark injects: the gate's default tolerance, and twice it.
INJECTED_CHANGES: Final = (0.05, 0.10)
#: Regressed runs replayed before an injection counts as missed: a week of nightly runs.
HORIZON: Final = 7


@dataclass(frozen=True)
class DetectionScore:
    """One detector at one injected change, over one or more series."""

    change: float
    injections: int = 0
    #: Per detected injection: regressed runs until it was flagged.
    runs_to_detect: tuple[int, ...] = ()
    nights: int = 0
    false_alarms: int = 0

    @property
    def detected(self) -> int:
        return len(self.runs_to_detect)

    @property
    def recall(self) -> float:
        return self.detected / self.injections if self.injections else 0.0

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.nights if self.nights else 0.0

    @property
    def median_runs_to_detect(self) -> float | None:
        return statistics.median(self.runs_to_detect) if self.runs_to_detect else None

    def __add__(self, other: DetectionScore) -> DetectionScore:
        if other.change != self.change:
            raise ValueError(f"cannot add scores of different injected changes ({self.change} and {other.change})")
        return DetectionScore(
            self.change,
            self.injections + other.injections,
            self.runs_to_detect + other.runs_to_detect,
            self.nights + other.nights,
            self.false_alarms + other.false_alarms,
        )


def _injected(series: Sequence[float], start: int, change: float, direction: Direction) -> list[float]:
    factor = 1.0 - change if direction == "higher" else 1.0 + change
    return [v if i < start else v * factor for i, v in enumerate(series)]


def _runs_to_detect(
    clean: list[float], regressed: list[float], start: int, detector: Detector, horizon: int
) -> int | None:
    for night in range(start + 1, min(start + horizon, len(clean)) + 1):
        # only a change the clean series would not have shown that night is the injection's
        spurious = {s.index for s in detector(clean[:night])}
        if any(s.index >= start and s.index not in spurious for s in detector(regressed[:night])):
            return night - start
    return None


def _score_one(
    series: Sequence[float], detector: Detector, change: float, *, direction: Direction, min_history: int, horizon: int
) -> DetectionScore:
    values = [float(v) for v in series]
    nights = range(min_history + 1, len(values) + 1)
    alarms = [bool(detector(values[:n])) for n in nights]
    starts = range(min_history, len(values))
    found = [_runs_to_detect(values, _injected(values, k, change, direction), k, detector, horizon) for k in starts]
    detected = tuple(runs for runs in found if runs is not None)
    return DetectionScore(change, len(starts), detected, len(alarms), sum(alarms))


def score_detector(
    series: Iterable[Sequence[float]],
    detector: Detector,
    change: float,
    *,
    direction: Direction = "higher",
    min_history: int = MIN_HISTORY,
    horizon: int = HORIZON,
) -> DetectionScore:
    """``detector`` replayed on every clean series, with ``change`` injected at every run that
    leaves ``min_history`` runs before it (see the module's description)."""
    if not 0 < change < 1:
        raise ValueError(f"injected change must be a fraction between 0 and 1 (0.05 is 5 %), got {change!r}")
    if min_history < 1 or horizon < 1:
        raise ValueError(f"min_history and horizon must be at least 1, got {min_history} and {horizon}")
    total = DetectionScore(change)
    for one in series:
        total += _score_one(one, detector, change, direction=direction, min_history=min_history, horizon=horizon)
    return total
