"""A diskless tie-breaker on DRBD 9.2.18, as the recordings show it (tests/data/drbd/drbd-9.2.18,
README.md there): a1 and a2 diskful, a3 re-created with ``disk none`` at state 8.  Its own
device says ``disk:Diskless client:yes``; its diskful peers print it ``peer-disk:Diskless
peer-client:no`` (a1 was not adjusted: its recorded dry-run adjust would still turn its bitmap
for a3 off), so whether its Diskless is intended comes from the configuration (``disk none`` in
a dump, or the inventory's set), or from ``peer-client:yes`` where DRBD prints that.
"""

from __future__ import annotations

from harness.drbd.fold import resource_from_events2
from harness.drbd.replication import DrbdReplication
from harness.drbd.state import ResourceState
from harness.drbd.validity import check_capture
from harness.drbd.watch import EventWatch
from harness.inventory.models import PairSpec
from harness.replication import replication_for
from tests.doubles import Answer, FakeRunner
from tests.unit.drbd9_recorded import dump_layout, read, show_layout

A1_TIEBREAKER = "a1.r3.events2-now-statistics.8-diskless-tiebreaker.txt"
A3_TIEBREAKER = "a3.r3.events2-now-statistics.8-diskless-tiebreaker.txt"
A1_HEALED = "a1.r3.events2-now-statistics.11-healed-tiebreaker.txt"


def state_of(name: str) -> ResourceState:
    state = resource_from_events2(read(name), "r3")
    assert state is not None
    return state


def configured_diskless() -> frozenset[str]:
    """What a3's own dump of state 8 says: the configuration an inventory would name."""
    return frozenset(dump_layout("a3.r3.drbdadm-v-dump.8-diskless.txt", "r3").diskless)


def test_the_configuration_names_the_tie_breaker() -> None:
    assert configured_diskless() == {"a3"}
    assert dump_layout("a1.r3.drbdadm-v-dump.txt", "r3").diskless == ()  # a1's dump is from before
    assert show_layout("a3.r3.show-show-defaults.8-diskless.txt", "r3").local_diskless
    assert not show_layout("a3.r3.show-show-defaults.txt", "r3").local_diskless


def test_9218_prints_the_tie_breaker_as_peer_client_no() -> None:
    (a3,) = (p for p in state_of(A1_TIEBREAKER).peer_devices if p.conn_name == "a3")
    assert (a3.replication, a3.peer_disk, a3.peer_client) == ("Established", "Diskless", False)
    assert not a3.peer_disk_ok and a3.diskless_ok({"a3"})


def test_a_pair_window_beside_a_tie_breaker_is_valid() -> None:
    text = read(A1_TIEBREAKER)
    assert check_capture(text, resource="r3", peers={"a2"}).valid
    assert check_capture(text, resource="r3", peers={"a2"}, diskless=configured_diskless()).valid
    assert check_capture(text, resource="r3", diskless=configured_diskless()).valid


def test_a_diskless_peer_configured_with_a_disk_stays_a_problem() -> None:
    text = read(A1_TIEBREAKER)
    for verdict in (
        check_capture(text, resource="r3"),  # the whole resource, nothing says a3 is meant diskless
        check_capture(text, resource="r3", peers={"a2"}, diskless=set()),  # the configuration gives a3 a disk
    ):
        assert verdict.reason == "r3: peer disk of a3 volume 0 was Diskless when the watch started at line 5"
    assert state_of(A1_TIEBREAKER).problems() == ("peer disk of a3 volume 0 is Diskless",)
    assert state_of(A1_TIEBREAKER).with_diskless(configured_diskless()).healthy


def test_a_third_node_losing_its_disk_during_the_window_spoils_it() -> None:
    # a3 as the window starts at state 3 (UpToDate), then its peer device as a1 printed it
    # once a3 came back diskless (the a1 stream of state 8)
    stream = read("a1.r3.events2-stream.3-diskless-tiebreaker-cut-quorum.txt").splitlines(keepends=True)
    dump = stream[:9]
    came_back = next(line for line in stream if "peer-disk:Diskless" in line)
    verdict = check_capture("".join([*dump, came_back]), resource="r3", peers={"a2"})
    assert not verdict.valid and "peer disk of a3 volume 0 left UpToDate: UpToDate -> Diskless" in verdict.reason
    assert check_capture("".join([*dump, came_back]), resource="r3", peers={"a2"}, diskless={"a3"}).valid


def test_the_tie_breaker_judges_itself_healthy() -> None:
    state = state_of(A3_TIEBREAKER)
    assert [(d.disk, d.client) for d in state.devices] == [("Diskless", True)]
    assert state.healthy and state.describe() == "Connected Diskless/UpToDate Secondary/Primary"
    assert check_capture(read(A3_TIEBREAKER), resource="r3").valid
    assert check_capture(read(A3_TIEBREAKER), resource="r3", peers={"a1"}).valid


def test_a_node_that_lost_its_disk_is_not_a_tie_breaker() -> None:
    # the recorded tie-breaker's device line without client:yes, as a diskful node that
    # detached prints it
    text = read(A3_TIEBREAKER).replace("disk:Diskless client:yes", "disk:Diskless client:no")
    state = resource_from_events2(text, "r3")
    assert state is not None and state.problems() == ("local disk of volume 0 is Diskless",)
    assert "local disk of volume 0 was Diskless when the watch started" in check_capture(text, resource="r3").reason


def test_out_of_sync_toward_a_diskless_peer_is_not_summed() -> None:
    state = state_of(A1_HEALED)
    # DRBD counts 8 KiB toward a3, which holds no replica; without the configuration the fold
    # cannot tell a tie-breaker from a peer that lost its disk, with it there is nothing to sync
    assert [(p.conn_name, p.out_of_sync_kib) for p in state.peer_devices] == [("a2", 0), ("a3", 8)]
    assert state.out_of_sync_kib == 8 and not state.healthy
    known = state.with_diskless(configured_diskless())
    assert known.out_of_sync_kib == 0 and known.healthy
    assert known.describe() == "Connected UpToDate/UpToDate Primary/Secondary"


def test_the_seam_reads_a_tie_breaker_from_the_diskless_it_is_given() -> None:
    runner = FakeRunner("a1", argv={("drbdsetup", "events2", "--now", "--statistics", "r3"): [Answer(read(A1_HEALED))]})
    whole = DrbdReplication(runner, "r3", diskless_peers={"a3"})
    assert whole.state().healthy and whole.state().out_of_sync_kib == 0
    assert not DrbdReplication(runner, "r3").state().healthy
    watch = whole.watch("run-1", "w", max_duration_s=60)
    assert watch.diskless == frozenset({"a3"})
    assert watch.judge("harness-watch alive=1\n" + read(A1_TIEBREAKER)).valid


def test_the_pair_view_and_the_old_signature_are_unchanged() -> None:
    pair = PairSpec(primary="a1", secondary="a2", resource="r3", device="/dev/drbd12")
    state = replication_for(pair, FakeRunner("a1")).read_state(read(A1_TIEBREAKER))
    assert isinstance(state, ResourceState)
    assert state.healthy and [c.conn_name for c in state.connections] == ["a2"]
    plan = EventWatch.plan("a1", "r3", "run-1", "w", max_duration_s=60, peers={"a2"})
    assert plan.diskless is None and plan.judge("harness-watch alive=1\n" + read(A1_TIEBREAKER)).valid
