"""``harness metrics RUN``: a finished run's metrics for Prometheus, after the fact.

The end of every pytest run already writes ``metrics.prom`` into the run directory (and, when
asked, ``--openmetrics-file`` and ``--pushgateway``); this command does the same for a run
made earlier, or prints the exposition (``--format openmetrics`` for OpenMetrics 1.0).
Exit codes: 0 written (or printed), 2 bad input, 5 the Pushgateway refused or was unreachable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.redact import redact_url

__all__ = ["add_metrics_commands"]


def _metrics(args: argparse.Namespace) -> int:
    from harness.export import RunMetrics, push_to_pushgateway, render_openmetrics, render_prometheus, write_textfile
    from harness.report.results import RunResults
    from harness.runfiles.rundir import RunDir

    run = RunDir.open(Path(args.run))
    info = run.run_info()
    if info is None:
        from harness.runfiles.runinfo import RunInfo

        info = RunInfo(run_id=run.path.name)
    metrics = RunMetrics(tuple(RunResults.read(run).cells), info)
    if args.openmetrics_file is None and args.pushgateway is None:
        print(render_openmetrics(metrics) if args.format == "openmetrics" else render_prometheus(metrics), end="")
        return 0
    if args.openmetrics_file is not None:
        print(f"metrics: {write_textfile(Path(args.openmetrics_file), metrics)}", file=sys.stderr)
    if args.pushgateway is not None:
        push_to_pushgateway(args.pushgateway, metrics)
        print(f"metrics: pushed to {redact_url(args.pushgateway)}", file=sys.stderr)
    return 0


def add_metrics_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``metrics`` on the ``harness`` parser's subcommands."""
    text = "a run's metrics for Prometheus: print them, write a node_exporter textfile, or push them"
    parser = sub.add_parser("metrics", help=text, description=text)
    parser.set_defaults(handler=_metrics)
    parser.add_argument("run", metavar="RUN_DIR", help="a run directory (reports/<run-id> or reports/latest)")
    parser.add_argument(
        "--format",
        choices=["prometheus", "openmetrics"],
        default="prometheus",
        help="printed format (default: %(default)s)",
    )
    parser.add_argument(
        "--openmetrics-file", metavar="PATH.prom", help="write here atomically (node_exporter textfile)"
    )
    parser.add_argument(
        "--pushgateway", metavar="URL", help="push to this Pushgateway (job harness, by inventory and run id)"
    )
