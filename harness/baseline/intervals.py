"""A metric judged between two cells that were both repeated until their medians' intervals were tight.

``--repeat auto`` records the confidence it worked to (``interval_confidence``) and the interval
it used (``interval_lognormal``: 1 lognormal, 0 order-statistic; a run recorded before the
choice existed has none and used the order-statistic one).  When both sides were so repeated,
each side's interval of the median at the higher of the two confidences is taken from its
repeats (:func:`harness.rules.medianinterval.median_interval`), by the method both used, or the
distribution-free one when they differ or a side has a value of 0, and the two are compared end
to end (:func:`harness.rules.repeats.compare_intervals`): a regression only when even the ends
nearest each other are further apart than the tolerance allows.  A change of the medians beyond
the tolerance that the intervals do not show is inside the noise: inconclusive.  Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.report.aggregate import Cell, Stat
from harness.report.formatting import format_number
from harness.rules.medianinterval import IntervalMethod, MedianInterval, fitting_method, median_interval
from harness.rules.repeats import compare_intervals
from harness.rules.tolerance import Tolerance

__all__ = ["IntervalBasis", "IntervalJudgement", "judge_intervals", "shared_basis"]

#: the samples that say a cell was repeated to a confidence, and by which interval (harness.cell.autorepeat)
CONFIDENCE_METRIC = "interval_confidence"
METHOD_METRIC = "interval_lognormal"


@dataclass(frozen=True)
class IntervalBasis:
    """What both sides of a comparison were repeated to: a confidence, by one method."""

    confidence: float
    method: IntervalMethod


def _method(cell: Cell) -> IntervalMethod:
    flag = cell.stats.get(METHOD_METRIC)
    return "lognormal" if flag is not None and flag.median >= 0.5 else "order"


def shared_basis(reference: Cell, current: Cell) -> IntervalBasis | None:
    """The confidence both sides were repeated to (the higher of the two) and the interval
    method they share (``order`` when they differ); None when either side had a fixed number
    of repeats."""
    ref, cur = reference.stats.get(CONFIDENCE_METRIC), current.stats.get(CONFIDENCE_METRIC)
    if ref is None or cur is None:
        return None
    methods = {_method(reference), _method(current)}
    return IntervalBasis(max(ref.median, cur.median), methods.pop() if len(methods) == 1 else "order")


@dataclass(frozen=True)
class IntervalJudgement:
    verdict: Literal["pass", "improved", "inconclusive", "regressed"]
    reason: str
    note: str


def _text(interval: MedianInterval) -> str:
    return f"{format_number(interval.low)}–{format_number(interval.high)} (n={interval.n})"


def judge_intervals(
    rule: Tolerance, reference: Stat, current: Stat, *, basis: IntervalBasis, change_text: str, within: bool
) -> IntervalJudgement | None:
    """The verdict from both sides' intervals; None when a side has too few repeats for one.
    ``change_text`` is the medians' change as the reason prints it, ``within`` whether that
    change is inside the tolerance."""
    method = fitting_method(basis.method, reference.values, current.values)
    ref = median_interval(reference.values, basis.confidence, method)
    cur = median_interval(current.values, basis.confidence, method)
    if ref is None or cur is None:
        return None
    change = compare_intervals(cur, ref, rule)
    tol = rule.describe()
    kind = "lognormal" if method == "lognormal" else "order-statistic"
    sides = f"{basis.confidence * 100:g} % {kind} intervals of the median: baseline {_text(ref)}, now {_text(cur)}"
    if change.verdict != "unchanged":
        verdict: Literal["regressed", "improved"] = change.verdict
        reason = f"{change_text}, beyond the {tol} tolerance even between the intervals' nearest ends ({sides})"
        return IntervalJudgement(verdict, reason, "intervals apart")
    if within:
        return IntervalJudgement("pass", f"{change_text}, within the {tol} tolerance ({sides})", "within tolerance")
    reason = f"{change_text} is beyond the {tol} tolerance but the intervals do not show it ({sides})"
    return IntervalJudgement("inconclusive", reason, "intervals overlap")
