"""``harness bench changes``: the change detectors of ``harness history`` scored on the results
database's own history (:mod:`harness.bench.changescore`), with 5 % and 10 % regressions injected.

The series are each cell's run medians of one metric over the inventory's last runs, taken as a
clean stretch: the benchmark scores what the detectors would make of that history's noise.
Printed, never asserted.
"""

from __future__ import annotations

from harness.bench.changescore import change_detection_bench, render_change_detection, series_from_trends
from harness.errors import ConfigError
from harness.history.changes import MIN_HISTORY
from harness.history.trend import cell_trends
from harness.resultsdb.location import ResultsDb
from harness.resultsdb.queries import run_history
from harness.rules.tolerance import METRIC_DIRECTIONS
from harness.userfiles.jsonsafe import dumps

__all__ = ["change_detection_command"]


def change_detection_command(
    db: ResultsDb, *, inventory: str | None, metric: str, last: int, scenario: str | None, as_json: bool
) -> int:
    """Score every detector on ``db``'s last ``last`` runs of ``inventory`` and print the table."""
    if metric not in METRIC_DIRECTIONS:
        raise ConfigError(f"--metric {metric!r}: choose one of {', '.join(METRIC_DIRECTIONS)} (its better direction)")
    with db.open() as store:
        history = run_history(store, inventory=inventory, last=last)
    trends = cell_trends(history, metric, scenario=scenario)
    # a series needs history before the first injection to be scored at all
    series = {k: v for k, v in series_from_trends(trends).items() if len(v) > MIN_HISTORY}
    if not series:
        raise ConfigError(
            f"{db.describe()}: no cell has {metric!r} in more than {MIN_HISTORY} of the last {len(history.runs)} runs; "
            "import or make more runs (`harness results import reports/`)"
        )
    rows = change_detection_bench(series, direction=METRIC_DIRECTIONS[metric])
    if as_json:
        print(dumps({"metric": metric, "runs": len(history.runs), "series": len(series), "rows": rows}, indent=2))
    else:
        print(f"{metric} of {len(series)} cells over the last {len(history.runs)} runs of {history.inventory}")
        print(render_change_detection(rows))
    return 0
