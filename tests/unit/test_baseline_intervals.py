"""The baseline gate between two cells repeated until their medians' intervals were tight
(``--repeat auto``): the real repeats of tests/data/runs/repeats3-a and -b as one side of six
repeats per cell, scaled for the other side, under either interval method, and the interval
logic with hypothesis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.baseline.compare import compare_cells, compare_metric
from harness.baseline.intervals import IntervalBasis
from harness.report.aggregate import Stat, aggregate_samples
from harness.rules.medianinterval import IntervalMethod, median_interval
from harness.rules.tolerance import Tolerance, tolerance_rules
from harness.runfiles.samples import METRICS, Sample
from tests.unit.baseline_runs import REPEATS_A, REPEATS_B, cell_is, load, scaled

STEADY = cell_is("single-az", "write-4k-nj8-qd1")  # 9.7-15.8 MiB/s over its six recorded repeats
BW = Tolerance("bw", "higher", 0.05)


def repeated_to(samples: list[Sample], confidence: float | None, method: IntervalMethod | None = None) -> list[Sample]:
    """The six repeats of every cell, with what ``--repeat auto`` records beside them (no
    method: as a run recorded before the choice of interval, which used the order statistics)."""
    if confidence is None:
        return samples
    firsts: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for s in samples:
        if s.metric == "bw":
            firsts.setdefault((s.metadata["pair"], s.metadata["workload"], s.metadata["scenario"]), s.metadata)
    recorded = {"interval_confidence": confidence}
    if method is not None:
        recorded["interval_lognormal"] = 1.0 if method == "lognormal" else 0.0
    return samples + [Sample(k, v, METRICS[k], m) for m in firsts.values() for k, v in recorded.items()]


def verdict(
    factor: float,
    confidence: float | None = 0.95,
    methods: tuple[IntervalMethod | None, IntervalMethod | None] = (None, None),
) -> tuple[str, str]:
    six = load(REPEATS_A) + load(REPEATS_B)
    reference = aggregate_samples(repeated_to(six, 0.95, methods[0]))
    current = aggregate_samples(repeated_to(scaled(six, factor, where=STEADY), confidence, methods[1]))
    delta = next(d for d in compare_cells(reference, current, tolerance_rules()).cells if STEADY(d.current.metadata))  # type: ignore[union-attr]
    bw = delta.metric("bw")
    assert bw is not None
    return bw.verdict, bw.reason


def test_halved_bandwidth_regresses_even_between_the_intervals_nearest_ends() -> None:
    got, reason = verdict(0.5)
    assert got == "regressed"
    assert reason.startswith("−50 %, beyond the −5 % tolerance even between the intervals' nearest ends")
    assert "95 % order-statistic intervals of the median: baseline 9.72–15.8 (n=6), now 4.86–7.91 (n=6)" in reason


def test_both_sides_on_the_lognormal_interval_are_judged_on_it() -> None:
    got, reason = verdict(0.5, methods=("lognormal", "lognormal"))
    base = median_interval(sorted(load_bw()), 0.95, "lognormal")
    assert base is not None and base.low > 9.72 and base.high < 15.8  # tighter than the range
    assert (
        got == "regressed"
        and "95 % lognormal intervals of the median: baseline 10.3–14.6 (n=6), now 5.16–7.28 (n=6)" in reason
    )
    got, reason = verdict(0.85, methods=("lognormal", "lognormal"))
    assert got == "inconclusive" and "lognormal intervals" in reason


@pytest.mark.parametrize("methods", [("lognormal", "order"), ("order", "lognormal"), ("lognormal", None)])
def test_sides_on_different_intervals_are_judged_on_the_distribution_free_one(
    methods: tuple[IntervalMethod | None, IntervalMethod | None],
) -> None:
    got, reason = verdict(0.5, methods=methods)
    assert got == "regressed" and "95 % order-statistic intervals of the median: baseline 9.72–15.8" in reason


def load_bw() -> list[float]:
    return [s.value for s in load(REPEATS_A) + load(REPEATS_B) if s.metric == "bw" and STEADY(s.metadata)]


def test_a_value_of_zero_is_judged_on_the_distribution_free_interval() -> None:
    zero = Stat("lost", "blocks", (0.0, 0.0, 0.0, 1.0, 0.0, 0.0))
    other = Stat("lost", "blocks", (0.0,) * 6)
    rule = Tolerance("lost", "lower", 0.05)
    judged = compare_metric(rule, zero, other, IntervalBasis(0.95, "lognormal"))
    assert "order-statistic intervals" in judged.reason


def test_an_unchanged_cell_passes_on_its_intervals() -> None:
    got, reason = verdict(1.0)
    assert got == "pass" and "95 % order-statistic intervals of the median" in reason


def test_a_change_the_intervals_do_not_show_is_inconclusive() -> None:
    got, reason = verdict(0.85)
    assert got == "inconclusive" and "the intervals do not show it" in reason


def test_a_side_with_a_fixed_count_is_judged_by_the_ranges_as_before() -> None:
    got, reason = verdict(0.5, confidence=None)
    assert got == "regressed" and "outside the noise" in reason and "intervals" not in reason


values = st.lists(st.floats(1.0, 1000.0), min_size=6, max_size=12)


@given(values, st.floats(0.05, 20.0), st.sampled_from(["lognormal", "order"]))
def test_intervals_apart_by_more_than_the_tolerance_are_a_change_in_the_right_direction(
    base: list[float], factor: float, method: IntervalMethod
) -> None:
    reference, current = Stat("bw", "MiB/s", tuple(base)), Stat("bw", "MiB/s", tuple(v * factor for v in base))
    judged = compare_metric(BW, reference, current, IntervalBasis(0.95, method))
    ref, cur = median_interval(base, 0.95, method), median_interval(current.values, 0.95, method)
    assert ref is not None and cur is not None
    if cur.high < ref.low * 0.949:  # even the current interval's best end is 5 % below the reference's worst
        assert judged.verdict == "regressed"
    elif cur.low * 0.949 > ref.high:
        assert judged.verdict == "improved"
    elif cur.high > ref.low * 0.951 and cur.low * 0.951 < ref.high:
        assert judged.verdict in ("pass", "inconclusive")


@pytest.mark.parametrize(("n", "method"), [(1, "lognormal"), (1, "order"), (5, "order")])
def test_too_few_repeats_for_an_interval_fall_back_to_the_ranges(n: int, method: IntervalMethod) -> None:
    reference, current = Stat("bw", "MiB/s", (10.0,) * n), Stat("bw", "MiB/s", (5.0,) * n)
    judged = compare_metric(BW, reference, current, IntervalBasis(0.95, method))
    assert judged.verdict == "regressed" and "intervals" not in judged.reason
