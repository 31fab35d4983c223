"""The durability map: outcomes add up per cell, the table shows them, the samples round-trip
through the results database as any run's do, and a worse map names the cells that got worse."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.bounds import LossBound
from harness.durability.durmap import (
    TrialOutcome,
    aggregate,
    map_of_samples,
    render_markdown,
    samples_of_map,
    worse_cells,
)
from harness.durability.plan import plan, trial_of
from harness.resultsdb.location import ResultsDb
from harness.resultsdb.records import RunRecord
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample

outcomes = st.builds(
    TrialOutcome,
    trial=st.integers(0, 2**63 - 1).map(trial_of),
    acked=st.integers(0, 10_000),
    lost=st.integers(0, 50),
    torn=st.integers(0, 5),
    bound=st.builds(
        LossBound, writes=st.integers(0, 2000), binding=st.sampled_from(["send buffer", "synchronous mode"])
    ),
    recovery_s=st.floats(0, 600),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(outcomes, max_size=30))
def test_cells_add_up_the_trials_and_round_trip_as_samples(trials: list[TrialOutcome]) -> None:
    dmap = aggregate(trials)
    assert sum(c.trials for c in dmap.cells.values()) == len(trials)
    assert sum(c.lost for c in dmap.cells.values()) == sum(t.lost for t in trials)
    assert sum(c.over_bound for c in dmap.cells.values()) == sum(1 for t in trials if t.lost > t.bound.writes)
    for key, cell in dmap.cells.items():
        mine = [t for t in trials if t.key == key]
        assert cell.max_lost == max(t.lost for t in mine)
        assert cell.bound == max(t.bound.writes for t in mine)
        assert cell.recovery_max_s == max(t.recovery_s for t in mine)
    back = map_of_samples(samples_of_map(dmap, {"run_id": "r1"}))
    assert back.cells.keys() == dmap.cells.keys()
    for key, cell in dmap.cells.items():
        assert back.cells[key] == replace(cell, recovery_max_s=back.cells[key].recovery_max_s)
        assert abs(back.cells[key].recovery_max_s - cell.recovery_max_s) < 1e-9
    assert worse_cells(dmap, back) == []


def _outcome(mode: str, fault: str, lost: int, bound: int, recovery: float = 10.0) -> TrialOutcome:
    product = "md-nbd" if mode in ("sync", "write-behind") else "drbd"
    trial = replace(trial_of(1), product=product, protocol=mode, placement="cross-az", fault=fault)  # type: ignore[arg-type]
    return TrialOutcome(trial, 1000, lost, 0, LossBound(bound, "send buffer"), recovery)


def test_the_table_has_a_row_per_cell() -> None:
    trials = plan(7, 40)
    dmap = aggregate(TrialOutcome(t, 100, 0, 0, LossBound(0, "synchronous mode"), 3.0) for t in trials)
    table = render_markdown(dmap)
    lines = table.splitlines()
    assert lines[0].startswith("| product") and "longest recovery (s)" in lines[0]
    assert len(lines) == 2 + len(dmap.cells)
    assert "0 (synchronous mode)" in table


def test_a_worse_map_names_each_cell_and_why() -> None:
    before = aggregate(
        [_outcome("C", "power-cut", 0, 0), _outcome("A", "primary-crash", 5, 100), _outcome("sync", "peer-crash", 0, 0)]
    )
    after = aggregate([_outcome("C", "power-cut", 1, 0), _outcome("A", "primary-crash", 60, 100, recovery=40.0)])
    reasons = {(w.key[1], w.reason) for w in worse_cells(before, after)}
    assert reasons == {
        ("C", "1 trials lost more than their bound (before: none)"),
        ("A", "loss rate 6.00% of acknowledged writes (before: 0.50%)"),
        ("A", "longest recovery 40.0 s (before: 10.0 s)"),
        ("sync", "no trial any more (before: 1)"),
    }  # C's 0.10% is within the 1% slack: only its bound names it
    assert worse_cells(after, after) == []
    assert worse_cells(after, before) == []  # fewer losses and a shorter recovery are no worse


def test_the_map_is_stored_in_the_results_database_and_read_back(tmp_path: Path) -> None:
    dmap = aggregate(
        [_outcome(m, f, n % 3, 2) for n, (m, f) in enumerate([("A", "power-cut"), ("B", "heal-crash")] * 5)]
    )
    samples = samples_of_map(dmap, {"run_id": "durmap-1", "inventory": "lab"})
    info = RunInfo(run_id="durmap-1", argv=("harness",), exitstatus=0)
    db = ResultsDb(path=tmp_path / "results.sqlite")
    with db.open() as store:
        store.write_run(RunRecord(info, samples))
        back: list[Sample] = store.samples("durmap-1")
    assert map_of_samples(back) == dmap
