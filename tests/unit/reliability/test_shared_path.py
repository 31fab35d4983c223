"""A fault shapes only the pair's own traffic, and preflight names who else uses the path (case 17).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import ipaddress
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.impair.commands import apply_commands
from harness.impair.filters import U32Key, parse_filters
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import verify_applied
from harness.impair.steering import steering_rules
from harness.inventory import parse_inventory
from harness.remote import CommandResult
from harness.safety.sharedpath import PairPath, corosync_rings_to, drbd_resources_to, shared_path_checks
from tests.doubles import ROOT, Answer, data
from tests.unit.reliability.support import finding, lab_node, preflight

TWO_RESOURCES = "drbd/84-drbdsetup-show-two-resources-a1.txt"  # recorded on lab3's a1
COROSYNC = "corosync/corosync.conf.example.udpu"  # corosync's own example (tests/data/corosync)


def _packet(src: int, dst: int, protocol: int, sport: int, dport: int) -> bytes:
    """An IPv4 header without options, then the first word of TCP/UDP (the two ports)."""
    header = struct.pack("!BBHHHBBH", 0x45, 0, 40, 0, 0, 64, protocol, 0) + struct.pack("!II", src, dst)
    return header + struct.pack("!HH", sport, dport)


def _u32(keys: frozenset[U32Key], packet: bytes) -> bool:
    return all(int.from_bytes(packet[k.off : k.off + 4], "big") & k.mask == k.value for k in keys)


PEER = ipaddress.IPv4Address("10.213.1.12")


@pytest.mark.reliability_row(17)
@given(
    dst=st.sampled_from([int(PEER), int(PEER) + 1, int(PEER) ^ 0x01000000]),
    protocol=st.sampled_from([1, 6, 17, 132]),
    sport=st.sampled_from([7789, 7790, 22, 40000]),
    dport=st.sampled_from([7789, 7790, 5405, 40000]),
    port=st.sampled_from([7789, 7790, 1, 65535]),
)
def test_case_17_the_rules_catch_the_resources_port_either_way_and_nothing_else(
    dst: int, protocol: int, sport: int, dport: int, port: int
) -> None:
    """The u32 keys evaluated on packet bytes as the kernel does: the peer's address and the
    resource's TCP port as source or destination, or ICMP to the peer (the RTT probe)."""
    packet = _packet(int(ipaddress.IPv4Address("10.213.1.11")), dst, protocol, sport, dport)
    caught = any(_u32(rule.keys, packet) for rule in steering_rules(PEER, port))
    to_peer = dst == int(PEER)
    assert caught == (to_peer and ((protocol == 6 and port in (sport, dport)) or protocol == 1))
    # the whole path: everything to the peer
    assert any(_u32(rule.keys, packet) for rule in steering_rules(PEER, None)) == to_peer


@pytest.mark.reliability_row(17)
def test_case_17_only_the_pairs_port_is_steered_into_netem() -> None:
    argv = apply_commands(NetemProfile("wan", delay_s=0.005), "vec1", str(PEER), port=7789)
    filters = [a for a in argv if a[1] == "filter"]
    assert [a[a.index("u32") + 1 : a.index("flowid")] for a in filters] == [
        ["match", "ip", "dst", "10.213.1.12/32", "match", "ip", "protocol", "6", "0xff", "match", "ip", "dport",
         "7789", "0xffff"],
        ["match", "ip", "dst", "10.213.1.12/32", "match", "ip", "protocol", "6", "0xff", "match", "ip", "sport",
         "7789", "0xffff"],
        ["match", "ip", "dst", "10.213.1.12/32", "match", "ip", "protocol", "1", "0xff"],
    ]  # fmt: skip
    assert argv[0][-16:] == ["0"] * 16  # priomap all 0: nothing else enters the impaired band


# (iproute2, peer, port) of the recordings in tests/data/tc/versions (each guest's own tc)
RECORDED = [("5.10", "10.213.2.21", 7790), ("6.1", "10.213.1.12", 7789), ("6.15", "10.213.1.13", 7790)]


