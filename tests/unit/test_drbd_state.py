"""ResourceState derived properties (harness.drbd.state), /proc/drbd (procfs) and status --json (status_json)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.errors import DrbdOutputError
from harness.drbd.fold import resource_from_events2
from harness.drbd.procfs import parse_proc_drbd
from harness.drbd.state import DrbdadmWords, ResourceState
from harness.drbd.status_json import parse_status_json

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"


def read(name: str) -> str:
    return (DATA / name).read_text()


def snapshot(name: str, resource: str = "single-az") -> ResourceState:
    state = resource_from_events2(read(name), resource)
    assert state is not None
    return state


# -- derived states from the recorded snapshots ------------------------------------------------
@pytest.mark.parametrize(
    ("name", "resource", "described", "healthy"),
    [
        ("84-events2-now-primary-connected.txt", "single-az", "Connected UpToDate/UpToDate Primary/Secondary", True),
        ("84-events2-now-secondary-connected.txt", "single-az", "Connected UpToDate/UpToDate Secondary/Primary", True),
        ("84-events2-now-primary-standalone.txt", "single-az", "StandAlone UpToDate/DUnknown Primary/Unknown", False),
        (
            "84-events2-now-primary-standalone-outofsync.txt",
            "single-az",
            "StandAlone UpToDate/DUnknown Primary/Unknown out-of-sync:307200KiB",
            False,
        ),
        (
            "84-events2-now-secondary-standalone.txt",
            "multi-az",
            "StandAlone UpToDate/DUnknown Secondary/Unknown",
            False,
        ),
        (
            "84-events2-now-primary-peer-gone-connecting.txt",
            "multi-az",
            "Connecting UpToDate/DUnknown Primary/Unknown",
            False,
        ),
        (
            "84-events2-now-primary-syncsource.txt",
            "single-az",
            "SyncSource UpToDate/Inconsistent Primary/Secondary out-of-sync:306980KiB",
            False,
        ),
        (
            "84-events2-now-secondary-synctarget.txt",
            "single-az",
            "SyncTarget Inconsistent/UpToDate Secondary/Primary out-of-sync:306560KiB",
            False,
        ),
        (
            "84-events2-now-secondary-after-resync-progress.txt",
            "single-az",
            "SyncTarget Inconsistent/UpToDate Secondary/Primary out-of-sync:84216KiB",
            False,
        ),
        ("9-events2-now-statistics-ug9.txt", "r0", "Connected UpToDate/UpToDate Secondary/Secondary", True),
    ],
)
def test_describe_and_health(name: str, resource: str, described: str, healthy: bool) -> None:
    state = snapshot(name, resource)
    assert state.describe() == described
    assert state.healthy is healthy
    assert bool(state.problems()) is not healthy


def test_drbdadm_words_match_the_recorded_one_liners() -> None:
    # 84-drbdadm-oneliners.txt lines 3-5 were recorded on a1 during the same SyncSource phase.
    cstate, dstate, role = read("84-drbdadm-oneliners.txt").splitlines()[2:5]
    words = snapshot("84-events2-now-primary-syncsource.txt").drbdadm_words
    assert words == DrbdadmWords(connection=cstate, disk=dstate, role=role)
    assert words == DrbdadmWords("SyncSource", "UpToDate/Inconsistent", "Primary/Secondary")


def test_drbdadm_words_use_84_names() -> None:
    gone = snapshot("84-events2-now-primary-peer-gone-connecting.txt", "multi-az")
    assert gone.drbdadm_words.connection == "WFConnection"
    assert gone.connection_state == "Connecting"
    healthy = snapshot("84-events2-now-primary-connected.txt").drbdadm_words
    assert healthy == DrbdadmWords("Connected", "UpToDate/UpToDate", "Primary/Secondary")


def test_individual_properties() -> None:
    state = snapshot("84-events2-now-secondary-synctarget.txt")
    assert state.role == "Secondary"
    assert state.peer_role == "Primary"
    assert state.connection_state == "Connected"
    assert state.disk_state == "Inconsistent"
    assert state.peer_disk_state == "UpToDate"
    assert state.replication_state == "SyncTarget"
    assert state.out_of_sync_kib == 306560
    assert state.problems() == (
        "local disk of volume 0 is Inconsistent",
        "replication to peer volume 0 is SyncTarget",
    )


def test_standalone_names_the_peer_by_node_id() -> None:
    state = snapshot("84-events2-now-primary-standalone.txt")
    assert state.problems()[:2] == ("connection to node 0 is StandAlone", "replication to node 0 volume 0 is Off")


def test_suspended_and_blocked_are_unhealthy() -> None:
    base = snapshot("84-events2-now-primary-connected.txt")
    suspended = replace(base, suspended="user")
    assert suspended.is_suspended and not suspended.healthy
    assert suspended.describe() == "Connected UpToDate/UpToDate Primary/Secondary suspended:user"
    blocked = replace(base, devices=(replace(base.devices[0], blocked="upper"),))
    assert not blocked.healthy
    assert "I/O blocked (upper) on volume 0" in blocked.problems()


def test_empty_resource_defaults() -> None:
    empty = ResourceState(name="r0", role="Secondary")
    assert empty.connection_state == "StandAlone"
    assert empty.disk_state == "Diskless"
    assert empty.peer_disk_state == "DUnknown"
    assert empty.replication_state == "Off"
    assert empty.peer_role == "Unknown"
    assert empty.out_of_sync_kib == 0
    assert not empty.healthy


def test_multi_volume_resource_is_healthy_only_if_every_volume_is() -> None:
    state = snapshot("9-events2-now-statistics-ug9.txt", "r0")
    assert len(state.devices) == 2
    assert len(state.peer_devices) == 2
    worse = replace(state, peer_devices=(state.peer_devices[0], replace(state.peer_devices[1], replication="VerifyS")))
    assert worse.replication_state == "VerifyS"
    assert worse.drbdadm_words.connection == "VerifyS"
    assert not worse.healthy


# -- /proc/drbd --------------------------------------------------------------------------------
def test_proc_drbd_connected() -> None:
    proc = parse_proc_drbd(read("84-proc-drbd-connected.txt"))
    assert (proc.version, proc.api, proc.proto, proc.major) == ("8.4.11", 1, "86-101", 8)
    (minor,) = proc.minors
    assert (minor.minor, minor.cs, minor.role, minor.peer_role) == (0, "Connected", "Primary", "Secondary")
    assert (minor.disk, minor.peer_disk, minor.protocol, minor.io_flags) == ("UpToDate", "UpToDate", "C", "r-----")
    assert minor.counters["al"] == 8
    assert minor.counters["wo"] == "f"
    assert minor.sync is None
    assert minor.to_resource_state("single-az").describe() == "Connected UpToDate/UpToDate Primary/Secondary"
    assert minor.to_resource_state("single-az").healthy


@pytest.mark.parametrize(
    ("proc_file", "events_file"),
    [
        ("84-proc-drbd-primary-syncsource.txt", "84-events2-now-primary-syncsource.txt"),
        ("84-proc-drbd-secondary-synctarget.txt", "84-events2-now-secondary-synctarget.txt"),
    ],
)
def test_proc_drbd_agrees_with_events2_recorded_at_the_same_moment(proc_file: str, events_file: str) -> None:
    from_proc = parse_proc_drbd(read(proc_file)).minors[0].to_resource_state("single-az")
    from_events = snapshot(events_file)
    assert from_proc.describe() == from_events.describe()
    assert from_proc.out_of_sync_kib == from_events.out_of_sync_kib


def test_proc_drbd_resync_lines() -> None:
    source = parse_proc_drbd(read("84-proc-drbd-primary-syncsource.txt")).minors[0].sync
    assert source is not None
    assert (source.kind, source.percent, source.left_kib, source.total_kib, source.unit) == (
        "sync'ed",
        2.7,
        306980,
        307200,
        "K",
    )
    assert (source.finish_s, source.speed_kib_s, source.average_kib_s, source.want_kib_s) == (767, 220, 220, None)
    target = parse_proc_drbd(read("84-proc-drbd-secondary-synctarget.txt")).minors[0].sync
    assert target is not None
    assert (target.finish_s, target.speed_kib_s, target.want_kib_s) == (383, 640, 960)


def test_proc_drbd_megabytes_and_thousands_separators() -> None:
    minor = parse_proc_drbd(read("84-proc-drbd-syncsource-large-constructed.txt")).minors[0]
    assert minor.sync is not None
    assert (minor.sync.unit, minor.sync.left_kib, minor.sync.total_kib) == ("M", 7876 * 1024, 10236 * 1024)
    assert (minor.sync.speed_kib_s, minor.sync.average_kib_s) == (42792, 37776)
    assert minor.out_of_sync_kib == 8065024


def test_proc_drbd_of_drbd9_has_no_minors() -> None:
    proc = parse_proc_drbd(read("9-proc-drbd.txt"))
    assert (proc.version, proc.major, proc.minors) == ("9.2.8", 9, ())


def test_proc_drbd_unconfigured_minor_and_old_st_field() -> None:
    # 8.3-era layouts: "st:" instead of "ro:", and an unconfigured minor line.
    text = (
        "version: 8.3.12 (api:88/proto:86-96)\n"
        " 0: cs:Connected st:Secondary/Primary ds:UpToDate/UpToDate C r-----\n"
        "    ns:0 nr:33300 dw:33300 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:b oos:0\n"
        " 1: cs:Unconfigured\n"
    )
    proc = parse_proc_drbd(text)
    assert [m.cs for m in proc.minors] == ["Connected", "Unconfigured"]
    assert proc.minors[0].role == "Secondary"
    assert proc.minor(1) is not None and proc.minor(1).to_resource_state("r1").devices == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("flags", "suspended", "blocked", "congested"),
    [("r-----", "no", "no", False), ("s---d-", "yes", "upper", False), ("r---n-", "no", "no", True)],
)
def test_proc_drbd_io_flags(flags: str, suspended: str, blocked: str, congested: bool) -> None:
    text = read("84-proc-drbd-connected.txt").replace("C r-----", f"C {flags}")
    state = parse_proc_drbd(text).minors[0].to_resource_state("single-az")
    assert state.suspended == suspended
    assert state.devices[0].blocked == blocked
    assert state.connections[0].congested is congested


@pytest.mark.parametrize("text", ["", "hello\n", "version: 8.4.11 (api:1/proto:86-101)\n 0: cs:\n"])
def test_proc_drbd_rejects_garbage(text: str) -> None:
    with pytest.raises(DrbdOutputError):
        parse_proc_drbd(text)


def _format_sync(left_kib: int, total_kib: int, speed: int, average: int, want: int | None) -> str:
    """The two resync lines as the kernel prints them (M above 1 GiB, "%ld,%03ld" speeds)."""
    big = total_kib > 0x100000
    left, total, unit = (left_kib >> 10, total_kib >> 10, "M") if big else (left_kib, total_kib, "K")
    permille = 1000 - (left_kib * 1000) // (total_kib + 1)

    def kb(n: int) -> str:
        return f"{n // 1000},{n % 1000:03d}" if n > 1000 else str(n)

    want_text = f" want: {kb(want)}" if want is not None else ""
    return (
        f"\t[==>.................] sync'ed:{permille // 10:3d}.{permille % 10}% ({left}/{total}){unit}\n"
        f"\tfinish: 0:01:02 speed: {kb(speed)} ({kb(average)}){want_text} K/sec\n"
    )


@given(
    total=st.integers(min_value=1, max_value=2**40),
    fraction=st.floats(min_value=0, max_value=1),
    speed=st.integers(min_value=0, max_value=10**7),
    average=st.integers(min_value=0, max_value=10**7),
    want=st.none() | st.integers(min_value=0, max_value=10**7),
)
def test_proc_drbd_sync_round_trip(total: int, fraction: float, speed: int, average: int, want: int | None) -> None:
    left = int(total * fraction)
    head = read("84-proc-drbd-primary-syncsource.txt").split("\t[")[0]
    minor = parse_proc_drbd(head + _format_sync(left, total, speed, average, want)).minors[0]
    assert minor.sync is not None
    unit = "M" if total > 0x100000 else "K"
    scale = 1024 if unit == "M" else 1
    assert minor.sync.unit == unit
    assert minor.sync.left_kib == (left >> 10 if unit == "M" else left) * scale
    assert minor.sync.total_kib == (total >> 10 if unit == "M" else total) * scale
    assert (minor.sync.speed_kib_s, minor.sync.average_kib_s, minor.sync.want_kib_s) == (speed, average, want)
    assert minor.sync.finish_s == 62


# -- status --json -----------------------------------------------------------------------------
def test_status_json_sample() -> None:
    first, second = parse_status_json(read("9-status-json.json"))
    assert first.name == "1-single-0"
    assert first.describe() == "Connected UpToDate/UpToDate Secondary/Primary"
    assert first.healthy
    assert first.connections[0].conn_name == "SLE15-sp1-gm-drbd1145296-node1"
    assert first.connections[0].peer_node_id == 1
    peer = first.peer_devices[0]
    assert (peer.received_kib, peer.sent_kib, peer.out_of_sync_kib, peer.pending, peer.unacked) == (456, 654, 0, 3, 4)
    assert first.devices[0].size_kib == 409600
    assert first.devices[0].quorum is True
    assert second.devices[0].quorum is False
    assert first.write_ordering == "flush"


def test_status_json_suspension_reasons() -> None:
    data = json.loads(read("9-status-json.json"))
    data[0]["suspended"] = True
    data[0]["suspended-quorum"] = True
    data[1]["suspended"] = True
    states = parse_status_json(json.dumps(data))
    assert states[0].suspended == "quorum"
    assert states[1].suspended == "yes"
    assert not states[0].healthy


@pytest.mark.parametrize(
    "text", ["", "{}", "[1]", '[{"name": "r0"}]', '[{"name": "r0", "role": "Primary", "devices": 3}]']
)
def test_status_json_rejects_bad_input(text: str) -> None:
    with pytest.raises(DrbdOutputError):
        parse_status_json(text)


def test_intentionally_diskless_peer_is_not_a_problem() -> None:
    base = snapshot("84-events2-now-primary-connected.txt")
    client = replace(base.peer_devices[0], peer_disk="Diskless", peer_client=True)
    assert replace(base, peer_devices=(client,)).healthy
    lost = replace(base.peer_devices[0], peer_disk="Diskless", peer_client=False)
    assert replace(base, peer_devices=(lost,)).peer_disk_state == "Diskless"
