"""The run's Prometheus export, on recorded runs: accepted by the real ``promtool check metrics``,
parsed back by prometheus_client's own parsers (Prometheus text and OpenMetrics), named by what
is measured with the scenario in a label, values in base units, two inventories' series
disjoint, and the run's id and start time beside the measurements."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families as _parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

from harness.errors import ConfigError
from harness.export import (
    CELL_LABELS,
    RunMetrics,
    push_grouping,
    render_openmetrics,
    render_prometheus,
    write_textfile,
)
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample, read_samples
from tests.unit.promtool import check_metrics

RUNS = Path(__file__).parent.parent / "data" / "runs"
DISK_RUN = Path(__file__).parent.parent / "data" / "disk_runs" / "20261125-115711-97ce"
BONNIE = Path(__file__).parent.parent / "data" / "bonnie"
RUN_ID = "20261121-110501-f674"


def _recorded(inventory: str = "lab") -> RunMetrics:
    run = RUNS / RUN_ID
    info = RunInfo.read(run / "run.json")
    assert info is not None
    info = RunInfo.from_dict({**info.to_dict(), "inventory_name": inventory})
    return RunMetrics(tuple(aggregate_samples(read_samples(run / "samples.ndjson"))), info)


def parse_openmetrics(text: str) -> list[Metric]:
    """prometheus_client's OpenMetrics parser (untyped upstream)."""
    return list(_parse_openmetrics(text))  # type: ignore[no-untyped-call]


def _by_name(families: list[Metric]) -> dict[str, Metric]:
    return {f.name: f for f in families}


def _families(metrics: RunMetrics) -> dict[str, Metric]:
    return _by_name(list(parse_prometheus(render_prometheus(metrics))))


def test_promtool_accepts_the_recorded_runs() -> None:
    disk = RunInfo.read(DISK_RUN / "run.json")
    assert disk is not None
    for metrics in (_recorded(), RunMetrics(tuple(aggregate_samples(read_samples(DISK_RUN / "samples.ndjson"))), disk)):
        result = check_metrics(render_prometheus(metrics))
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_promtool_refuses_the_names_the_scenario_used_to_make() -> None:
    # What the export wrote before its names said what they measure: a scenario called
    # "protocols" and protocol B's cells made harness_protocols_b_* (promtool: an abbreviated unit)
    old = (
        "# HELP harness_protocols_b_bandwidth_bytes_per_second Measured bandwidth\n"
        "# TYPE harness_protocols_b_bandwidth_bytes_per_second gauge\n"
        'harness_protocols_b_bandwidth_bytes_per_second{pair="multi-az"} 1.0\n'
    )
    result = check_metrics(old)
    assert result.returncode == 3
    assert "harness_protocols_b_bandwidth_bytes_per_second metric names should not contain abbreviated units" in (
        result.stdout + result.stderr
    )


def test_both_formats_parse_to_the_same_gauges() -> None:
    metrics = _recorded()
    prom = list(parse_prometheus(render_prometheus(metrics)))
    om = parse_openmetrics(render_openmetrics(metrics))
    assert {f.name for f in prom} == {f.name for f in om}
    assert {f.type for f in prom} == {"gauge"}


def test_names_say_what_is_measured_and_the_scenario_is_a_label() -> None:
    families = _families(_recorded())
    assert not any(name.startswith(("harness_replicated_write", "harness_latency_sweep")) for name in families)
    bw = families["harness_write_bandwidth_bytes_per_second"]
    assert Counter(s.labels["scenario"] for s in bw.samples) == {"replicated_write": 12, "latency_sweep": 4}
    for sample in bw.samples:
        assert tuple(sorted(sample.labels)) == tuple(sorted(CELL_LABELS))
        assert sample.labels["inventory"] == "lab" and sample.labels["protocol"] == "C"


def test_bandwidth_is_the_cells_median_in_bytes_per_second_on_its_primary() -> None:
    metrics = _recorded()
    bw = _families(metrics)["harness_write_bandwidth_bytes_per_second"]
    cells = [c for c in metrics.cells if c.scenario == "replicated_write"]
    for cell in cells:
        (sample,) = [
            s
            for s in bw.samples
            if (s.labels["scenario"], s.labels["pair"], s.labels["workload"])
            == (cell.scenario, cell.pair, cell.workload)
        ]
        median = cell.median("bw")
        assert median is not None and sample.value == pytest.approx(median * 2**20)
        assert sample.labels["impairment"] == cell.impairment and sample.labels["mode"] == "replicated"
        # the lab's single-az pair is a1-a2 in az-a, multi-az is a3-b1 across AZs
        expected = {"single-az": ("a1", "same-az"), "multi-az": ("a3", "cross-az")}[cell.pair]
        assert (sample.labels["node"], sample.labels["placement"]) == expected


def test_latencies_are_seconds_with_a_statistic_label_and_verdicts_one_hot() -> None:
    metrics = _recorded()
    families = _families(metrics)
    lat = families["harness_write_latency_seconds"]
    assert {s.labels["statistic"] for s in lat.samples} == {"mean", "p50", "p99", "p99.9"}
    cell = next(c for c in metrics.cells if c.scenario == "replicated_write")
    p99 = next(
        s
        for s in lat.samples
        if s.labels["statistic"] == "p99"
        and (s.labels["scenario"], s.labels["workload"], s.labels["pair"]) == (cell.scenario, cell.workload, cell.pair)
    )
    assert p99.value == pytest.approx((cell.median("clat_p99") or math.nan) / 1000)
    verdicts = families["harness_cell_verdict"]
    for c in metrics.cells:
        mine = [s for s in verdicts.samples if s.labels["scenario"] == c.scenario and s.labels["pair"] == c.pair]
        mine = [s for s in mine if (s.labels["workload"], s.labels["impairment"]) == (c.workload, c.impairment)]
        assert sorted(s.value for s in mine) == [0.0, 0.0, 1.0]
        assert next(s for s in mine if s.value == 1.0).labels["verdict"] == c.verdict


