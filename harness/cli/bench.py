"""``harness bench``'s arguments beyond the measuring ones, and which benchmark runs.

``all`` and ``overhead`` measure on a pair (:mod:`harness.bench.suite`); ``repeats`` runs cells
repeat after repeat to set ``--repeat auto`` against a fixed count (:mod:`harness.bench.repeatbench`);
``changes`` reads the results database only, no node (:mod:`harness.bench.historybench`);
``sizing-search`` times the sizing search, no node (:mod:`harness.bench.searchbench`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.argtypes import number
from harness.errors import ConfigError
from harness.progress import Progress
from harness.rules.medianinterval import DEFAULT_METHOD, INTERVAL_METHODS, METHOD_HELP
from harness.rules.repeats import DEFAULT_CAP, DEFAULT_CONFIDENCE, DEFAULT_TOLERANCE, RepeatPlan

__all__ = ["BENCHMARKS", "add_bench_arguments", "run_bench_command"]

#: ``harness bench WHAT``
BENCHMARKS = ("all", "overhead", "repeats", "changes", "sizing-search")


def add_bench_arguments(bench: argparse.ArgumentParser) -> None:
    """The arguments of ``repeats`` and ``changes``."""
    repeats = number(int, 1, 100, what="repeats")
    fraction = number(float, 0.5, 0.999, what="(a fraction)")
    share = number(float, 0, 0.5, exclusive_minimum=True, what="(a fraction)")
    bench.add_argument("--fixed", type=repeats, default=5, help="repeats: the fixed count (default: %(default)s)")
    bench.add_argument("--confidence", type=fraction, default=DEFAULT_CONFIDENCE, help="repeats: of the interval")
    bench.add_argument("--tolerance", type=share, default=DEFAULT_TOLERANCE, help="repeats: auto stops within it")
    bench.add_argument("--repeat-cap", type=repeats, default=DEFAULT_CAP, help="repeats: the most repeats of a cell")
    bench.add_argument(
        "--interval",
        choices=INTERVAL_METHODS,
        default=DEFAULT_METHOD,
        help=f"repeats: {METHOD_HELP}; auto and the fixed count both get it (default: %(default)s)",
    )
    bench.add_argument("--results-db", metavar="URL|PATH", default=None, help="changes: the results database")
    bench.add_argument("--reports", default="reports", help="changes: reports root holding results.sqlite")
    bench.add_argument("--metric", default="bw", help="changes: the metric scored (default: %(default)s)")
    bench.add_argument("--last", type=number(int, 4, 1000, what="runs"), default=30, help="changes: runs read")
    bench.add_argument("--scenario", help="changes: only this scenario's cells")


def _plan(args: argparse.Namespace) -> RepeatPlan:
    try:
        return RepeatPlan(args.confidence, args.tolerance, args.repeat_cap, args.interval)
    except ValueError as exc:
        raise ConfigError(f"bench repeats: {exc}") from None


def _changes(args: argparse.Namespace) -> int:
    from harness.bench.historybench import change_detection_command
    from harness.inventory import load_inventory
    from harness.resultsdb.location import results_db

    db = results_db(args.results_db, Path(args.reports))
    if db is None:
        raise ConfigError("--results-db none: the changes benchmark reads the results database; name one")
    inventory = Path(args.inventory)
    name = load_inventory(inventory).name if inventory.is_file() else args.inventory
    return change_detection_command(
        db, inventory=name, metric=args.metric, last=args.last, scenario=args.scenario, as_json=args.json
    )


def run_bench_command(args: argparse.Namespace, progress: Progress) -> int:
    """``harness bench``: the benchmark ``args.what`` names."""
    if args.what == "changes":
        return _changes(args)
    if args.what == "sizing-search":
        from harness.bench.searchbench import search_bench

        return search_bench(args.repeats, args.json)
    from harness.bench.suite import bench_command

    options = {key: getattr(args, key) for key in ("pair", "repeats", "what", "from_run")}
    extra = {"plan": _plan(args), "fixed": args.fixed} if args.what == "repeats" else {}
    return bench_command(Path(args.inventory), as_json=args.json, progress=progress, extra=extra, **options)
