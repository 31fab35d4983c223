"""Change detection across a cell's history (harness.history.changes): properties, with hypothesis."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness.history.changes import MIN_HISTORY, detect_shift, detect_shifts, robust_noise

# A level a metric could sit at (MiB/s, IOPS, ms) and a run's wobble around it: ±2 %.
levels = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
wobble = st.floats(min_value=-0.02, max_value=0.02)


def noisy(level: float, jitter: list[float]) -> list[float]:
    return [level * (1 + j) for j in jitter]


@given(levels, st.lists(wobble, min_size=0, max_size=40))
def test_runs_inside_their_noise_are_no_change(level: float, jitter: list[float]) -> None:
    # Every run within ±2 % of one level: nothing moved by the 10 % the detector asks for.
    assert detect_shift(noisy(level, jitter)) is None


@given(
    levels,
    st.lists(wobble, min_size=MIN_HISTORY, max_size=20),
    st.lists(wobble, min_size=1, max_size=10),
    st.one_of(st.floats(min_value=1.2, max_value=50.0), st.floats(min_value=0.01, max_value=0.8)),
)
def test_a_step_is_named_at_the_run_where_it_happened(
    level: float, before: list[float], after: list[float], factor: float
) -> None:
    series = noisy(level, before) + noisy(level * factor, after)
    shift = detect_shift(series)
    assert shift is not None
    assert shift.index == len(before)
    # The change's sign is the step's.
    assert (shift.change > 0) == (factor > 1)


steps = st.one_of(st.floats(min_value=1.2, max_value=50.0), st.floats(min_value=0.01, max_value=0.8))


@given(
    levels,
    st.lists(wobble, min_size=MIN_HISTORY, max_size=12),
    st.lists(wobble, min_size=MIN_HISTORY, max_size=12),
    st.lists(wobble, min_size=1, max_size=6),
    st.tuples(steps, steps),
)
def test_a_second_step_is_judged_against_the_level_before_it(
    level: float, first: list[float], second: list[float], third: list[float], factors: tuple[float, float]
) -> None:
    a, b = factors
    # Two level changes: both are found, in order, and the last one is measured from the
    # middle level (a slow link after a kernel upgrade is named as the slow link's change).
    # Both new levels lie on one side of the first, clear of it: back to the first level is
    # no departure from the history as a whole.
    assume((a > 1) == (a * b > 1) and abs(math.log(a * b)) > math.log(1.25))
    series = noisy(level, first) + noisy(level * a, second) + noisy(level * a * b, third)
    shifts = detect_shifts(series)
    assert [s.index for s in shifts] == [len(first), len(first) + len(second)]
    assert shifts[-1].change == pytest.approx(b - 1, rel=0.1, abs=0.05)


@given(
    levels,
    st.lists(wobble, min_size=MIN_HISTORY + 1, max_size=20),
    st.integers(min_value=0, max_value=100),
    st.floats(min_value=3.0, max_value=100.0),
)
def test_one_wild_run_inside_the_history_is_not_a_change(
    level: float, jitter: list[float], where: int, factor: float
) -> None:
    # One run far off, followed by runs back at the level: the newest runs did not move.
    series = noisy(level, jitter)
    i = where % (len(series) - 1)
    series[i] *= factor
    assert detect_shift(series) is None


@given(st.lists(levels, min_size=1, max_size=30), st.floats(min_value=1e-3, max_value=1e3))
def test_the_answer_does_not_depend_on_the_unit(values: list[float], scale: float) -> None:
    scaled = [v * scale for v in values]
    assume(all(math.isfinite(v) and v > 0 for v in scaled))
    a, b = detect_shift(values), detect_shift(scaled)
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert a.index == b.index


@given(st.lists(levels, max_size=MIN_HISTORY))
def test_too_few_runs_have_no_history_to_leave(values: list[float]) -> None:
    assert detect_shift(values) is None


@given(st.lists(levels, min_size=1, max_size=30))
def test_the_noise_ignores_a_minority_of_wild_values(values: list[float]) -> None:
    # Replacing fewer than half of the values by huge ones leaves the MAD between the
    # MADs of the untouched values' extremes: bounded by the spread of what was left.
    n_wild = (len(values) - 1) // 2
    wild = values[: len(values) - n_wild] + [1e12] * n_wild
    kept = values[: len(values) - n_wild]
    assert robust_noise(wild) <= 1.4826 * (max(kept) - min(kept)) * 2 + 1e-9


def test_a_non_finite_run_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        detect_shift([1.0, 2.0, math.nan, 1.0])
