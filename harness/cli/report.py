"""``harness report RUN_DIR``: re-render a run's tables, report.html and plots from its samples alone.

Useful after changing the report code, after copying a run off a CI runner, or to read a run on
the terminal.  The main ``harness`` CLI wires :func:`add_arguments` and :func:`run` to its
``report`` subcommand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from harness.argtypes import number
from harness.errors import ConfigError
from harness.report.markdown import render_markdown
from harness.report.publish import write_report
from harness.report.results import RunResults
from harness.report.terminal import render_text
from harness.runfiles.rundir import LATEST, RunDir

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dir",
        metavar="RUN_DIR",
        type=Path,
        help="a run directory, e.g. reports/latest or reports/20261121-101500-ab12",
    )
    parser.add_argument(
        "--format",
        choices=("markdown", "text"),
        default="markdown",
        help="what to print: the Markdown comparison (default) or the compact terminal tables",
    )
    parser.add_argument(
        "--width",
        type=number(int, 40, 1000, what="columns"),
        default=120,
        help="line width for --format text (default: %(default)s)",
    )


def _open(path: Path) -> RunDir:
    if not path.exists() and (path.parent / LATEST).exists() and path.name != LATEST:
        raise ConfigError(f"{path}: no such run directory (the newest run is {path.parent / LATEST})")
    run = RunDir.open(path)
    if not run.samples_ndjson.exists() and (run.path / LATEST).exists():
        # Passing the reports root is an easy slip; say what was meant.
        raise ConfigError(f"{path}: this is the reports root, not a run; try {path / LATEST}")
    return run


def _run(args: argparse.Namespace, out: TextIO) -> int:
    run_dir = _open(Path(args.run_dir))
    results = RunResults.read(run_dir)
    info = run_dir.run_info()
    written = write_report(run_dir, results, info)
    if args.format == "text":
        print(render_text(results.comparison, width=args.width), file=out)
    else:
        print(render_markdown(results.comparison, info), file=out)
    print("written:", file=out)
    for path in written:
        print(f"  {path}", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``harness report`` with parsed ``args``, printing to stdout; returns the exit status."""
    try:
        return _run(args, sys.stdout)
    except ConfigError as exc:
        print(f"harness report: error: {exc}", file=sys.stderr)
        return exc.exit_code
