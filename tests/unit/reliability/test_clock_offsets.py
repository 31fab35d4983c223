"""Each node's clock offset from the controller, shown by preflight."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError, ConnectionLost
from harness.fio.profiles import PROFILES
from harness.inventory.loader import parse_inventory
from harness.plugin.session import HarnessSession
from harness.report.comparison import build_comparison
from harness.report.header import header_items
from harness.report.markdown import render_markdown
from harness.runfiles.clockskew import ClockOffset, NodeClock, offsets_record, skew_notes
from harness.runfiles.rundir import RunDir
from harness.runfiles.runinfo import RunInfo
from harness.safety.clock import CLOCK_PROBE, CLOCK_SKEW_WARN_S, judge_offset, read_offset
from tests.doubles import Answer, FakePool, FakeRunner, LocalRunner, data
from tests.unit.reliability.support import MINI, finding, lab_node, preflight

RECORDED = data("versions/date-epoch-ns-lab.txt")  # a1's `date +%s.%N`, 2026-11-25
MINI_INV = parse_inventory(MINI)


@pytest.mark.reliability_row(30)
@given(
    skew=st.floats(-1e4, 1e4, allow_nan=False),
    sent=st.floats(1.6e9, 1.9e9, allow_nan=False),
    trip=st.floats(0.0, 5.0, allow_nan=False),
    at=st.floats(0.0, 1.0),
)
def test_case_30_the_offset_is_found_within_half_the_round_trip(
    skew: float, sent: float, trip: float, at: float
) -> None:
    # the node read its clock somewhere inside the round trip
    node_time = sent + at * trip + skew
    offset = read_offset(f"{node_time:.9f}\n", sent, sent + trip)
    assert abs(offset.offset_s - skew) <= offset.uncertainty_s + 1e-3
    status, detail = judge_offset(offset)
    assert status == ("warn" if abs(offset.offset_s) - offset.uncertainty_s > CLOCK_SKEW_WARN_S else "ok")
    assert detail.startswith(f"offset {offset.offset_s:+.3f} s")


@pytest.mark.reliability_row(30)
def test_case_30_preflight_shows_each_nodes_clock_and_warns_without_blocking() -> None:
    stamp = float(RECORDED)
    synced = read_offset(RECORDED, stamp - 0.01, stamp + 0.01)
    assert judge_offset(synced)[0] == "ok" and abs(synced.offset_s) < 1e-6
    # the recorded stamp is hours or more away from now: a skewed node, as preflight sees it
    report = preflight({n: lab_node(n) for n in ("a1", "a2", "a3", "b1")})
    clock = finding(report, "a1", "clock")
    assert clock.status == "warn" and "more than 1 s" in clock.detail
    assert clock not in report.blockers
    with pytest.raises(ValueError, match="not a time stamp"):
        read_offset("date: invalid option\n", 0.0, 1.0)


def _session(tmp_path: Path, pool: FakePool) -> HarnessSession:
    hs = HarnessSession(
        tmp_path / "lab.yaml", MINI_INV, PROFILES["quick"], RunDir(tmp_path / "reports" / "r30"), is_controller=True
    )
    hs._pool = pool.as_pool()
    return hs


def _clock_node(name: str, stamp: str) -> FakeRunner:
    return FakeRunner(name, argv={tuple(CLOCK_PROBE): [Answer(stamp)]})


@pytest.mark.reliability_row(30)
def test_case_30_offsets_are_read_again_at_the_end_and_both_kept_in_run_json(tmp_path: Path) -> None:
    # a1 answers with this machine's own clock, read for real (in sync); a2 with the recorded
    # stamp, hours away from now (skewed); at the end a2 cannot be reached any more
    pool = FakePool({"a1": LocalRunner("a1"), "a2": _clock_node("a2", RECORDED)})  # type: ignore[dict-item]
    hs = _session(tmp_path, pool)
    hs._clocks_at_start = hs.read_clocks()
    pool.nodes["a2"] = ConnectionLost("a2", "reset by peer")
    info = hs.record(exitstatus=0)
    path = hs.run.ensure().write_run_info(info)
    kept = RunInfo.read(path)
    assert kept is not None
    clocks = kept.clock_offsets
    assert set(clocks) == {"start", "end"} and set(clocks["start"]) == set(clocks["end"]) == {"a1", "a2"}
    for phase in ("start", "end"):
        a1 = clocks[phase]["a1"]
        assert abs(a1["offset_s"]) <= a1["uncertainty_s"] + 0.05
    assert abs(clocks["start"]["a2"]["offset_s"] - (float(RECORDED) - time.time())) < 60
    assert clocks["end"]["a2"] == {"error": "a2: SSH connection lost or refused: reset by peer"}
    # the report's header (comparison.md and report.html) names a2, both times, and not a1
    items = dict(header_items(build_comparison([]), kept))
    skew = items[f"clock skew > {CLOCK_SKEW_WARN_S:g} s"]
    assert skew.startswith("a2 -") and "at the start" in skew and "unread at the end" in skew
    assert "a1" not in skew
    assert "clock skew" in render_markdown(build_comparison([]), kept)


@pytest.mark.reliability_row(30)
def test_case_30_a_synced_run_shows_no_clock_line_and_an_old_run_json_still_reads(tmp_path: Path) -> None:
    pool = FakePool({"a1": LocalRunner("a1"), "a2": LocalRunner("a2")})  # type: ignore[dict-item]
    hs = _session(tmp_path, pool)
    hs._clocks_at_start = hs.read_clocks()
    info = hs.record(exitstatus=0)
    assert set(info.clock_offsets["end"]) == {"a1", "a2"}
    assert not any(k.startswith("clock skew") for k, _ in header_items(build_comparison([]), info))
    # a run.json written before this key existed reads as "no readings", not as an error
    old = RunInfo.from_json('{"run_id": "r0", "exitstatus": 0}')
    assert old.clock_offsets == {} and skew_notes(old.clock_offsets) == []
    with pytest.raises(ConfigError, match="clock_offsets"):
        RunInfo.from_json('{"run_id": "r0", "clock_offsets": [1]}')


_OFFSET = st.floats(-1e5, 1e5, allow_nan=False)
_READING = st.one_of(st.builds(ClockOffset, _OFFSET, st.floats(0, 3)), st.text(min_size=1, max_size=20))
_NODES = st.dictionaries(st.sampled_from(["a1", "a2", "a3", "b1"]), _READING)


@pytest.mark.reliability_row(30)
@given(start=_NODES, end=_NODES)
def test_case_30_the_header_names_exactly_the_nodes_surely_off_or_unread(
    start: dict[str, NodeClock], end: dict[str, NodeClock]
) -> None:
    record = RunInfo.from_json(RunInfo("r", clock_offsets=offsets_record(start, end)).to_json()).clock_offsets
    named = {note.split()[0] for note in skew_notes(record)}

    def flagged(reading: NodeClock) -> bool:
        return isinstance(reading, str) or judge_offset(reading)[0] == "warn"

    # the record keeps offsets to the microsecond: a reading on the threshold may go either way
    def on_edge(reading: NodeClock) -> bool:
        return (
            isinstance(reading, ClockOffset)
            and abs(abs(reading.offset_s) - reading.uncertainty_s - CLOCK_SKEW_WARN_S) < 1e-5
        )

    expected = {n for phase in (start, end) for n, r in phase.items() if flagged(r)}
    edge = {n for phase in (start, end) for n, r in phase.items() if on_edge(r)}
    assert named - edge == expected - edge
