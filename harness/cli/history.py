"""``harness history`` and ``harness results``: the results database on the command line.

``harness history`` prints, per cell, a metric over the inventory's last N runs (median,
min–max, repeats, provenance changes), names the cells whose newest runs moved beyond their
history's noise and the run where they changed, and writes the plot.  ``harness results
import PATH`` adds existing ``reports/<run>/`` directories to the database; ``harness results
status`` says what it holds.  Exit codes: 0 ok, 1 a change was found and ``--fail-on-change``
asked to fail on it, 2 bad input (no such database content, a bad option, or ``--fail-on-change``
over a cell with fewer runs than a change can be found in).  ``--json`` prints the same as one
JSON document (:mod:`harness.history.jsondoc`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from harness.argtypes import number
from harness.errors import ConfigError
from harness.history.changes import MIN_CHANGE, MIN_RUNS, THRESHOLD
from harness.history.detectors import DEFAULT_DETECTOR, DETECTORS
from harness.resultsdb.location import ResultsDb, results_db
from harness.userfiles.names import check_name
from harness.userfiles.outfile import check_output, write_replacing

if TYPE_CHECKING:
    from harness.history.trend import CellTrend

__all__ = ["add_history_commands"]

_LAST = number(int, 2, 1000, what="runs")
_THRESHOLD = number(float, 0.0, 100.0, exclusive_minimum=True, what="noise units")
_MIN_CHANGE = number(float, 0.0, 10.0, what="(a fraction: 0.1 is 10 %)")


def _database(args: argparse.Namespace, reports_root: Path) -> ResultsDb:
    db = results_db(args.results_db, reports_root)
    if db is None:
        raise ConfigError("--results-db none: these commands read the results database; name one")
    return db


def _db_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reports", default=None, help="reports root whose results.sqlite is used (default: reports)")
    parser.add_argument(
        "--results-db", metavar="URL|PATH", default=None, help="the database: postgresql://..., or an SQLite file"
    )


def _inventory_name(value: str | None) -> str | None:
    """An inventory's name: given as is, or read from the inventory file it names."""
    if value is None or not Path(value).is_file():
        return value
    from harness.inventory import load_inventory

    return load_inventory(Path(value)).name


def _plot_path(args: argparse.Namespace, reports: Path, inventory: str | None) -> Path:
    """Where the plot goes: ``--plot FILE`` (an existing file only with ``--force``), or the
    reports root's own ``history-<inventory>-<metric>.png``, its name built through the one
    name rule (the inventory name comes from the database: a crafted one never leaves the root)."""
    if args.plot:
        out = Path(args.plot)
        check_output(out, {}, force=args.force, option="--plot")
        return out
    try:
        name = f"history-{check_name(str(inventory), 'inventory name')}-{check_name(args.metric, 'metric')}.png"
    except ConfigError as exc:
        raise ConfigError(f"{exc}; it names the plot file: give one with --plot FILE") from None
    out = reports / name
    if os.path.lexists(out) and (out.is_symlink() or not out.is_file()):
        raise ConfigError(f"{out}: is not a plot file of the harness's own (a link, a directory...); use --plot FILE")
    return out


def _history(args: argparse.Namespace) -> int:
    from harness.history.detectors import detector
    from harness.history.table import render_changes, render_trends
    from harness.history.trend import cell_trends
    from harness.resultsdb.queries import run_history

    reports = Path(args.reports or "reports")
    db = _database(args, reports)
    with db.open(create=False) as store:
        history = run_history(store, inventory=_inventory_name(args.inventory), last=args.last)
    if not history.runs:
        raise ConfigError(
            f"{db.describe()}: no finished run{'' if history.inventory is None else f' of {history.inventory!r}'} "
            "(run pytest scenarios/, or `harness results import reports/`)"
        )
    trends = cell_trends(
        history,
        args.metric,
        scenario=args.scenario,
        match=args.match,
        detect=detector(args.detector, threshold=args.threshold, min_change=args.min_change),
    )
    if not trends:
        found = sorted({m for cells in history.cells.values() for c in cells.values() for m in c.stats})
        raise ConfigError(
            f"no cell of the last {len(history.runs)} runs has metric {args.metric!r} (with these filters); "
            f"their metrics: {', '.join(found)}"
        )
    if args.json:
        from harness.history.jsondoc import history_json

        print(history_json(history.inventory, args.metric, db.describe(), history.runs, trends), end="")
    else:
        first, last = history.runs[0].run_id, history.runs[-1].run_id
        print(f"inventory {history.inventory}: {args.metric} over the last {len(history.runs)} runs ({first} … {last})")
        print(f"database: {db.describe()}\n")
        print(render_trends(trends))
        print()
        print(render_changes(trends))
        if not args.no_plot:
            _plot(args, reports, history.inventory, trends)
    return _gate(trends, fail_on_change=args.fail_on_change)


def _plot(args: argparse.Namespace, reports: Path, inventory: str | None, trends: list[CellTrend]) -> None:
    from harness.history.plot import history_png

    out = _plot_path(args, reports, inventory)
    png = history_png(trends, args.metric)
    if png is not None:
        if not args.plot:
            reports.mkdir(parents=True, exist_ok=True)
        write_replacing(out, png, option="--plot")
        print(f"\nplot: {out}")


