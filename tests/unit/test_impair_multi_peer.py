"""One fault toward several of a resource's peers (a node cut off from all of them, or the path
to one DR peer): the same rules for each address, and a read-back that shaped fewer peers than
asked is a mismatch.  The u32 keys are evaluated on packet bytes as the kernel does."""

from __future__ import annotations

import ipaddress
import struct

from hypothesis import given
from hypothesis import strategies as st

from harness.impair.commands import apply_commands
from harness.impair.filters import U32Key, parse_filters
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import verify_applied
from harness.impair.steering import steering_rules, steering_rules_to
from tests.doubles import data

A2 = ipaddress.IPv4Address("10.213.1.12")
B1 = ipaddress.IPv4Address("10.213.2.21")
OTHER = ipaddress.IPv4Address("10.213.1.13")


def _packet(dst: int, protocol: int, sport: int, dport: int) -> bytes:
    src = int(ipaddress.IPv4Address("10.213.1.11"))
    header = struct.pack("!BBHHHBBH", 0x45, 0, 40, 0, 0, 64, protocol, 0) + struct.pack("!II", src, dst)
    return header + struct.pack("!HH", sport, dport)


def _caught(keys: frozenset[U32Key], packet: bytes) -> bool:
    return all(int.from_bytes(packet[k.off : k.off + 4], "big") & k.mask == k.value for k in keys)


@given(
    dst=st.sampled_from([A2, B1, OTHER]),
    protocol=st.sampled_from([1, 6, 17]),
    sport=st.sampled_from([7791, 22, 40000]),
    dport=st.sampled_from([7791, 5405, 40000]),
    port=st.sampled_from([7791, None]),
)
def test_every_listed_peer_and_no_other_is_shaped(
    dst: ipaddress.IPv4Address, protocol: int, sport: int, dport: int, port: int | None
) -> None:
    packet = _packet(int(dst), protocol, sport, dport)
    rules = steering_rules_to([A2, B1, A2], port)
    assert len(rules) == 2 * len(steering_rules(A2, port))  # each address once
    caught = any(_caught(rule.keys, packet) for rule in rules)
    alone = any(_caught(rule.keys, packet) for rule in steering_rules(dst, port))
    assert caught == (dst in (A2, B1) and alone)


def test_one_peer_is_what_it_always_was() -> None:
    profile = NetemProfile("cut", loss_pct=100.0)
    assert apply_commands(profile, "vec1", str(A2), port=7791, also_to=()) == apply_commands(
        profile, "vec1", str(A2), port=7791
    )
    both = apply_commands(profile, "vec1", str(A2), port=7791, also_to=[str(B1)])
    filters = [argv for argv in both if argv[1] == "filter"]
    assert [argv[argv.index("dst") + 1] for argv in filters] == ["10.213.1.12/32"] * 3 + ["10.213.2.21/32"] * 3


def test_a_read_back_shaping_fewer_peers_than_asked_is_a_mismatch() -> None:
    """The recorded read-back of a fault toward a2 alone (iproute2 6.1 on the lab), judged as a
    fault that should also shape the path to b1."""
    profile = NetemProfile("wan", delay_s=0.005)
    qdiscs = parse_qdiscs(data("tc/versions/iproute2-6.1-qdisc-harness-delay5ms-port.json"))
    filters = parse_filters(data("tc/versions/iproute2-6.1-filter-harness-u32-port.json"))
    assert verify_applied(profile, qdiscs, filters, str(A2), port=7789) == []
    missing = verify_applied(profile, qdiscs, filters, str(A2), port=7789, also_to=[str(B1)])
    assert len(missing) == 3 and all("to 10.213.2.21" in line for line in missing)
