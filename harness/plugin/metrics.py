"""pytest options ``--openmetrics-file`` and ``--pushgateway``: the run's metrics for Prometheus.

Registered by :mod:`harness.plugin` (``pytest_plugins``).  Every finished run writes
``metrics.prom`` into its run directory (Prometheus text exposition, :mod:`harness.export`);
``--openmetrics-file PATH`` writes the same file atomically where node_exporter's textfile
collector reads it, and ``--pushgateway URL`` pushes it.  One step of
:class:`~harness.plugin.runend.RunEnd`, in the controller only; a Pushgateway that cannot be
reached is reported in the summary and does not fail a run whose cells passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.export import PushError, RunMetrics, push_grouping, push_to_pushgateway, write_textfile
from harness.redact import redact_url
from harness.report.results import RunResults
from harness.runfiles.rundir import RunDir
from harness.runfiles.runinfo import RunInfo

__all__ = ["RUN_METRICS_FILE", "export_run_metrics"]

#: The textfile every run directory gets.
RUN_METRICS_FILE = "metrics.prom"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "HA storage harness")
    group.addoption(
        "--openmetrics-file",
        metavar="PATH.prom",
        default=None,
        help="also write the run's metrics (Prometheus text format) to PATH, atomically, e.g. into "
        "node_exporter's --collector.textfile.directory",
    )
    group.addoption(
        "--pushgateway",
        metavar="URL",
        default=None,
        help="push the run's metrics to this Prometheus Pushgateway (job 'harness', grouped by inventory and run id)",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--openmetrics-file")
    if target is not None and (not target.endswith(".prom") or not Path(target).parent.is_dir()):
        raise pytest.UsageError(
            f"--openmetrics-file {target}: must be a *.prom file in an existing directory "
            "(node_exporter's textfile collector reads only *.prom)"
        )
    url = config.getoption("--pushgateway")
    if url is not None and not url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--pushgateway {redact_url(url)}: expected an http:// or https:// URL")


def export_run_metrics(config: pytest.Config, run: RunDir, results: RunResults, info: RunInfo) -> list[str]:
    """Write (and push) the run's metrics; returns the summary lines."""
    metrics = RunMetrics(tuple(results.cells), info)
    lines = []
    paths = [run.path / RUN_METRICS_FILE]
    target = config.getoption("--openmetrics-file")
    if target is not None:
        paths.append(Path(target))
    written = []
    for path in paths:
        try:
            written.append(str(write_textfile(path, metrics)))
        except (ConfigError, OSError) as exc:
            lines.append(f"metrics: NOT written to {path}: {exc}")
    if written:
        lines.append(f"metrics: {', '.join(written)}")
    url = config.getoption("--pushgateway")
    if url is not None:
        try:
            push_to_pushgateway(url, metrics)
            group = push_grouping(metrics)
            lines.append(
                f"metrics: pushed to {redact_url(url)} (job harness, inventory {group['inventory']}, "
                f"run_id {group['run_id']})"
            )
        except (PushError, ConfigError) as exc:
            lines.append(f"metrics: NOT pushed: {exc}")
    return lines
