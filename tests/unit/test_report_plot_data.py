"""Which cells feed which plot: on recorded lab runs and a recorded fio numjobs sweep."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.report.aggregate import aggregate_samples
from harness.report.plot_data import (
    MAX_SERIES_PLOTS,
    baseline_pairs,
    cell_label,
    latency_sweeps,
    local_write_ms,
    numjobs_sweeps,
    placement_groups,
    series_to_plot,
    workload_family,
)
from harness.runfiles.series import CellSeries, FaultWindow

from .baseline_runs import load
from .plot_inputs import LATENCY, REPEATS_A, REPEATS_B, bw_series, cells, numjobs_samples, stop_windows

# --------------------------------------------------------------------------------------------
# Latency sweep


def test_latency_sweep_per_pair_from_three_recorded_runs() -> None:
    sweeps = latency_sweeps(cells(LATENCY))
    assert [(s.pair, s.placement, s.protocol) for s in sweeps] == [
        ("multi-az", "cross-az", "C"),
        ("single-az", "same-az", "C"),
    ]
    for s in sweeps:
        assert [p.added_rtt_ms for p in s.points] == [0.0, 1.0, 2.0, 5.0, 10.0]
        assert [p.label for p in s.points] == ["none", "rtt1ms", "rtt2ms", "rtt5ms", "rtt10ms"]
        assert all(p.iops.n == 3 for p in s.points)
        # The unimpaired cell does not probe the RTT; every impaired one does, and the
        # measured RTT includes the added delay.
        assert s.points[0].rtt is None
        for p in s.points[1:]:
            assert p.rtt is not None and p.rtt.n == 3 and p.added_rtt_ms is not None
            assert p.rtt.min >= p.added_rtt_ms


def test_local_write_is_the_calibration_per_write_time() -> None:
    recorded = [
        s.value
        for s in load(LATENCY)
        if s.metadata["scenario"] == "calibration" and s.metadata["pair"] == "single-az" and s.metric == "iops"
    ]
    assert len(recorded) == 3
    assert local_write_ms(cells(LATENCY), "single-az") == pytest.approx(1000 / statistics.median(recorded))
    assert local_write_ms(cells(LATENCY), "nope") is None


def test_sweep_without_calibration_has_no_model_input() -> None:
    sweep_only = aggregate_samples(s for s in load(LATENCY) if s.metadata["scenario"] == "latency_sweep")
    assert [s.local_write_ms for s in latency_sweeps(sweep_only)] == [None, None]


def test_no_latency_sweep_in_a_run_without_one() -> None:
    assert latency_sweeps(cells(REPEATS_A)) == []


# --------------------------------------------------------------------------------------------
# numjobs sweep


def test_numjobs_sweeps_of_a_recorded_fio_sweep() -> None:
    sweeps = numjobs_sweeps(aggregate_samples(numjobs_samples()))
    assert [(s.scenario, s.family, s.pair, s.mode, s.bs) for s in sweeps] == [
        ("numjobs_sweep", "randwrite-4k-nj*-qd1", "host", "raw", 4096),
        ("numjobs_sweep", "write-64k-nj*-qd1", "host", "raw", 65536),
    ]
    for s in sweeps:
        assert [p.numjobs for p in s.points] == [1, 2, 4, 8]
        assert all(p.bw is not None and p.iops is not None for p in s.points)
        assert s.label == "host · raw"


def test_two_numjobs_values_are_not_a_sweep() -> None:
    replicated = cells(REPEATS_A)  # nj1 and nj8 of each workload
    assert numjobs_sweeps(replicated) == []
    pairs = numjobs_sweeps(replicated, minimum=2)
    # write-1m-nj1-qd16 and write-1m-nj8-qd2 differ in queue depth too: not one family.
    assert sorted({s.family for s in pairs}) == ["randwrite-4k-nj*-qd1", "write-4k-nj*-qd1"]
    assert sorted(s.pair for s in pairs) == ["multi-az", "multi-az", "single-az", "single-az"]


rw = st.sampled_from(["randwrite", "write", "randrw70", "read"])
bs = st.sampled_from(["4k", "1m", "4k-32k", "512"])
small = st.integers(min_value=1, max_value=64)
suffix = st.sampled_from(["", "-sync", "-verify", "-fsync1-endfsync"])


@given(st.tuples(rw, bs, suffix), st.tuples(small, small), st.tuples(small, small))
def test_family_equal_exactly_when_only_numjobs_differs(
    shape: tuple[str, str, str], numjobs: tuple[int, int], depths: tuple[int, int]
) -> None:
    r, b, tail = shape
    (nj_a, nj_b), (qd_a, qd_b) = numjobs, depths
    a = workload_family(f"{r}-{b}-nj{nj_a}-qd{qd_a}{tail}")
    other = workload_family(f"{r}-{b}-nj{nj_b}-qd{qd_b}{tail}")
    assert a is not None and "nj*" in a
    assert (a == other) == (qd_a == qd_b)


def test_family_of_an_id_without_numjobs() -> None:
    assert workload_family("failover-randwrite-4k") is None
    assert workload_family("randwrite-4k-nj2x-qd1") is None


# --------------------------------------------------------------------------------------------
# Single-AZ vs multi-AZ


def test_placement_groups_per_workload_same_az_first() -> None:
    groups = placement_groups(cells(REPEATS_A))
    assert [g.title for g in groups] == [
        "randwrite-4k-nj1-qd1",
        "randwrite-4k-nj8-qd1",
        "write-1m-nj1-qd16",
        "write-1m-nj8-qd2",
        "write-4k-nj1-qd1",
        "write-4k-nj8-qd1",
    ]
    for g in groups:
        assert [(b.pair, b.placement, b.stat.n) for b in g.bars] == [
            ("single-az", "same-az", 3),
            ("multi-az", "cross-az", 3),
        ]


def test_placement_needs_both_placements_and_the_metric() -> None:
    single = aggregate_samples(s for s in load(REPEATS_A) if s.metadata["pair"] == "single-az")
    assert placement_groups(single) == []
    assert placement_groups(cells(REPEATS_A), metric="lost_writes") == []
    assert placement_groups(cells(LATENCY)) == []  # no replicated_write cells
    assert placement_groups(cells(LATENCY), scenario="latency_sweep") == []  # it has no bw
    sweep = placement_groups(cells(LATENCY), metric="iops", scenario="latency_sweep")
    assert [g.title for g in sweep] == [
        "randwrite-4k-nj1-qd1",
        "randwrite-4k-nj1-qd1 · rtt1ms",
        "randwrite-4k-nj1-qd1 · rtt2ms",
        "randwrite-4k-nj1-qd1 · rtt5ms",
        "randwrite-4k-nj1-qd1 · rtt10ms",
    ]


# --------------------------------------------------------------------------------------------
# Baseline vs current


def test_baseline_pairs_match_cells_by_identity() -> None:
    base, current = cells(REPEATS_A), cells(REPEATS_B)
    pairs = baseline_pairs(base, current, "bw")
    assert [p.key for p in pairs] == [c.key for c in current]
    for p, b, c in zip(pairs, base, current, strict=True):
        assert p.key == b.key == c.key
        assert p.baseline == b.stats["bw"] and p.current == c.stats["bw"]
        assert p.label == cell_label(c)


def test_a_cell_on_one_side_only_is_kept_and_unknown_metrics_dropped() -> None:
    base = cells(REPEATS_A)
    current = cells(REPEATS_B, LATENCY)
    pairs = baseline_pairs(base, current, "iops")
    only_current = [p for p in pairs if p.baseline is None]
    assert {p.key.split("/")[0] for p in only_current} == {"latency_sweep", "calibration"}
    assert all(p.current is not None for p in pairs)
    # The calibration cells have iops only: no bandwidth bar for them.
    assert [p for p in pairs if p.key.startswith("calibration/")]
    assert not [p for p in baseline_pairs(base, current, "bw") if p.key.startswith("calibration/")]
    assert baseline_pairs(base, current, "no_such_metric") == []
    reverse = baseline_pairs(current, base, "iops")
    assert {p.key for p in reverse if p.current is None} == {p.key for p in only_current}


def test_cell_label_shows_only_what_is_not_the_default() -> None:
    by_key = {c.key: c for c in cells(LATENCY)}
    assert cell_label(by_key["latency_sweep/multi-az/replicated/randwrite-4k-nj1-qd1/rtt5ms"]) == (
        "latency_sweep · multi-az · randwrite-4k-nj1-qd1 · rtt5ms"
    )
    assert cell_label(by_key["calibration/single-az/disconnected/randwrite-4k-nj1-qd1/none"]) == (
        "calibration · single-az · randwrite-4k-nj1-qd1 · disconnected"
    )


# --------------------------------------------------------------------------------------------
# Which series get a plot


def test_series_with_a_fault_window_come_first_and_plain_ones_never() -> None:
    plain = bw_series("write-1m-nj2", scenario="replicated_write")
    impaired = bw_series("ramp-nj2", scenario="bandwidth_cap", impairment="cap-128mbit")
    failover = bw_series("tail-nj2", scenario="failover_integrity", impairment="crash")
    stopped = bw_series("stop-nj2", scenario="replicated_write", pair="multi-az", windows=stop_windows())
    chosen = series_to_plot([plain, impaired, failover, stopped])
    assert chosen == [stopped, failover, impaired]


def test_empty_series_and_repeats_of_one_cell() -> None:
    first = bw_series("thinktime-nj2", impairment="crash")
    second = replace(first, repeat=1)
    empty = replace(first, scenario="other", bw_mib_s=())
    assert series_to_plot([second, empty, first]) == [first]


def _series(scenario: str, pair: str, impairment: str, repeat: int, windows: bool) -> CellSeries:
    return CellSeries(
        test_id="t",
        scenario=scenario,
        pair=pair,
        workload="w",
        impairment=impairment,
        mode="replicated",
        repeat=repeat,
        interval_s=1.0,
        bw_mib_s=(1.0, 2.0),
        windows=(FaultWindow(0.5, 1.5, "fault"),) if windows else (),
    )


series_st = st.builds(
    _series,
    st.sampled_from(["failover_integrity", "latency_sweep", "replicated_write"]),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["none", "rtt5ms", "crash"]),
    st.integers(0, 2),
    st.booleans(),
)


@given(st.lists(series_st, max_size=40), st.integers(1, 8))
def test_series_choice_properties(series: list[CellSeries], limit: int) -> None:
    chosen = series_to_plot(series, limit)
    eligible = [s for s in series if s.windows or s.scenario == "failover_integrity" or s.impairment != "none"]
    assert len(chosen) == min(limit, len({s.key for s in eligible}))
    assert len({s.key for s in chosen}) == len(chosen)
    assert all(s in eligible for s in chosen)
    # Nothing without a window is chosen while a cell with one is left out.
    windowed = {s.key for s in eligible if s.windows}
    if any(not s.windows for s in chosen):
        assert windowed <= {s.key for s in chosen}


def test_default_limit_is_a_handful() -> None:
    many = [_series("latency_sweep", pair, f"rtt{ms}ms", 0, False) for pair in "abc" for ms in (1, 2, 5, 10)]
    assert len(series_to_plot(many)) == MAX_SERIES_PLOTS < len(many)
