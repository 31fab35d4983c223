"""The closed loop of synchronous writes through queueing stations (harness.sizing.limits.closedloop)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.sizing.limits.closedloop import EVEN, EXPONENTIAL, SATURATED, closed_loop_rate

demand_lists = st.lists(st.floats(min_value=1e-6, max_value=1e-2), min_size=0, max_size=3)


@given(
    jobs=st.integers(min_value=1, max_value=64),
    demands=demand_lists,
    think=st.floats(min_value=1e-5, max_value=0.1),
    regular=st.lists(st.booleans(), min_size=3, max_size=3),
)
@settings(max_examples=120, deadline=None)
def test_closed_loop_bounds(jobs: int, demands: list[float], think: float, regular: list[bool]) -> None:
    cv2 = [EVEN if r else EXPONENTIAL for r in regular[: len(demands)]]
    rate = closed_loop_rate(jobs, demands, think, cv2)
    unqueued = jobs / (think + sum(demands))
    # never above the loop without queueing (but for the snap to a saturated station) ...
    assert rate <= unqueued * (1 + 1e-9) or rate == pytest.approx(1 / max(demands))
    if demands:
        # ... nor above the busiest station's capacity
        assert rate <= 1 / max(demands) * (1 + 1e-9)
        # and at least what one job alone would do
        assert rate >= 1 / (think + sum(demands)) * (1 - 1e-9)
    # a longer fixed part never makes the loop faster
    assert closed_loop_rate(jobs, demands, think * 2, cv2) <= rate * (1 + 1e-9)
    # an evenly spaced service never queues more than an exponential one
    assert closed_loop_rate(jobs, demands, think, [EVEN] * len(demands)) >= closed_loop_rate(
        jobs, demands, think, [EXPONENTIAL] * len(demands)
    ) * (1 - 1e-9)


def test_exponential_stations_are_exact_mean_value_analysis() -> None:
    # Two jobs, one station S = 1, no delay: X(1) = 1; R(2) = 1 x (1 + Q(1) = 1) = 2, X(2) = 2 / 2
    assert closed_loop_rate(2, [1.0], 0.0) == pytest.approx(1.0)
    # S = 1, Z = 1: X(1) = 1/2, Q(1) = 1/2; R(2) = 1.5, X(2) = 2 / 2.5 = 0.8
    assert closed_loop_rate(2, [1.0], 1.0) == pytest.approx(0.8)


def test_an_even_station_queues_by_half_a_service_less() -> None:
    # S = 1, Z = 1, c2 = 0: R(2) = 1 x (1 + 1/2 - 1/2) + 1/2 x 1 x 1/2 = 1.25, X(2) = 2 / 2.25
    assert closed_loop_rate(2, [1.0], 1.0, [EVEN]) == pytest.approx(2 / 2.25)


def test_near_saturation_the_station_binds() -> None:
    # 64 jobs on a 1 ms station behind a 1 ms delay: the loop sits at the station's capacity
    assert closed_loop_rate(64, [1e-3], 1e-3) == pytest.approx(1000.0)
    assert SATURATED == 0.99
