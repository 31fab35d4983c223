"""A run's cells as Prometheus metric families, named and labelled the Prometheus way.

One family per (scenario, measure), ``harness_<scenario>_<measure>_<base unit>``:
``harness_replicated_write_bandwidth_bytes_per_second{pair="multi-az",mode="replicated",
workload="randwrite-4k-nj8-qd1",impairment="none",placement="cross-az"}``.  The rules
(Prometheus' "Metric and label naming" and promtool's lint):

* base units only: bytes not MiB, seconds not milliseconds, ratios not percentages; the unit
  is the name's suffix (``_bytes_per_second``, ``_seconds``, ``_ratio``);
* every family is a gauge: a run's figure is a measurement, not a count that only grows, so
  no ``_total`` (the suffix promtool keeps for counters);
* labels are the cell's identity (:data:`~harness.runfiles.samples.IDENTITY_KEYS` less the scenario,
  which the name carries, plus the placement), never the run id: a label per run would make
  a new series every night.  The run is one ``harness_run_info`` series instead.

Values are each cell's median over its repeats, as in every table.  Label values are escaped
by ``prometheus_client``'s exposition code; names are built here and checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector, CollectorRegistry

from harness.report.aggregate import VERDICTS, Cell
from harness.runfiles.runinfo import RunInfo
from harness.units import MIB

__all__ = [
    "CELL_LABELS",
    "MEASURES",
    "METRIC_PREFIX",
    "RunMetrics",
    "metric_name",
    "registry_of",
    "render_openmetrics",
    "render_prometheus",
]

METRIC_PREFIX: Final = "harness"
#: The labels of every per-cell series.
CELL_LABELS: Final = ("pair", "mode", "workload", "impairment", "placement")
_NAME_RE: Final = re.compile(r"\A[a-z_][a-z0-9_]*\Z")


@dataclass(frozen=True)
class Measure:
    """How one harness metric is exported: the name's measure and unit, the factor from the
    harness's unit to the base unit, and the help text."""

    name: str
    scale: float
    help: str
    #: extra label and its value, for metrics that are statistics of one quantity
    statistic: str | None = None

    def to_base(self, value: float) -> float:
        # divide by 1000 rather than multiply by 0.001: 12.078 ms is 0.012078 s, not 0.012078000000000001
        return value / (1.0 / self.scale) if self.scale < 1 else value * self.scale


MS: Final = 1e-3

#: harness metric → export.  A metric not listed here is not exported (it has no agreed unit).
MEASURES: Final[Mapping[str, Measure]] = {
    "bw": Measure("bandwidth_bytes_per_second", float(MIB), "Measured bandwidth (median over repeats)"),
    "iops": Measure("io_operations_per_second", 1.0, "Measured I/O operations per second"),
    "clat_mean": Measure("completion_latency_seconds", MS, "fio completion latency", "mean"),
    "clat_p50": Measure("completion_latency_seconds", MS, "fio completion latency", "p50"),
    "clat_p99": Measure("completion_latency_seconds", MS, "fio completion latency", "p99"),
    "clat_p999": Measure("completion_latency_seconds", MS, "fio completion latency", "p99.9"),
    "rtt": Measure("round_trip_time_seconds", MS, "Measured round-trip time of the replication path"),
    "runtime": Measure("fio_runtime_seconds", 1.0, "fio's own runtime of the cell"),
    "wall": Measure("cell_wall_seconds", 1.0, "Wall time of the whole cell"),
    "overhead": Measure("harness_overhead_seconds", 1.0, "Cell wall time not spent in fio"),
    "predicted_bw": Measure(
        "predicted_bandwidth_bytes_per_second", float(MIB), "The sizing model's predicted bandwidth"
    ),
    "predicted_iops": Measure("predicted_io_operations_per_second", 1.0, "The sizing model's predicted IOPS"),
    "model_ratio": Measure("model_ratio", 1.0, "Measured over predicted bandwidth"),
    "ss_attained": Measure("steady_state_attained", 1.0, "1 when fio's steady-state criterion was met"),
    "lost_writes": Measure("lost_acknowledged_write_blocks", 1.0, "Acknowledged blocks missing after failover"),
    "acked_writes": Measure("acknowledged_write_blocks", 1.0, "Blocks acknowledged before the crash"),
    "ops": Measure("operations_per_second", 1.0, "bonnie++ seeks or file operations per second"),
    "cpu": Measure("cpu_ratio", 0.01, "bonnie++ CPU use of the phase (1 = one CPU)"),
    "lat_max": Measure("max_latency_seconds", MS, "bonnie++ longest single operation of the phase"),
}


def _snake(text: str) -> str:
    out = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return out if out and not out[0].isdigit() else f"s_{out}"


def metric_name(scenario: str, measure: str) -> str:
    """``harness_<scenario>_<measure>``, snake_case whatever the scenario is called."""
    name = f"{METRIC_PREFIX}_{_snake(scenario)}_{measure}"
    if not _NAME_RE.match(name):  # pragma: no cover - _snake guarantees it; a guard for edits
        raise ValueError(f"not a Prometheus metric name: {name!r}")
    return name


def _labels(cell: Cell) -> list[str]:
    return [str(cell.identity.get(k, cell.metadata.get(k, "")) or "") for k in CELL_LABELS]


# eq=False: a registry keys its collectors by identity (hash)
@dataclass(frozen=True, eq=False)
class RunMetrics(Collector):
    """A ``prometheus_client`` collector over one run's aggregated cells."""

    cells: Sequence[Cell]
    info: RunInfo

    def collect(self) -> Iterator[Metric]:
        families: dict[str, GaugeMetricFamily] = {}
        for cell in self.cells:
            for metric, stat in sorted(cell.stats.items()):
                measure = MEASURES.get(metric)
                if measure is None:
                    continue
                name = metric_name(cell.scenario, measure.name)
                labels = list(CELL_LABELS) + (["statistic"] if measure.statistic else [])
                family = families.get(name)
                if family is None:
                    family = families[name] = GaugeMetricFamily(name, measure.help, labels=labels)
                values = _labels(cell) + ([measure.statistic] if measure.statistic else [])
                family.add_metric(values, measure.to_base(stat.median))
            if cell.verdict is not None:
                name = metric_name(cell.scenario, "cell_verdict")
                family = families.get(name)
                if family is None:
                    family = families[name] = GaugeMetricFamily(
                        name, "1 for the cell's verdict, 0 for the others", labels=[*CELL_LABELS, "verdict"]
                    )
                for verdict in VERDICTS:
                    family.add_metric([*_labels(cell), verdict], 1.0 if cell.verdict == verdict else 0.0)
        yield from families.values()
        yield from self._run_families()

    def _run_families(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            f"{METRIC_PREFIX}_run_info",
            "The run these series come from (always 1)",
            labels=["run_id", "inventory", "profile", "harness_version"],
        )
        info.add_metric(
            [
                self.info.run_id,
                self.info.inventory_name or "",
                self.info.profile or "",
                str(self.info.versions.get("harness", "")),
            ],
            1.0,
        )
        yield info
        cells = GaugeMetricFamily(f"{METRIC_PREFIX}_run_cells", "Cells the run measured")
        cells.add_metric([], float(len(self.cells)))
        yield cells
        if self.info.exitstatus is not None:
            status = GaugeMetricFamily(f"{METRIC_PREFIX}_run_exit_status", "pytest's exit status (0: passed)")
            status.add_metric([], float(self.info.exitstatus))
            yield status


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
