"""A run's results for the monitoring teams already watch: Prometheus text exposition and
OpenMetrics (:mod:`~harness.export.metrics`, what a run measured as metric families, named by
:mod:`~harness.export.names`), a textfile for node_exporter's textfile collector and a push to
a Pushgateway (:mod:`~harness.export.delivery`)."""

from harness.export.delivery import PushError, push_grouping, push_to_pushgateway, write_textfile
from harness.export.metrics import CELL_LABELS, RunMetrics, inventory_label, render_openmetrics, render_prometheus
from harness.export.names import MEASURES, direction, metric_name

__all__ = [
    "CELL_LABELS",
    "MEASURES",
    "PushError",
    "RunMetrics",
    "direction",
    "inventory_label",
    "metric_name",
    "push_grouping",
    "push_to_pushgateway",
    "render_openmetrics",
    "render_prometheus",
    "write_textfile",
]
