"""events2 parsing, formatting (harness.drbd.events) and the fold into ResourceState (harness.drbd.fold)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.errors import DrbdOutputError
from harness.drbd.events import Diff, Event, Value, format_event, parse_event_line, parse_events
from harness.drbd.fold import EventFold, fold_events, resource_from_events2

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
EVENTS2_FILES = sorted(p.name for p in DATA.glob("*events2*.txt"))
PRIMARY_STREAM = "84-events2-stream-primary-disconnect-resync.txt"
SECONDARY_STREAM = "84-events2-stream-secondary-disconnect-resync.txt"


def read(name: str) -> str:
    return (DATA / name).read_text()


def events(name: str) -> list[Event]:
    return parse_events(read(name))


# -- parsing the recorded and published outputs ------------------------------------------------
@pytest.mark.parametrize("name", EVENTS2_FILES)
def test_every_sample_line_prints_back_exactly(name: str) -> None:
    lines = [line for line in read(name).splitlines() if line.strip()]
    parsed = events(name)
    assert len(parsed) == len(lines)
    assert [format_event(e) for e in parsed] == lines


def test_snapshot_fields_are_typed() -> None:
    evs = events("84-events2-now-primary-standalone-outofsync.txt")
    assert [(e.action, e.kind) for e in evs] == [
        ("exists", "resource"),
        ("exists", "connection"),
        ("exists", "device"),
        ("exists", "peer-device"),
        ("exists", "-"),
    ]
    peer = evs[3]
    assert peer.resource == "single-az"
    assert peer.get("out-of-sync") == 307200
    assert peer.number("peer-node-id") == 0
    assert peer.get("replication") == "Off"
    assert peer.text("conn-name") is None  # 8.4 prints no conn-name on StandAlone lines
    assert evs[2].get("written") == 307200
    assert evs[4].ends_initial_dump
    assert evs[4].fields == ()


def test_timestamps_keep_microseconds_and_offset() -> None:
    first = events(PRIMARY_STREAM)[0]
    assert first.timestamp == datetime(2026, 11, 21, 9, 48, 0, 673806, tzinfo=UTC)
    assert first.when == "2026-11-21T09:48:00.673806+00:00"
    assert events("84-events2-now-primary-connected.txt")[1].when == "line 2"


def test_helper_lines() -> None:
    call, response = (e for e in events(PRIMARY_STREAM) if e.kind == "helper")
    assert (call.action, call.text("helper"), call.number("minor")) == ("call", "before-resync-source", 0)
    assert (response.action, response.number("status")) == ("response", 0)


def test_v9_statistics_and_floats() -> None:
    last = events("9-events2-sync-statistics.txt")[-1]
    assert last.get("done") == 37.5
    assert last.get("dbdt1") == 0.24
    assert last.get("eta") == 10
    assert last.get("out-of-sync") == 2500
    path = next(e for e in events("9-events2-sync-statistics.txt") if e.kind == "path")
    # Addresses split at the first colon only and stay text.
    assert path.get("local") == "ipv4:1.2.3.4:7789"
    assert path.get("peer") == "ipv4:5.6.7.8:7790"


def test_diff_values() -> None:
    change = events("9-events2-diff-constructed.txt")[5]
    assert change.raw("connection") == Diff("Connected", "NetworkFailure")
    assert change.get("connection") == "NetworkFailure"
    assert change.old("connection") == "Connected"
    assert change.old("conn-name") is None
    suspended = events("9-events2-diff-constructed.txt")[7]
    assert (suspended.old("suspended"), suspended.get("suspended")) == ("no", "user")


def test_ansi_colours_are_stripped() -> None:
    # a line of the `--color` output of drbdsetup (drbd9/SOURCES.md), as cat -v shows it with ^[.
    line = "create device name:some-resource volume:0 minor:1000 disk:\x1b[1;31mDiskless\x1b[0m client:no quorum:yes"
    event = parse_event_line(line)
    assert event is not None
    assert event.get("disk") == "Diskless"


def test_numeric_looking_identifiers_stay_text() -> None:
    event = parse_event_line("exists connection name:007 peer-node-id:1 conn-name:10 connection:Connected")
    assert event is not None
    assert event.get("name") == "007"
    assert event.get("conn-name") == "10"
    assert event.get("peer-node-id") == 1


@pytest.mark.parametrize(
    "line",
    [
        "modprobe: FATAL: Module drbd not found in directory /lib/modules/6.1.0",
        "Failed to modprobe drbd",
        "exists",
        "change connection name:r0 connection",
        "change connection name:r0 Connection:Connected",
        "2026-13-45T99:99:99.000000+00:00 exists -",
    ],
)
def test_malformed_lines_raise(line: str) -> None:
    with pytest.raises(DrbdOutputError):
        parse_event_line(line, lineno=7)


def test_blank_line_is_none() -> None:
    assert parse_event_line("   \n") is None


def test_half_written_last_line_is_dropped_but_garbage_inside_raises() -> None:
    text = read(PRIMARY_STREAM)
    cut = text[: text.index("change connection")] + "2026-11-21T09:48:02.743260+00:00 change conn"
    assert len(parse_events(cut)) == 5
    with pytest.raises(DrbdOutputError, match="line 2"):
        parse_events("exists -\ngarbage here\nexists -\n")


# -- the fold ----------------------------------------------------------------------------------
def test_fold_of_primary_stream_ends_in_syncsource() -> None:
    state = resource_from_events2(read(PRIMARY_STREAM), "single-az")
    assert state is not None
    assert state.connection_state == "Connected"
    assert state.replication_state == "SyncSource"
    assert state.peer_disk_state == "Inconsistent"
    assert state.peer_role == "Secondary"
    assert state.out_of_sync_kib == 307200
    assert not state.healthy


def test_fold_follows_destroy_and_create_of_the_connection() -> None:
    evs = events(PRIMARY_STREAM)
    fold = EventFold()
    for event in evs:
        fold.apply(event)
        if event.action == "destroy" and event.kind == "connection":
            break
    state = fold.resource("single-az")
    assert state is not None
    assert state.connections == ()
    assert state.peer_devices == ()
    assert state.connection_state == "StandAlone"
    assert state.describe() == "StandAlone UpToDate/DUnknown Primary/Unknown"
    assert fold.initial_dump_complete


def test_fold_merges_standalone_lines_without_conn_name() -> None:
    # a2: the StandAlone-era lines lack conn-name; they must update the same connection.
    state = fold_events(events(SECONDARY_STREAM))["single-az"]
    assert len(state.connections) == 1
    assert state.connections[0].conn_name == "peer"
    assert state.disk_state == "Inconsistent"
    assert state.replication_state == "SyncTarget"
    assert state.devices[0].blocked == "no"


def test_fold_keeps_statistics_that_a_change_did_not_repeat() -> None:
    state = fold_events(events("9-events2-create-change-statistics.txt"))["some-resource"]
    assert state.role == "Primary"
    assert state.peer_devices[0].out_of_sync_kib == 25  # from the create line
    assert state.connections[0].ap_in_flight_sectors == 10
    assert state.devices[0].quorum is True


def test_fold_of_v9_sync_with_promotion_fields() -> None:
    state = fold_events(events("9-events2-sync-statistics.txt"))["some-resource"]
    assert state.may_promote is True
    assert state.promotion_score == 10101
    assert state.devices[0].backing_dev == "/dev/sda"
    assert state.peer_devices[0].done_percent == 37.5


def test_fold_of_empty_node() -> None:
    fold = EventFold().apply_all(events("9-events2-no-resources.txt"))
    assert fold.initial_dump_complete
    assert fold.resources() == {}
    assert resource_from_events2(read("9-events2-no-resources.txt"), "r0") is None


def test_rename_and_destroy_resource() -> None:
    base = events("84-events2-now-primary-connected.txt")
    renamed = parse_event_line("rename resource name:single-az new_name:renamed")
    destroyed = parse_event_line("destroy resource name:renamed")
    assert renamed is not None and destroyed is not None
    fold = EventFold().apply_all([*base, renamed])
    assert fold.names == ("renamed",)
    fold.apply(destroyed)
    assert fold.resources() == {}


# -- round trip with generated values ----------------------------------------------------------
# Identifier/address keys stay text whatever they hold, so they are generated separately.
_key = st.from_regex(r"\A[a-z][a-z0-9-]{0,14}\Z").filter(
    lambda k: k not in {"name", "conn-name", "helper", "local", "peer"}
)
_word = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_./,+]{0,15}\Z").filter(lambda w: "->" not in w)
_scalar = st.one_of(
    st.integers(min_value=0, max_value=2**63),
    st.integers(min_value=0, max_value=10**9).map(lambda n: n / 100),
    _word,
)


def _value(draw: st.DrawFn) -> Value:
    if draw(st.booleans()):
        return draw(_scalar)
    return Diff(draw(_scalar), draw(_scalar))


@st.composite
def generated_events(draw: st.DrawFn) -> Event:
    kind = draw(st.sampled_from(["resource", "connection", "device", "peer-device", "path", "helper"]))
    action = draw(st.sampled_from(["exists", "create", "change", "destroy", "call", "response"]))
    name = draw(st.from_regex(r"\A[A-Za-z0-9_.+-]{1,64}\Z"))
    keys = draw(st.lists(_key, unique=True, max_size=8))
    fields: list[tuple[str, Value]] = [("name", name)]
    fields += [(k, _value(draw)) for k in keys]
    timestamp = None
    if draw(st.booleans()):
        offset = timezone(timedelta(minutes=draw(st.integers(-12 * 60, 14 * 60))))
        timestamp = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1))).replace(
            tzinfo=offset
        )
    return Event(action, kind, tuple(fields), timestamp)


@given(generated_events())
def test_format_then_parse_is_identity(event: Event) -> None:
    line = format_event(event)
    parsed = parse_event_line(line)
    assert parsed == event
    assert parsed is not None and format_event(parsed) == line


@given(st.lists(generated_events(), max_size=20))
def test_parse_events_of_formatted_stream(evs: list[Event]) -> None:
    text = "".join(format_event(e) + "\n" for e in evs)
    assert parse_events(text) == evs
