"""E-divisive change detection (Apache Otava) as the harness's Shifts, on the recorded lab runs:
the four runs of tests/data/runs/history-lab4 (the fourth with the AZ link slowed from 1 to
3 ms each way) and the six of repeats3-a/-b (with one cell halved in a seventh run, as the
median/MAD detector's tests do), and ``harness history --detector``."""

from __future__ import annotations

import functools
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.history.changes import detect_shifts, robust_noise
from harness.history.detectors import DETECTORS, detector
from harness.history.edivisive import edivisive_shifts
from harness.history.trend import cell_trends
from harness.resultsdb.importer import import_runs
from harness.resultsdb.queries import run_history
from harness.resultsdb.sqlite import SqliteStore
from tests.unit.baseline_runs import DATA, LATER, REPEATS_A, REPEATS_B, load
from tests.unit.test_history_trends import SLOWED_KEY, database


def lab_series(metric: str = "bw") -> dict[str, list[float]]:
    """Each replicated_write cell's run medians over the seven recorded runs, oldest first."""
    cells: dict[str, dict[str, list[float]]] = {}
    for s in load(REPEATS_A) + load(REPEATS_B) + load(LATER):
        m = s.metadata
        if s.metric == metric and m.get("scenario") == "replicated_write":
            cells.setdefault(f"{m['pair']}/{m['workload']}", {}).setdefault(str(m["run_id"]), []).append(s.value)
    return {k: [statistics.median(runs[r]) for r in sorted(runs)] for k, runs in cells.items()}


def test_a_step_in_a_real_series_is_found_at_its_run() -> None:
    # the steadiest recorded cell, its last three runs 30 % slower
    series = lab_series()["multi-az/randwrite-4k-nj8-qd1"]
    stepped = series[:4] + [v * 0.7 for v in series[4:]] + [v * 0.7 for v in series[:4]]
    shifts = edivisive_shifts(stepped)
    assert [s.index for s in shifts] == [4]
    shift = shifts[0]
    assert shift.before == statistics.median(stepped[:4]) and shift.after == statistics.median(stepped[4:])
    assert shift.noise == robust_noise(stepped[:4])
    assert shift.change == pytest.approx(-0.3, abs=0.12)
    assert shift.score == abs(shift.after - shift.before) / shift.noise


def test_the_slowed_lab_link_in_the_history(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "results.sqlite") as store:
        import_runs(store, DATA / "history-lab4")
        history = run_history(store, inventory="lab")
    trends = {t.key: t for t in cell_trends(history, "iops", detect=detector("e-divisive"))}
    changed = sorted(k for k, t in trends.items() if t.shift is not None)
    assert all(len(t.points) == 4 for t in trends.values())
    # three runs of history are too few for p < 0.001, where the median/MAD detector names the
    # fourth run of the latency-bound cells (tests/unit/test_history_lab_runs.py)
    assert changed == []


def test_the_halved_cell_as_e_divisive_sees_it(tmp_path: Path) -> None:
    db = database(tmp_path / "r.sqlite", slowed=True)
    with SqliteStore(db) as store:
        history = run_history(store, inventory="lab")
    # Otava's own p < 0.001 asks more evidence than seven noisy runs hold: no change at all
    strict = {t.key: t for t in cell_trends(history, "bw", detect=detector("e-divisive"))}
    assert all(t.shift is None for t in strict.values())
    # at p < 0.05 the halved newest run is the one change, judged against the six before it
    loose = functools.partial(edivisive_shifts, max_pvalue=0.05)
    trend = {t.key: t for t in cell_trends(history, "bw", detect=loose)}[SLOWED_KEY]
    assert trend.changed_at is not None and trend.changed_at.run_id == "20261121-130000-slow"
    assert trend.shift is not None and trend.shift.change == pytest.approx(-0.5, abs=0.1)


def test_harness_history_offers_the_detector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = database(tmp_path / "r.sqlite", slowed=True)
    args = ["history", "--results-db", str(db), "--scenario", "replicated_write", "--no-plot", "-k", SLOWED_KEY]
    assert main([*args, "--fail-on-change"]) == 1
    assert "<- changed" in capsys.readouterr().out
    assert main([*args, "--detector", "e-divisive", "--fail-on-change"]) == 0
    assert "no change: the newest run of each of 1 cells is inside its history's noise" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main([*args, "--detector", "cusum"])
    assert stop.value.code == 2
    assert "invalid choice: 'cusum' (choose from 'median-mad', 'e-divisive')" in capsys.readouterr().err


def test_the_default_detector_is_unchanged() -> None:
    series = next(iter(lab_series().values()))
    assert DETECTORS[0] == "median-mad"
    assert detector()(series) == detect_shifts(series)
    with pytest.raises(ValueError, match=r"unknown change detector 'x'; choose one of median-mad, e-divisive"):
        detector("x")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_pvalue": 0}, "max p-value must be between 0 and 1"),
        ({"window": 1}, "window must be at least 2 runs"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        edivisive_shifts([1.0, 2.0, 3.0], **kwargs)  # type: ignore[arg-type]


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(ValueError, match="finite numbers only"):
        edivisive_shifts([1.0, float("nan"), 3.0])


@settings(deadline=None, max_examples=30)
@given(st.lists(st.floats(1, 1e4), min_size=0, max_size=25))
def test_shifts_cover_the_series_in_order(values: list[float]) -> None:
    shifts = edivisive_shifts(values)
    indexes = [s.index for s in shifts]
    assert indexes == sorted(set(indexes)) and all(0 < i < len(values) for i in indexes)
    edges = [0, *indexes, len(values)]
    for i, s in enumerate(shifts):
        assert s.before == statistics.median(values[edges[i] : s.index])
        assert s.after == statistics.median(values[s.index : edges[i + 2]])
        assert s.score >= 0
