"""A measurement window of a pair inside a DRBD 9 resource with more peers:
a third node that is already away when the window starts does not make every window
inconclusive, any change on another link during the window still does, and the lab's DRBD 8.4
streams are judged exactly as before.

The three-node stream is the published snapshot in tests/data/drbd/drbd9 (SOURCES.md); the
lines after it are built from its own lines with the state words the recorded 8.4 streams show.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.validity import check_capture
from harness.drbd.watch import EventWatch
from harness.inventory.models import PairSpec
from harness.replication import replication_for
from tests.doubles import FakeRunner

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
SNAPSHOT = (DATA / "drbd9" / "events2-now-statistics-three-node-centreon.txt").read_text()
PAIR = frozenset({"central-2004"})  # the pair: this node (Secondary) and the Primary
THIRD = "poller-2004-1"


def third_away_at_start() -> str:
    """The snapshot with the third node's link down before the window: Connecting, its peer
    device Off/DUnknown (the 8.4 streams' words for a lost peer)."""
    swaps = {
        "exists connection": ("connection:Connected role:Secondary", "connection:Connecting role:Unknown"),
        "exists peer-device": ("replication:Established peer-disk:UpToDate", "replication:Off peer-disk:DUnknown"),
    }
    out = []
    for line in SNAPSHOT.splitlines(keepends=True):
        swap = next(
            (pair for head, pair in swaps.items() if line.startswith(head) and f"conn-name:{THIRD}" in line), None
        )
        out.append(line.replace(*swap) if swap else line)
    return "".join(out)


def oos_grows(kib: int) -> str:
    return (
        f"change peer-device name:drbd1 peer-node-id:1 conn-name:{THIRD} volume:0 received:0 sent:0 "
        f"out-of-sync:{kib} pending:0 unacked:0\n"
    )


def test_a_third_node_away_for_the_whole_window_does_not_spoil_it() -> None:
    stream = third_away_at_start() + oos_grows(4096) + oos_grows(8192)
    assert check_capture(stream, resource="drbd1", peers=PAIR).valid
    whole = check_capture(stream, resource="drbd1")
    assert not whole.valid and THIRD in whole.reason  # without the pair, every link counts


def test_a_third_node_coming_back_during_the_window_spoils_it() -> None:
    back = f"change connection name:drbd1 peer-node-id:1 conn-name:{THIRD} connection:Connected role:Secondary\n"
    verdict = check_capture(third_away_at_start() + back, resource="drbd1", peers=PAIR)
    assert not verdict.valid
    assert f"connection to {THIRD} (not the pair's) came back" in verdict.reason


def test_a_healthy_third_link_failing_during_the_window_spoils_it() -> None:
    lost = f"change connection name:drbd1 peer-node-id:1 conn-name:{THIRD} connection:NetworkFailure role:Unknown\n"
    verdict = check_capture(SNAPSHOT + lost, resource="drbd1", peers=PAIR)
    assert not verdict.valid and f"connection to {THIRD} failed" in verdict.reason


def test_the_pairs_own_link_is_judged_as_ever() -> None:
    lost = "change connection name:drbd1 peer-node-id:0 conn-name:central-2004 connection:Connecting role:Unknown\n"
    verdict = check_capture(third_away_at_start() + lost, resource="drbd1", peers=PAIR)
    assert not verdict.valid and "connection to central-2004 left Connected" in verdict.reason


def test_a_peer_named_nowhere_in_the_stream_changes_nothing() -> None:
    stream = third_away_at_start()
    assert check_capture(stream, resource="drbd1", peers={"a2"}) == check_capture(stream, resource="drbd1")


LAB_STREAMS = sorted(p.name for p in DATA.glob("84-events2-*.txt"))


@pytest.mark.parametrize("name", LAB_STREAMS)
@given(peers=st.sets(st.sampled_from(["a1", "a2", "a3", "b1", "peer", "central-2004"]), max_size=3))
def test_the_labs_single_connection_is_never_set_aside(name: str, peers: set[str]) -> None:
    text = (DATA / name).read_text()
    for resource in ("single-az", "multi-az"):
        assert check_capture(text, resource=resource, peers=peers) == check_capture(text, resource=resource)


def test_the_watch_judges_with_the_pairs_peer() -> None:
    watch = EventWatch.plan("n", "drbd1", "run-1", "w", max_duration_s=60, peers=PAIR)
    output = "harness-watch alive=1\n" + third_away_at_start() + oos_grows(4096)
    assert watch.judge(output).valid
    blind = EventWatch.plan("n", "drbd1", "run-1", "w", max_duration_s=60)
    assert not blind.judge(output).valid


def test_the_seam_gives_the_watch_the_pairs_peer() -> None:
    pair = PairSpec(primary="central-2004", secondary="this-node", resource="drbd1", device="/dev/drbd1")
    watch = replication_for(pair, FakeRunner("this-node")).watch("run-1", "w", max_duration_s=60)
    assert watch.judge("harness-watch alive=1\n" + third_away_at_start() + oos_grows(4096)).valid
