"""Run validity from an events2 capture (harness.drbd.validity)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.events import Diff, Event, Value, format_event, parse_events
from harness.drbd.validity import RunWatch, check_capture, check_events

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
PRIMARY_STREAM = "84-events2-stream-primary-disconnect-resync.txt"
SECONDARY_STREAM = "84-events2-stream-secondary-disconnect-resync.txt"


def read(name: str) -> str:
    return (DATA / name).read_text()


def with_fields(event: Event, changes: Mapping[str, Value], action: str = "change") -> Event:
    """A recorded event turned into a change with some of its values replaced."""
    assert set(changes) <= {k for k, _ in event.fields}
    fields = tuple((k, changes.get(k, v)) for k, v in event.fields)
    return Event(action, event.kind, fields, event.timestamp)


def healthy_dump() -> list[Event]:
    """The recorded initial dump of the primary stream (healthy, with timestamps)."""
    evs = parse_events(read(PRIMARY_STREAM))
    end = next(i for i, e in enumerate(evs) if e.ends_initial_dump)
    return evs[: end + 1]


# -- the recorded streams ----------------------------------------------------------------------
def test_disconnect_resync_stream_of_the_primary_is_inconclusive() -> None:
    verdict = check_capture(read(PRIMARY_STREAM), resource="single-az")
    assert not verdict.valid
    assert verdict.status == "inconclusive"
    assert verdict.reason == (
        "single-az: connection to peer left Connected: Connected -> Disconnecting at 2026-11-21T09:48:02.743260+00:00"
    )
    assert verdict.at == datetime(2026, 11, 21, 9, 48, 2, 743260, tzinfo=UTC)
    assert verdict.event is not None and verdict.event.lineno == 6


def test_disconnect_resync_stream_of_the_secondary_is_inconclusive() -> None:
    verdict = check_capture(read(SECONDARY_STREAM), resource="single-az")
    assert not verdict.valid
    assert "Connected -> TearDown" in verdict.reason
    assert "2026-11-21T09:48:02.740644+00:00" in verdict.reason


@pytest.mark.parametrize(
    ("name", "resource"),
    [
        ("84-events2-now-primary-connected.txt", "single-az"),
        ("84-events2-now-secondary-connected.txt", "single-az"),
        ("84-events2-now-all-a1.txt", "single-az"),
        ("9-events2-now-statistics-ug9.txt", "r0"),
    ],
)
def test_only_exists_lines_of_a_healthy_resource_are_valid(name: str, resource: str) -> None:
    verdict = check_capture(read(name), resource=resource)
    assert verdict.valid, verdict.reason
    assert verdict.status == "valid"
    assert verdict.at is None
    assert resource in verdict.reason


def test_initial_dump_of_the_stream_alone_is_valid() -> None:
    verdict = check_events(healthy_dump(), resource="single-az")
    assert verdict.valid
    assert "2026-11-21T09:48:00+00:00 to 2026-11-21T09:48:00+00:00" in verdict.reason


@pytest.mark.parametrize(
    ("name", "resource", "expected"),
    [
        ("84-events2-now-primary-standalone.txt", "single-az", "connection to node 0 was StandAlone when the watch"),
        ("84-events2-now-primary-peer-gone-connecting.txt", "multi-az", "connection to peer was Connecting"),
        ("84-events2-now-primary-syncsource.txt", "single-az", "replication to peer volume 0 was SyncSource"),
        ("84-events2-now-secondary-synctarget.txt", "single-az", "local disk of volume 0 was Inconsistent"),
    ],
)
def test_unhealthy_start_is_inconclusive(name: str, resource: str, expected: str) -> None:
    verdict = check_capture(read(name), resource=resource)
    assert not verdict.valid
    assert expected in verdict.reason


def test_forbidden_connection_state_is_named() -> None:
    verdict = check_capture(read("9-events2-diff-constructed.txt"), resource="r0")
    assert (
        verdict.reason
        == "r0: connection to remote-host failed (forbidden state): Connected -> NetworkFailure at line 6"
    )


def test_incomplete_or_empty_captures_are_inconclusive() -> None:
    assert "captured nothing" in check_capture("").reason
    dump_without_end = "".join(format_event(e) + "\n" for e in healthy_dump()[:-1])
    assert "never completed" in check_capture(dump_without_end).reason
    assert "does not mention resource multi-az" in check_capture(read(PRIMARY_STREAM), resource="multi-az").reason
    assert "does not mention" in check_capture(read("9-events2-no-resources.txt"), resource="r0").reason


def test_unparseable_line_is_inconclusive_but_a_cut_last_line_is_not() -> None:
    dump = "".join(format_event(e) + "\n" for e in healthy_dump())
    assert check_capture(dump + "2026-11-21T09:48:03.000000+00:00 change peer-dev", resource="single-az").valid
    verdict = check_capture(dump + "drbdsetup: connection lost\n", resource="single-az")
    assert not verdict.valid
    assert "cannot read the event stream" in verdict.reason


def test_statistics_changes_keep_the_window_valid() -> None:
    dump = healthy_dump()
    device, peer = dump[2], dump[3]
    later = dump[0].timestamp
    assert later is not None
    more = [
        with_fields(device, {"written": 4096, "al-writes": 9}),
        with_fields(peer, {"sent": 4096, "pending": 3}),
        with_fields(device, {"written": 8192, "blocked": "lower"}),  # back-pressure is not a finding
    ]
    assert check_events([*dump, *more], resource="single-az").valid


@pytest.mark.parametrize(
    ("index", "changes", "expected"),
    [
        (0, {"suspended": "user"}, "I/O suspended: no -> user"),
        (1, {"connection": "BrokenPipe"}, "connection to peer failed (forbidden state): Connected -> BrokenPipe"),
        (1, {"connection": "Timeout"}, "failed (forbidden state)"),
        (1, {"connection": "ProtocolError"}, "failed (forbidden state)"),
        (2, {"disk": "Failed"}, "local disk of volume 0 failed (I/O error): UpToDate -> Failed"),
        (2, {"disk": "Outdated"}, "local disk of volume 0 left UpToDate: UpToDate -> Outdated"),
        (3, {"replication": "PausedSyncS"}, "replication to peer volume 0 entered resync: Established -> PausedSyncS"),
        (3, {"replication": "VerifyS"}, "entered online verify"),
        (3, {"replication": "Ahead"}, "fell behind (congestion, pull-ahead)"),
        (3, {"peer-disk": "Outdated"}, "peer disk of peer volume 0 left UpToDate: UpToDate -> Outdated"),
        (3, {"out-of-sync": 4}, "out-of-sync with peer volume 0 grew from 0 to 4 KiB"),
    ],
)
def test_each_rule(index: int, changes: dict[str, Value], expected: str) -> None:
    dump = healthy_dump()
    bad = with_fields(dump[index], changes)
    verdict = check_events([*dump, bad], resource="single-az")
    assert not verdict.valid
    assert expected in verdict.reason
    assert verdict.event == bad


def test_diff_old_value_is_used_when_present() -> None:
    dump = healthy_dump()
    bad = with_fields(dump[1], {"connection": Diff("Connected", "NetworkFailure")})
    assert "Connected -> NetworkFailure" in check_events([*dump, bad]).reason


def test_first_bad_event_wins_even_if_the_resource_recovers() -> None:
    dump = healthy_dump()
    down = with_fields(dump[1], {"connection": "NetworkFailure"})
    up = with_fields(dump[1], {"connection": "Connected"})
    watch = RunWatch("single-az")
    for event in [*dump, down, up]:
        watch.feed(event)
    assert "NetworkFailure" in watch.verdict().reason
    assert len(watch.events) == len(dump) + 2


def test_other_resources_are_ignored_when_one_is_watched() -> None:
    dump = healthy_dump()
    other = Event("change", "connection", (("name", "multi-az"), ("connection", "StandAlone")), dump[0].timestamp)
    assert check_events([*dump, other], resource="single-az").valid
    assert not check_events([*dump, other]).valid


def test_helper_call_and_destroy_are_findings() -> None:
    evs = parse_events(read(PRIMARY_STREAM))
    helper = next(e for e in evs if e.kind == "helper")
    assert "DRBD called the before-resync-source handler" in check_events([*healthy_dump(), helper]).reason
    destroy = next(e for e in evs if e.action == "destroy" and e.kind == "connection")
    assert "destroyed the connection to peer" in check_events([*healthy_dump(), destroy]).reason


# -- properties --------------------------------------------------------------------------------
_BENIGN_KEYS = {2: ("written", "read", "al-writes"), 3: ("received", "sent", "pending", "unacked")}
_FORBIDDEN: list[tuple[int, str, Value]] = [
    (0, "suspended", "user"),
    (0, "suspended", "fencing"),
    (0, "suspended", "no-data"),
    *((1, "connection", s) for s in ("Timeout", "ProtocolError", "NetworkFailure", "BrokenPipe", "StandAlone")),
    *((1, "connection", s) for s in ("Connecting", "Disconnecting", "TearDown", "Unconnected")),
    *((2, "disk", s) for s in ("Failed", "Outdated", "Inconsistent", "Diskless", "DUnknown")),
    *((3, "peer-disk", s) for s in ("Failed", "Outdated", "Inconsistent", "DUnknown")),
    *(
        (3, "replication", s)
        for s in ("SyncSource", "SyncTarget", "PausedSyncS", "PausedSyncT", "VerifyS", "VerifyT", "Ahead", "Behind")
    ),
    *((3, "replication", s) for s in ("WFBitMapS", "WFBitMapT", "WFSyncUUID", "StartingSyncS", "Off")),
    (3, "out-of-sync", 8),
    (3, "out-of-sync", 2**40),
]


@st.composite
def benign_changes(draw: st.DrawFn) -> list[Event]:
    dump = healthy_dump()
    out: list[Event] = []
    t = dump[-1].timestamp
    assert t is not None
    for _ in range(draw(st.integers(0, 15))):
        index = draw(st.sampled_from(sorted(_BENIGN_KEYS)))
        key = draw(st.sampled_from(_BENIGN_KEYS[index]))
        t = t + timedelta(microseconds=draw(st.integers(1, 10**6)))
        event = with_fields(dump[index], {key: draw(st.integers(0, 2**40))})
        out.append(Event(event.action, event.kind, event.fields, t))
    return out


@given(benign_changes())
def test_healthy_streams_with_statistics_changes_are_valid(changes: list[Event]) -> None:
    assert check_events([*healthy_dump(), *changes], resource="single-az").valid


@given(benign_changes(), st.sampled_from(_FORBIDDEN), st.data(), st.booleans())
def test_a_stream_with_a_forbidden_transition_is_never_valid(
    changes: list[Event], forbidden: tuple[int, str, Value], data: st.DataObject, as_diff: bool
) -> None:
    dump = healthy_dump()
    index, key, value = forbidden
    old = dump[index].get(key)
    assert old is not None and not isinstance(value, Diff)
    bad = with_fields(dump[index], {key: Diff(old, value) if as_diff else value})
    position = data.draw(st.integers(0, len(changes)))
    stream = [*dump, *changes[:position], bad, *changes[position:]]
    verdict = check_events(stream, resource="single-az")
    assert not verdict.valid
    assert verdict.event == bad
    # The same holds for the text capture of the stream.
    text = "".join(format_event(e) + "\n" for e in stream)
    assert not check_capture(text, resource="single-az").valid


def test_a_diskless_tie_breaker_is_known_by_its_configuration() -> None:
    # DRBD 9.2.18 prints a diskless tie-breaker on its diskful peers as `peer-disk:Diskless
    # peer-client:no` (recorded on a1, tests/data/drbd/drbd-9.2.18): only the configuration
    # (a3's `disk none`) says its Diskless is intended
    text = (DATA / "drbd-9.2.18" / "a1.r3.events2-now-statistics.8-diskless-tiebreaker.txt").read_text()
    assert "conn-name:a3 volume:0 replication:Established peer-disk:Diskless peer-client:no" in text
    assert check_capture(text, resource="r3", diskless={"a3"}).valid
    lost = check_capture(text, resource="r3", diskless=set())
    assert lost.reason == "r3: peer disk of a3 volume 0 was Diskless when the watch started at line 5"
    # where DRBD does print peer-client:yes (the diskful node keeps no bitmap for the peer),
    # that alone says so
    told = text.replace("peer-disk:Diskless peer-client:no", "peer-disk:Diskless peer-client:yes")
    assert check_capture(told, resource="r3", diskless=set()).valid
    # the lab's 8.4 peer that lost its disk stays a finding
    dump = healthy_dump()
    lost_84 = with_fields(dump[3], {"peer-disk": "Diskless"})
    assert not check_events([*dump, lost_84], resource="single-az").valid
