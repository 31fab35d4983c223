"""Baseline comparison: per-metric verdicts (hypothesis) and per-cell verdicts on recorded runs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness.baseline.compare import BaselineComparison, compare_cells, compare_metric, log_ratio
from harness.baseline.markdown import render_markdown
from harness.report.aggregate import Cell, Stat, aggregate_samples
from harness.rules.tolerance import METRIC_DIRECTIONS, Tolerance, tolerance_rules
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample
from tests.unit.baseline_runs import (
    LATER,
    REPEATS_A,
    REPEATS_B,
    SINGLE,
    cell_is,
    load,
    relabelled,
    scaled,
)

MIRROR = {"regressed": "improved", "improved": "regressed", "pass": "pass", "inconclusive": "inconclusive"}

values = st.lists(st.floats(min_value=1e-3, max_value=1e6), min_size=1, max_size=6)
# Repeats of one cell are never wildly apart in practice; bounding the spread keeps the scale
# factors below representable.
tight = values.filter(lambda v: max(v) / min(v) <= 4)
rules = st.builds(
    lambda metric, limit: Tolerance(metric, METRIC_DIRECTIONS[metric], limit),
    st.sampled_from(sorted(METRIC_DIRECTIONS)),
    st.floats(min_value=0, max_value=0.5),
)


def stat(vals: Sequence[float]) -> Stat:
    s = Stat.of("m", "", vals)
    assert s is not None
    return s


def cells(samples: list[Sample]) -> list[Cell]:
    return aggregate_samples(samples)


def compare(reference: list[Sample], current: list[Sample]) -> BaselineComparison:
    return compare_cells(cells(reference), cells(current), tolerance_rules())


def verdicts(result: BaselineComparison) -> dict[str, str]:
    return {c.label: c.verdict for c in result.cells}


# --------------------------------------------------------------------------------------------
# One metric (hypothesis)


@given(rules, values)
def test_identical_measurements_always_pass(rule: Tolerance, vals: list[float]) -> None:
    delta = compare_metric(rule, stat(vals), stat(vals))
    assert delta.verdict == "pass"
    assert delta.change == 0


@given(rules, tight, st.floats(min_value=0.01, max_value=0.99))
def test_a_regression_beyond_tolerance_and_noise_always_fails(rule: Tolerance, vals: list[float], k: float) -> None:
    ref = stat(vals)
    # The factor that moves the median past the tolerance *and* every repeat past the other side.
    if rule.direction == "higher":
        factor = k * min(1 - rule.limit, ref.min / ref.max) * 0.999
    else:
        factor = max(1 + rule.limit, ref.max / ref.min) * 1.001 / k
    cur = stat([v * factor for v in vals])
    delta = compare_metric(rule, ref, cur)
    assert delta.verdict == "regressed", delta.reason
    assert rule.describe() in delta.reason


@given(rules, values, values)
def test_swapping_the_sides_mirrors_the_verdict(rule: Tolerance, a: list[float], b: list[float]) -> None:
    forward = compare_metric(rule, stat(a), stat(b))
    backward = compare_metric(rule, stat(b), stat(a))
    assert backward.verdict == MIRROR[forward.verdict]


@given(rules, values, st.floats(min_value=0.01, max_value=0.99))
def test_a_change_inside_the_noise_is_inconclusive(rule: Tolerance, vals: list[float], k: float) -> None:
    ref = stat(vals)
    bad = k * (1 - rule.limit) * 0.999 if rule.direction == "higher" else (1 + rule.limit) * 1.001 / k
    moved = ref.median * bad
    # Two repeats moved past the tolerance, one still inside the baseline's range: the median
    # moved, but the two sides' ranges overlap.
    cur = stat([moved, moved, ref.min])
    assume(log_ratio(ref.median, cur.median) is not None and cur.median == moved)
    delta = compare_metric(rule, ref, cur)
    assert delta.verdict == "inconclusive", delta.reason
    assert "inside the noise" in delta.reason


@given(rules, values, st.floats(min_value=0.0, max_value=0.999))
def test_a_change_within_tolerance_passes_however_noisy(rule: Tolerance, vals: list[float], k: float) -> None:
    ref = stat(vals)
    edge = (1 - rule.limit) if rule.direction == "higher" else (1 + rule.limit)
    factor = 1 + (edge - 1) * k
    cur = stat([v * factor for v in vals])
    assert compare_metric(rule, ref, cur).verdict == "pass"


def test_zero_and_negative_medians() -> None:
    lost = Tolerance("lost_writes", "lower", 0.0)
    assert compare_metric(lost, stat([0.0]), stat([0.0])).verdict == "pass"
    assert compare_metric(lost, stat([0.0]), stat([12.0])).verdict == "regressed"
    assert compare_metric(lost, stat([12.0]), stat([0.0])).verdict == "improved"
    negative = compare_metric(lost, stat([-1.0]), stat([1.0]))
    assert negative.verdict == "inconclusive" and "negative" in negative.reason


def test_one_measurement_a_side_says_the_noise_is_unknown() -> None:
    delta = compare_metric(Tolerance("bw", "higher", 0.05), stat([100.0]), stat([80.0]))
    assert delta.verdict == "regressed"
    assert "noise unknown" in delta.reason and "--repeat" in delta.reason
    assert delta.change == pytest.approx(-0.2)


# --------------------------------------------------------------------------------------------
# Cells of recorded runs


def test_a_recorded_run_against_itself_passes_every_cell() -> None:
    run = load(SINGLE)
    result = compare(run, run)
    assert result.verdict == "pass" and not result.regressed
    assert set(verdicts(result).values()) == {"pass"}
    assert result.compared == 16
    # The failover cell records lost/acked writes only: nothing with a default tolerance.
    assert result.not_compared == ("failover_integrity/single-az/replicated/failover-randwrite-4k/crash",)
    assert not result.warnings and not result.provenance


def test_halved_bandwidth_regresses_exactly_the_scaled_cells() -> None:
    run = load(SINGLE)
    where = cell_is("multi-az", "write-1m-nj8-qd2")
    result = compare(run, scaled(run, 0.5, where=where))
    assert result.verdict == "regressed"
    regressed = result.with_verdict("regressed")
    assert [c.label for c in regressed] == ["replicated_write multi-az write-1m-nj8-qd2 [none]"]
    assert {m.metric: m.verdict for m in regressed[0].metrics} == {
        "bw": "regressed",
        "iops": "regressed",
        "clat_p99": "pass",
    }
    # The reverse direction is an improvement of the same cell.
    back = compare(scaled(run, 0.5, where=where), run)
    assert [c.label for c in back.with_verdict("improved")] == [regressed[0].label]
    assert back.verdict == "improved"


def test_calibration_cells_are_never_gated() -> None:
    # the model's inputs, measured once per pair: halving them changes no verdict (the
    # recorded run's replicated_write cells stand in for calibration cells)
    import dataclasses

    run = load(SINGLE)
    calibration = [
        dataclasses.replace(s, metadata={**s.metadata, "scenario": "calibration"})
        for s in run
        if s.metadata.get("scenario") == "replicated_write"
    ]
    assert calibration
    result = compare(run + calibration, run + scaled(calibration, 0.5))
    assert result.verdict == "pass"
    assert not any(d.key.startswith("calibration/") for d in result.cells)
    assert result.compared == compare(run, run).compared


def test_two_real_runs_an_hour_apart() -> None:
    # No repeats: the tolerance alone decides, and the lab's run-to-run noise shows.
    result = compare(load(SINGLE), load(LATER))
    v = verdicts(result)
    assert v["replicated_write multi-az write-1m-nj1-qd16 [none]"] == "regressed"  # 70.8 → 51.3 MiB/s
    assert v["replicated_write single-az randwrite-4k-nj8-qd1 [none]"] == "improved"  # 10.9 → 14.6 MiB/s
    assert v["replicated_write multi-az write-4k-nj1-qd1 [none]"] == "pass"  # −3.9 %
    assert result.verdict == "regressed"


def test_real_repeats_turn_most_differences_into_inconclusive() -> None:
    result = compare(load(REPEATS_A), load(REPEATS_B))
    v = verdicts(result)
    # randwrite 4k QD1 single-az: 1.2–9.7 MiB/s vs 3.1–6.4 MiB/s: the medians differ, the ranges overlap.
    assert v["replicated_write single-az randwrite-4k-nj1-qd1 [none]"] == "inconclusive"
    cell = next(c for c in result.cells if c.label.startswith("replicated_write single-az randwrite-4k-nj1"))
    bw = cell.metric("bw")
    assert bw is not None and bw.note == "inside the noise"
    # 1 MiB QD16 writes got slower in every repeat of the later runs: conclusive even with the noise.
    assert v["replicated_write single-az write-1m-nj1-qd16 [none]"] == "regressed"
    assert result.counts["inconclusive"] == 10 and result.counts["regressed"] == 2


def test_a_regression_far_beyond_the_real_noise_is_caught_with_repeats() -> None:
    run = load(REPEATS_B)
    where = cell_is("multi-az", "randwrite-4k-nj8-qd1")  # 3.4–7.1 MiB/s over its three repeats
    result = compare(run, scaled(run, 0.4, where=where))
    assert [c.label for c in result.with_verdict("regressed")] == [
        "replicated_write multi-az randwrite-4k-nj8-qd1 [none]"
    ]
    # 0.8× is beyond the 5 % tolerance but inside that cell's own spread.
    mild = compare(run, scaled(run, 0.8, where=where))
    assert mild.verdict == "inconclusive"


def test_an_invalid_cell_cannot_regress() -> None:
    run = load(SINGLE)
    where = cell_is("multi-az", "write-1m-nj8-qd2")
    reason = "DRBD left Connected during the run (SyncSource)"
    current = relabelled(scaled(run, 0.5, where=where), where, verdict="inconclusive", verdict_reason=reason)
    result = compare(run, current)
    cell = next(c for c in result.cells if c.key.startswith("replicated_write/multi-az/replicated/write-1m-nj8"))
    assert cell.verdict == "inconclusive"
    assert cell.invalid is not None and reason in cell.invalid
    assert result.verdict == "inconclusive"


def test_new_and_missing_cells_are_listed_not_failed() -> None:
    run = load(SINGLE)
    gone = cell_is("single-az", "write-4k-nj1-qd1")
    current = [s for s in run if not gone(s.metadata)]
    current += relabelled([s for s in run if gone(s.metadata)], workload="write-4k-nj2-qd1")
    result = compare(run, current)
    assert [c.label for c in result.with_verdict("missing")] == ["replicated_write single-az write-4k-nj1-qd1 [none]"]
    assert [c.label for c in result.with_verdict("new")] == ["replicated_write single-az write-4k-nj2-qd1 [none]"]
    assert result.verdict == "pass"


def test_differing_provenance_and_run_metadata_are_warnings() -> None:
    run = load(SINGLE)
    where = cell_is("single-az", "write-4k-nj1-qd1")
    current = relabelled(run, where, kernel="6.12.9", drbd_version="9.2.12")
    result = compare_cells(
        cells(run),
        cells(current),
        tolerance_rules(),
        reference_info=RunInfo(run_id="a", inventory_name="lab", profile="quick"),
        current_info=RunInfo(run_id="b", inventory_name="lab", profile="standard"),
    )
    described = {p.describe() for p in result.provenance}
    assert described == {"kernel: 6.1.176 → 6.12.9 (1 cell)", "drbd_version: 8.4.11 → 9.2.12 (1 cell)"}
    assert result.warnings == ("profile differs: baseline quick, this run standard",)
    assert result.verdict == "pass"  # a warning explains numbers; it does not fail them


def test_nothing_in_common_is_inconclusive_not_pass() -> None:
    run = load(SINGLE)
    result = compare(run, relabelled(run, pair="elsewhere"))
    assert result.compared == 0 and result.verdict == "inconclusive"
    assert any("nothing was compared" in w for w in result.warnings)


# --------------------------------------------------------------------------------------------
# Markdown


def test_markdown_names_the_regressed_cells_and_metrics() -> None:
    run = load(SINGLE)
    result = compare(run, scaled(run, 0.5, where=cell_is("multi-az", "write-1m-nj8-qd2")))
    md = render_markdown(result, "baseline `main`", "run `x`")
    lines = md.splitlines()
    assert lines[0] == "## Baseline comparison: REGRESSED"
    assert "**1 regressed**" in md
    regressed = md.split("### Regressed\n\n", 1)[1].split("\n\n", 1)[0]  # the table under the heading
    rows = [line for line in regressed.splitlines() if line.startswith("| replicated_write")]
    assert len(rows) == 2  # MiB/s and IOPS, not p99
    assert "| MiB/s" in rows[0] and "−50 %" in rows[0] and "−5 %" in rows[0]
    assert "measured once on each side" in md
    assert "<details>" in md and "<details>" not in render_markdown(result, "b", "r", details=False)


def test_markdown_of_a_pass_is_short() -> None:
    run = load(REPEATS_A)
    md = render_markdown(compare(run, run), "baseline `main`", "run `x`", details=False)
    assert md.startswith("## Baseline comparison: PASS\n")
    assert "### " not in md
    assert "0 regressed" in md and "12 pass" in md
