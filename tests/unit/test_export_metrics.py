"""The run's Prometheus export: parsed back by prometheus_client's own parsers (Prometheus text
and OpenMetrics), held to promtool's naming rules, values in base units, labels escaped."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families as _parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

from harness.errors import ConfigError
from harness.export import RunMetrics, metric_name, render_openmetrics, render_prometheus, write_textfile
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample, read_samples
from tests.unit.promlint import lint_families, names_a_non_base_unit

RUNS = Path(__file__).parent.parent / "data" / "runs"
BONNIE = Path(__file__).parent.parent / "data" / "bonnie"


def _recorded() -> RunMetrics:
    samples = read_samples(RUNS / "20261121-110501-f674" / "samples.ndjson")
    info = RunInfo(run_id="20261121-110501-f674", inventory_name="lab", profile="quick", exitstatus=0)
    return RunMetrics(tuple(aggregate_samples(samples)), info)


def parse_openmetrics(text: str) -> list[Metric]:
    """prometheus_client's OpenMetrics parser (untyped upstream)."""
    return list(_parse_openmetrics(text))  # type: ignore[no-untyped-call]


def _by_name(families: list[Metric]) -> dict[str, Metric]:
    return {f.name: f for f in families}


def test_recorded_run_parses_in_both_formats_and_passes_the_lint() -> None:
    metrics = _recorded()
    prom = list(parse_prometheus(render_prometheus(metrics)))
    om = list(parse_openmetrics(render_openmetrics(metrics)))
    assert lint_families(prom) == [] and lint_families(om) == []
    assert {f.name for f in prom} == {f.name for f in om}
    assert all(f.type == "gauge" for f in prom if f.name != "harness_run_info")


def test_bandwidth_is_the_cells_median_in_bytes_per_second() -> None:
    metrics = _recorded()
    families = _by_name(list(parse_prometheus(render_prometheus(metrics))))
    bw = families["harness_replicated_write_bandwidth_bytes_per_second"]
    cells = [c for c in metrics.cells if c.scenario == "replicated_write"]
    assert len(bw.samples) == len(cells) == 12
    for cell in cells:
        (sample,) = [s for s in bw.samples if s.labels["pair"] == cell.pair and s.labels["workload"] == cell.workload]
        median = cell.median("bw")
        assert median is not None and sample.value == pytest.approx(median * 2**20)
        assert sample.labels["mode"] == "replicated" and sample.labels["impairment"] == cell.impairment


def test_latencies_are_seconds_with_a_statistic_label_and_verdicts_one_hot() -> None:
    metrics = _recorded()
    families = _by_name(list(parse_prometheus(render_prometheus(metrics))))
    lat = families["harness_replicated_write_completion_latency_seconds"]
    assert {s.labels["statistic"] for s in lat.samples} == {"mean", "p50", "p99", "p99.9"}
    cell = next(c for c in metrics.cells if c.scenario == "replicated_write")
    p99 = next(
        s
        for s in lat.samples
        if s.labels["statistic"] == "p99" and s.labels["workload"] == cell.workload and s.labels["pair"] == cell.pair
    )
    assert p99.value == pytest.approx((cell.median("clat_p99") or math.nan) / 1000)
    verdicts = families["harness_replicated_write_cell_verdict"]
    for c in metrics.cells:
        mine = [s for s in verdicts.samples if s.labels["pair"] == c.pair and s.labels["workload"] == c.workload]
        if c.scenario == "replicated_write":
            assert sorted(s.value for s in mine) == [0.0, 0.0, 1.0]
            assert next(s for s in mine if s.value == 1.0).labels["verdict"] == c.verdict
    info = families["harness_run_info"].samples[0]
    assert info.labels["run_id"] == "20261121-110501-f674" and info.value == 1.0


def test_bonnie_cells_export_in_base_units() -> None:
    from harness.bonnie import bonnie_values, parse_bonnie_csv

    (result,) = parse_bonnie_csv((BONNIE / "bonnie-2.00a-lab-ext4-n16.csv").read_text())
    meta = {"scenario": "filesystems", "pair": "a1", "mode": "ext4", "impairment": "none", "engine": "bonnie++"}
    samples = [
        Sample(metric, value, "", {**meta, "workload": row})
        for row, values in bonnie_values(result).items()
        for metric, value in values.items()
    ]
    metrics = RunMetrics(tuple(aggregate_samples(samples)), RunInfo(run_id="r"))
    families = _by_name(list(parse_prometheus(render_prometheus(metrics))))
    assert lint_families(families.values()) == []
    block = next(
        s
        for s in families["harness_filesystems_bandwidth_bytes_per_second"].samples
        if s.labels["workload"] == "bonnie-seq-output-block"
    )
    assert block.value == 220200 * 1024
    cpu = families["harness_filesystems_cpu_ratio"].samples
    assert max(s.value for s in cpu) == pytest.approx(4.47)  # 447 % with five seeker processes


_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30)


# A scenario's name becomes part of the metric's name: one called "ms" or "percent" would read
# as a unit, which no exporter can tell apart; the scenarios' names are the project's own.
_SCENARIO = _TEXT.filter(lambda s: not names_a_non_base_unit(metric_name(s, "io_operations_per_second")))


@settings(max_examples=60, deadline=None)
@given(pair=_TEXT, workload=_TEXT, scenario=_SCENARIO, value=st.floats(0, 1e12, allow_nan=False))
def test_any_label_value_survives_both_parsers(pair: str, workload: str, scenario: str, value: float) -> None:
    meta = {"scenario": scenario, "pair": pair, "mode": "replicated", "workload": workload, "impairment": "none"}
    metrics = RunMetrics(tuple(aggregate_samples([Sample("iops", value, "IOPS", meta)])), RunInfo(run_id="r"))
    name = metric_name(scenario, "io_operations_per_second")
    for parse, text in (
        (parse_prometheus, render_prometheus(metrics)),
        (parse_openmetrics, render_openmetrics(metrics)),
    ):
        families = _by_name(list(parse(text)))
        assert lint_families(families.values()) == []
        (sample,) = families[name].samples
        assert (sample.labels["pair"], sample.labels["workload"]) == (pair, workload)
        assert sample.value == pytest.approx(value)


def test_textfile_is_written_atomically_and_only_as_prom(tmp_path: Path) -> None:
    metrics = _recorded()
    target = write_textfile(tmp_path / "harness.prom", metrics)
    assert target.read_text() == render_prometheus(metrics)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["harness.prom"]  # no temporary left behind
    with pytest.raises(ConfigError, match=r"\*\.prom"):
        write_textfile(tmp_path / "harness.txt", metrics)
    with pytest.raises(ConfigError, match="no such directory"):
        write_textfile(tmp_path / "missing" / "harness.prom", metrics)
