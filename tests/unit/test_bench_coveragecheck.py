"""The interval's assumption checked on measured repeats (harness.bench.coveragecheck): on the
lab's seven recorded runs of each replicated_write cell (tests/data/runs: repeats3-a, repeats3-b,
20261121-120300-70b8), on simulated log-normal repeats with a fixed seed, and its edges."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.bench.coveragecheck import resampled_coverage
from harness.rules.medianinterval import median_interval
from tests.unit.baseline_runs import replicated_write_bw


def test_on_the_lab_repeats_the_check_counts_every_choice_of_k() -> None:
    cells = list(replicated_write_bw().values())
    check = resampled_coverage(cells, 3, 0.95, "lognormal")
    assert (check.cells, check.trials) == (12, 12 * 35)  # C(7, 3) subsets of each cell's seven
    # counted by hand: the subsets whose interval holds their cell's median of seven
    by_hand = 0
    for values in cells:
        for chosen in itertools.combinations(values, 3):
            interval = median_interval(chosen, 0.95)
            assert interval is not None
            by_hand += interval.low <= statistics.median(values) <= interval.high
    assert check.hits == by_hand and check.share == by_hand / 420
    assert check.describe().startswith("k=3: the 95% lognormal interval of 3 repeats contained the median")


def test_on_log_normal_repeats_the_check_reads_near_the_confidence() -> None:
    rng = random.Random(7)
    cells = [[rng.lognormvariate(3.0, 0.2) for _ in range(30)] for _ in range(40)]
    check = resampled_coverage(cells, 5, 0.9, "lognormal", limit=100, seed=1)
    assert (check.cells, check.trials) == (40, 4000)
    # the median of thirty is an estimate too: the share sits near, not at, 90 %
    assert check.share is not None and 0.85 <= check.share <= 0.97


def test_the_sample_of_subsets_is_seeded() -> None:
    rng = random.Random(3)
    cells = [[rng.lognormvariate(0.0, 0.5) for _ in range(20)]]
    one, again = (resampled_coverage(cells, 10, 0.95, "lognormal", limit=50, seed=5) for _ in range(2))
    assert one == again and one.trials == 50


@given(value=st.floats(0.01, 1e6), n=st.integers(4, 9), k=st.integers(3, 8))
def test_identical_repeats_are_always_contained(value: float, n: int, k: int) -> None:
    check = resampled_coverage([[value] * n], k, 0.95, "lognormal")
    if k >= n:
        assert check.cells == 0 and check.describe() == f"k={k}: no cell has more than {k} repeats"
    else:
        assert check.share == 1.0


def test_fewer_repeats_than_the_order_statistic_interval_needs_are_said() -> None:
    check = resampled_coverage([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], 5, 0.95, "order")
    assert (check.cells, check.trials) == (1, 0)
    assert check.describe() == "k=5: 5 repeats give no 95% order interval"


def test_a_cell_with_a_zero_is_checked_on_the_distribution_free_interval() -> None:
    check = resampled_coverage([[0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], 6, 0.95, "lognormal")
    assert (check.trials, check.hits) == (7, 7)


@pytest.mark.parametrize(("k", "limit"), [(0, 10), (3, 0)])
def test_a_check_that_cannot_count_is_refused(k: int, limit: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        resampled_coverage([[1.0, 2.0]], k, 0.95, "lognormal", limit=limit)
