"""SSH hosts and replication addresses are compared as what they mean, not as
strings: one host written two ways is one endpoint; invalid addresses, legacy IPv4 shorthands
and replication addresses no peer can use are refused."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory import load_inventory, parse_inventory
from harness.remote.endpoints import replication_ip, ssh_host

from .test_inventory import GOOD

ROOT = Path(__file__).resolve().parents[2]


def _hosts(h1: str, h2: str, port2: int = 22) -> str:
    return GOOD.replace("host: 192.0.2.10,", f"host: '{h1}',").replace(
        "host: 192.0.2.11,", f"host: '{h2}', port: {port2},"
    )


def _repl(ip1: str, ip2: str = "10.0.0.2") -> str:
    return GOOD.replace("ip: 10.0.0.1,", f"ip: '{ip1}',").replace("ip: 10.0.0.2,", f"ip: '{ip2}',")


@pytest.mark.parametrize(
    ("h1", "h2", "same"),
    [
        ("db1.example.com", "DB1.example.com.", "db1.example.com:22"),
        ("::1", "0:0:0:0:0:0:0:1", r"\[::1\]:22"),
        ("2001:db8::1", "2001:0DB8:0:0::0001", r"\[2001:db8::1\]:22"),
        ("10.0.0.5", "10.0.0.5", "10.0.0.5:22"),
    ],
)
def test_one_host_written_two_ways_is_one_ssh_endpoint(h1: str, h2: str, same: str) -> None:
    with pytest.raises(ConfigError, match=rf"nodes 'n1' and 'n2' have the same ssh endpoint {same}"):
        parse_inventory(_hosts(h1, h2))
    parse_inventory(_hosts(h1, h2, port2=2222))  # another port is another endpoint


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("127.1", r"'127.1' is a shorthand IPv4 address that ssh reads as 127.0.0.1; write 127.0.0.1"),
        ("0x7f.0.0.1", r"'0x7f.0.0.1' is a shorthand IPv4 address that ssh reads as 127.0.0.1"),
        ("010.0.0.1", r"'010.0.0.1' is a shorthand IPv4 address that ssh reads as 8.0.0.1"),
        ("999.1.1.1", r"'999.1.1.1' is not an IPv4 address \(four numbers 0-255"),
        ("1.2.3.4.5", r"'1.2.3.4.5' is not an IPv4 address"),
        ("db1.example.123", r"'db1.example.123' is not an IPv4 address"),
        ("-db1.example.com", r"'-db1' is not a valid host name label"),
        ("db_1.example.com", r"'db_1' is not a valid host name label"),
        ("db1..example.com", r"'db1..example.com' has an empty label"),
        ("a" * 64 + ".example.com", r"label 'a+'\.\.\. of .* is longer than 63 characters"),
        ("2001:db8::g", r"'2001:db8::g' is not an IPv6 address"),
    ],
)
def test_invalid_ssh_hosts_are_refused(host: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"nodes\.n1\.ssh\.host: " + message):
        parse_inventory(_hosts(host, "192.0.2.11"))


def test_an_unquoted_shorthand_is_judged_as_the_address_meant() -> None:
    # YAML reads `host: 127.1` as the number 127.1
    text = GOOD.replace("host: 192.0.2.10,", "host: 127.1,")
    with pytest.raises(ConfigError, match=r"nodes\.n1\.ssh\.host: '127.1' is a shorthand IPv4 address"):
        parse_inventory(text)


@pytest.mark.parametrize(
    ("ip", "message"),
    [
        ("0.0.0.0", "0.0.0.0 is the unspecified address"),
        ("0.1.2.3", r"0.1.2.3 is in 0.0.0.0/8 \(this network\)"),
        ("255.255.255.255", "255.255.255.255 is the broadcast address"),
        ("224.0.0.5", "224.0.0.5 is a multicast address"),
        ("127.0.0.1", "127.0.0.1 is a loopback address"),
        ("169.254.169.254", "169.254.169.254 is link-local"),
        ("240.0.0.1", r"240.0.0.1 is reserved \(240.0.0.0/4\)"),
        ("999.1.1.1", "not an IPv4 address"),
        ("127.1", "not an IPv4 address"),
        ("10.0.0.01", "not an IPv4 address"),
    ],
)
def test_replication_addresses_a_peer_cannot_use_are_refused(ip: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"nodes\.n1\.replication\.ip: .*" + message):
        parse_inventory(_repl(ip))


def test_duplicate_replication_addresses_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"nodes 'n1' and 'n2' share replication ip 10\.0\.0\.2"):
        parse_inventory(_repl("10.0.0.2"))


def test_ssh_hosts_may_be_loopback() -> None:
    inv = parse_inventory(_hosts("127.0.0.1", "localhost", port2=2222))
    assert (inv.nodes["n1"].ssh.host, inv.nodes["n2"].ssh.host) == ("127.0.0.1", "localhost")


def test_the_lab_addresses_pass() -> None:
    inv = load_inventory(ROOT / "inventories" / "lab.yaml")
    assert {n.replication.ip for n in inv.nodes.values()} == {
        "10.213.1.11",
        "10.213.1.12",
        "10.213.1.13",
        "10.213.2.21",
    }


# a last label that reads as a number (``123``, ``0x1f``) makes the name an IPv4 address
labels = st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?\Z").filter(
    lambda label: not re.fullmatch(r"[0-9]+|0x[0-9a-f]*", label)
)


@given(st.lists(labels, min_size=1, max_size=4), st.data())
def test_host_names_normalise_to_one_spelling(parts: list[str], data: st.DataObject) -> None:
    name = ".".join(parts)
    spelled = "".join(c.upper() if data.draw(st.booleans()) else c for c in name) + data.draw(
        st.sampled_from(["", "."])
    )
    assert ssh_host(spelled) == ssh_host(name) == name
    assert ssh_host(ssh_host(spelled)) == ssh_host(spelled)


@given(st.ip_addresses())
def test_ip_addresses_normalise_to_their_compressed_form(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    assert ssh_host(ip.exploded) == ssh_host(str(ip)) == str(ip)


@given(st.ip_addresses(v=4))
def test_a_replication_address_is_usable_or_refused(ip: ipaddress.IPv4Address) -> None:
    unusable = (
        ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
    ) or ip in ipaddress.IPv4Network("0.0.0.0/8")
    if unusable:
        with pytest.raises(ValueError):
            replication_ip(str(ip))
    else:
        assert replication_ip(str(ip)) == str(ip)