def _gate(trends: list[CellTrend], *, fail_on_change: bool) -> int:
    """1 when a cell changed and ``--fail-on-change`` asked for it.  A gate that cannot judge a
    cell (too few runs) does not pass it silently: that is an error naming the minimum."""
    if not fail_on_change:
        return 0
    if any(t.shift is not None for t in trends):
        return 1
    short = [t for t in trends if not t.judged]
    if short:
        most = max(len(t.points) for t in short)
        raise ConfigError(
            f"--fail-on-change: {len(short)} of {len(trends)} cells have fewer than {MIN_RUNS} runs (the most {most}); "
            f"no change can be found below {MIN_RUNS}, so the gate cannot pass them: "
            "record more runs, or narrow the cells with --scenario/-k"
        )
    return 0


def _import(args: argparse.Namespace) -> int:
    from harness.resultsdb.importer import ImportedRun, import_runs, run_dirs_under

    path = Path(args.path)
    if args.reports:
        root = Path(args.reports)
    else:
        runs = run_dirs_under(path)
        root = path.resolve().parent if len(runs) == 1 and runs[0].path == path.resolve() else path
    db = _database(args, root)

    def say(outcome: ImportedRun) -> None:
        print(outcome.line(), flush=True)

    with db.open() as store:
        outcomes = import_runs(store, path, replace=args.replace, progress=say)
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("imported", "replaced", "present", "skipped")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no run directories"
    print(f"{db.describe()}: {summary}")
    return 0


def _status(args: argparse.Namespace) -> int:
    from collections import Counter

    db = _database(args, Path(args.reports or "reports"))
    with db.open(create=False) as store:
        version, counts, runs = store.schema_version(), store.table_counts(), store.runs()
    print(f"{db.describe()}: schema version {version}")
    print("  " + ", ".join(f"{n} {table}" for table, n in counts.items()))
    for inventory, n in sorted(Counter(r.inventory_name or "-" for r in runs).items()):
        newest = [r.run_id for r in runs if (r.inventory_name or "-") == inventory][-1]
        print(f"  inventory {inventory}: {n} runs, newest {newest}")
    return 0


def add_history_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``history`` and ``results`` on the ``harness`` parser's subcommands."""
    text = "a metric of every cell over the last runs (table and plot), and the cells that changed"
    history = sub.add_parser("history", help=text, description=text)
    history.set_defaults(handler=_history)
    _db_arguments(history)
    history.add_argument("--inventory", help="inventory name or file (default: the only one in the database)")
    history.add_argument(
        "--metric", default="bw", metavar="METRIC", help="a sample metric: bw, iops, clat_p99... (default: %(default)s)"
    )
    history.add_argument("--last", type=_LAST, default=10, help="runs to show (default: %(default)s)")
    history.add_argument("--scenario", help="only this scenario's cells, e.g. replicated_write")
    history.add_argument("-k", "--cell", dest="match", help="only cells whose key contains this text, e.g. multi-az")
    history.add_argument("--plot", help="PNG file (default: <reports>/history-<inventory>-<metric>.png)")
    history.add_argument("--no-plot", action="store_true", help="print the tables only")
    history.add_argument("--force", action="store_true", help="replace an existing --plot file")
    history.add_argument(
        "--detector",
        choices=DETECTORS,
        default=DEFAULT_DETECTOR,
        help="median-mad: every run from the change on beyond the noise of the runs before it; e-divisive: "
        "E-divisive means as Apache Otava computes it, p < 0.001 (default: %(default)s)",
    )
    history.add_argument(
        "--threshold",
        type=_THRESHOLD,
        default=THRESHOLD,
        help="noise units a run must move, median-mad only (default: %(default)s)",
    )
    history.add_argument(
        "--min-change",
        type=_MIN_CHANGE,
        default=MIN_CHANGE,
        help="smallest relative move counted (default: %(default)s)",
    )
    history.add_argument(
        "--fail-on-change",
        action="store_true",
        help=f"exit 1 when a cell changed; exit 2 when a cell has fewer than {MIN_RUNS} runs (no change can be found)",
    )
    history.add_argument(
        "--json", action="store_true", help="print the trends and changes as one JSON document (no tables, no plot)"
    )

    results = sub.add_parser("results", help="the results database: import run directories, show what it holds")
    actions = results.add_subparsers(dest="results_command", required=True, metavar="ACTION")
    text = "add existing run directories (a reports root, or one run) to the results database"
    imp = actions.add_parser("import", help=text, description=text)
    imp.set_defaults(handler=_import)
    imp.add_argument("path", nargs="?", default="reports", help="reports root or run directory (default: reports)")
    imp.add_argument("--replace", action="store_true", help="write runs that are in the database again")
    _db_arguments(imp)
    text = "schema version, row counts and runs per inventory"
    status = actions.add_parser("status", help=text, description=text)
    status.set_defaults(handler=_status)
    _db_arguments(status)
