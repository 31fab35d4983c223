"""Bounds maths: verdicts, the latency model, the rate band, verdict precedence."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.rules.bounds import (
    AbsoluteBounds,
    BoundResult,
    absolute_bounds_for,
    check_absolute,
    check_latency_model,
    check_rate_cap,
    check_ratio,
    combine,
    expected_sync_iops,
)

positive = st.floats(min_value=0.01, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_absolute_names_every_violation() -> None:
    result = check_absolute(AbsoluteBounds(min_mib_s=50, min_iops=1000, max_p99_ms=5), mib_s=40, iops=900, p99_ms=9)
    assert result.verdict == "fail"
    assert "40.0 MiB/s < min 50" in result.reason and "900 IOPS < min 1000" in result.reason
    assert "p99 9.00 ms > max 5" in result.reason


def test_absolute_without_p99_is_inconclusive() -> None:
    assert check_absolute(AbsoluteBounds(max_p99_ms=5), mib_s=1, iops=1, p99_ms=None).verdict == "inconclusive"


def test_glob_most_specific_wins() -> None:
    bounds = absolute_bounds_for(
        "randwrite-4k-nj1-qd1@none", {"*@none": 1.0, "randwrite-4k-*@none": 2.0}, {"write-*": 5.0}, {}
    )
    assert bounds == AbsoluteBounds(min_mib_s=2.0, min_iops=None, max_p99_ms=None)


@given(positive, positive)
def test_absolute_min_bound_is_exact(value: float, bound: float) -> None:
    result = check_absolute(AbsoluteBounds(min_mib_s=bound), mib_s=value, iops=0, p99_ms=None)
    assert (result.verdict == "pass") == (value >= bound)


@given(st.floats(0, 100), st.floats(0, 100), st.integers(1, 64))
def test_sync_iops_model(rtt: float, write: float, qd: int) -> None:
    iops = expected_sync_iops(rtt, write, qd)
    if rtt + write == 0:
        assert math.isinf(iops)
    else:
        assert iops == pytest.approx(qd * 1000 / (rtt + write))
        # more RTT never raises the model's IOPS
        assert expected_sync_iops(rtt + 1, write, qd) < iops


def test_latency_model_pass_and_fail() -> None:
    good = check_latency_model(
        400, median_latency_ms=2.45, rtt_ms=2.4, local_write_ms=0.1, queue_depth=1, tolerance=0.25
    )
    assert good.verdict == "pass", good.reason
    slow_median = check_latency_model(
        300, median_latency_ms=4.0, rtt_ms=2.4, local_write_ms=0.1, queue_depth=1, tolerance=0.25
    )
    assert slow_median.verdict == "fail" and "median outside" in slow_median.reason
    too_fast = check_latency_model(
        800, median_latency_ms=2.5, rtt_ms=2.4, local_write_ms=0.1, queue_depth=1, tolerance=0.25
    )
    assert too_fast.verdict == "fail" and "beats the model" in too_fast.reason
    heavy_tail = check_latency_model(
        150, median_latency_ms=2.5, rtt_ms=2.4, local_write_ms=0.1, queue_depth=1, tolerance=0.25
    )
    assert heavy_tail.verdict == "fail" and "below 50%" in heavy_tail.reason


@given(positive, st.floats(min_value=1e3, max_value=1e10))
def test_rate_cap_band(measured: float, cap: float) -> None:
    result = check_rate_cap(measured, cap, (0.8, 1.0))
    assert (result.verdict == "pass") == (0.8 <= measured / cap <= 1.0)


@given(positive, positive, st.floats(0.01, 2))
def test_ratio(numerator: float, denominator: float, minimum: float) -> None:
    result = check_ratio("x", numerator, denominator, minimum=minimum)
    assert (result.verdict == "pass") == (numerator / denominator >= minimum)


def test_ratio_without_reference_is_inconclusive() -> None:
    assert check_ratio("x", 1.0, 0.0, minimum=0.5).verdict == "inconclusive"


verdicts = st.sampled_from(["pass", "fail", "inconclusive"])


@given(st.lists(st.tuples(verdicts, st.text(max_size=5)), min_size=1, max_size=6))
def test_combine_worst_wins(items: list[tuple[str, str]]) -> None:
    results = [BoundResult(v, r) for v, r in items]  # type: ignore[arg-type]
    combined = combine(results)
    order = {"pass": 0, "inconclusive": 1, "fail": 2}
    assert order[combined.verdict] == max(order[v] for v, _ in items)
