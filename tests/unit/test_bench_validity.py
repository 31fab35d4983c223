"""The benchmarks of this work, on recorded data: ``--repeat auto`` against a fixed count over the
lab's real repeats (tests/data/runs/repeats3-a and -b), and ``harness bench changes`` on a
results database of the recorded runs; and calibration cells measured in a disturbed window
left out and measured again (certificates from tests/data/pressure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench.repeatbench import RepeatBench, repeat_rows
from harness.cell.certificate import Readings, cell_certificate
from harness.cli import main
from harness.prediction.undisturbed import UndisturbedCells
from harness.rules.medianinterval import IntervalMethod
from harness.rules.repeats import RepeatPlan
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS
from tests.unit.baseline_runs import REPEATS_A, REPEATS_B, load
from tests.unit.test_cell_autorepeat import SPEC, Cell
from tests.unit.test_history_trends import database

PRESSURE = Path(__file__).resolve().parents[1] / "data" / "pressure"


def recorded_repeats() -> dict[str, list[tuple[float, float]]]:
    """Each replicated_write cell's six recorded repeats: (MiB/s, fio seconds).  These runs
    predate the wall-time metric: fio's time is the job's runtime they record (5 s)."""
    by_cell: dict[str, list[tuple[float, float]]] = {}
    for s in load(REPEATS_A) + load(REPEATS_B):
        m = s.metadata
        if m["scenario"] == "replicated_write" and s.metric == "bw":
            by_cell.setdefault(f"{m['pair']}/{m['workload']}", []).append((s.value, float(m["runtime_s"])))
    return by_cell


def test_on_the_noisy_lab_repeats_auto_runs_to_the_cap_and_says_it() -> None:
    runs = recorded_repeats()
    plan = RepeatPlan(0.95, 0.05, 6, "order")
    rows = repeat_rows(runs, plan, fixed=5)
    assert len(rows) == 12
    # the lab's run-to-run spread (up to 9x, tests/data/runs/README.md) keeps every interval wide
    assert {r.why for r in rows} == {"cap"} and all(r.auto.repeats == 6 for r in rows)
    assert all(r.fixed.repeats == 5 and r.fixed.interval is None for r in rows)
    assert rows[0].fixed.describe() == "none (n=5 covers 93.75% at most)"
    bench = RepeatBench(rows, plan, 5)
    totals = bench.totals()
    assert totals["auto_fio_s"] == pytest.approx(12 * 6 * 5.0) and totals["fixed_fio_s"] == pytest.approx(12 * 5 * 5.0)
    assert totals["fio_time_saved"] == pytest.approx(1 - 6 / 5)
    assert totals["fixed_widest_half_width"] is None
    assert not totals["all_tight"] and totals["same_interval_fixed_repeats"] == 6
    text = bench.render()
    assert "against --repeat 5" in text and "some cells reached the cap" in text and "auto takes 20% more" in text
    # the distribution-free interval needs six repeats, and a check needs more than it looks at
    assert "the order interval is not checked: no cell has more than 6 repeats (raise --fixed)" in text
    assert json.loads(json.dumps(bench.to_json()))["cells"][0]["fixed"]["interval"] is None


def test_under_the_lognormal_interval_fixed_five_gets_the_same_interval_and_auto_stops_where_it_can() -> None:
    plan = RepeatPlan(0.95, 0.05, 6)
    rows = repeat_rows(recorded_repeats(), plan, fixed=5)
    tight = {r.cell: r.auto.repeats for r in rows if r.why == "tight"}
    # 6.34, 6.12, 6.23 MiB/s: the one cell whose first three agree within ±5 %
    assert tight == {"multi-az/randwrite-4k-nj8-qd1": 3}
    assert all(r.fixed.interval is not None and r.fixed.interval.coverage == 0.95 for r in rows)
    assert all(r.fixed.interval.method == "lognormal" for r in rows if r.fixed.interval is not None)
    bench = RepeatBench(rows, plan, 5)
    totals = bench.totals()
    assert totals["auto_fio_s"] == pytest.approx((11 * 6 + 3) * 5.0)
    assert totals["fio_time_saved"] == pytest.approx(1 - 69 / 60)
    assert totals["fixed_widest_half_width"] > totals["auto_widest_half_width"] > 0.05
    text = bench.render()
    assert (
        "95% lognormal interval of the median within ±5%, cap 6) against --repeat 5, the same interval for both" in text
    )
    assert "auto takes 15% more" in text
    checks = bench.to_json()["coverage_check"]
    assert [c["k"] for c in checks] == [3, 4, 5] and all(c["cells"] == 12 for c in checks)
    assert [c["subsets"] for c in checks] == [12 * 20, 12 * 15, 12 * 6]


@pytest.mark.parametrize(("method", "first"), [("lognormal", 3), ("order", 6)])
def test_a_loose_tolerance_lets_auto_stop_from_the_first_look(method: IntervalMethod, first: int) -> None:
    rows = repeat_rows(recorded_repeats(), RepeatPlan(0.95, 0.6, 10, method), fixed=5)
    tight = [r for r in rows if r.why == "tight"]
    assert any(r.auto.repeats == first for r in tight) and all(r.auto.repeats >= first for r in tight)
    assert all(r.auto.interval is not None and r.auto.interval.relative_half_width <= 0.6 for r in tight)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat-cap", "2"], "bench repeats: cap 2 < 3 repeats, the fewest the lognormal interval of the median"),
        (["--repeat-cap", "5", "--interval", "order"], "bench repeats: cap 5 < 6 repeats, the fewest with which"),
        (["--interval", "normal"], "argument --interval: invalid choice: 'normal'"),
    ],
)
def test_bench_repeats_refuses_a_plan_that_cannot_work_before_any_node_is_asked(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code: int | str | None
    try:
        code = main(["bench", "repeats", "--inventory", "/nonexistent/inventory.yaml", *args])
    except SystemExit as exc:  # argparse's own refusal of a choice
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bench_changes_scores_both_detectors_on_the_databases_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = database(tmp_path / "results.sqlite", slowed=False)
    code = main(["bench", "changes", "--results-db", str(db), "--inventory", "lab", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "bw" and out["series"] >= 12
    assert {(r["detector"], r["change"]) for r in out["rows"]} == {
        (d, c) for d in ("median-mad", "e-divisive") for c in (0.05, 0.10)
    }


def test_bench_changes_refuses_a_database_with_too_little_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = database(tmp_path / "results.sqlite", slowed=False)
    args = ["bench", "changes", "--results-db", str(db), "--inventory", "lab", "--scenario", "no_such_scenario"]
    assert main(args) == 2
    assert "no cell has 'bw' in more than 3 of the last " in capsys.readouterr().err


def _certified(a2_case: str) -> Cell:
    start, end = (Readings({"a2": (PRESSURE / f"{a2_case}-{e}.txt").read_text()}) for e in ("before", "after"))
    certificate = cell_certificate(start, end, DEFAULT_THRESHOLDS).certificate

    class Certified(Cell):
        def __call__(self, spec):  # type: ignore[no-untyped-def]
            result = super().__call__(spec)
            result.certificate = certificate
            return result

    return Certified([100.0])


def test_a_disturbed_calibration_cell_is_measured_again_and_named() -> None:
    notes: list[str] = []
    clean = UndisturbedCells(notes.append)
    hog, quiet = _certified("psi/r1-hog-cpu1-load50-nice"), _certified("psi/r2-quiet1")
    runs = iter([hog, quiet])
    results = clean.run(["QD1 4k writes (replicated)"], lambda: [next(runs)(SPEC)])
    assert results[0].certificate is not None and results[0].certificate.status == "clean"
    assert clean.left_out == ["QD1 4k writes (replicated): disturbed (cpu pressure 41 % on a2 > 10 %), measured again"]
    assert not clean.used_disturbed and "measuring it again" in notes[0]


def test_a_calibration_cell_disturbed_twice_is_used_and_keeps_the_calibration_from_the_store() -> None:
    clean = UndisturbedCells(lambda _m: None)
    hog = _certified("psi/r2-hog-cpu2-load100-nice")
    clean.run(["1M writes QD16 (disconnected)", "4k writes 4x QD2 (disconnected)"], lambda: [hog(SPEC), hog(SPEC)])
    assert clean.used_disturbed
    assert (
        clean.left_out[-1] == "4k writes 4x QD2 (disconnected): disturbed again (cpu pressure 82 % on a2 > 10 %), used"
    )
