"""The quorum and peers summary of a multi-node resource (harness.drbd.quorum) on the recorded
DRBD 9.2.18 states (tests/data/drbd/drbd-9.2.18, README.md there), its model's properties, and
split brain found in the kernel log (harness.drbd.kernlog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.fold import resource_from_events2
from harness.drbd.kernlog import split_brains_in_kernel_log
from harness.drbd.quorum import QuorumSetting, summarize_quorum, votes_needed
from harness.drbd.state import Connection, Device, PeerDevice, ResourceState
from tests.unit.drbd9_recorded import read

MAJORITY = QuorumSetting("majority", "io-error")
DATA_84 = Path(__file__).resolve().parent.parent / "data" / "drbd"


def r3(name: str) -> ResourceState:
    state = resource_from_events2(read(f"{name}"), "r3")
    assert state is not None
    return state


def test_the_summary_names_each_peer_the_setting_and_the_margin() -> None:
    summary = summarize_quorum(r3("a1.r3.events2-now-statistics.8-diskless-tiebreaker.txt"), MAJORITY, {"a3"})
    assert [(p.name, p.connection, p.role, p.disk, p.tie_breaker) for p in summary.peers] == [
        ("a2", "Connected", "Secondary", "UpToDate", False),
        ("a3", "Connected", "Secondary", "Diskless", True),
    ]
    assert (summary.role, summary.disk, summary.quorate, summary.computed, summary.margin) == (
        "Primary",
        "UpToDate",
        True,
        True,
        1,
    )
    assert summary.describe().startswith(
        "r3: this node Primary, UpToDate; peers a2: Connected, Secondary, UpToDate; "
        "a3: Connected, Secondary, Diskless (tie-breaker); quorum majority, on-no-quorum io-error: "
        "quorum held through a2, a3; can lose any 1 before writes stop"
    )


def test_the_pair_cut_keeps_quorum_through_the_third_node() -> None:
    summary = summarize_quorum(r3("a1.r3.events2-now-statistics.9-pair-cut-tiebreaker-holds.txt"), MAJORITY, {"a3"})
    assert summary.quorate and summary.computed and summary.held_through == ("a3",) and summary.margin == 0
    assert "quorum held through a3; cannot lose any peer before writes stop" in summary.describe()
    lost = summarize_quorum(r3("a1.r3.events2-now-statistics.10-tiebreaker-lost-quorum-lost.txt"), MAJORITY, {"a3"})
    assert lost.quorate is False and not lost.computed and lost.held_through == ()
    assert "no quorum, writes stop" in lost.describe()


def test_a_tie_breaker_the_kernel_still_keeps_a_bitmap_for_votes() -> None:
    """a1 was not adjusted after a3 went diskless (its dry-run adjust would set --bitmap=no):
    its DRBD prints a3 peer-client:no and counts it as a voter, which is why losing a3 at
    state 10 cost quorum although a2 was known Outdated."""
    summary = summarize_quorum(r3("a1.r3.events2-now-statistics.9-pair-cut-tiebreaker-holds.txt"), MAJORITY, {"a3"})
    (note,) = summary.notes
    assert note.startswith("a3 is diskless by configuration but DRBD here keeps a bitmap for it (peer-client:no)")
    assert summarize_quorum(r3("a1.r3.events2-now-statistics.3-uptodate.txt"), MAJORITY).notes == ()


def test_the_tie_breaker_summarises_itself() -> None:
    summary = summarize_quorum(r3("a3.r3.events2-now-statistics.8-diskless-tiebreaker.txt"), MAJORITY)
    assert summary.tie_breaker and summary.computed and summary.margin == 1
    assert summary.describe().startswith("r3: this node Secondary, Diskless (tie-breaker); peers a1:")


def test_quorum_off_never_stops_writes() -> None:
    state = resource_from_events2(read("a1.r-sa.events2-now-statistics.9-network-cut.txt"), "r-sa")
    assert state is not None
    summary = summarize_quorum(state, QuorumSetting())
    assert summary.margin is None and summary.computed and summary.quorate
    assert summary.describe().endswith("quorum off: losing peers never stops writes")


@pytest.mark.parametrize(
    ("setting", "voters", "needed"),
    [("majority", 3, 2), ("majority", 2, 2), ("majority", 4, 3), ("all", 3, 3), ("2", 5, 2), ("off", 3, 0)],
)
def test_votes_needed(setting: str, voters: int, needed: int) -> None:
    assert votes_needed(setting, voters) == needed


# -- the model's properties on synthetic resources (pure logic) ---------------------------------
def resource(disks: list[str], tie_breakers: int, connected: list[bool]) -> ResourceState:
    """This node UpToDate and a volume 0 with peers ``p0..``: diskful with ``disks``, then
    ``tie_breakers`` diskless peers DRBD knows as clients; ``connected`` per peer."""
    peers = [(d, False) for d in disks] + [("Diskless", True)] * tie_breakers
    conns, pds = [], []
    for i, ((disk, client), up) in enumerate(zip(peers, connected, strict=True)):
        conns.append(Connection(i + 1, f"p{i}", "Connected" if up else "Connecting"))
        pds.append(
            PeerDevice(
                i + 1, f"p{i}", 0, "Established" if up else "Off", disk if up else "DUnknown", peer_client=client
            )
        )
    device = Device(volume=0, minor=1, disk="UpToDate", client=False)
    return ResourceState("r", "Primary", connections=tuple(conns), devices=(device,), peer_devices=tuple(pds))


def lose(state: ResourceState, peer: str) -> ResourceState:
    """``state`` after the connection to ``peer`` broke."""
    conns = tuple(
        Connection(c.peer_node_id, c.conn_name, "Connecting") if c.conn_name == peer else c for c in state.connections
    )
    pds = tuple(
        PeerDevice(p.peer_node_id, p.conn_name, p.volume, "Off", "DUnknown", peer_client=p.peer_client)
        if p.conn_name == peer
        else p
        for p in state.peer_devices
    )
    return ResourceState(state.name, state.role, connections=conns, devices=state.devices, peer_devices=pds)


@given(st.integers(min_value=1, max_value=6))
def test_all_diskful_and_connected_can_lose_a_minority(peers: int) -> None:
    summary = summarize_quorum(resource(["UpToDate"] * peers, 0, [True] * peers), MAJORITY)
    nodes = peers + 1
    assert summary.computed and summary.margin == nodes - (nodes // 2 + 1)


@given(st.integers(min_value=1, max_value=3))
def test_two_disks_and_tie_breakers_survive_the_loss_of_the_other_disk(tie_breakers: int) -> None:
    state = resource(["UpToDate"], tie_breakers, [True] * (1 + tie_breakers))
    summary = summarize_quorum(state, MAJORITY)
    assert summary.computed and summary.margin is not None and summary.margin >= 1
    cut = summarize_quorum(lose(state, "p0"), MAJORITY)
    assert (
        cut.computed and cut.by_tie_breaker and cut.held_through == tuple(f"p{i}" for i in range(1, 1 + tie_breakers))
    )


@given(
    st.lists(st.sampled_from(["UpToDate", "Outdated", "Inconsistent"]), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=2),
    st.data(),
)
def test_the_margin_is_the_worst_case(disks: list[str], tie_breakers: int, data: st.DataObject) -> None:
    count = len(disks) + tie_breakers
    state = resource(disks, tie_breakers, data.draw(st.lists(st.booleans(), min_size=count, max_size=count)))
    summary = summarize_quorum(state, MAJORITY)
    up = [c.conn_name or "" for c in state.connections if c.state == "Connected"]
    if not summary.computed:
        assert summary.margin == 0
        return
    assert summary.margin is not None and 0 <= summary.margin <= len(up)
    if summary.margin > 0:  # losing any one connected peer keeps quorum, with a margin one lower at worst
        for peer in up:
            one = summarize_quorum(lose(state, peer), MAJORITY)
            assert one.computed and one.margin is not None and one.margin >= summary.margin - 1
    if summary.margin < len(up):
        # some margin + 1 losses stop writes, so some first loss leaves a smaller margin
        after = [summarize_quorum(lose(state, peer), MAJORITY) for peer in up]
        assert any(not a.computed or (a.margin or 0) < summary.margin for a in after)


# -- split brain in the kernel log --------------------------------------------------------------
def test_the_84_kernel_log_names_the_split_brain_by_minor() -> None:
    (split,) = split_brains_in_kernel_log((DATA_84 / "84-dmesg-primary-split-brain.txt").read_text(), "single-az")
    assert (split.minor, split.resource, split.peer, split.resolved) == (0, None, None, False)
    assert split.describe() == "split brain on minor 0: unresolved, connection dropped"


def test_a_resolved_split_brain_is_told_apart() -> None:
    # the 9.2.18 line of a3's log with the words DRBD prints when an after-sb policy resolved it
    line = read("a3.r-ma.dmesg-split-brain.txt").splitlines()
    unresolved = next(x for x in line if "Split-Brain detected" in x)
    resolved = unresolved.replace(
        "but unresolved, dropping connection!", ", 1 primaries, automatically solved. Sync from this node"
    )
    (split,) = split_brains_in_kernel_log(resolved)
    assert split.resolved and split.peer == "b1"