@pytest.mark.reliability_row(17)
@pytest.mark.parametrize(("version", "peer", "port"), RECORDED, ids=[r[0] for r in RECORDED])
def test_case_17_the_port_rules_read_back_on_every_tc(version: str, peer: str, port: int) -> None:
    """5.10 prints u32 options as text inside its JSON; 6.1 and 6.15 as JSON: all verify."""
    profile = NetemProfile("wan", delay_s=0.005)
    qdiscs = parse_qdiscs(data(f"tc/versions/iproute2-{version}-qdisc-harness-delay5ms-port.json"))
    filters = parse_filters(data(f"tc/versions/iproute2-{version}-filter-harness-u32-port.json"))
    assert verify_applied(profile, qdiscs, filters, peer, port=port) == []
    # another port, or the whole path, is not what is in effect
    wrong = verify_applied(profile, qdiscs, filters, peer, port=port + 1)
    assert len(wrong) == 2 and all(p.startswith("filter: unexpected u32 pref 1 fh 800::80") for p in wrong)
    whole = verify_applied(profile, qdiscs, filters, peer)
    assert whole and "expected u32 protocol ip flowid 4842:2 for: " + peer + "/32" in whole[0]
    # the single whole-path rule, read back, is not the pair's rules either
    single = parse_filters(data(f"tc/versions/iproute2-{version}-filter-harness-u32-peer.json"))
    missing = verify_applied(profile, qdiscs, single, "10.213.1.12", port=7789)
    assert missing and "filter: unexpected" in missing[0]


@pytest.mark.reliability_row(17)
def test_case_17_other_resources_and_corosync_rings_on_the_peer_are_read() -> None:
    two = data(TWO_RESOURCES)
    assert drbd_resources_to(two, "10.213.1.12") == {
        "single-az": ["10.213.1.12:7789"],
        "shared-test": ["10.213.1.12:7795"],
    }
    assert drbd_resources_to(two, "10.213.1.13") == {}
    # DRBD 9: one `path { _remote_host ...; }` per connection (LINBIT's drbd-utils test output)
    nine = data("drbd/drbd9/drbdsetup-show-tiebreaker-swap.txt")
    assert drbd_resources_to(nine, "10.36.50.12") == {"r0": ["10.36.50.12:7789"]}
    assert drbd_resources_to(nine, "10.36.50.10") == {"r0": ["10.36.50.10:7790"]}
    conf = data(COROSYNC)
    assert corosync_rings_to(conf, "10.16.35.102") == ["node nodeid 2 ring0_addr"]
    assert corosync_rings_to(conf, "10.16.35.104") == ["node without a name ring0_addr"]
    assert corosync_rings_to(conf, "10.16.35.0") == []  # bindnetaddr is no ring address


@pytest.mark.reliability_row(17)
def test_case_17_preflight_names_who_else_uses_the_peer_address() -> None:
    corosync = data(COROSYNC).replace("10.16.35.102", "10.213.1.12")
    a1 = lab_node("a1", path_drbd=Answer(data(TWO_RESOURCES)), path_corosync=Answer(corosync))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    shared = finding(report, "a1", "shared path single-az")
    assert shared.status == "warn"
    assert shared.detail == (
        "10.213.1.12 is also used by DRBD resource shared-test (10.213.1.12:7795), corosync node nodeid 2 "
        "ring0_addr: a fault on single-az shapes only port 7789, not them"
    )
    assert report.ok  # a warning: the run goes on
    # the lab as it is: a1 and a2 share their path with nothing
    assert finding(report, "a2", "shared path single-az").status == "ok"
    # `shape: path` asks for the whole path: then the others are delayed too, and it says so
    text = (
        (ROOT / "inventories" / "lab.yaml")
        .read_text()
        .replace("protocol: C, port: 7789}", "protocol: C, port: 7789, shape: path}")
    )
    inv = parse_inventory(text)
    assert inv.pairs["single-az"].shaped_port() is None
    report = preflight({"a1": lab_node("a1", path_drbd=Answer(data(TWO_RESOURCES))), "a2": lab_node("a2")}, inv)
    assert finding(report, "a1", "shared path single-az").detail.endswith("has shape: path, so a fault delays them too")


@pytest.mark.reliability_row(17)
def test_case_17_an_unreadable_resource_list_is_said_not_hidden() -> None:
    pair = [PairPath("single-az", "10.213.1.12", 7789)]
    failing = CommandResult("a1", "drbdsetup show", 20, "", "Could not connect to 'drbd' generic netlink family", 0)
    empty = CommandResult("a1", "cat", 0, "", "", 0.0)
    assert shared_path_checks({"path_drbd": failing, "path_corosync": empty}, pair) == [
        (
            "shared path single-az",
            "warn",
            "cannot list DRBD resources: Could not connect to 'drbd' generic netlink family",
        )
    ]
    absent = CommandResult("a1", "drbdsetup show", 127, "", "sh: drbdsetup: not found", 0)
    assert shared_path_checks({"path_drbd": absent, "path_corosync": empty}, pair)[0][1] == "ok"
