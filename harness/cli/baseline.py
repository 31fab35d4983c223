"""``harness compare`` and ``harness baseline list|show|save``.

The main ``harness`` CLI wires :func:`add_compare_arguments` / :func:`run_compare` and
:func:`add_baseline_commands`; errors are :class:`~harness.errors.ConfigError` (exit 2), which
the main CLI prints.  ``harness compare`` exits 1 on a regression, 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from tabulate import tabulate

from harness.baseline.gate import run_gate
from harness.baseline.history import history_runs, history_side
from harness.baseline.refs import Side, resolve_reference, resolve_run
from harness.baseline.store import BaselineStore, NameTaken, validate_name
from harness.errors import ConfigError
from harness.report.aggregate import aggregate_samples
from harness.report.comparison import METRIC_LABELS
from harness.report.formatting import format_stat
from harness.report.publish import write_report
from harness.resultsdb.location import results_db
from harness.runfiles.samples import read_samples

__all__ = ["add_baseline_commands", "add_compare_arguments", "run_compare"]

_SHOW_METRICS = ("bw", "iops", "clat_p50", "clat_p99")


def _reports(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="reports root (default: %(default)s)")


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "reference",
        metavar="RUN_OR_BASELINE",
        help="what to compare against: a run directory, a run id under the reports root, 'latest', "
        "a saved baseline's name, or history:N (the last N good runs in the results database)",
    )
    parser.add_argument(
        "run",
        metavar="RUN",
        nargs="?",
        default="latest",
        help="the run to check: a run directory, a run id or 'latest' (default: %(default)s)",
    )
    _reports(parser)
    parser.add_argument(
        "--inventory",
        type=Path,
        help="take baseline_tolerances from this inventory (default: the inventory the run read, if it "
        "still exists; else the built-in defaults)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only; do not write RUN/baseline-compare.md")
    parser.add_argument(
        "--results-db", metavar="URL|PATH", help="the database history:N reads (default: <reports>/results.sqlite)"
    )


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _tolerances(args: argparse.Namespace, run: Side) -> Mapping[str, float | None] | None:
    from harness.inventory import load_inventory

    if args.inventory is not None:
        return load_inventory(args.inventory).baseline_tolerances
    path = run.info.inventory_path
    if path and Path(path).is_file():
        try:
            tolerances = load_inventory(Path(path)).baseline_tolerances
        except ConfigError as exc:
            _say(f"note: the run's inventory {path} does not load ({exc}); using the default tolerances")
            return None
        _say(f"tolerances: {path}")
        return tolerances
    return None


def _history_reference(args: argparse.Namespace, current: Side) -> Side | None:
    """The reference ``history:N`` names (``None`` for any other reference)."""
    runs = history_runs(args.reference)
    if runs is None:
        return None
    db = results_db(args.results_db, args.reports)
    if db is None or current.inventory_name is None:
        what = "--results-db none" if db is None else f"run {current.info.run_id} names no inventory"
        raise ConfigError(f"{args.reference}: cannot read the history ({what})")
    with db.open(create=False) as store:
        return history_side(store, current.inventory_name, runs, exclude=current.info.run_id)


def run_compare(args: argparse.Namespace) -> int:
    """``harness compare``: print the Markdown, write it into the run (and the baseline plot into
    its report), exit 1 on a regression."""
    reports: Path = args.reports
    run = resolve_run(reports, args.run)
    current = Side.of_run(run)
    reference = _history_reference(args, current) or resolve_reference(reports, args.reference, current.inventory_name)
    if reference.path == current.path:
        raise ConfigError(f"{args.reference} and {args.run} are the same run; name two different ones")
    result = run_gate(reference, current, _tolerances(args, current), write_to=None if args.no_write else run.path)
    if result.written is not None:
        plot = result.plot()
        if plot is not None:
            write_report(run, current.results, current.info, [plot])
    print(result.markdown, end="")
    if result.written is not None:
        _say(f"written: {result.written}")
    return result.exit_code


def _list(args: argparse.Namespace) -> int:
    baselines = BaselineStore(args.reports).saved(args.inventory_name)
    if not baselines:
        print(f"no baselines under {args.reports / 'baselines'}")
        return 0
    rows = [[b.name, b.inventory, b.saved, b.cells, b.run_id] for b in baselines]
    print(tabulate(rows, headers=["name", "inventory", "saved", "cells", "run id"], disable_numparse=True))
    return 0


def _show(args: argparse.Namespace) -> int:
    info = BaselineStore(args.reports).find(args.name, args.inventory_name)
    run = info.run
    status = "" if info.exitstatus is None else f" (pytest exit {info.exitstatus})"
    print(f"baseline {info.name!r} of inventory {info.inventory!r}: {info.path}")
    print(f"  saved {info.saved} from run {info.run_id}{status}; {info.cells} cells, {info.samples} samples")
    if run is not None:
        if run.profile:
            print(f"  profile {run.profile}")
        if run.argv:
            print(f"  command: {' '.join(run.argv)}")
    cells = aggregate_samples(info.read_samples())
    metrics = [m for m in _SHOW_METRICS if any(m in c.stats for c in cells)]
    rows = [
        [c.scenario, c.pair, c.mode, c.workload, c.impairment, *(format_stat(c.stats.get(m)) for m in metrics)]
        for c in cells
    ]
    headers = ["scenario", "pair", "mode", "workload", "impairment", *(METRIC_LABELS.get(m, m) for m in metrics)]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    return 0


def _save(args: argparse.Namespace) -> int:
    run = resolve_run(args.reports, args.run)
    validate_name(args.name)  # a bad name is refused before the run is read
    samples = read_samples(run.samples_ndjson)
    try:
        store = BaselineStore(args.reports)
        info = store.save(
            args.name, run, samples, run.read_run_info(), inventory=args.inventory_name, overwrite=args.overwrite
        )
    except NameTaken as exc:
        raise ConfigError(exc.with_hint("--overwrite")) from None
    print(f"saved baseline {info.name!r} of inventory {info.inventory!r} ({info.cells} cells) from run {info.run_id}")
    print(f"  {info.path}")
    kept = store.kept_files(info)
    if kept:
        print(f"  kept (not part of the baseline): {', '.join(kept)}")
    return 0


def add_baseline_commands(parser: argparse.ArgumentParser) -> None:
    """``harness baseline list|show|save`` under ``parser``."""
    sub = parser.add_subparsers(dest="baseline_command", required=True, metavar="ACTION")
    inventory_help = "the inventory name the baseline belongs to (default: any, if the name is unique)"

    p = sub.add_parser("list", help="saved baselines: name, inventory, date, cells, run id")
    p.set_defaults(handler=_list)
    _reports(p)
    p.add_argument("--inventory-name", help="only this inventory's baselines")

    p = sub.add_parser("show", help="a baseline's metadata and its cells (medians over repeats)")
    p.set_defaults(handler=_show)
    p.add_argument("name", metavar="NAME")
    _reports(p)
    p.add_argument("--inventory-name", help=inventory_help)

    p = sub.add_parser("save", help="save a finished run as a baseline (what pytest --baseline-save does)")
    p.set_defaults(handler=_save)
    p.add_argument("name", metavar="NAME")
    p.add_argument("run", metavar="RUN", nargs="?", default="latest", help="run directory, id or latest (default)")
    _reports(p)
    p.add_argument("--inventory-name", help="file it under this inventory (default: the run's own)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing baseline of that name")
