"""A metric judged between two cells that were both repeated until their medians' intervals were tight.

``--repeat auto`` records the confidence it worked to (``interval_confidence``); when both sides
of a comparison did, each side's distribution-free interval of the median at that confidence is
taken from its repeats (:func:`harness.rules.repeats.median_interval`) and the two are compared
end to end (:func:`harness.rules.repeats.compare_intervals`): a regression only when even the
ends nearest each other are further apart than the tolerance allows.  A change of the medians
beyond the tolerance that the intervals do not show is inside the noise: inconclusive.  Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.report.aggregate import Cell, Stat
from harness.report.formatting import format_number
from harness.rules.repeats import MedianInterval, compare_intervals, median_interval
from harness.rules.tolerance import Tolerance

__all__ = ["IntervalJudgement", "judge_intervals", "shared_confidence"]

#: the sample that says a cell was repeated to a confidence (harness.cell.autorepeat)
CONFIDENCE_METRIC = "interval_confidence"


def shared_confidence(reference: Cell, current: Cell) -> float | None:
    """The confidence both sides were repeated to (the higher of the two), or None when either
    side had a fixed number of repeats."""
    ref, cur = reference.stats.get(CONFIDENCE_METRIC), current.stats.get(CONFIDENCE_METRIC)
    if ref is None or cur is None:
        return None
    return max(ref.median, cur.median)


@dataclass(frozen=True)
class IntervalJudgement:
    verdict: Literal["pass", "improved", "inconclusive", "regressed"]
    reason: str
    note: str


def _text(interval: MedianInterval) -> str:
    return f"{format_number(interval.low)}–{format_number(interval.high)} (n={interval.n})"


def judge_intervals(
    rule: Tolerance, reference: Stat, current: Stat, *, confidence: float, change_text: str, within: bool
) -> IntervalJudgement | None:
    """The verdict from both sides' intervals; None when a side has too few repeats for one.
    ``change_text`` is the medians' change as the reason prints it, ``within`` whether that
    change is inside the tolerance."""
    ref, cur = median_interval(reference.values, confidence), median_interval(current.values, confidence)
    if ref is None or cur is None:
        return None
    change = compare_intervals(cur, ref, rule)
    tol = rule.describe()
    sides = f"{confidence * 100:g} % intervals of the median: baseline {_text(ref)}, now {_text(cur)}"
    if change.verdict != "unchanged":
        verdict: Literal["regressed", "improved"] = change.verdict
        reason = f"{change_text}, beyond the {tol} tolerance even between the intervals' nearest ends ({sides})"
        return IntervalJudgement(verdict, reason, "intervals apart")
    if within:
        return IntervalJudgement("pass", f"{change_text}, within the {tol} tolerance ({sides})", "within tolerance")
    reason = f"{change_text} is beyond the {tol} tolerance but the intervals do not show it ({sides})"
    return IntervalJudgement("inconclusive", reason, "intervals overlap")
