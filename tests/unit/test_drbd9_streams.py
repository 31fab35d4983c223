"""Recorded DRBD 9.2.18 event streams (tests/data/drbd/drbd-9.2.18, README.md there): the
``- skipped N`` lines drbdsetup prints when the kernel's notifications reach it out of sequence,
split brain as 9.2 names it (the handler calls, nothing else in events2), and a window verdict
that names every disturbance, not only the first."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.events import format_event, parse_event_line, parse_events
from harness.drbd.fold import EventFold
from harness.drbd.validity import RunWatch, check_capture
from harness.drbd.watch import EventWatch
from tests.unit.drbd9_recorded import read

R_SA_UP = "a1.r-sa.events2-stream.1-up-connect-initial-resync.txt"
R_SA_SCENARIO = "a1.r-sa.events2-stream.2-verify-promote-demote-disconnect-netem-cut-heal.txt"
SPLIT_A3 = "a3.r-ma.events2-stream.2-split-brain-and-resolution.txt"
SPLIT_B1 = "b1.r-ma.events2-stream.2-split-brain-and-resolution.txt"


def line_of(name: str, needle: str) -> str:
    return next(line for line in read(name).splitlines() if needle in line)


# -- `- skipped N` ---------------------------------------------------------------------------------
def test_a_skipped_line_is_an_event() -> None:
    line = line_of(R_SA_UP, "skipped")
    assert line == "2026-12-01T20:59:23.838530+00:00 - skipped 14"
    event = parse_event_line(line, lineno=11)
    assert event is not None and event.skipped == 14 and event.resource is None
    assert event.timestamp == datetime(2026, 12, 1, 20, 59, 23, 838530, tzinfo=UTC)
    assert format_event(event) == line
    assert not event.ends_initial_dump


@given(st.integers(min_value=0, max_value=2**32), st.booleans())
def test_skipped_lines_round_trip(count: int, stamped: bool) -> None:
    line = ("2026-12-01T20:59:23.838530+00:00 " if stamped else "") + f"- skipped {count}"
    event = parse_event_line(line)
    assert event is not None and event.skipped == count and format_event(event) == line


def test_the_fold_counts_what_drbd_dropped() -> None:
    fold = EventFold().apply_all(parse_events(read("a1.r3.events2-stream.1-up-connect-initial-resync.txt")))
    assert fold.skipped == 4 + 18
    assert EventFold().apply_all(parse_events(read(R_SA_SCENARIO))).skipped == 0


def test_a_window_with_a_skipped_line_cannot_be_proved_stable() -> None:
    healthy = read("a1.r-sa.events2-now-statistics.3-uptodate.txt")
    assert check_capture(healthy, resource="r-sa").valid
    verdict = check_capture(healthy + line_of(R_SA_UP, "skipped") + "\n", resource="r-sa")
    assert verdict.reason == (
        "DRBD dropped 14 events, so this window cannot be proved stable (at 2026-12-01T20:59:23.838530+00:00)"
    )
    assert verdict.event is not None and verdict.event.skipped == 14


def test_the_live_watcher_reads_a_stream_with_holes() -> None:
    watch = RunWatch("r-sa")
    for line in read(R_SA_UP).splitlines():
        watch.feed_line(line)
    verdict = watch.verdict()
    assert "cannot read the event stream" not in str(verdict)
    assert {"DRBD dropped 14 events", "DRBD dropped 9 events"} <= set(verdict.disturbances)
    plan = EventWatch.plan("a1", "r-sa", "run-1", "w", max_duration_s=60)
    judged = plan.judge("harness-watch alive=1\n" + read(R_SA_UP))
    assert "DRBD dropped 14 events" in judged.reason and "cannot read" not in judged.reason


# -- split brain ------------------------------------------------------------------------------
def until(name: str, needle: str, nth: int = 1) -> str:
    """The stream up to and including the ``nth`` line containing ``needle``."""
    out, seen = [], 0
    for line in read(name).splitlines(keepends=True):
        out.append(line)
        seen += needle in line
        if seen == nth:
            break
    return "".join(out)


def test_the_fold_names_split_brain_from_the_handler_call() -> None:
    for name, peer in ((SPLIT_A3, "b1"), (SPLIT_B1, "a3")):
        # after the handler, DRBD drops the connection: StandAlone, as after a disconnect
        split = EventFold().apply_all(parse_events(until(name, "connection:StandAlone", 2))).resource("r-ma")
        assert split is not None and split.split_brain
        assert f"split brain with {peer}" in split.problems()
        assert split.connection_state == "StandAlone" and split.describe().endswith("SplitBrain")
        # a plain disconnect before it is no split brain
        apart = EventFold().apply_all(parse_events(until(name, "connection:StandAlone", 1))).resource("r-ma")
        assert apart is not None and not apart.split_brain
        # resolved (the peer's changes discarded, resync done): Connected again, no split brain
        healed = EventFold().apply_all(parse_events(read(name))).resource("r-ma")
        assert healed is not None and not healed.split_brain and healed.healthy


def test_a_window_names_the_split_brain() -> None:
    dump = "".join(read(SPLIT_A3).splitlines(keepends=True)[:6])
    # the two handler calls at the first reconnect: initial-split-brain, then split-brain
    calls = [line for line in until(SPLIT_A3, "helper:split-brain").splitlines(keepends=True) if "call helper" in line]
    helpers = [line for line in calls if "split-brain" in line]
    assert [h.split("helper:")[-1].strip() for h in helpers] == ["initial-split-brain", "split-brain"]
    verdict = check_capture(dump + "".join(helpers), resource="r-ma", peers={"b1"})
    assert verdict.reason == (
        "r-ma: split brain detected with b1: DRBD called the initial-split-brain handler at "
        "2026-12-01T21:46:39.766416+00:00"
    )
    assert verdict.disturbances == ("split brain with b1",)
    both = RunWatch("r-ma")
    both.feed_text(dump + helpers[1])
    assert both.verdict().reason.startswith("r-ma: split brain with b1, left unresolved: DRBD called the split-brain")
    whole = check_capture(read(SPLIT_A3), resource="r-ma")
    assert "split brain with b1" in whole.disturbances and "split brain with b1" in str(whole)


# -- every disturbance, not only the first ---------------------------------------------------------
def test_a_window_verdict_names_every_disturbance() -> None:
    verdict = check_capture(read(R_SA_SCENARIO), resource="r-sa", peers={"a2"})
    assert verdict.reason.startswith("r-sa: replication to a2 volume 0 entered online verify: Established -> VerifyS")
    found = verdict.disturbances
    assert found[0] == "online verify with a2"
    # the verify, then the disconnect, the resync after it, and the netem cut
    assert found.index("a2 Disconnecting") < found.index("resync with a2") < found.index("a2 NetworkFailure")
    assert len(found) == len(set(found))
    text = str(verdict)
    assert all(d in text for d in found)
    watch = EventWatch.plan("a1", "r-sa", "run-1", "w", max_duration_s=60)
    judged = watch.judge("harness-watch alive=1\n" + read(R_SA_SCENARIO))
    assert not judged.valid and judged.disturbances == found
    assert "online verify with a2; a2 Disconnecting" in judged.reason and "a2 NetworkFailure" in judged.reason


def test_a_single_disturbance_reads_as_before() -> None:
    healthy = read("a1.r-sa.events2-now-statistics.3-uptodate.txt")
    cut = line_of(R_SA_SCENARIO, "connection:NetworkFailure") + "\n"  # the netem cut
    verdict = check_capture(healthy + cut, resource="r-sa")
    assert str(verdict) == (
        "inconclusive: r-sa: connection to a2 failed (forbidden state): Connected -> NetworkFailure "
        "at 2026-12-01T21:41:25.934066+00:00"
    )
