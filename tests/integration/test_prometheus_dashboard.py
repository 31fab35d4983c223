"""The sample Grafana dashboard's queries through a real Prometheus server scraping the real
exporters, as a user's would: Debian's ``prometheus`` 2.42 (taken out of the package that also
holds promtool, into .tools/bin, by scripts/bootstrap) on 127.0.0.1 at a free port, scraping
every second

- a node_exporter 1.5 textfile collector reading two inventories' textfiles from one directory
  (a recorded run as inventory ``lab``, the failing run of a second lab instance as ``lab4``),
- a Pushgateway 1.5 holding a third recorded run pushed as ``lab`` (``honor_labels: true``),
- and one node_exporter per node the harness's series name, each with only its uname collector
  and in a UTS namespace of its own named as that node, so its ``node_uname_info`` is what the
  node's own node_exporter would report (the kernel is this host's).

Each panel's query and each variable's ``label_values`` go through Prometheus's HTTP API as
Grafana sends them with every variable at "All"; and Prometheus says it dropped no sample."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from harness.export import push_to_pushgateway, write_textfile
from tests.integration.daemons import daemon_binary, free_port, get, pushgateway_argv, serving
from tests.unit.grafana import (
    RUNS,
    as_grafana_sends,
    label_values,
    panel_queries,
    run_metrics,
    series,
    variable_queries,
)

#: the textfiles' runs (two inventories in one node_exporter) and the pushed one
TEXTFILE_RUNS = (RUNS[0], RUNS[2])
PUSHED_RUN = RUNS[1]
BANDWIDTH = "harness_write_bandwidth_bytes_per_second"


def _nodes() -> list[str]:
    return sorted(
        {labels["node"] for run, inv in RUNS for _, labels, _ in series(run_metrics(run, inv)) if labels.get("node")}
    )


def _uts_ok() -> bool:
    """Whether this process may name a UTS namespace of its own (root, or CAP_SYS_ADMIN)."""
    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True, timeout=10, check=False)
    return probe.returncode == 0


def _config(directory: Path, itself: str, textfile: str, gateway: str, nodes: dict[str, str]) -> Path:
    """Prometheus's configuration, as JSON (a subset of YAML, which Prometheus reads); it scrapes
    itself too, for its counts of the samples it dropped."""
    jobs = [
        {"job_name": "prometheus", "static_configs": [{"targets": [itself]}]},
        {"job_name": "node-textfile", "static_configs": [{"targets": [textfile]}]},
        {"job_name": "pushgateway", "honor_labels": True, "static_configs": [{"targets": [gateway]}]},
    ]
    if nodes:
        targets = [{"targets": [address], "labels": {"node_name": node}} for node, address in nodes.items()]
        jobs.append({"job_name": "node", "static_configs": targets})
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "scrape_configs": jobs}
    path = directory / "prometheus.yml"
    path.write_text(json.dumps(config, indent=2))
    return path


class Api:
    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, path: str, **params: str) -> Any:
        answer = json.loads(get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"))
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self("query", query=expr)
        assert data["resultType"] == "vector", data
        result: list[dict[str, Any]] = data["result"]
        return result


def _exporters(stack: ExitStack, directory: Path, nodes: list[str]) -> tuple[str, str, dict[str, str]]:
    """Start the exporters; (textfile collector, Pushgateway, uname exporter by node) addresses."""
    node_exporter = daemon_binary("prometheus-node-exporter", "prometheus-node-exporter")
    textfiles = directory / "textfile"
    textfiles.mkdir()
    for run, inventory in TEXTFILE_RUNS:
        write_textfile(textfiles / f"harness-{inventory}.prom", run_metrics(run, inventory))
    textfile = f"127.0.0.1:{free_port()}"
    argv = [node_exporter, f"--web.listen-address={textfile}", "--collector.disable-defaults", "--collector.textfile"]
    argv.append(f"--collector.textfile.directory={textfiles}")
    stack.enter_context(serving(argv, f"http://{textfile}/metrics", what="node_exporter (textfile)"))
    gateway = f"127.0.0.1:{free_port()}"
    stack.enter_context(serving(pushgateway_argv(gateway), f"http://{gateway}/-/ready", what="the Pushgateway"))
    push_to_pushgateway(f"http://{gateway}", run_metrics(*PUSHED_RUN))
    unames = {}
    for node in nodes if _uts_ok() else []:
        address = f"127.0.0.1:{free_port()}"
        named = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', node, node_exporter]
        argv = [*named, f"--web.listen-address={address}", "--collector.disable-defaults", "--collector.uname"]
        stack.enter_context(serving(argv, f"http://{address}/metrics", what=f"node_exporter as {node}"))
        unames[node] = address
    return textfile, gateway, unames


def _scraped(api: Api, targets: int) -> None:
    """Wait (30 s at most) until every target is up and has been scraped twice."""
    deadline = time.monotonic() + 30
    while True:
        active = api("targets")["activeTargets"]
        up = [t for t in active if t["health"] == "up"]
        if len(active) == targets and len(up) == targets and api.query("count(up) > 0"):
            scraped = api.query(f"count(count_over_time(up[1m]) >= 2) == {targets}")
            if scraped:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"Prometheus's targets did not come up: {json.dumps(active)[:2000]}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("prometheus")
    nodes = _nodes()
    with ExitStack() as stack:
        textfile, gateway, unames = _exporters(stack, directory, nodes)
        itself = f"127.0.0.1:{free_port()}"
        argv = [
            daemon_binary("prometheus", "prometheus"),
            f"--config.file={_config(directory, itself, textfile, gateway, unames)}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address={itself}",
        ]
        stack.enter_context(serving(argv, f"http://{itself}/-/ready", what="Prometheus"))
        api = Api(f"http://{itself}")
        _scraped(api, 3 + len(unames))
        yield api, unames


@pytest.mark.parametrize(("title", "expr"), panel_queries(), ids=[title for title, _ in panel_queries()])
def test_every_panel_query_returns_series_from_the_scrapes(
    prometheus: tuple[Api, dict[str, str]], title: str, expr: str
) -> None:
    api, unames = prometheus
    if "node_uname_info" in expr and not unames:
        pytest.skip("naming a node_exporter's host as a lab node takes a UTS namespace: run as root")
    assert api.query(as_grafana_sends(expr)), f"{title}: no series"


@pytest.mark.parametrize("query", variable_queries())
def test_the_variables_list_both_inventories(prometheus: tuple[Api, dict[str, str]], query: str) -> None:
    api, _ = prometheus
    selector, label = label_values(query)
    values = api(f"label/{label}/values", **{"match[]": as_grafana_sends(selector)})
    # what the selector's family carries under that label in the three runs' exports
    family = selector.partition("{")[0]
    exported = {
        labels[label]
        for run, inventory in RUNS
        for name, labels, _ in series(run_metrics(run, inventory))
        if name == family and label in labels
    }
    assert set(values) == exported
    if label == "inventory":
        assert exported == {"lab", "lab4"}
    else:  # the scenarios with a verdict: the disk studies' cells have none
        assert "replicated_write" in exported and "disk_baseline" not in exported


def test_the_multi_az_panel_is_the_recorded_ratio(prometheus: tuple[Api, dict[str, str]]) -> None:
    api, _ = prometheus
    (expr,) = [q for title, q in panel_queries() if title.startswith("Multi-AZ over single-AZ")]
    run, inventory = RUNS[0]
    bw = {
        (labels["workload"], labels["placement"]): value
        for name, labels, value in series(run_metrics(run, inventory))
        if name == BANDWIDTH and labels["scenario"] == "replicated_write" and labels["impairment"] == "none"
    }
    got = {
        r["metric"]["workload"]: float(r["value"][1])
        for r in api.query(as_grafana_sends(expr))
        if r["metric"]["inventory"] == inventory and r["metric"]["scenario"] == "replicated_write"
    }
    workloads = {workload for workload, _ in bw}
    assert set(got) == workloads and len(workloads) == 6
    for workload in workloads:
        assert got[workload] == pytest.approx(bw[(workload, "cross-az")] / bw[(workload, "same-az")], rel=1e-12)


def test_the_kernel_join_names_each_node_and_this_hosts_kernel(prometheus: tuple[Api, dict[str, str]]) -> None:
    api, unames = prometheus
    if not unames:
        pytest.skip("naming a node_exporter's host as a lab node takes a UTS namespace: run as root")
    (expr,) = [q for title, q in panel_queries() if "node_uname_info" in q]
    joined = api.query(as_grafana_sends(expr))
    assert {r["metric"]["node"] for r in joined} == set(unames)
    assert {r["metric"]["release"] for r in joined} == {os.uname().release}


def test_prometheus_dropped_no_sample(prometheus: tuple[Api, dict[str, str]]) -> None:
    api, _ = prometheus
    for counter in (
        "prometheus_target_scrapes_sample_duplicate_timestamp_total",
        "prometheus_target_scrapes_sample_out_of_order_total",
        "prometheus_target_scrapes_sample_out_of_bounds_total",
        "prometheus_target_scrapes_exceeded_sample_limit_total",
    ):
        (sample,) = api.query(counter)
        assert float(sample["value"][1]) == 0, counter
    (error,) = api.query('node_textfile_scrape_error{job="node-textfile"}')
    assert float(error["value"][1]) == 0
