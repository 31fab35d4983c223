"""Cells → comparison tables: groups, ratio choice and values, sections, dropped columns."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.report.aggregate import aggregate_samples
from harness.report.comparison import Comparison, Group, Ratio, build_comparison, ratio_of
from harness.runfiles.samples import METRICS, Sample

SINGLE = {"pair": "single-az", "placement": "same-az", "mode": "replicated"}
MULTI = {"pair": "multi-az", "placement": "cross-az", "mode": "replicated"}
SINGLE_DISC = {"pair": "single-az", "placement": "local", "mode": "disconnected"}
SINGLE_RAW = {"pair": "single-az", "placement": "local", "mode": "raw"}
RANDWRITE = "randwrite-4k-nj8-qd1"
WRITE = "write-1m-nj1-qd16"

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


def cell_samples(
    where: dict[str, Any],
    workload: str = RANDWRITE,
    *,
    scenario: str = "replicated_write",
    impairment: str = "none",
    verdict: str | None = "pass",
    **metrics: float,
) -> list[Sample]:
    metadata: dict[str, Any] = {"scenario": scenario, "workload": workload, "impairment": impairment, **where}
    if verdict is not None:
        metadata["verdict"] = verdict
    return [Sample(m, v, METRICS.get(m, ""), metadata) for m, v in metrics.items()]


def compare(*cells: list[Sample]) -> Comparison:
    return build_comparison(aggregate_samples([s for c in cells for s in c]))


# --------------------------------------------------------------------------------------------
# ratio_of


@given(positive, positive)
def test_ratio_times_denominator_is_numerator(num: float, den: float) -> None:
    r = ratio_of(num, den)
    assert r is not None
    assert r * den == pytest.approx(num, rel=1e-12)


def test_ratio_undefined_cases() -> None:
    assert ratio_of(None, 1.0) is None
    assert ratio_of(1.0, None) is None
    assert ratio_of(1.0, 0.0) is None
    assert ratio_of(1e308, 1e-308) is None  # overflow is not a number to print
    assert ratio_of(0.0, 2.0) == 0.0


# --------------------------------------------------------------------------------------------
# Tables


def test_replicated_write_table_groups_ratios_and_sections() -> None:
    comparison = compare(
        cell_samples(SINGLE, bw=40.0, iops=10240.0, clat_p99=2.0, rtt=0.3),
        cell_samples(MULTI, bw=20.0, iops=5120.0, clat_p99=6.0, rtt=2.3, verdict="fail"),
        cell_samples(SINGLE, WRITE, bw=200.0, iops=200.0, clat_p99=30.0, rtt=0.3),
        cell_samples(MULTI, WRITE, bw=180.0, iops=180.0, clat_p99=90.0, rtt=2.3),
        cell_samples(SINGLE_DISC, bw=50.0, iops=12800.0, clat_p99=1.9, rtt=0.3),
    )
    [table] = comparison.tables
    assert table.scenario == "replicated_write"
    assert [g.label for g in table.groups] == ["single-az (disconnected)", "single-az", "multi-az"]
    assert [(r.kind, r.label) for r in table.ratios] == [
        ("cross/same", "multi-az/single-az"),
        ("replicated/disconnected", "single-az repl/disc"),
    ]
    assert [(r.workload, r.impairment) for r in table.rows] == [(RANDWRITE, "none"), (WRITE, "none")]
    assert [s.metric for s in table.sections] == ["bw", "iops", "clat_p99", None]

    bw = table.section("bw")
    assert bw is not None
    assert [c.header for c in bw.columns] == [
        "workload",
        "impairment",
        "single-az (disconnected)",
        "single-az",
        "multi-az",
        "multi-az/single-az",
        "single-az repl/disc",
    ]
    cross, overhead = table.ratios
    first, second = table.rows
    assert first.ratio(cross, "bw") == pytest.approx(0.5)
    assert first.ratio(overhead, "bw") == pytest.approx(0.8)
    assert first.ratio(cross, "clat_p99") == pytest.approx(3.0)
    assert second.ratio(cross, "bw") == pytest.approx(0.9)
    assert second.ratio(overhead, "bw") is None  # no disconnected cell for this workload

    iops = table.section("iops")
    assert iops is not None
    assert not any(c.kind == "ratio" for c in iops.columns)  # the same ratio as bandwidth

    status = table.section(None)
    assert status is not None
    assert [(c.kind, c.header) for c in status.columns[2:]] == [
        ("verdict", "single-az (disconnected)"),
        ("verdict", "single-az"),
        ("verdict", "multi-az"),
        ("rtt", "single-az RTT ms"),  # a local cell has no replication path to measure
        ("rtt", "multi-az RTT ms"),
    ]
    assert comparison.verdict == "fail"
    assert [c.pair for c in comparison.not_passed] == ["multi-az"]
    assert table.typical_repeats == 1


@given(st.lists(positive, min_size=1, max_size=5), st.lists(positive, min_size=1, max_size=5))
def test_ratio_is_ratio_of_medians(single: list[float], multi: list[float]) -> None:
    samples = [
        Sample("bw", v, "MiB/s", {**SINGLE, "scenario": "s", "workload": "w", "repeat": i})
        for i, v in enumerate(single)
    ]
    samples += [
        Sample("bw", v, "MiB/s", {**MULTI, "scenario": "s", "workload": "w", "repeat": i}) for i, v in enumerate(multi)
    ]
    comparison = build_comparison(aggregate_samples(samples))
    [table] = comparison.tables
    [row] = table.rows
    [ratio] = table.ratios
    by_pair = {c.pair: c for c in comparison.cells}
    expected = by_pair["multi-az"].stats["bw"].median / by_pair["single-az"].stats["bw"].median
    assert row.ratio(ratio, "bw") == pytest.approx(expected, rel=1e-12)


def test_stack_baseline_chain_of_ratios() -> None:
    comparison = compare(
        *(cell_samples(w, scenario="stack_baseline", bw=b) for w, b in ((SINGLE_RAW, 60.0), (SINGLE_DISC, 58.0))),
        cell_samples(SINGLE, scenario="stack_baseline", bw=40.0),
        cell_samples(MULTI, scenario="stack_baseline", bw=20.0),
    )
    [table] = comparison.tables
    assert [g.short_label for g in table.groups] == ["single-az raw", "single-az disc", "single-az", "multi-az"]
    # multi-az has no local baseline of its own: it is reached through single-az, not compared
    # with single-az's disk directly.
    assert [(r.kind, r.numerator.pair, r.denominator.label) for r in table.ratios] == [
        ("cross/same", "multi-az", "single-az"),
        ("replicated/disconnected", "single-az", "single-az (disconnected)"),
        ("disconnected/raw", "single-az", "single-az (raw)"),
    ]
    [row] = table.rows
    assert row.ratio(table.ratios[2], "bw") == pytest.approx(58 / 60)


def test_cross_az_pair_with_its_own_local_baseline_gets_its_overhead_ratio() -> None:
    multi_disc = {"pair": "multi-az", "placement": "local", "mode": "disconnected"}
    comparison = compare(
        cell_samples(SINGLE, bw=40.0),
        cell_samples(MULTI, bw=20.0),
        cell_samples(SINGLE_DISC, bw=50.0),
        cell_samples(multi_disc, bw=48.0),
    )
    [table] = comparison.tables
    cross, single_overhead, multi_overhead = table.ratios
    assert [r.label for r in table.ratios] == ["multi-az/single-az", "single-az repl/disc", "multi-az repl/disc"]
    # multi-az's overhead is over its own disconnected cell (48), not single-az's (50)
    [row] = table.rows
    assert row.ratio(multi_overhead, "bw") == pytest.approx(20 / 48)
    assert row.ratio(single_overhead, "bw") == pytest.approx(40 / 50)
    assert row.ratio(cross, "bw") == pytest.approx(20 / 40)


def test_without_a_same_az_pair_the_only_local_baseline_is_used() -> None:
    comparison = compare(cell_samples(MULTI, bw=20.0), cell_samples(SINGLE_DISC, bw=50.0))
    [ratio] = comparison.tables[0].ratios
    assert ratio == Ratio("replicated/disconnected", Group("multi-az", "replicated", "cross-az"), ratio.denominator)
    assert ratio.label == "multi-az repl/single-az disc"
    [row] = comparison.tables[0].rows
    assert row.ratio(ratio, "bw") == pytest.approx(20 / 50)


def test_no_ratios_without_placement_metadata() -> None:
    a = {"pair": "a", "mode": "replicated"}
    b = {"pair": "b", "mode": "replicated"}
    comparison = compare(cell_samples(a, bw=1.0), cell_samples(b, bw=2.0))
    assert comparison.tables[0].ratios == ()
    bw = comparison.tables[0].section("bw")
    assert bw is not None and [c.kind for c in bw.columns] == ["workload", "impairment", "metric", "metric"]


def test_columns_nobody_measured_are_dropped() -> None:
    comparison = compare(cell_samples(SINGLE, verdict=None, bw=1.0), cell_samples(MULTI, verdict=None, iops=5.0))
    [table] = comparison.tables
    bw, iops = table.section("bw"), table.section("iops")
    assert bw is not None and iops is not None
    assert [c.header for c in bw.columns] == ["workload", "impairment", "single-az"]
    assert [c.header for c in iops.columns] == ["workload", "impairment", "multi-az"]
    assert table.section("clat_p99") is None
    status = table.section(None)
    assert status is not None and [c.kind for c in status.columns] == ["workload", "impairment"]


def test_scenario_measuring_other_metrics_gets_them() -> None:
    comparison = compare(
        cell_samples(SINGLE, scenario="failover_integrity", lost_writes=0.0, acked_writes=1000.0, wall=12.0),
    )
    [table] = comparison.tables
    assert [s.metric for s in table.sections] == ["acked_writes", "lost_writes", None]


def test_rows_sort_naturally_with_no_impairment_first() -> None:
    comparison = compare(
        cell_samples(SINGLE, "randwrite-4k-nj16-qd1", bw=1.0),
        cell_samples(SINGLE, "randwrite-4k-nj8-qd1", impairment="delay-10ms", bw=1.0),
        cell_samples(SINGLE, "randwrite-4k-nj8-qd1", impairment="delay-2ms", bw=1.0),
        cell_samples(SINGLE, "randwrite-4k-nj8-qd1", bw=1.0),
    )
    rows = [(r.workload, r.impairment) for r in comparison.tables[0].rows]
    assert rows == [
        ("randwrite-4k-nj8-qd1", "none"),
        ("randwrite-4k-nj8-qd1", "delay-2ms"),
        ("randwrite-4k-nj8-qd1", "delay-10ms"),
        ("randwrite-4k-nj16-qd1", "none"),
    ]


def test_one_table_per_scenario_and_lookup() -> None:
    comparison = compare(
        cell_samples(SINGLE, scenario="stack_baseline", bw=1.0),
        cell_samples(SINGLE, scenario="latency_sweep", bw=1.0, verdict="inconclusive"),
        cell_samples(SINGLE, scenario="bandwidth_cap", bw=1.0, verdict="fail"),
    )
    assert [t.scenario for t in comparison.tables] == ["bandwidth_cap", "latency_sweep", "stack_baseline"]
    assert comparison.table("latency_sweep").rows[0].cells
    with pytest.raises(KeyError):
        comparison.table("nope")
    assert [c.verdict for c in comparison.not_passed] == ["fail", "inconclusive"]


def test_typical_repeats_is_the_most_common_count() -> None:
    three = [s for r in range(3) for s in cell_samples({**SINGLE, "repeat": r}, bw=1.0)]
    two = [s for r in range(2) for s in cell_samples({**MULTI, "repeat": r}, bw=1.0)]
    three_b = [s for r in range(3) for s in cell_samples({**SINGLE, "repeat": r}, WRITE, bw=1.0)]
    [table] = compare(three, two, three_b).tables
    assert table.repeat_counts == (2, 3)
    assert table.typical_repeats == 3


def test_empty_comparison() -> None:
    comparison = build_comparison([])
    assert comparison.tables == () and comparison.verdict is None and comparison.not_passed == ()
