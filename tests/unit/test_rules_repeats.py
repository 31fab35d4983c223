"""The median's order-statistic interval, the ``--repeat auto`` stopping rule and the comparison
of two intervals: exact coverage checked against enumeration, the rest with hypothesis, and
the rule on the lab's recorded repeats (tests/data/runs/repeats3-a: three runs of each cell)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.rules.repeats import (
    DEFAULT_CAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_TOLERANCE,
    MedianInterval,
    RepeatPlan,
    compare_intervals,
    coverage,
    median_interval,
    min_runs,
    next_step,
)
from harness.rules.tolerance import Tolerance
from tests.unit.baseline_runs import REPEATS_A, load


def test_a_95_percent_interval_needs_six_repeats() -> None:
    assert min_runs(0.95) == 6
    assert coverage(5, 1) == 1 - 2 / 32  # 93.75 %: five repeats fall short
    assert coverage(6, 1) == 1 - 2 / 64
    assert median_interval([1, 2, 3, 4, 5]) is None
    assert [min_runs(c) for c in (0.5, 0.75, 0.9, 0.99, 0.999)] == [2, 3, 5, 8, 11]


def test_the_defaults() -> None:
    plan = RepeatPlan()
    assert (plan.confidence, plan.tolerance, plan.cap, plan.first) == (0.95, 0.05, 10, 6)
    assert (DEFAULT_CONFIDENCE, DEFAULT_TOLERANCE, DEFAULT_CAP) == (0.95, 0.05, 10)
    ten = median_interval(range(10))
    assert ten is not None and (ten.rank, round(ten.coverage, 4)) == (2, 0.9785)


@pytest.mark.parametrize("n", range(1, 13))
def test_coverage_is_the_share_of_orders_that_put_the_median_inside(n: int) -> None:
    # each repeat falls below the true median or above it with probability 1/2
    for rank in range(1, (n + 1) // 2 + 1):
        inside = sum(1 for below in itertools.product((0, 1), repeat=n) if rank <= sum(below) <= n - rank)
        assert coverage(n, rank) == pytest.approx(inside / 2**n)


values = st.lists(st.floats(0.001, 1e6, allow_nan=False), min_size=1, max_size=40)
confidences = st.floats(0.5, 0.999)


@given(data=values, confidence=confidences)
def test_the_interval_is_the_tightest_that_covers(data: list[float], confidence: float) -> None:
    interval = median_interval(data, confidence)
    if len(data) < min_runs(confidence):
        assert interval is None
        return
    assert interval is not None
    ordered = sorted(data)
    assert interval.coverage >= confidence and interval.coverage == coverage(len(data), interval.rank)
    assert (interval.low, interval.high) == (ordered[interval.rank - 1], ordered[-interval.rank])
    assert interval.low <= interval.median <= interval.high
    tighter = interval.rank + 1
    assert tighter > (len(data) + 1) // 2 or coverage(len(data), tighter) < confidence


@given(data=values, tolerance=st.floats(0.001, 0.5), cap=st.integers(6, 30))
def test_repeats_stop_when_tight_or_at_the_cap(data: list[float], tolerance: float, cap: int) -> None:
    plan = RepeatPlan(0.95, tolerance, cap)
    step = next_step(data, plan)
    interval = median_interval(data, 0.95)
    tight = interval is not None and interval.relative_half_width <= tolerance
    assert step.interval == interval
    assert step.stop == (tight or len(data) >= cap)
    assert step.why == ("tight" if tight else "cap" if len(data) >= cap else "more")
    if len(data) < plan.first:
        assert not step.stop or len(data) >= cap


def test_identical_repeats_are_tight_at_once() -> None:
    step = next_step([7.0] * 6, RepeatPlan())
    assert step.stop and step.why == "tight"
    assert step.interval is not None and step.interval.relative_half_width == 0


def test_the_lab_repeats_of_a_noisy_cell_run_to_the_cap() -> None:
    # every cell of the recorded lab runs, three repeats each, played out as auto repeats would
    cells: dict[str, list[float]] = {}
    for s in load(REPEATS_A):
        if s.metric == "bw":
            cells.setdefault(f"{s.metadata['pair']}/{s.metadata['workload']}", []).append(s.value)
    spread = {k: (max(v) - min(v)) / 2 / sorted(v)[1] for k, v in cells.items()}
    assert all(len(v) == 3 for v in cells.values()) and len(cells) == 12
    noisy = max(spread, key=lambda k: spread[k])
    # three repeats of the noisiest cell, twice over: still wider than ±5 %, so on to the cap
    assert next_step(cells[noisy] * 2, RepeatPlan()).why == "more"
    assert next_step(cells[noisy] * 4, RepeatPlan(cap=10)).why == "cap"


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"cap": 5}, "cap 5 < 6 repeats, the fewest with which a 95% interval of the median exists"),
        ({"confidence": 1.0}, "confidence must be between 0 and 1"),
        ({"tolerance": 0}, "tolerance must be a fraction between 0 and 1"),
    ],
)
def test_a_plan_that_cannot_work_is_refused(plan: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RepeatPlan(**plan)  # type: ignore[arg-type]


def _interval(low: float, high: float) -> MedianInterval:
    return MedianInterval(6, (low + high) / 2, low, high, coverage(6, 1), 1)


BW = Tolerance("bw", "higher", 0.05)
P99 = Tolerance("clat_p99", "lower", 0.10)


def test_intervals_that_overlap_are_unchanged_and_apart_beyond_tolerance_change() -> None:
    reference = _interval(95, 105)
    assert compare_intervals(_interval(90, 100), reference, BW).verdict == "unchanged"
    assert compare_intervals(_interval(85, 90), reference, BW).verdict == "regressed"
    # apart, but the best end only 3 % below the reference's worst: within the 5 % tolerance
    assert compare_intervals(_interval(88, 92.2), reference, BW).verdict == "unchanged"
    assert compare_intervals(_interval(115, 120), reference, BW).verdict == "improved"
    assert compare_intervals(_interval(120, 130), reference, P99).verdict == "regressed"
    assert compare_intervals(_interval(0, 0), reference, BW).verdict == "regressed"


ends = st.floats(0.01, 1e4)


@given(a=st.tuples(ends, ends), b=st.tuples(ends, ends), rule=st.sampled_from([BW, P99]))
def test_swapping_the_runs_swaps_regressed_and_improved(
    a: tuple[float, float], b: tuple[float, float], rule: Tolerance
) -> None:
    one, other = _interval(*sorted(a)), _interval(*sorted(b))
    there, back = compare_intervals(one, other, rule), compare_intervals(other, one, rule)
    mirror = {"regressed": "improved", "improved": "regressed", "unchanged": "unchanged"}
    assert back.verdict == mirror[there.verdict]
    assert there.overlap == back.overlap
    if there.overlap:
        # overlapping intervals cannot be apart by more than any tolerance
        assert there.verdict == "unchanged"
    # the end most favourable to one run is the one least favourable to the other
    assert there.best_log_ratio == pytest.approx(-back.worst_log_ratio)
    assert there.worst_log_ratio == pytest.approx(-back.best_log_ratio)
