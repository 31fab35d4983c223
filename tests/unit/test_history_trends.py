"""``harness history`` over six recorded lab runs: trends, provenance marks, the change, the CLI.

The history is six real runs of replicated_write on the lab (tests/data/runs/repeats3-a and
-b hold three runs each, concatenated; they are split back by their run id here).  A seventh
run is the sixth with one cell's bandwidth and IOPS halved in code (tests/unit/baseline_runs.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.cli import main
from harness.history.table import render_changes, render_trends
from harness.history.trend import CellTrend, cell_trends
from harness.resultsdb.queries import run_history
from harness.resultsdb.sqlite import SqliteStore
from harness.runfiles.samples import Sample
from tests.unit.baseline_runs import REPEATS_A, REPEATS_B, SINGLE, cell_is, load, relabelled, scaled, write_run
from tests.unit.resultsdb_contract import run_record

SLOWED = cell_is("multi-az", "write-1m-nj8-qd2")
SLOWED_KEY = "replicated_write/multi-az/replicated/write-1m-nj8-qd2/none"


def recorded_runs() -> list[tuple[str, list[Sample]]]:
    """The six recorded runs, oldest first, each with its own samples (repeat 0)."""
    runs: dict[str, list[Sample]] = {}
    for sample in load(REPEATS_A) + load(REPEATS_B):
        run_id = str(sample.metadata["run_id"])
        runs.setdefault(run_id, []).append(dataclasses.replace(sample, metadata={**sample.metadata, "repeat": 0}))
    return sorted(runs.items())


def _started(run_id: str) -> str:
    day, time, _ = run_id.split("-")
    return f"{day[:4]}-{day[4:6]}-{day[6:]}T{time[:2]}:{time[2:4]}:{time[4:]}+00:00"


def database(path: Path, *, slowed: bool, fio_changed_at: int | None = None) -> Path:
    runs = recorded_runs()
    if fio_changed_at is not None:
        fio = "fio-3.35"
        runs = [(r, relabelled(s, fio_version=fio) if i >= fio_changed_at else s) for i, (r, s) in enumerate(runs)]
    with SqliteStore(path) as store:
        for run_id, samples in runs:
            store.write_run(run_record(run_id, samples, started=_started(run_id)))
        last = runs[-1][1]
        newest = scaled(last, 0.5, where=SLOWED) if slowed else last
        store.write_run(run_record("20261121-130000-slow", newest, started="2026-11-21T13:00:00+00:00"))
    return path


def trends(path: Path, metric: str = "bw") -> dict[str, CellTrend]:
    with SqliteStore(path) as store:
        return {t.key: t for t in cell_trends(run_history(store, inventory="lab"), metric)}


#: The recorded history of that cell has a level change of its own: its bandwidth was 78 MiB/s
#: (median) in the three runs of repeats3-a and 55–60 MiB/s from run 20261121-101947-9f9b on.
RECORDED_CHANGE = "20261121-101947-9f9b"


def test_the_slowed_cell_is_named_at_the_run_that_slowed(tmp_path: Path) -> None:
    found = trends(database(tmp_path / "r.sqlite", slowed=True))
    trend = found[SLOWED_KEY]
    assert len(trend.points) == 7
    assert trend.changed_at is not None and trend.changed_at.run_id == "20261121-130000-slow"
    # Judged against the level before it (runs 4–6), not the older one: half of it.
    assert trend.shift is not None and trend.shift.change == pytest.approx(-0.5, abs=0.1)
    assert [trend.points[s.index].run_id for s in trend.shifts] == [RECORDED_CHANGE, "20261121-130000-slow"]
    assert "20261121-130000-slow" in render_changes(list(found.values()))


def test_the_same_run_unslowed_is_no_change_of_that_cell(tmp_path: Path) -> None:
    found = trends(database(tmp_path / "r.sqlite", slowed=False))
    trend = found[SLOWED_KEY]
    assert trend.changed_at is not None and trend.changed_at.run_id == RECORDED_CHANGE
    assert len(found) == 12  # every replicated_write cell of the recorded runs


def test_a_provenance_change_is_marked_at_its_run(tmp_path: Path) -> None:
    found = trends(database(tmp_path / "r.sqlite", slowed=False, fio_changed_at=4))
    points = found[SLOWED_KEY].points
    assert [bool(p.changed) for p in points] == [False, False, False, False, True, False, False]
    assert points[4].changed == ("fio_version: fio-3.33 → fio-3.35",)
    text = render_trends([found[SLOWED_KEY]])
    assert f"* {points[4].run_id}: fio_version: fio-3.33 → fio-3.35" in text
    assert "* provenance" in text


def test_harness_history_prints_the_tables_names_the_change_and_writes_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = database(tmp_path / "r.sqlite", slowed=True)
    plot = tmp_path / "history.png"
    args = ["history", "--results-db", str(db), "--scenario", "replicated_write", "--plot", str(plot)]
    assert main([*args, "-k", "multi-az/replicated/write-1m"]) == 0
    out = capsys.readouterr().out
    assert "inventory lab: bw over the last 7 runs" in out
    assert "replicated_write · multi-az · write-1m-nj8-qd2: Bandwidth" in out
    assert "<- changed" in out and "CHANGED: 1 of 2 cells" in out
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert main([*args, "-k", "multi-az/replicated/write-1m", "--fail-on-change", "--no-plot"]) == 1
    # the plot file is there now: replaced only with --force
    assert main([*args, "-k", "single-az/replicated/write-1m-nj8", "--last", "6"]) == 2
    assert f"--plot {plot}: the file exists; pass --force" in capsys.readouterr().err
    assert main([*args, "-k", "single-az/replicated/write-1m-nj8", "--fail-on-change", "--last", "6", "--force"]) == 0


def test_harness_history_on_an_empty_database_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--results-db", str(tmp_path / "none.sqlite")]) == 2
    assert "no finished run" in capsys.readouterr().err


def test_harness_compare_gates_a_run_directory_on_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = database(tmp_path / "r.sqlite", slowed=False)
    newest = recorded_runs()[-1][1]
    slow = write_run(tmp_path / "reports", "slow", scaled(newest, 0.5, where=SLOWED), run_json_from=SINGLE)
    fine = write_run(tmp_path / "reports", "fine", newest, run_json_from=SINGLE)
    args = ["--results-db", str(db), "--no-write", "--reports", str(tmp_path / "reports")]
    assert main(["compare", "history:3", str(slow), *args]) == 1
    out = capsys.readouterr().out
    assert out.startswith("## Baseline comparison: REGRESSED")
    assert "against the last 3 good runs of inventory `lab`" in out
    assert "| replicated_write multi-az write-1m-nj8-qd2 [none] | MiB/s" in out
    assert main(["compare", "history:3", str(fine), *args]) == 0
    assert main(["compare", "history:3", str(fine), "--results-db", "none", "--reports", str(tmp_path)]) == 2
