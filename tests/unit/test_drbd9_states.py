"""What each recorded DRBD 9.2.18 state means, as the harness reads it: connect, initial resync,
verify, promote and demote, disconnect and StandAlone, the netem cut and its heal, split brain
and its resolution, a peer lost, quorum lost and regained, the diskless tie-breaker, the pair
cut while the tie-breaker holds quorum, and the tie-breaker lost.

Each state is read twice, from ``events2 --now --statistics`` and from ``status --json`` of the
same moment where both were recorded (tests/data/drbd/drbd-9.2.18, README.md there); r3's states
from 8 on know a3 is diskless from a3's recorded ``drbdadm -v dump``.  ``*`` stands for a
resync's out-of-sync, which moves between the two captures.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Final, NamedTuple

import pytest

from harness.drbd.fold import resource_from_events2
from harness.drbd.quorum import QuorumSetting, summarize_quorum
from harness.drbd.state import ResourceState
from harness.drbd.status_json import parse_status_json
from harness.drbd.validity import check_capture
from tests.unit.drbd9_recorded import DIR, recording, tie_breakers

R3_QUORUM: Final = QuorumSetting("majority", "io-error")


class Means(NamedTuple):
    describe: str
    #: one of its problems (None: healthy)
    problem: str | None = None
    #: connected peers this node can lose and keep writing (r3 only; None: quorum off)
    margin: int | None = None


SA, MA, R3 = "r-sa", "r-ma", "r3"
UP = "Connected UpToDate/UpToDate Primary/Secondary"
STATES: Final[dict[tuple[str, str, str], Means]] = {
    # r-sa, the same-AZ pair: connect, initial resync, verify, demote/promote, disconnect, netem cut, heal
    ("a1", SA, "1-connected-inconsistent"): Means(
        "Connected Inconsistent/Inconsistent Secondary/Secondary out-of-sync:2098072KiB",
        "local disk of volume 0 is Inconsistent",
    ),
    ("a1", SA, "2-initial-resync"): Means(
        "SyncSource UpToDate/Inconsistent Primary/Secondary out-of-sync:*KiB",
        "replication to a2 volume 0 is SyncSource",
    ),
    ("a1", SA, "3-uptodate"): Means(UP),
    ("a2", SA, "3-uptodate"): Means("Connected UpToDate/UpToDate Secondary/Primary"),
    ("a1", SA, "4-verify-running"): Means(
        "VerifyS UpToDate/UpToDate Primary/Secondary", "replication to a2 volume 0 is VerifyS"
    ),
    ("a1", SA, "5-verify-done"): Means(UP),
    ("a1", SA, "6-both-secondary"): Means("Connected UpToDate/UpToDate Secondary/Secondary"),
    ("a2", SA, "7-a2-primary"): Means(UP),
    ("a1", SA, "8-disconnected-standalone"): Means(
        "StandAlone UpToDate/DUnknown Primary/Unknown", "connection to a2 is StandAlone"
    ),
    ("a1", SA, "8b-standalone-out-of-sync"): Means(
        "StandAlone UpToDate/DUnknown Primary/Unknown out-of-sync:16384KiB", "connection to a2 is StandAlone"
    ),
    ("a1", SA, "8c-reconnected-resynced"): Means(UP),
    ("a1", SA, "9-network-cut"): Means(
        "Connecting UpToDate/DUnknown Primary/Unknown out-of-sync:8192KiB", "connection to a2 is Connecting"
    ),
    ("a2", SA, "9-network-cut"): Means(
        "Connecting UpToDate/DUnknown Secondary/Unknown", "connection to a1 is Connecting"
    ),
    ("a1", SA, "10-healed"): Means(UP),
    # r-ma, across the AZs: an outdated peer, divergence, split brain and its resolution
    ("a3", MA, "3-uptodate"): Means(UP),
    ("b1", MA, "3-uptodate"): Means("Connected UpToDate/UpToDate Secondary/Primary"),
    ("b1", MA, "4-disconnected-outdated"): Means(
        "StandAlone Outdated/DUnknown Secondary/Unknown", "connection to a3 is StandAlone"
    ),
    ("a3", MA, "4b-diverged-standalone"): Means(
        "StandAlone UpToDate/DUnknown Primary/Unknown out-of-sync:4096KiB", "connection to b1 is StandAlone"
    ),
    ("b1", MA, "4b-diverged-standalone"): Means(
        "StandAlone UpToDate/DUnknown Secondary/Unknown out-of-sync:4096KiB", "connection to a3 is StandAlone"
    ),
    # a snapshot cannot tell split brain from the divergence before it: the stream and dmesg do
    ("a3", MA, "5-split-brain"): Means(
        "StandAlone UpToDate/DUnknown Primary/Unknown out-of-sync:4096KiB", "connection to b1 is StandAlone"
    ),
    ("b1", MA, "5-split-brain"): Means(
        "StandAlone UpToDate/DUnknown Secondary/Unknown out-of-sync:4096KiB", "connection to a3 is StandAlone"
    ),
    ("a3", MA, "6-split-brain-resolved"): Means(UP),
    # r3, three nodes with quorum majority: resync to two, one peer lost, quorum lost and regained
    ("a1", R3, "2-initial-resync-two-targets"): Means(
        "SyncSource UpToDate/Inconsistent Primary/Secondary out-of-sync:*KiB",
        "replication to a3 volume 0 is SyncSource",
        1,
    ),
    ("a3", R3, "2-initial-resync-target"): Means(
        "SyncTarget Inconsistent/Inconsistent Secondary/Primary out-of-sync:*KiB",
        "local disk of volume 0 is Inconsistent",
        1,
    ),
    ("a1", R3, "3-uptodate"): Means(UP, None, 1),
    ("a2", R3, "3-uptodate"): Means("Connected UpToDate/UpToDate Secondary/Primary", None, 1),
    ("a3", R3, "3-uptodate"): Means("Connected UpToDate/UpToDate Secondary/Primary", None, 1),
    ("a1", R3, "4-one-peer-disconnected"): Means(
        "StandAlone UpToDate/Outdated Primary/Secondary", "connection to a3 is StandAlone", 0
    ),
    ("a1", R3, "5-quorum-lost"): Means(
        "Connecting UpToDate/DUnknown Primary/Unknown out-of-sync:8KiB quorum:no", "connection to a3 is Connecting", 0
    ),
    ("a2", R3, "5-quorum-lost-on-a1"): Means(
        "Connecting UpToDate/DUnknown Secondary/Unknown", "connection to a1 is Connecting", 0
    ),
    ("a1", R3, "6-quorum-regained"): Means(UP, None, 1),
    # r3 with a3 diskless: the tie-breaker, the pair cut while it holds quorum, the tie-breaker lost
    ("a1", R3, "8-diskless-tiebreaker"): Means(UP, None, 1),
    ("a3", R3, "8-diskless-tiebreaker"): Means("Connected Diskless/UpToDate Secondary/Primary", None, 1),
    ("a1", R3, "9-pair-cut-tiebreaker-holds"): Means(
        "Connecting UpToDate/Outdated Primary/Unknown out-of-sync:4KiB", "connection to a2 is Connecting", 0
    ),
    ("a2", R3, "9-pair-cut-tiebreaker-holds"): Means(
        "Connecting Outdated/DUnknown Secondary/Unknown", "connection to a1 is Connecting", 0
    ),
    ("a3", R3, "9-pair-cut-tiebreaker-holds"): Means(
        "Connected Diskless/Outdated Secondary/Primary", "peer disk of a2 volume 0 is Outdated", 1
    ),
    ("a1", R3, "10-tiebreaker-lost-quorum-lost"): Means(
        "Connecting UpToDate/Outdated Primary/Unknown out-of-sync:8KiB quorum:no", "connection to a3 is Connecting", 0
    ),
    ("a1", R3, "11-healed-tiebreaker"): Means(UP, None, 1),
}


def readings(node: str, resource: str, state: str) -> list[ResourceState]:
    """The state from each of its recorded outputs, with what the configuration says."""
    found: list[ResourceState] = []
    events2 = DIR / f"{node}.{resource}.events2-now-statistics.{state}.txt"
    if events2.exists():
        read = resource_from_events2(events2.read_text(), resource)
        assert read is not None
        found.append(read)
    status = DIR / f"{node}.{resource}.status-json.{state}.json"
    if status.exists():
        found += parse_status_json(status.read_text())
    number = recording(events2.name).number
    return [s.with_diskless(tie_breakers(resource, number)) for s in found]


@pytest.mark.parametrize(("node", "resource", "state"), sorted(STATES))
def test_each_state_reads_as_it_means(node: str, resource: str, state: str) -> None:
    means = STATES[(node, resource, state)]
    found = readings(node, resource, state)
    assert found, "no recording of this state"
    for read in found:
        assert fnmatchcase(read.describe(), means.describe), read.describe()
        assert read.healthy is (means.problem is None)
        assert means.problem is None or means.problem in read.problems(), read.problems()
        if resource == R3:
            summary = summarize_quorum(read, R3_QUORUM, read.diskless_peers)
            assert summary.quorate is summary.computed  # the model agrees with DRBD's quorum:
            assert summary.margin == means.margin


def test_every_recorded_snapshot_has_its_meaning() -> None:
    snapshots = {
        (rec.node, rec.resource, rec.state)
        for rec in map(recording, (p.name for p in DIR.iterdir() if p.suffix in {".txt", ".json"}))
        if rec.command in {"events2-now-statistics", "status-json"} and rec.resource
    }
    assert snapshots == set(STATES)


# -- the window of each state, as a measurement would meet it ----------------------------------
@pytest.mark.parametrize(
    ("node", "resource", "state", "peers", "reason"),
    [
        (
            "a1",
            SA,
            "2-initial-resync",
            {"a2"},
            "r-sa: replication to a2 volume 0 was SyncSource when the watch started",
        ),
        ("a1", SA, "4-verify-running", {"a2"}, "r-sa: replication to a2 volume 0 was VerifyS when the watch started"),
        ("a1", SA, "9-network-cut", {"a2"}, "r-sa: connection to a2 was Connecting when the watch started"),
        ("a1", R3, "5-quorum-lost", {"a2"}, "r3: connection to a2 was Connecting when the watch started"),
        ("a1", R3, "9-pair-cut-tiebreaker-holds", {"a2"}, "r3: connection to a2 was Connecting when the watch started"),
        # the pair's link is up; the third node being away is set aside, but not the lost quorum
        ("a2", R3, "5-quorum-lost-on-a1", {"a3"}, None),
        ("a1", R3, "4-one-peer-disconnected", {"a2"}, None),
        ("a1", R3, "8-diskless-tiebreaker", {"a2"}, None),
        ("a1", R3, "11-healed-tiebreaker", {"a2"}, None),
        ("a1", R3, "10-tiebreaker-lost-quorum-lost", {"a2"}, "r3: connection to a2 was Connecting when the watch"),
    ],
)
def test_the_window_of_a_state(node: str, resource: str, state: str, peers: set[str], reason: str | None) -> None:
    text = (DIR / f"{node}.{resource}.events2-now-statistics.{state}.txt").read_text()
    verdict = check_capture(text, resource=resource, peers=peers)
    if reason is None:
        assert verdict.valid, verdict
    else:
        assert not verdict.valid and verdict.reason.startswith(reason), verdict
