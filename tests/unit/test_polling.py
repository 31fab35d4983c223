"""The poll pauses of the harness's waits (harness.remote.polling)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.remote.polling import FIRST_POLL_S, backoff


def test_the_pauses_double_up_to_the_ceiling() -> None:
    assert list(itertools.islice(backoff(0.5), 6)) == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    assert FIRST_POLL_S == 0.05


@given(
    ceiling=st.floats(min_value=1e-3, max_value=60, allow_nan=False),
    first=st.floats(min_value=1e-3, max_value=60, allow_nan=False),
    n=st.integers(min_value=1, max_value=40),
)
def test_pauses_never_shrink_never_pass_the_ceiling_and_reach_it(ceiling: float, first: float, n: int) -> None:
    pauses = list(itertools.islice(backoff(ceiling, first), n))
    assert pauses[0] == min(first, ceiling)
    assert all(0 < p <= ceiling for p in pauses)
    assert all(b >= a for a, b in itertools.pairwise(pauses))
    # doubling reaches any ceiling within log2(ceiling / first) + 1 steps
    assert list(itertools.islice(backoff(ceiling, first), 80))[-1] == ceiling


@pytest.mark.parametrize(("ceiling", "first"), [(0.0, 0.05), (1.0, 0.0), (-1.0, 0.05)])
def test_a_pause_that_is_not_positive_is_refused(ceiling: float, first: float) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        next(backoff(ceiling, first))
