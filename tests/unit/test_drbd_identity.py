"""Which node DRBD says this is (harness.drbd.identity), on recorded and published outputs."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.errors import DrbdOutputError
from harness.drbd.identity import ThisHost, judge_identity, read_this_host
from harness.drbd.replication import DrbdReplication
from harness.remote import CommandResult
from tests.doubles import FakeRunner, data

SHOW_84 = data("drbd/84-drbdsetup-show.txt")  # the lab's a1, single-az (recorded)
SHOW_9 = data("drbd/drbd9/drbdsetup-show-tiebreaker-swap.txt")  # node 1 of r0 (drbd9/SOURCES.md)


def test_drbd84_shows_the_on_sections_address_and_no_node_id() -> None:
    assert read_this_host(SHOW_84, "single-az") == ThisHost(None, ("10.213.1.11:7789",))


def test_drbd9_shows_the_node_id_and_one_address_per_path() -> None:
    assert read_this_host(SHOW_9, "r0") == ThisHost(1, ("10.36.50.13:7789", "10.36.50.13:7790"))


def test_another_resource_is_not_there() -> None:
    assert read_this_host(SHOW_84, "multi-az") is None


def test_garbage_is_an_output_error_not_a_crash() -> None:
    with pytest.raises(DrbdOutputError):
        read_this_host(SHOW_9.replace("node-id\t\t\t1;", "node-id one;"), "r0")
    with pytest.raises(DrbdOutputError):
        read_this_host("resource r0 { _this_host {", "r0")


def _judge(show: str, resource: str, *, node_id: int | None, ip: str, port: int) -> tuple[bool, str]:
    verdict = judge_identity(
        read_this_host(show, resource), node="n1", resource=resource, node_id=node_id, ip=ip, port=port
    )
    return verdict.ok, verdict.detail


def test_drbd9_node_id_pin() -> None:
    assert _judge(SHOW_9, "r0", node_id=1, ip="10.36.50.13", port=7790) == (True, "r0: node-id 1, 10.36.50.13:7790")
    assert _judge(SHOW_9, "r0", node_id=2, ip="10.36.50.13", port=7789) == (
        False,
        "n1: DRBD resource r0 has node-id 1, the inventory pins 2 "
        "(another machine, or a re-imaged one with another configuration)",
    )


def test_the_address_is_checked_in_every_version() -> None:
    ok, detail = _judge(SHOW_9, "r0", node_id=1, ip="10.36.50.12", port=7789)  # node 0's address
    assert not ok and detail == (
        "n1: DRBD resource r0 runs on 10.36.50.13:7789, 10.36.50.13:7790, the inventory expects 10.36.50.12:7789"
    )
    assert _judge(SHOW_84, "single-az", node_id=0, ip="10.213.1.11", port=7789)[0]
    assert _judge(SHOW_84, "single-az", node_id=0, ip="10.213.1.11", port=7790) == (
        False,
        "n1: DRBD resource single-az runs on 10.213.1.11:7789, the inventory expects 10.213.1.11:7790",
    )


def test_a_resource_that_is_not_configured_blocks() -> None:
    assert _judge(SHOW_84, "multi-az", node_id=0, ip="10.213.1.11", port=7790) == (
        False,
        "n1: DRBD resource multi-az is not configured here; cannot check its identity",
    )


@given(
    address=st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)),
    port=st.integers(1, 65535),
    exploded=st.booleans(),
)
def test_addresses_compare_by_meaning(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, exploded: bool
) -> None:
    """However DRBD spells the address (IPv6 in brackets, exploded or not), the inventory's
    spelling of the same address matches it, and a different port never does."""
    shown = address.exploded if exploded else str(address)
    word = f"[{shown}]:{port}" if address.version == 6 else f"{shown}:{port}"
    this = ThisHost(None, (word,))
    assert judge_identity(this, node="n", resource="r", node_id=None, ip=str(address), port=port).ok
    other = port % 65535 + 1
    assert not judge_identity(this, node="n", resource="r", node_id=None, ip=str(address), port=other).ok


def test_the_replication_seam_reads_its_own_probe() -> None:
    replication = DrbdReplication(FakeRunner("a1"), "single-az")
    (name, argv), *rest = replication.node_identity_probes().items()
    assert argv == ["drbdsetup", "show", "single-az"] and not rest and name.isidentifier()
    answered = {name: CommandResult("a1", "drbdsetup show", 0, SHOW_84, "", 0.01)}
    assert replication.read_node_identity(answered, node_id=0, ip="10.213.1.11", port=7789).ok


def test_each_lab_node_shows_its_own_address() -> None:
    """Recorded on a lab: a2 and b1 (the secondaries) show their own `on` section's address."""
    assert read_this_host(data("drbd/84-drbdsetup-show-a2.txt"), "single-az") == ThisHost(None, ("10.213.1.12:7789",))
    b1 = read_this_host(data("drbd/84-drbdsetup-show-b1-multi-az.txt"), "multi-az")
    assert b1 == ThisHost(None, ("10.213.2.21:7790",))


def test_a_resource_the_node_does_not_hold_is_a_failed_probe() -> None:
    """Recorded: `drbdsetup show multi-az` on a1 exits 20 with netlink's "No such device"."""
    replication = DrbdReplication(FakeRunner("a1"), "multi-az")
    (name,) = replication.node_identity_probes()
    stderr = data("drbd/84-drbdsetup-show-not-here.stderr")
    verdict = replication.read_node_identity(
        {name: CommandResult("a1", "drbdsetup show multi-az", 20, "", stderr, 0.01)},
        node_id=0,
        ip="10.213.1.11",
        port=7790,
    )
    assert not verdict.ok
    assert verdict.detail == "a1: `drbdsetup show multi-az` failed: received netlink error reply: No such device"
