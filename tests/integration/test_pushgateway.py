"""The push to a real Pushgateway: Debian's ``prometheus-pushgateway`` (scripts/bootstrap
installs it), started by the test on 127.0.0.1 at a free port with no persistence file, then
read back from its own ``/metrics`` and parsed by prometheus_client's parser.  Each run is its
own group (job, inventory, run id): a second run's push, however partial, keeps the first's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from harness.export import PushError, RunMetrics, push_to_pushgateway
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import read_samples
from tests.integration.daemons import free_port, get, pushgateway_argv, serving

RUN = Path(__file__).parent.parent / "data" / "runs" / "20261121-110501-f674"
BANDWIDTH = "harness_write_bandwidth_bytes_per_second"


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serving(pushgateway_argv(f"127.0.0.1:{port}"), f"{url}/-/ready", what="the Pushgateway"):
        yield url


def _metrics(run_id: str, inventory: str = "lab") -> RunMetrics:
    cells = tuple(aggregate_samples(read_samples(RUN / "samples.ndjson")))
    return RunMetrics(cells, RunInfo(run_id=run_id, inventory_name=inventory, exitstatus=0))


def _families(gateway: str) -> dict[str, Metric]:
    return {f.name: f for f in text_string_to_metric_families(get(f"{gateway}/metrics"))}


def _of_run(family: Metric, run_id: str) -> list[tuple[str, str, str, float]]:
    return sorted(
        (s.labels["scenario"], s.labels["pair"], s.labels["workload"], s.value)
        for s in family.samples
        if s.labels.get("run_id") == run_id
    )


def test_pushed_metrics_come_back_from_the_gateway(gateway: str) -> None:
    metrics = _metrics("run-back")
    push_to_pushgateway(gateway, metrics)
    bw = _families(gateway)[BANDWIDTH]
    cells = [c for c in metrics.cells if c.median("bw") is not None]
    mine = [s for s in bw.samples if s.labels.get("run_id") == "run-back"]
    assert len(mine) == len(cells) == 16
    for sample in mine:
        assert (sample.labels["job"], sample.labels["inventory"]) == ("harness", "lab")
        key = (sample.labels["scenario"], sample.labels["pair"], sample.labels["workload"])
        (cell,) = [
            c for c in cells if (c.scenario, c.pair, c.workload) == key and c.impairment == sample.labels["impairment"]
        ]
        assert sample.value == pytest.approx((cell.median("bw") or 0) * 2**20)
    infos = [s for s in _families(gateway)["harness_run_info"].samples if s.labels.get("run_id") == "run-back"]
    assert [s.labels["inventory"] for s in infos] == ["lab"]


def test_a_partial_run_keeps_the_series_of_another_run(gateway: str) -> None:
    full = _metrics("run-full")
    partial = dataclasses.replace(
        _metrics("run-partial"), cells=tuple(c for c in full.cells if c.scenario != "replicated_write")
    )
    push_to_pushgateway(gateway, full)
    before = _of_run(_families(gateway)[BANDWIDTH], "run-full")
    push_to_pushgateway(gateway, partial)
    families = _families(gateway)
    assert len(before) == 16 and _of_run(families[BANDWIDTH], "run-full") == before
    assert {scenario for scenario, *_ in _of_run(families[BANDWIDTH], "run-partial")} == {"latency_sweep"}
    starts = {s.labels.get("run_id") for s in families["push_time_seconds"].samples if s.labels.get("job") == "harness"}
    assert {"run-full", "run-partial"} <= starts


def test_pushing_a_run_again_replaces_only_that_run(gateway: str) -> None:
    full = _metrics("run-again")
    other = _metrics("run-other", inventory="other-cluster")
    push_to_pushgateway(gateway, full)
    push_to_pushgateway(gateway, other)
    fewer = dataclasses.replace(full, cells=tuple(c for c in full.cells if c.scenario != "replicated_write"))
    push_to_pushgateway(gateway, fewer)
    bw = _families(gateway)[BANDWIDTH]
    assert {scenario for scenario, *_ in _of_run(bw, "run-again")} == {"latency_sweep"}
    assert len(_of_run(bw, "run-other")) == 16  # another inventory's run is untouched


def test_an_unreachable_gateway_is_a_clear_error() -> None:
    with pytest.raises(PushError, match="could not be reached"):
        push_to_pushgateway(f"http://127.0.0.1:{free_port()}", _metrics("r"), timeout=2)
