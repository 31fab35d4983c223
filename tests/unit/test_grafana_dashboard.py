"""The sample Grafana dashboard (examples/grafana/harness-dashboard.json) against what the
exporter emits: every metric and label its PromQL names exists in the export of a recorded
run, and every panel's query, run by the real promtool (``promtool test rules``, PromQL
evaluated over given series with no server) over that export, returns series; the multi- vs
single-AZ panel returns the ratio the report computes.  node_exporter's side of the join is its
recorded ``node_uname_info`` (tests/data/prometheus/README.md)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.unit.grafana import (
    ALL,
    DATA,
    RUNS,
    as_grafana_sends,
    dashboard,
    panel_queries,
    run_metrics,
    series,
    variable_queries,
)
from tests.unit.promtool import promtool

UNAME = DATA / "prometheus" / "node-exporter-1.5-uname.prom"
#: a selector: a metric name and its braces
_SELECTOR = re.compile(r"\b([a-z_][a-z0-9_]*)\{([^}]*)\}")
_MATCHER = re.compile(r"([a-z_][a-z0-9_]*)\s*(?:=~|!~|!=|=)")


def _exported() -> Iterator[tuple[str, dict[str, str], float]]:
    """(name, labels, value) of every series the recorded runs export."""
    for run, inventory in RUNS:
        yield from series(run_metrics(run, inventory))


def _uname(nodes: set[str]) -> Iterator[tuple[str, dict[str, str], float]]:
    (family,) = text_string_to_metric_families(UNAME.read_text())
    (sample,) = family.samples
    for node in sorted(nodes):  # as scraped from each node: its own name, and the scrape's labels
        yield sample.name, {**sample.labels, "nodename": node, "instance": f"{node}:9100", "job": "node"}, sample.value


def _labels_by_family() -> dict[str, set[str]]:
    labels: dict[str, set[str]] = {}
    for name, values, _ in _exported():
        labels.setdefault(name, set()).update(values)
    return labels


def test_every_metric_and_label_the_dashboard_names_is_exported() -> None:
    exported = _labels_by_family()
    named = 0
    for text in [q for _, q in panel_queries()] + variable_queries():
        for name in re.findall(r"\bharness_[a-z0-9_]+", text):
            assert name in exported, f"{name}: the exporter emits no such metric"
            named += 1
        for name, matchers in _SELECTOR.findall(text):
            if name.startswith("harness_"):
                unknown = set(_MATCHER.findall(matchers)) - exported[name]
                assert not unknown, f"{name}: no label {sorted(unknown)}"
    assert named >= len(panel_queries())


def _series_line(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def _promtool_test(tmp_path: Path, rules: list[dict[str, str]], checks: list[str]) -> subprocess.CompletedProcess[str]:
    """Record each rule over the exported series (11 scrapes a minute apart), then expect every
    check to return nothing (``absent(x)`` returns nothing exactly when ``x`` has series)."""
    series = list(_exported())
    nodes = {labels["node"] for name, labels, _ in series if labels.get("node")}
    series += _uname(nodes)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    test = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": _series_line(name, labels), "values": f"{value!r}x10"} for name, labels, value in series
                ],
                "promql_expr_test": [{"expr": check, "eval_time": "5m", "exp_samples": []} for check in checks],
            }
        ],
    }
    (tmp_path / "test.yml").write_text(yaml.safe_dump(test, width=1 << 16))
    return subprocess.run(
        [promtool(), "test", "rules", "test.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_panel_query_returns_series_in_promtool(tmp_path: Path) -> None:
    queries = panel_queries()
    rules = [{"record": f"dashboard:panel_{i}", "expr": as_grafana_sends(q)} for i, (_, q) in enumerate(queries)]
    result = _promtool_test(tmp_path, rules, [f"absent(dashboard:panel_{i})" for i in range(len(queries))])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "SUCCESS" in result.stdout


def test_promtool_sees_a_query_that_returns_nothing(tmp_path: Path) -> None:
    # the same check on a selector nothing matches fails: a pass above means series came back
    rules = [{"record": "dashboard:nothing", "expr": 'harness_write_bandwidth_bytes_per_second{pair="no-such-pair"}'}]
    result = _promtool_test(tmp_path, rules, ["absent(dashboard:nothing)"])
    assert result.returncode == 1 and "FAILED" in result.stdout + result.stderr


def test_the_multi_az_panel_is_the_ratio_of_the_two_pairs(tmp_path: Path) -> None:
    (query,) = [q for title, q in panel_queries() if title.startswith("Multi-AZ over single-AZ")]
    bw = {
        (labels["workload"], labels["placement"]): value
        for name, labels, value in _exported()
        if name == "harness_write_bandwidth_bytes_per_second"
        and labels["scenario"] == "replicated_write"
        and labels["impairment"] == "none"
    }
    workload = "write-1m-nj1-qd16"
    ratio = bw[(workload, "cross-az")] / bw[(workload, "same-az")]
    assert 0 < ratio < 1  # the recorded lab's cross-AZ pair is the slower one
    rules = [{"record": "dashboard:ratio", "expr": as_grafana_sends(query)}]
    check = f'absent(abs(dashboard:ratio{{scenario="replicated_write", workload="{workload}"}} - {ratio!r}) < 1e-12)'
    result = _promtool_test(tmp_path, rules, [check])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.parametrize("variable", ["inventory", "scenario"])
def test_the_variables_select_with_all_as_a_regex(variable: str) -> None:
    (spec,) = [v for v in dashboard()["templating"]["list"] if v["name"] == variable]
    assert spec["includeAll"] and spec["allValue"] == ALL
    # a multi-value variable is only correct inside a regex matcher
    for _, query in panel_queries():
        assert f'="${variable}"' not in query and f'!="${variable}"' not in query
