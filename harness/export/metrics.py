"""A run's cells as Prometheus metric families: one family per measured quantity, the cell in labels.

``harness_write_bandwidth_bytes_per_second{inventory="prod",scenario="replicated_write",
pair="multi-az",protocol="C",placement="cross-az",mode="replicated",
workload="randwrite-4k-nj8-qd1",impairment="none",node="b1"}`` (names: :mod:`~harness.export.names`).

Labels (:data:`CELL_LABELS`) are the cell's identity (:data:`~harness.runfiles.samples.IDENTITY_KEYS`)
and where it ran, each bounded by the inventory's test matrix: the inventory (two clusters'
files in one node_exporter, or two inventories on one Pushgateway, never collide), the
protocol and placement, and ``node``, the name of the pair's primary (the node of a disk
study), which joins ha_cluster_exporter's ``node`` label and, through ``nodename``,
node_exporter's ``node_uname_info``.  Not ``instance``: node_exporter's own scrape sets that
label, and a textfile's ``instance`` would be renamed ``exported_instance``.

Never a label: the run id, times, versions or verdict reasons, each of which would make new
series every run.  The run is described by its own families, each labelled by inventory:
``harness_run_info{run_id,profile,harness_version} 1``, ``harness_run_timestamp_seconds``
(when it started), ``harness_run_duration_seconds``, ``harness_run_cells`` and
``harness_run_exit_status``.

Values are each cell's median over its repeats, as in every table.  Label values are escaped
by ``prometheus_client``'s exposition code.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector, CollectorRegistry

from harness.export.names import MEASURES, direction, metric_name
from harness.report.aggregate import VERDICTS, Cell
from harness.runfiles.runinfo import RunInfo

__all__ = [
    "CELL_LABELS",
    "RunMetrics",
    "inventory_label",
    "registry_of",
    "render_openmetrics",
    "render_prometheus",
]

#: The labels of every per-cell series.
CELL_LABELS: Final = (
    "inventory",
    "scenario",
    "pair",
    "protocol",
    "placement",
    "mode",
    "workload",
    "impairment",
    "node",
)
#: the inventory label of a run whose inventory has no name
UNNAMED: Final = "unnamed"
_VERDICT_HELP: Final = "1 for the cell's verdict, 0 for the others"


def inventory_label(info: RunInfo) -> str:
    """The run's ``inventory`` label (and Pushgateway grouping) value."""
    return info.inventory_name or UNNAMED


def _meta(cell: Cell, key: str) -> str:
    """Metadata ``key`` of the cell as a label value: the common value, else the first one
    recorded (a key some repeats lack is "varying"), else empty."""
    if key in cell.identity:
        return str(cell.identity[key])
    value = cell.metadata.get(key)
    if value is None:
        value = next((v for v in cell.varying.get(key, ()) if v is not None), "")
    return str(value)


def _cell_labels(cell: Cell, inventory: str) -> list[str]:
    node = _meta(cell, "primary") or _meta(cell, "node")
    values = {"inventory": inventory, "node": node}
    return [values[k] if k in values else _meta(cell, k) for k in CELL_LABELS]


def _epoch(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


class _Families:
    """Families by name, each made on first use with its help text and labels."""

    def __init__(self) -> None:
        self.by_name: dict[str, GaugeMetricFamily] = {}

    def add(self, name: str, help_text: str, labels: Sequence[str], values: list[str], value: float) -> None:
        family = self.by_name.get(name)
        if family is None:
            family = self.by_name[name] = GaugeMetricFamily(name, help_text, labels=list(labels))
        family.add_metric(values, value)


# eq=False: a registry keys its collectors by identity (hash)
@dataclass(frozen=True, eq=False)
class RunMetrics(Collector):
    """A ``prometheus_client`` collector over one run's aggregated cells."""

    cells: Sequence[Cell]
    info: RunInfo

    @property
    def inventory(self) -> str:
        return inventory_label(self.info)

    def collect(self) -> Iterator[Metric]:
        families = _Families()
        for cell in self.cells:
            labels = _cell_labels(cell, self.inventory)
            io = direction(cell.metadata.get("rw"))
            for metric, stat in sorted(cell.stats.items()):
                measure = MEASURES.get(metric)
                if measure is None:
                    continue
                names, values = list(CELL_LABELS), list(labels)
                if measure.statistic is not None:
                    names, values = [*names, "statistic"], [*values, measure.statistic]
                families.add(measure.family(io), measure.help, names, values, measure.to_base(stat.median))
            for verdict in VERDICTS if cell.verdict is not None else ():
                families.add(
                    metric_name("cell_verdict"),
                    _VERDICT_HELP,
                    [*CELL_LABELS, "verdict"],
                    [*labels, verdict],
                    1.0 if cell.verdict == verdict else 0.0,
                )
        yield from families.by_name.values()
        yield from self._run_families()

    def _run_families(self) -> Iterator[Metric]:
        info = self.info
        families = _Families()
        inventory = ["inventory"]
        families.add(
            metric_name("run_info"),
            "The run these series come from (always 1)",
            [*inventory, "run_id", "profile", "harness_version"],
            [self.inventory, info.run_id, info.profile or "", str(info.versions.get("harness", ""))],
            1.0,
        )
        started, finished = _epoch(info.started), _epoch(info.finished)
        if started is not None:
            help_text = "When the run started (Unix time)"
            families.add(metric_name("run_timestamp_seconds"), help_text, inventory, [self.inventory], started)
        if started is not None and finished is not None:
            help_text = "How long the run took, start to end"
            value = max(0.0, finished - started)
            families.add(metric_name("run_duration_seconds"), help_text, inventory, [self.inventory], value)
        cells = float(len(self.cells))
        families.add(metric_name("run_cells"), "Cells the run measured", inventory, [self.inventory], cells)
        if info.exitstatus is not None:
            help_text = "pytest's exit status (0: passed)"
            status = float(info.exitstatus)
            families.add(metric_name("run_exit_status"), help_text, inventory, [self.inventory], status)
        yield from families.by_name.values()


def registry_of(metrics: RunMetrics) -> CollectorRegistry:
    """A registry holding only ``metrics`` (never the process's default one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    return registry


def render_prometheus(metrics: RunMetrics) -> str:
    """Prometheus text exposition format 0.0.4: what node_exporter's textfile collector reads."""
    return generate_latest(registry_of(metrics)).decode("utf-8")


def render_openmetrics(metrics: RunMetrics) -> str:
    """OpenMetrics 1.0 text (``# EOF`` terminated)."""
    data: bytes = generate_openmetrics(registry_of(metrics))  # type: ignore[no-untyped-call]
    return data.decode("utf-8")
