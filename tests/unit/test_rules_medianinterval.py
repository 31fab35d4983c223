"""The interval of a median, both ways: Student's t against its printed table, the lognormal
interval's coverage on simulated log-normal repeats (a fixed seed), its nesting in the confidence,
scale invariance and refusals with hypothesis; the order-statistic interval's exact coverage
against enumeration and its tightness."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.rules.medianinterval import (
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    IntervalMethod,
    coverage,
    fitting_method,
    median_interval,
    min_runs,
    t_quantile,
)


@pytest.mark.parametrize(
    ("p", "df", "table"),
    # Student's t table (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2)
    [(0.975, 2, 4.302653), (0.975, 4, 2.776445), (0.975, 9, 2.262157), (0.95, 1, 6.313752), (0.995, 30, 2.749996)],
)
def test_t_quantiles_match_the_table(p: float, df: int, table: float) -> None:
    assert t_quantile(p, df) == pytest.approx(table, abs=1e-6)
    assert t_quantile(1 - p, df) == pytest.approx(-table, abs=1e-6)


@pytest.mark.parametrize(("p", "df", "message"), [(1.0, 3, "between 0 and 1"), (0.5, 0, "at least 1 degree")])
def test_a_t_quantile_outside_its_domain_is_refused(p: float, df: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        t_quantile(p, df)


def test_the_default_is_lognormal_and_it_exists_from_two_repeats() -> None:
    assert DEFAULT_METHOD == "lognormal" and INTERVAL_METHODS == ("lognormal", "order")
    assert min_runs(0.95) == 2 and min_runs(0.999, "lognormal") == 2
    assert median_interval([10.0]) is None
    two = median_interval([10.0, 11.0])
    # t_{0.975,1} = 12.7: two repeats 10 % apart give an interval far wider than the tolerance
    assert two is not None and two.method == "lognormal" and two.relative_half_width > 0.5


def test_the_lognormal_interval_is_the_t_interval_of_the_logarithms() -> None:
    values = [100.0, 110.0, 95.0, 104.0]
    logs = [math.log(v) for v in values]
    half = 3.182446 * statistics.stdev(logs) / 2  # t_{0.975,3}, √4
    interval = median_interval(values, 0.95)
    assert interval is not None and (interval.n, interval.coverage, interval.rank) == (4, 0.95, None)
    assert interval.median == pytest.approx(math.exp(statistics.fmean(logs)))
    assert interval.low == pytest.approx(math.exp(statistics.fmean(logs) - half), rel=1e-6)
    assert interval.high == pytest.approx(math.exp(statistics.fmean(logs) + half), rel=1e-6)
    # symmetric on a log scale: the centre is the geometric mean of the ends
    assert interval.median == pytest.approx(math.sqrt(interval.low * interval.high))


def test_identical_repeats_give_a_point_interval() -> None:
    interval = median_interval([7.5, 7.5, 7.5])
    assert interval is not None and interval.low == interval.high == pytest.approx(7.5)
    assert interval.relative_half_width == 0


@settings(derandomize=True, max_examples=12, deadline=None)
@given(
    n=st.integers(2, 12),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
    mu=st.floats(-3.0, 8.0),
    sigma=st.floats(0.005, 1.5),
)
def test_on_log_normal_repeats_the_interval_covers_the_median_as_often_as_its_confidence(
    n: int, confidence: float, mu: float, sigma: float
) -> None:
    rng = random.Random(20261201)
    trials = 2000
    median = math.exp(mu)
    hits = 0
    for _ in range(trials):
        interval = median_interval([rng.lognormvariate(mu, sigma) for _ in range(n)], confidence, "lognormal")
        assert interval is not None
        hits += interval.low <= median <= interval.high
    # 4.5 standard errors of a binomial share: a correct interval fails this about once in 10⁵
    assert abs(hits / trials - confidence) <= 4.5 * math.sqrt(confidence * (1 - confidence) / trials)


positive = st.lists(st.floats(1e-3, 1e6), min_size=2, max_size=30)
methods = st.sampled_from(INTERVAL_METHODS)


@given(data=positive, low=st.floats(0.5, 0.99), high=st.floats(0.5, 0.99), method=methods)
def test_a_higher_confidence_never_gives_a_narrower_interval(
    data: list[float], low: float, high: float, method: IntervalMethod
) -> None:
    low, high = sorted((low, high))
    narrow, wide = median_interval(data, low, method), median_interval(data, high, method)
    if wide is None:  # the order-statistic interval may exist at the lower confidence only
        assert method == "order" and len(data) < min_runs(high, "order")
        return
    assert narrow is not None
    assert wide.low <= narrow.low * (1 + 1e-12) and narrow.high <= wide.high * (1 + 1e-12)


@given(data=positive, factor=st.floats(1e-3, 1e3), confidence=st.floats(0.5, 0.99), method=methods)
def test_the_interval_of_scaled_repeats_is_the_scaled_interval(
    data: list[float], factor: float, confidence: float, method: IntervalMethod
) -> None:
    one, scaled = (
        median_interval(data, confidence, method),
        median_interval([v * factor for v in data], confidence, method),
    )
    assert (one is None) == (scaled is None)
    if one is None or scaled is None:
        return
    for got, want in ((scaled.low, one.low), (scaled.median, one.median), (scaled.high, one.high)):
        assert got == pytest.approx(want * factor, rel=1e-9)
    assert scaled.relative_half_width == pytest.approx(one.relative_half_width, rel=1e-6, abs=1e-12)
    assert one.low <= one.median <= one.high


@given(data=positive, bad=st.floats(-1e6, 0.0), where=st.integers(0, 30))
def test_a_repeat_not_above_zero_is_refused_by_the_lognormal_interval(
    data: list[float], bad: float, where: int
) -> None:
    data.insert(where % (len(data) + 1), bad)
    with pytest.raises(ValueError, match="above 0 only"):
        median_interval(data, 0.95, "lognormal")
    assert fitting_method("lognormal", data) == "order" and fitting_method("lognormal", data[:0]) == "lognormal"


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_repeat_that_is_not_finite_is_refused(method: IntervalMethod, bad: float) -> None:
    with pytest.raises(ValueError, match="finite numbers only"):
        median_interval([1.0, 2.0, bad, 3.0, 4.0, 5.0], 0.95, method)


def test_an_unknown_method_or_confidence_is_refused() -> None:
    with pytest.raises(ValueError, match="interval method must be lognormal or order"):
        median_interval([1.0, 2.0], 0.95, "normal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        median_interval([1.0, 2.0], 95)


def test_a_95_percent_order_statistic_interval_needs_six_repeats() -> None:
    assert min_runs(0.95, "order") == 6
    assert coverage(5, 1) == 1 - 2 / 32  # 93.75 %: five repeats fall short
    assert coverage(6, 1) == 1 - 2 / 64
    assert median_interval([1, 2, 3, 4, 5], method="order") is None
    assert [min_runs(c, "order") for c in (0.5, 0.75, 0.9, 0.99, 0.999)] == [2, 3, 5, 8, 11]
    ten = median_interval(range(10), method="order")
    assert ten is not None and (ten.rank, round(ten.coverage, 4)) == (2, 0.9785)


@pytest.mark.parametrize("n", range(1, 13))
def test_coverage_is_the_share_of_orders_that_put_the_median_inside(n: int) -> None:
    # each repeat falls below the true median or above it with probability 1/2
    for rank in range(1, (n + 1) // 2 + 1):
        inside = sum(1 for below in itertools.product((0, 1), repeat=n) if rank <= sum(below) <= n - rank)
        assert coverage(n, rank) == pytest.approx(inside / 2**n)


@given(data=st.lists(st.floats(0.001, 1e6), min_size=1, max_size=40), confidence=st.floats(0.5, 0.999))
def test_the_order_statistic_interval_is_the_tightest_that_covers(data: list[float], confidence: float) -> None:
    interval = median_interval(data, confidence, "order")
    if len(data) < min_runs(confidence, "order"):
        assert interval is None
        return
    assert interval is not None and interval.rank is not None and interval.method == "order"
    ordered = sorted(data)
    assert interval.coverage >= confidence and interval.coverage == coverage(len(data), interval.rank)
    assert (interval.low, interval.high) == (ordered[interval.rank - 1], ordered[-interval.rank])
    assert interval.low <= interval.median == statistics.median(data) <= interval.high
    tighter = interval.rank + 1
    assert tighter > (len(data) + 1) // 2 or coverage(len(data), tighter) < confidence
