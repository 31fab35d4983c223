"""Delta debugging of a failing trial on synthetic predicates: the minimal case still fails,
is 1-minimal, finds exactly the culprit writes, crashes no later than it must, keeps the seed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.minimize import Case, ddmin, minimize


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1, max_size=4)))
)
def test_ddmin_finds_exactly_the_writes_that_must_be_there(arg: tuple[int, set[int]]) -> None:
    n, culprits = arg
    calls: list[tuple[int, ...]] = []

    def fails(writes: tuple[int, ...]) -> bool:
        calls.append(writes)
        return culprits <= set(writes)

    assert set(ddmin(range(n), fails)) == culprits


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=40, unique=True), st.integers(1, 5))
def test_the_result_fails_and_no_single_write_can_go(writes: list[int], k: int) -> None:
    def fails(subset: tuple[int, ...]) -> bool:  # loses a write once k even writes are in the case
        return sum(1 for w in subset if w % 2 == 0) >= k

    if not fails(tuple(writes)):
        return
    result = ddmin(writes, fails)
    assert fails(result)
    for i in range(len(result)):
        assert not fails(result[:i] + result[i + 1 :])
    assert len(result) == k


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**63 - 1), st.floats(0.05, 0.95), st.floats(0.0, 1.0), st.integers(0, 30))
def test_minimize_keeps_the_seed_and_finds_the_earliest_crash(
    seed: int, threshold: float, start: float, culprit: int
) -> None:
    crash_at = threshold + (1 - threshold) * start

    def fails(case: Case) -> bool:
        assert case.seed == seed
        return culprit in case.writes and case.crash_at >= threshold

    result = minimize(Case(seed, tuple(range(31)), crash_at), fails, resolution=1 / 128)
    assert result.case.seed == seed
    assert result.case.writes == (culprit,)
    assert threshold <= result.case.crash_at <= threshold + 1 / 128
    assert fails(result.case)
    assert result.replays >= 1 and result.history[-1] == result.case


def test_a_case_failing_with_no_write_shrinks_to_none_and_a_passing_one_is_refused() -> None:
    result = minimize(Case(3, (1, 2, 3), 0.5), lambda case: True)
    assert result.case == Case(3, (), 0.0)
    with pytest.raises(ValueError, match="trial seed 4: the case does not fail"):
        minimize(Case(4, (1,), 0.5), lambda case: False)
