"""The sample Grafana dashboard (examples/grafana/harness-dashboard.json) as its tests read it:
each panel's PromQL, each variable's query, a query as Grafana sends it with every variable at
"All", and the recorded runs whose export the queries run over."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from prometheus_client.parser import text_string_to_metric_families

from harness.export import RunMetrics, render_prometheus
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import read_samples

__all__ = [
    "ALL",
    "DASHBOARD",
    "RUNS",
    "as_grafana_sends",
    "dashboard",
    "label_values",
    "panel_queries",
    "run_metrics",
    "series",
    "variable_queries",
]

ROOT: Final = Path(__file__).resolve().parents[2]
DASHBOARD: Final = ROOT / "examples" / "grafana" / "harness-dashboard.json"
DATA: Final = ROOT / "tests" / "data"
#: recorded runs, and the inventory name each is exported under: the failing run (the AZ link
#: slowed on purpose) was of a second lab instance, whose inventory was also called "lab"
RUNS: Final = (
    (DATA / "runs" / "20261121-110501-f674", "lab"),
    (DATA / "disk_runs" / "20261125-115711-97ce", "lab"),
    (DATA / "runs" / "history-lab4" / "20261125-120534-2874", "lab4"),
)
#: "All" of a multi-value variable: what Grafana puts in for $inventory and $scenario
ALL: Final = ".*"
_LABEL_VALUES: Final = re.compile(r"label_values\((.+),\s*([a-z_][a-z0-9_]*)\)")


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def panel_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every panel target."""
    return [(p["title"], t["expr"]) for p in dashboard()["panels"] for t in p["targets"]]


def variable_queries() -> list[str]:
    return [v["query"]["query"] for v in dashboard()["templating"]["list"] if v["type"] == "query"]


def label_values(query: str) -> tuple[str, str]:
    """Grafana's ``label_values(selector, label)``: (the selector, the label)."""
    found = _LABEL_VALUES.fullmatch(query)
    assert found is not None, f"not a label_values() query: {query}"
    return found[1], found[2]


def as_grafana_sends(expr: str) -> str:
    """The query as Grafana sends it with every variable at "All"."""
    return expr.replace("$inventory", ALL).replace("$scenario", ALL)


def run_metrics(run: Path, inventory: str) -> RunMetrics:
    """A recorded run's export, under ``inventory``."""
    recorded = RunInfo.read(run / "run.json")
    assert recorded is not None
    info = RunInfo.from_dict({**recorded.to_dict(), "inventory_name": inventory})
    return RunMetrics(tuple(aggregate_samples(read_samples(run / "samples.ndjson"))), info)


def series(metrics: RunMetrics) -> Iterator[tuple[str, dict[str, str], float]]:
    """(name, labels, value) of every series of an export."""
    for family in text_string_to_metric_families(render_prometheus(metrics)):
        for sample in family.samples:
            yield sample.name, sample.labels, sample.value
