"""Pairs whose DRBD 9 resource has more nodes: the peers an inventory names beside the pair, and
every way they can be wrong, said with file, line and key before anything runs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory import parse_inventory

NODES = """\
name: three
nodes:
  a1:
    az: eu-west-1a
    ssh: {host: 192.0.2.11, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.0.1.11, iface: eth1}
  a2:
    az: eu-west-1a
    ssh: {host: 192.0.2.12, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.0.1.12, iface: eth1}
  w3:
    az: eu-west-1b
    ssh: {host: 192.0.2.13, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.0.2.13, iface: eth1}
  dr:
    az: us-east-1a
    ssh: {host: 192.0.2.14, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.9.0.14, iface: eth1}
"""


def _inventory(peers: str, extra: str = "") -> str:
    return (
        NODES
        + extra
        + f"pairs:\n  p: {{primary: a1, secondary: a2, resource: r0, device: /dev/drbd0, peers: {peers}}}\n"
    )


def test_peers_with_their_roles_and_replication_addresses() -> None:
    inv = parse_inventory(_inventory("{w3: tiebreaker, dr: {role: dr}}"))
    pair = inv.pairs["p"]
    assert pair.nodes == ("a1", "a2", "dr", "w3")
    assert pair.tiebreakers == {"w3"}
    assert {name: peer.role for name, peer in pair.peers.items()} == {"w3": "tiebreaker", "dr": "dr"}
    assert [inv.nodes[n].replication.ip for n in pair.nodes[2:]] == ["10.9.0.14", "10.0.2.13"]
    assert inv.placement("p") == "same-az"  # the pair's own two nodes decide it


@pytest.mark.parametrize(
    ("peers", "message"),
    [
        ("{b9: diskful}", r"three\.yaml:1: \(top level\): pair 'p': peer 'b9' is not a node"),
        ("{a2: diskful}", "peer 'a2' is already the pair's primary or secondary"),
        ("{w3: witness}", r"pairs\.p\.peers\.w3\.role: Input should be 'diskful', 'tiebreaker' or 'dr'"),
        ("{w3: {role: tiebreaker, disk: none}}", r"pairs\.p\.peers\.w3\.disk: unknown key"),
    ],
)
def test_bad_peers_are_named(peers: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_inventory(_inventory(peers), "three.yaml")


def test_an_md_nbd_array_has_no_peers() -> None:
    text = NODES + (
        "pairs:\n  m: {replication: md-nbd, primary: a1, secondary: a2, resource: m0, device: /dev/md/m0,"
        " disk: /dev/vdb, peers: {w3: diskful}}\n"
    )
    with pytest.raises(ConfigError, match="an md-nbd array has two legs only"):
        parse_inventory(text)


def test_a_peer_shares_the_resources_device_rules() -> None:
    text = NODES + (
        "pairs:\n  p: {primary: a1, secondary: a2, resource: r0, device: /dev/drbd0, peers: {w3: tiebreaker}}\n"
        "  q: {primary: w3, secondary: dr, resource: r1, device: /dev/drbd0}\n"
    )
    with pytest.raises(ConfigError, match="pairs 'p' and 'q' both use /dev/drbd0 on 'w3'"):
        parse_inventory(text)


@given(st.integers(0, 31), st.integers(0, 31))
def test_pinned_node_ids_must_differ_within_a_resource(first: int, second: int) -> None:
    text = (
        _inventory("{w3: tiebreaker}")
        .replace(
            "    replication: {ip: 10.0.1.11, iface: eth1}\n",
            f"    replication: {{ip: 10.0.1.11, iface: eth1}}\n    drbd_node_id: {first}\n",
        )
        .replace(
            "    replication: {ip: 10.0.2.13, iface: eth1}\n",
            f"    replication: {{ip: 10.0.2.13, iface: eth1}}\n    drbd_node_id: {second}\n",
        )
    )
    if first == second:
        with pytest.raises(ConfigError, match=f"nodes 'a1' and 'w3' both have drbd_node_id {first}"):
            parse_inventory(text)
    else:
        assert parse_inventory(text).pairs["p"].tiebreakers == {"w3"}


def test_lab_drbd9_pairs_are_checked_with_the_pairs() -> None:
    lab = "lab: {drbd9_pairs: {p: {primary: a1, secondary: a2, resource: r9, device: /dev/drbd9}}}\n"
    with pytest.raises(ConfigError, match=r"pair 'p' is in both `pairs:` and `lab\.drbd9_pairs:`"):
        parse_inventory(_inventory("{w3: tiebreaker}", lab))
    lab = "lab: {drbd9_pairs: {t: {primary: a1, secondary: w3, resource: r0, device: /dev/drbd7}}}\n"
    with pytest.raises(ConfigError, match="pairs 'p' and 't' both use resource 'r0'"):
        parse_inventory(_inventory("{w3: tiebreaker}", lab))
