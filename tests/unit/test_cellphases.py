"""Phases of a cell read back from the ledger (harness.bench.cellphases); the fidelity summary and table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.bench.cellphases import PHASES, cell_phases, phase_table
from harness.bench.fidelity import fidelity_summary, render_fidelity
from harness.bench.overhead import OverheadReport
from harness.bench.suite import BenchReport
from harness.runfiles.ledger import Ledger

LEDGER = Path(__file__).parent.parent / "data" / "bench" / "lab7-overhead-ledger.ndjson"


def _entries() -> list[dict[str, Any]]:
    return Ledger(LEDGER, "").entries()


def test_recorded_run_has_every_cell_with_phases_summing_to_its_wall_time() -> None:
    entries = _entries()
    marks = {e["cell"]: e for e in entries if e["event"] == "cell-phases"}
    cells = cell_phases(entries)
    assert [c.cell for c in cells] == list(marks)
    assert [c.kind for c in cells].count("impaired") == 7
    assert [c.kind for c in cells].count("unimpaired") == 14  # 7 overhead cells, 7 fidelity cells
    for c in cells:
        event = marks[c.cell]
        assert math.isclose(c.total_s, event["recorded"] - event["start"], abs_tol=1e-6)
        assert c.seconds["fio run"] == event["fio_s"]
        assert all(c.seconds[p] >= 0 for p in PHASES), c


def test_only_impaired_cells_have_an_apply_and_a_probe() -> None:
    for c in cell_phases(_entries()):
        impaired = c.kind == "impaired"
        assert (c.seconds["impair: apply + read-back"] > 0) == impaired
        assert (c.seconds["impair: RTT probe"] > 0) == impaired


def test_a_cell_without_fio_events_is_left_out() -> None:
    entries = [e for e in _entries() if e["event"] != "fio-running"]
    assert cell_phases(entries) == []


def test_phase_table_has_median_and_max_per_phase() -> None:
    cells = cell_phases(_entries())
    headers, rows = phase_table(cells, "impaired")
    assert headers[0].startswith("phase (impaired, 7 cells)")
    names = [r[0] for r in rows]
    assert names[: len(PHASES)] == list(PHASES)
    assert "fio run beyond ramp + runtime" in names  # the ledger has each cell's planned ramp + runtime
    assert all(r[1] <= r[2] for r in rows)
    assert phase_table(cells, "disconnected")[1] == []


_gap = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)


@given(st.lists(_gap, min_size=11, max_size=11), st.floats(min_value=0.0, max_value=10.0))
def test_phases_are_the_gaps_between_the_marks(gaps: list[float], fio: float) -> None:
    t = [1.0e9]
    for g in gaps:
        t.append(t[-1] + g)
    # start, guarded, intent, applied, faulted, running, (fio), exit, undone, rechecked, recorded
    start, guarded, intent, applied, faulted, running, _, exited, undone, rechecked, recorded = t[:11]
    exited = running + fio + (exited - running)
    undone, rechecked, recorded = exited + gaps[8], exited + gaps[8] + gaps[9], exited + gaps[8] + gaps[9] + gaps[10]
    cell, pid = "c", 1
    entries = [
        {"event": "impair-intent", "ts": intent, "pid": pid},
        {"event": "impair-applied", "ts": applied, "pid": pid},
        {"event": "fio-running", "ts": running, "pid": pid, "cell": cell},
        {"event": "fio-exit", "ts": exited, "pid": pid, "cell": cell},
        {"event": "cell-phases", "ts": recorded, "pid": pid, "cell": cell, "impairment": "x", "fio_s": fio}
        | {"start": start, "guarded": guarded, "faulted": faulted, "undone": undone}
        | {"rechecked": rechecked, "recorded": recorded},
    ]
    [phases] = cell_phases(entries)
    s = phases.seconds
    assert math.isclose(s["guard + state"], guarded - start, abs_tol=1e-6)
    assert math.isclose(s["boot ids + lint"], intent - guarded, abs_tol=1e-6)
    assert math.isclose(s["impair: apply + read-back"], applied - intent, abs_tol=1e-6)
    assert math.isclose(s["impair: RTT probe"], faulted - applied, abs_tol=1e-6)
    assert math.isclose(s["fio start"], running - faulted, abs_tol=1e-6)
    assert math.isclose(s["output fetch"], exited - running - fio, abs_tol=1e-6)
    assert math.isclose(phases.total_s, recorded - start, abs_tol=1e-5)
    assert math.isclose(phases.overhead_s, recorded - start - fio, abs_tol=1e-5)


_rate = st.floats(min_value=1.0, max_value=1000.0)


@given(st.lists(st.tuples(_rate, _rate), min_size=1, max_size=12))
def test_fidelity_summary(pairs: list[tuple[float, float]]) -> None:
    runs = [
        {"run": i, "harness_mib_s": h, "by_hand_mib_s": b, "delta_pct": 100 * (h - b) / b}
        for i, (h, b) in enumerate(pairs)
    ]
    summary = fidelity_summary(runs)
    deltas = sorted(abs(r["delta_pct"]) for r in runs)
    assert min(deltas) <= summary["median_abs_delta_pct"] <= max(deltas)
    assert ("by_hand_spread_pct" in summary) == (len(runs) > 1)


def test_fidelity_summary_of_identical_runs_has_no_spread() -> None:
    runs = [{"run": i, "harness_mib_s": 100.0, "by_hand_mib_s": 100.0, "delta_pct": 0.0} for i in range(4)]
    assert fidelity_summary(runs) == {"median_abs_delta_pct": 0.0, "by_hand_spread_pct": 0.0, "harness_spread_pct": 0.0}


def test_both_bench_reports_render_the_fidelity_runs_with_one_renderer() -> None:
    runs = [
        {"run": 0, "harness_mib_s": 105.0, "by_hand_mib_s": 100.0, "delta_pct": 5.0},
        {"run": 1, "harness_mib_s": 90.0, "by_hand_mib_s": 100.0, "delta_pct": -10.0},
    ]
    text = render_fidelity(runs)
    # the runs, then median |Δ| = (5 + 10) / 2 and each side's run-to-run spread:
    # harness 105 -> 90 is 14.29 %, by hand 100 -> 100 is 0 %
    assert "105.00" in text and "-10.00" in text
    assert "median abs delta pct: 7.50" in text
    assert "harness spread pct: 14.29" in text and "by hand spread pct: 0.00" in text
    bench = BenchReport(overhead=[], fidelity=runs, rtt=[], rate=[]).render()
    overhead = OverheadReport(cells=[], fidelity=runs).render()
    assert bench == text
    assert overhead.endswith("\n\n" + text)
    assert render_fidelity([]) == ""
