"""DRBD 9 semantics on published DRBD 9 outputs: ``--diff`` values, quorum
loss, a pair inside a three-node resource, ``drbdsetup status --json``.

The files are in ``tests/data/drbd/drbd9`` (sources in its SOURCES.md); the lab runs DRBD 8.4 and
cannot produce any of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.events import Diff, format_event, parse_event_line, parse_events
from harness.drbd.fold import EventFold, resource_from_events2
from harness.drbd.state import ResourceState
from harness.drbd.status_json import parse_status_json
from harness.drbd.validity import check_capture
from harness.inventory.models import PairSpec
from harness.replication import replication_for
from tests.doubles import LAB, FakeRunner

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
DRBD9 = DATA / "drbd9"
THREE_NODE = "events2-now-statistics-three-node-centreon.txt"


def read9(name: str) -> str:
    return (DRBD9 / name).read_text()


def three_node() -> ResourceState:
    state = resource_from_events2(read9(THREE_NODE), "drbd1")
    assert state is not None
    return state


def diff_line(old: str, new: str) -> str:
    """The ``--diff`` line drbdsetup prints for the change from recorded line ``old`` to
    recorded line ``new`` (a changed value as
    ``key:OLD->NEW``, an unchanged one plain; see drbd9/SOURCES.md)."""
    before = dict(token.split(":", 1) for token in old.split()[2:])
    out = new.split()[:2]
    for token in new.split()[2:]:
        key, value = token.split(":", 1)
        out.append(f"{key}:{before[key]}->{value}" if before.get(key, value) != value else token)
    return " ".join(out)


# -- --diff values ---------------------------------------------------------------------------
def test_diff_backing_dev_reads_as_the_new_device_and_keeps_the_old_one() -> None:
    lines = read9("events2-promotion-score-devices.txt").splitlines()
    line = diff_line(lines[2], lines[4])  # volume 0 attaches /dev/sda
    assert "backing_dev:none->/dev/sda" in line and "disk:Diskless->UpToDate" in line
    event = parse_event_line(line)
    assert event is not None
    assert event.get("backing_dev") == "/dev/sda"
    assert event.old("backing_dev") == "none"
    assert event.raw("backing_dev") == Diff("none", "/dev/sda")
    assert format_event(event) == line
    fold = EventFold().apply_all(parse_events(read9("events2-promotion-score-devices.txt")))
    fold.apply(event)
    state = fold.resource("some-resource")
    assert state is not None and state.devices[0].backing_dev == "/dev/sda"


def test_diff_of_an_object_new_to_drbdsetup_has_unknown_as_its_old_side() -> None:
    # UNKNOWN_STRING ("UNKNOWN", drbdsetup_colors.h) is the old side of a newly seen object.
    recorded = read9("events2-promotion-score-devices.txt").splitlines()[4]
    line = recorded.replace("backing_dev:/dev/sda", "backing_dev:UNKNOWN->/dev/sda")
    event = parse_event_line(line)
    assert event is not None and event.get("backing_dev") == "/dev/sda" and event.old("backing_dev") == "UNKNOWN"


_device_path = st.from_regex(r"\A/dev/[a-z][a-z0-9_/-]{0,30}\Z").filter(lambda p: "->" not in p)
_backing = st.one_of(st.just("none"), st.just("UNKNOWN"), _device_path)


@given(_backing, _backing, st.integers(min_value=0, max_value=1 << 20))
def test_backing_dev_diffs_round_trip_and_stay_text(old: str, new: str, minor: int) -> None:
    line = f"change device name:r0 volume:0 minor:{minor} backing_dev:{old}->{new} disk:UpToDate quorum:yes"
    event = parse_event_line(line)
    assert event is not None
    assert (event.old("backing_dev"), event.get("backing_dev")) == (old, new)
    assert format_event(event) == line


@given(_device_path)
def test_a_plain_backing_dev_is_a_plain_value(path: str) -> None:
    event = parse_event_line(f"exists device name:r0 volume:0 minor:1 backing_dev:{path} disk:UpToDate")
    assert event is not None and event.raw("backing_dev") == path and event.old("backing_dev") is None


# -- quorum ----------------------------------------------------------------------------------
def test_quorum_loss_is_a_problem() -> None:
    text = read9("events2-may-promote-quorum.txt")
    before = resource_from_events2("".join(text.splitlines(keepends=True)[:-1]), "some-resource")
    after = resource_from_events2(text, "some-resource")
    assert before is not None and after is not None
    assert after.devices[0].disk == "UpToDate" and after.devices[0].quorum is False
    lost = [p for p in after.problems() if "quorum" in p]
    assert lost == ["volume 0 has lost quorum"]
    assert not any("quorum" in p for p in before.problems())
    assert "quorum:no" in after.describe()


def test_quorum_loss_in_status_json_is_a_problem() -> None:
    # ha_cluster_exporter's sample: 1-single-1 has "quorum": false, everything else healthy.
    first, second = parse_status_json((DATA / "9-status-json.json").read_text())
    assert first.healthy
    assert second.problems() == ("volume 0 has lost quorum",)


def test_quorum_loss_during_a_window_makes_it_inconclusive() -> None:
    # The three-node snapshot, then the device line of events2-may-promote-quorum.txt's last
    # event with this resource's name and minor.
    stream = read9(THREE_NODE) + "change device name:drbd1 volume:0 minor:1 disk:UpToDate client:no quorum:no\n"
    verdict = check_capture(stream, resource="drbd1")
    assert not verdict.valid
    assert "volume 0 lost quorum" in verdict.reason
    assert check_capture(read9(THREE_NODE), resource="drbd1").valid


# -- a pair inside a three-node resource ------------------------------------------------------
def test_three_node_snapshot_keeps_every_connection() -> None:
    state = three_node()
    assert [(c.peer_node_id, c.conn_name, c.state, c.peer_role) for c in state.connections] == [
        (0, "central-2004", "Connected", "Primary"),
        (1, "poller-2004-1", "Connected", "Secondary"),
    ]
    assert [(p.conn_name, p.received_kib) for p in state.peer_devices] == [
        ("central-2004", 765868),
        ("poller-2004-1", 0),
    ]
    assert state.healthy


def test_the_pairs_own_connection_decides() -> None:
    recorded = read9(THREE_NODE)
    # The third node goes away: its connection and peer device as drbdsetup prints them on a
    # lost peer (the lines of the recorded sample with the states of 9-events2-diff-constructed's change).
    gone = (
        "change connection name:drbd1 peer-node-id:1 conn-name:poller-2004-1 connection:Connecting role:Unknown\n"
        "change peer-device name:drbd1 peer-node-id:1 conn-name:poller-2004-1 volume:0 replication:Off "
        "peer-disk:DUnknown peer-client:no\n"
    )
    state = resource_from_events2(recorded + gone, "drbd1")
    assert state is not None and not state.healthy  # the whole resource is degraded
    pair = state.toward({"central-2004"})
    assert pair.healthy, pair.problems()
    assert [c.conn_name for c in pair.connections] == ["central-2004"]
    assert pair.peer_role == "Primary" and pair.describe() == "Connected UpToDate/UpToDate Secondary/Primary"
    assert pair.other_connections == ("poller-2004-1 is Connecting",)
    other = state.toward({"poller-2004-1"})
    assert not other.healthy and "connection to poller-2004-1 is Connecting" in other.problems()


def test_an_unknown_peer_in_a_multi_peer_resource_is_a_problem_not_a_guess() -> None:
    pair = three_node().toward({"a2"})
    assert not pair.healthy
    assert pair.problems()[0] == (
        "cannot tell which connection is the pair's: none of central-2004, poller-2004-1 is named a2"
    )


def test_a_single_connection_is_the_pairs_whatever_its_name() -> None:
    state = resource_from_events2((DATA / "84-events2-now-primary-connected.txt").read_text(), "single-az")
    assert state is not None
    assert state.toward({"some-other-name"}) == state


@given(st.permutations(["central-2004", "poller-2004-1"]))
def test_toward_selects_by_name_whatever_the_order(names: list[str]) -> None:
    state = three_node()
    for name in names:
        assert [c.conn_name for c in state.toward({name}).connections] == [name]
        assert [p.conn_name for p in state.toward({name}).peer_devices] == [name]


# -- drbdsetup status --json -----------------------------------------------------------------
def test_status_json_of_drbd_utils_96() -> None:
    (state,) = parse_status_json(read9("status-json-salt-beijing.json"))
    assert state.describe() == "Connected UpToDate/UpToDate Primary/Secondary"
    assert state.healthy
    assert state.connections[0].conn_name == "salt-node3" and state.connections[0].peer_node_id == 2
    assert state.devices[0].size_kib == 307152 and state.devices[0].quorum is True
    assert state.peer_devices[0].done_percent is None  # percent-in-sync is not a resync's done


def test_status_json_and_events2_agree_on_the_same_resource() -> None:
    # The same three-node snapshot as status --json would print it: the events2 values
    # moved into drbd-utils' JSON keys.
    events = three_node()
    data = [
        {
            "name": "drbd1",
            "role": events.role,
            "suspended": False,
            "devices": [{"volume": 0, "minor": 1, "disk-state": "UpToDate", "quorum": True, "size": 765868}],
            "connections": [
                {
                    "peer-node-id": c.peer_node_id,
                    "name": c.conn_name,
                    "connection-state": c.state,
                    "peer-role": c.peer_role,
                    "peer_devices": [{"volume": 0, "replication-state": "Established", "peer-disk-state": "UpToDate"}],
                }
                for c in events.connections
            ],
        }
    ]
    (parsed,) = parse_status_json(json.dumps(data))
    assert parsed.describe() == events.describe()
    assert parsed.toward({"central-2004"}).describe() == events.toward({"central-2004"}).describe()


@pytest.mark.parametrize("name", ["status-json-salt-beijing.json"])
def test_status_json_samples_parse_without_loss_of_peers(name: str) -> None:
    raw = json.loads(read9(name))
    parsed = parse_status_json(read9(name))
    assert [len(r["connections"]) for r in raw] == [len(s.connections) for s in parsed]


# -- the replication seam hands the pair to DRBD ----------------------------------------------
def test_the_seam_judges_a_pair_in_a_three_node_resource_by_its_own_link() -> None:
    pair = PairSpec(primary="central-2004", secondary="poller-2004-1", resource="drbd1", device="/dev/drbd1")
    on_secondary = replication_for(pair, FakeRunner("poller-2004-1"))
    # the recorded snapshot was taken on a third node: seen from poller-2004-1's side the peer
    # central-2004 is Connected, the other peer (poller-2004-1's line) is the one that goes away
    text = read9(THREE_NODE).replace("poller-2004-1", "third-node") + (
        "change connection name:drbd1 peer-node-id:1 conn-name:third-node connection:Connecting role:Unknown\n"
    )
    state = on_secondary.read_state(text)
    assert state is not None and state.healthy, state and state.problems()
    assert state.describe() == "Connected UpToDate/UpToDate Secondary/Primary"
    whole = resource_from_events2(text, "drbd1")
    assert whole is not None and not whole.healthy


def test_the_seam_finds_the_peer_by_the_inventorys_host_name() -> None:
    pair = PairSpec(primary="a1", secondary="a2", resource="drbd1", device="/dev/drbd1")
    nodes = {"a1": LAB.nodes["a1"].model_copy(update={"hostname": "central-2004"}), "a2": LAB.nodes["a2"]}
    state = replication_for(pair, FakeRunner("a2"), nodes=nodes).read_state(read9(THREE_NODE))
    assert state is not None and state.healthy and state.describe() == "Connected UpToDate/UpToDate Secondary/Primary"
    blind = replication_for(pair, FakeRunner("a2")).read_state(read9(THREE_NODE))
    assert blind is not None and not blind.healthy and "cannot tell" in blind.problems()[0]