def test_the_run_has_its_id_and_start_time_and_no_measurement_carries_the_id() -> None:
    metrics = _recorded()
    families = _families(metrics)
    (info,) = families["harness_run_info"].samples
    assert info.labels == {"inventory": "lab", "run_id": RUN_ID, "profile": "quick", "harness_version": ""}
    (started,) = families["harness_run_timestamp_seconds"].samples
    assert started.value == pytest.approx(1795259101.6913133) and started.labels == {"inventory": "lab"}
    assert "harness_run_duration_seconds" not in families  # run.json of that version had no finish time
    for name, family in families.items():
        for sample in family.samples:
            assert RUN_ID not in sample.labels.values() or name == "harness_run_info"


def test_two_inventories_series_never_collide() -> None:
    # node_exporter's textfile collector merges every *.prom file of its directory: the same
    # run recorded for two clusters must give disjoint series, or the collector drops some
    series: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
    for inventory in ("cluster-a", "cluster-b"):
        for family in parse_prometheus(render_prometheus(_recorded(inventory))):
            for s in family.samples:
                series[(s.name, tuple(sorted(s.labels.items())))] += 1
    assert series and max(series.values()) == 1


def test_the_push_groups_by_inventory_and_run() -> None:
    assert push_grouping(_recorded("prod")) == {"inventory": "prod", "run_id": RUN_ID}
    unnamed = RunMetrics((), RunInfo(run_id="r1"))
    assert push_grouping(unnamed) == {"inventory": "unnamed", "run_id": "r1"}
    assert 'harness_run_cells{inventory="unnamed"} 0.0' in render_prometheus(unnamed)


def test_bonnie_cells_export_in_base_units() -> None:
    from harness.bonnie import bonnie_values, parse_bonnie_csv

    (result,) = parse_bonnie_csv((BONNIE / "bonnie-2.00a-lab-ext4-n16.csv").read_text())
    meta = {"scenario": "filesystems", "pair": "a1", "mode": "ext4", "impairment": "none", "engine": "bonnie++"}
    samples = [
        Sample(metric, value, "", {**meta, "workload": row, "node": "a1"})
        for row, values in bonnie_values(result).items()
        for metric, value in values.items()
    ]
    metrics = RunMetrics(tuple(aggregate_samples(samples)), RunInfo(run_id="r"))
    assert check_metrics(render_prometheus(metrics)).returncode == 0
    families = _families(metrics)
    # bonnie++ records no fio direction: its phases are "io", the workload names the phase
    block = next(
        s
        for s in families["harness_io_bandwidth_bytes_per_second"].samples
        if s.labels["workload"] == "bonnie-seq-output-block"
    )
    assert block.value == 220200 * 1024 and block.labels["node"] == "a1"
    cpu = families["harness_cpu_usage_ratio"].samples
    assert max(s.value for s in cpu) == pytest.approx(4.47)  # 447 % with five seeker processes


#: label values a cell's metadata could carry that the exposition must escape
HOSTILE = ['a"b', "back\\slash", "new\nline", "ünïcødé ✓", "{curly}", "a=b,c", " "]


def _one_cell(scenario: str, pair: str, workload: str, value: float) -> RunMetrics:
    meta = {"scenario": scenario, "pair": pair, "mode": "replicated", "workload": workload, "impairment": "none"}
    meta |= {"rw": "randwrite", "primary": pair}
    return RunMetrics(tuple(aggregate_samples([Sample("iops", value, "IOPS", meta)])), RunInfo(run_id="r"))


def test_promtool_accepts_escaped_label_values() -> None:
    for value in HOSTILE:
        assert check_metrics(render_prometheus(_one_cell(value, value, value, 12.5))).returncode == 0


_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(pair=_TEXT, workload=_TEXT, scenario=_TEXT, value=st.floats(0, 1e12, allow_nan=False))
def test_any_label_value_survives_both_parsers(pair: str, workload: str, scenario: str, value: float) -> None:
    metrics = _one_cell(scenario, pair, workload, value)
    for parse, text in (
        (parse_prometheus, render_prometheus(metrics)),
        (parse_openmetrics, render_openmetrics(metrics)),
    ):
        families = _by_name(list(parse(text)))
        # whatever the scenario is called, the name is the quantity's
        (sample,) = families["harness_write_operations_per_second"].samples
        assert (sample.labels["scenario"], sample.labels["pair"], sample.labels["workload"]) == (
            scenario,
            pair,
            workload,
        )
        assert sample.labels["node"] == pair and sample.value == pytest.approx(value)


def test_textfile_is_written_atomically_and_only_as_prom(tmp_path: Path) -> None:
    metrics = _recorded()
    target = write_textfile(tmp_path / "harness.prom", metrics)
    assert target.read_text() == render_prometheus(metrics)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["harness.prom"]  # no temporary left behind
    with pytest.raises(ConfigError, match=r"\*\.prom"):
        write_textfile(tmp_path / "harness.txt", metrics)
    with pytest.raises(ConfigError, match="no such directory"):
        write_textfile(tmp_path / "missing" / "harness.prom", metrics)
