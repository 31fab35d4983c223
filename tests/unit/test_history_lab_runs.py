"""The history gate on recorded runs: three lab runs, then one with the AZ link slowed.

tests/data/runs/history-lab4 holds four real runs of replicated_write on the lab; before the
fourth the AZ link went from 1 to 3 ms each way (``harness lab set-link --delay 3ms``).  Imported
into a results database, the history names the fourth run as the change of the cross-AZ
latency-bound cells, and the history gate fails it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.history.trend import cell_trends
from harness.resultsdb.importer import import_runs
from harness.resultsdb.queries import run_history
from harness.resultsdb.sqlite import SqliteStore
from tests.unit.baseline_runs import DATA

RUNS = DATA / "history-lab4"
SLOWED = "20261125-120534-2874"
#: Cells whose writes wait for the cross-AZ round trip (QD1 and 8 jobs at QD1, 4k).
LATENCY_BOUND = [
    f"replicated_write/multi-az/replicated/{w}/none"
    for w in ("randwrite-4k-nj1-qd1", "randwrite-4k-nj8-qd1", "write-4k-nj1-qd1", "write-4k-nj8-qd1")
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite"
    with SqliteStore(path) as store:
        assert [o.status for o in import_runs(store, RUNS)] == ["imported"] * 4
    return path


def test_the_runs_keep_their_predictions_and_gate_verdicts(db: Path) -> None:
    with SqliteStore(db) as store:
        counts = store.table_counts()
        runs = store.runs()
    assert counts == {"runs": 4, "cells": 48, "samples": 288, "predictions": 48}
    assert [r.info.exitstatus for r in runs] == [0, 0, 0, 1]


def test_the_slowed_run_is_named_as_the_change_of_every_latency_bound_cross_az_cell(db: Path) -> None:
    with SqliteStore(db) as store:
        trends = {t.key: t for t in cell_trends(run_history(store, inventory="lab"), "iops")}
    for key in LATENCY_BOUND:
        trend = trends[key]
        assert trend.changed_at is not None and trend.changed_at.run_id == SLOWED, key
        # 1 → 3 ms each way: about half the round trips per second, or fewer.
        assert trend.shift is not None and trend.shift.change < -0.4, key


def test_history_3_fails_the_slowed_run(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "history:3", str(RUNS / SLOWED), "--results-db", str(db), "--no-write"])
    out = capsys.readouterr().out
    assert code == 1 and out.startswith("## Baseline comparison: REGRESSED")
    for key in LATENCY_BOUND:
        workload = key.split("/")[3]
        assert re.search(rf"\| replicated_write multi-az {workload} \[none\] +\| IOPS", out), workload


def test_fail_on_change_below_its_minimum_fails_loudly_instead_of_passing(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the last 3 runs end with the slowed one: too few for a change to be found in any cell
    args = ["history", "--results-db", str(db), "--metric", "iops", "--last", "3", "--no-plot"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "TOO FEW RUNS: 12 of 12 cells have fewer than 4 runs (the most 3)" in out
    assert "inside its history's noise" not in out
    assert main([*args, "--fail-on-change"]) == 2
    err = capsys.readouterr().err
    assert "--fail-on-change: 12 of 12 cells have fewer than 4 runs (the most 3)" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    # with all four runs the change is found, and the gate fails on it
    assert main(["history", "--results-db", str(db), "--metric", "iops", "--no-plot", "--fail-on-change"]) == 1


def test_history_json_names_the_slowed_run_for_every_latency_bound_cell(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "--results-db", str(db), "--metric", "iops", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["inventory"], doc["metric"], doc["min_runs"]) == ("lab", "iops", 4)
    assert [r["run_id"] for r in doc["runs"]][-1] == SLOWED and len(doc["runs"]) == 4
    cells = {c["key"]: c for c in doc["cells"]}
    assert len(cells) == 12 and all(c["judged"] for c in cells.values())
    for key in LATENCY_BOUND:
        change = cells[key]["change"]
        assert change["run_id"] == SLOWED and change["change"] < -0.4 and change["after"] < change["before"], key
        points = cells[key]["points"]
        assert [p["run_id"] for p in points][-1] == SLOWED and points[-1]["median"] == change["after"]
        assert points[0]["started"].startswith("2026-11-25T")


def test_history_json_says_which_cells_could_not_be_judged(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["history", "--results-db", str(db), "--metric", "iops", "--json", "--last", "3", "--fail-on-change"]
    assert main(args) == 2
    doc = json.loads(capsys.readouterr().out)
    assert {c["judged"] for c in doc["cells"]} == {False} and {c["change"] is None for c in doc["cells"]} == {True}
