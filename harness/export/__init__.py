"""A run's results for the monitoring teams already watch: Prometheus text exposition and
OpenMetrics (:mod:`~harness.export.metrics`, what a run measured as metric families), a
textfile for node_exporter's textfile collector and a push to a Pushgateway
(:mod:`~harness.export.delivery`)."""

from harness.export.delivery import PushError, push_to_pushgateway, write_textfile
from harness.export.metrics import RunMetrics, metric_name, render_openmetrics, render_prometheus

__all__ = [
    "PushError",
    "RunMetrics",
    "metric_name",
    "push_to_pushgateway",
    "render_openmetrics",
    "render_prometheus",
    "write_textfile",
]
