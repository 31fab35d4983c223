"""Preflight and the replication seam on a pair whose DRBD 9 resource has a third node: each peer
with its disk and role, the quorum and its margin, from what 9.2.18 printed of the three-node
``r3`` (a1 and a2 diskful, a3 diskful and later a diskless tie-breaker; its states and commands:
tests/data/drbd/drbd-9.2.18/README.md)."""

from __future__ import annotations

from typing import cast

import pytest

from harness.drbd.state import ResourceState
from harness.errors import HarnessError
from harness.inventory import Inventory, parse_inventory
from harness.remote.pool import ConnectionPool
from harness.replication import replication_for
from harness.safety.preflight import PreflightReport, run_preflight
from tests.doubles import LAB, Answer, FakePool, FakeRunner
from tests.unit.drbd9_recorded import read
from tests.unit.reliability.support import MINI, audit_answers, finding, lab_node

R3 = b"r3".hex()


def _inventory(role: str) -> Inventory:
    """MINI with a3 (the lab's address) and the pair r3 whose third node is a3 in ``role``."""
    a3 = (
        "  a3:\n    az: az-a\n    ssh: {host: 10.213.0.13, key: /run/harness-lab/keys/lab_key, "
        "known_hosts: /run/harness-lab/known_hosts}\n    replication: {ip: 10.213.1.13, iface: vec1}\n"
    )
    text = MINI.replace("pairs:\n", a3 + "pairs:\n").replace(
        "    resource: single-az\n    device: /dev/drbd0\n",
        f"    resource: r3\n    device: /dev/drbd12\n    port: 7802\n    peers: {{a3: {role}}}\n",
    )
    return parse_inventory(text.replace("  single-az:\n", "  r3:\n"))


def _a1(state: str) -> FakeRunner:
    """a1 as the recordings show it in ``state``: r3's events2, its settings, its audit."""
    show = "drbd/drbd-9.2.18/a1.r3.show-show-defaults.txt"
    events = f"drbd/drbd-9.2.18/a1.r3.events2-now-statistics.{state}.txt"
    audit = {
        f"audit_{key}_r3": answer
        for key, answer in (
            ("show", Answer(read("a1.r3.show-show-defaults.txt"))),
            ("dump", Answer(read("a1.r3.drbdadm-v-dump.txt"))),
        )
    }
    base = {k: v for k, v in audit_answers().items() if not k.startswith(("audit_show", "audit_dump"))}
    peers = {
        f"peers_state_{R3}": Answer(read(events.rsplit("/", 1)[1])),
        f"peers_show_{R3}": Answer(read(show.rsplit("/", 1)[1])),
    }
    return lab_node("a1", events=events, **base, **audit, **peers)


def _preflight(inv: Inventory, a1: FakeRunner) -> PreflightReport:
    audit = {k: v for k, v in a1.batch.items() if k.startswith("audit")}
    a2 = lab_node("a2", events="drbd/drbd-9.2.18/a2.r3.events2-now-statistics.3-uptodate.txt", **audit)
    nodes: dict[str, FakeRunner | HarnessError] = {"a1": a1, "a2": a2}
    return run_preflight(inv, cast(ConnectionPool, FakePool(nodes)), pairs=["r3"])


def test_every_peer_its_disk_role_and_the_margin_are_named() -> None:
    report = _preflight(_inventory("diskful"), _a1("3-uptodate"))
    peers = finding(report, "r3 (a1)", "peers")
    assert peers.status == "ok"
    assert peers.detail == (
        "r3: this node Primary, UpToDate; peers a2: Connected, Secondary, UpToDate; a3: Connected, Secondary, "
        "UpToDate; quorum majority, on-no-quorum io-error: quorum held through a2, a3; can lose any 1 before "
        "writes stop"
    )
    # the audit line says the quorum is there and why it is no risk, not that there is none
    config = finding(report, "a1", "config r3")
    assert (config.status, config.detail) == (
        "ok",
        "quorum majority, on-no-quorum io-error on 3 nodes: the primary needs 2, and cut off from its peer it "
        "still reaches 2; no fencing, automatic split-brain recovery or dual primary",
    )


def test_no_quorum_blocks_before_any_write() -> None:
    report = _preflight(_inventory("diskful"), _a1("5-quorum-lost"))
    peers = finding(report, "r3 (a1)", "peers")
    assert peers.status == "BLOCK"
    assert peers.detail.startswith("no quorum (quorum majority, on-no-quorum io-error): writes fail here; ")
    assert "no quorum, writes stop" in peers.detail


def test_the_tiebreaker_holds_quorum_when_the_pair_is_cut() -> None:
    report = _preflight(_inventory("tiebreaker"), _a1("9-pair-cut-tiebreaker-holds"))
    assert finding(report, "r3 (a1)", "drbd").status == "BLOCK"  # the pair's own link is down
    peers = finding(report, "r3 (a1)", "peers")
    assert peers.status == "warn"
    assert peers.detail.startswith("a2 is Connecting; r3: this node Primary, UpToDate; peers a2: Connecting, ")
    # a1's DRBD still kept a bitmap for a3 (peer-client:no), so a3 voted as a missing disk: a1 and
    # a3 make 2 of 3 without the tie-breaker rule, and the note says why
    assert "quorum held through a3; cannot lose any peer before writes stop" in peers.detail
    assert peers.detail.count("until `drbdadm adjust r3` runs here") == 1


@pytest.mark.parametrize("state", ["8-diskless-tiebreaker", "11-healed-tiebreaker"])
def test_a_tiebreaker_by_configuration_is_diskless_on_purpose(state: str) -> None:
    report = _preflight(_inventory("tiebreaker"), _a1(state))
    drbd = finding(report, "r3 (a1)", "drbd")
    assert drbd.status == "ok"
    peers = finding(report, "r3 (a1)", "peers")
    # 9.2.18 printed the tie-breaker peer-client:no (a1's configuration still kept its bitmap):
    # it is said, and a1 is never judged as if a3 should have a disk
    assert "a3: Connected, Secondary, Diskless (tie-breaker)" in peers.detail
    assert "a3's disk is Diskless" not in peers.detail


def test_the_seam_tells_drbd_which_peers_are_tiebreakers() -> None:
    inv = _inventory("tiebreaker")
    a1 = FakeRunner("a1", argv={("drbdsetup", "events2", "--now", "--statistics", "r3"): [
        Answer(read("a1.r3.events2-now-statistics.8-diskless-tiebreaker.txt"))
    ]})  # fmt: skip
    state = replication_for(inv.pairs["r3"], a1, nodes=inv.nodes).state()
    assert isinstance(state, ResourceState) and state.diskless_peers == {"a3"}
    assert state.healthy, state.problems()  # the pair's own link decides, the tie-breaker is no problem
    diskful = replication_for(_inventory("diskful").pairs["r3"], a1, nodes=inv.nodes).state()
    assert isinstance(diskful, ResourceState) and diskful.diskless_peers == set()
    # an md-nbd array has its two legs only: nothing to ask, nothing to tell
    md = replication_for(LAB.pairs["single-az-md-nbd"], FakeRunner("a1"), nodes=LAB.nodes)
    assert md.peers_probes() == {} and md.read_peers({}) is None
