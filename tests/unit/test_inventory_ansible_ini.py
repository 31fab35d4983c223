"""INI Ansible inventories (harness/inventory/ansible_ini.py) on real public files
(tests/data/ansible/SOURCES.md) and on the syntax Ansible's ini plugin accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory.ansible import convert, load_ansible_inventory, parse_ansible_inventory
from harness.inventory.ansible_ini import expand_host_range
from harness.inventory.ansible_mapping import AnsibleMapping

DATA = Path(__file__).resolve().parents[1] / "data" / "ansible"


def test_linbits_own_inventory_reads_as_ansible_reads_it() -> None:
    inv = load_ansible_inventory(DATA / "linbit-linstor-ansible-hosts.ini")
    nodes = ["192.168.222.10", "192.168.222.11", "192.168.222.12"]
    assert inv.groups["controller"] == ("192.168.222.250",)
    assert inv.groups["satellite"] == ("192.168.222.250", *nodes)
    assert inv.groups["linstor_storage_pool"] == tuple(nodes)
    # [linstor_cluster:children]: the members of both child groups, each once
    assert set(inv.groups["linstor_cluster"]) == {"192.168.222.250", *nodes}
    assert set(inv.groups["all"]) == set(inv.hosts) == {"192.168.222.250", *nodes}


def test_group_vars_children_and_host_vars() -> None:
    inv = load_ansible_inventory(DATA / "kermat-k8s-linstor-ansible-hosts.ini")
    assert inv.groups["multi"] == ("192.168.7.180", "192.168.7.181", "192.168.7.182", "192.168.7.183")
    worker = inv.hosts["192.168.7.182"]
    assert worker["hostname"] == "kube-2"  # host var
    assert worker["ansible_user"] == "linbit"  # [multi:vars] reaches the children's hosts
    assert worker["ansible_ssh_common_args"] == "-o StrictHostKeyChecking=no"  # quotes gone, as Ansible's literal_eval
    assert worker["lb_user"] == "mkereczman"
    assert worker["become"] == "yes"


def test_the_published_password_is_not_copied() -> None:
    inv = load_ansible_inventory(DATA / "kermat-k8s-linstor-ansible-hosts.ini")
    mapping = AnsibleMapping.model_validate(
        {
            "ansible_inventory": "hosts.ini",
            "name": "k8s",
            "defaults": {"az": "az-a", "replication_iface": "eth1", "ssh": {"known_hosts": "/etc/ssh/ssh_known_hosts"}},
            "host_vars": {"replication_ip": "drbd_ip"},
            "node_names": {"192.168.7.181": "kube-1", "192.168.7.182": "kube-2"},
            "pairs": {"p": {"hosts": ["192.168.7.181", "192.168.7.182"], "resource": "r0", "device": "/dev/drbd0"}},
        }
    )
    with pytest.raises(ConfigError, match="no replication ip"):
        convert(mapping, inv)  # the INI has no replication address: said plainly
    assert "ProbablyNotMyPassword1!" not in repr(inv.groups)


def test_an_ini_inventory_is_no_longer_a_yaml_error() -> None:
    text = (DATA / "linbit-linstor-ansible-hosts.ini").read_text()
    # no file name to go by: the [section] first line tells
    assert parse_ansible_inventory(text, "<stdin>").groups["controller"] == ("192.168.222.250",)


def test_ports_ranges_and_ungrouped_hosts() -> None:
    text = "jump.example.com:2222\n[drbd]\nnode[1:3] ansible_user=root\ndb-[a:b]:2200\n[drbd:vars]\nport=7789\n"
    inv = parse_ansible_inventory(text, "hosts")
    assert inv.groups["ungrouped"] == ("jump.example.com",)
    assert inv.hosts["jump.example.com"]["ansible_port"] == 2222
    assert inv.groups["drbd"] == ("node1", "node2", "node3", "db-a", "db-b")
    assert inv.hosts["node2"] == {"ansible_user": "root", "port": 7789}
    assert inv.hosts["db-b"]["ansible_port"] == 2200


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[a:children]\nb\n", "includes undefined group 'b'"),
        ("[a:vars]\nx=1\n", r"\[a:vars\] is for a group that is never defined"),
        ("[a]\nh x\n", "expected key=value host variable assignment, got 'x'"),
        ("[a:vars]\nx\n[a]\nh\n", r"expected key=value in \[a:vars\]"),
        ("[a:hostz]\nh\n", "unknown type 'hostz'"),
        ("[a]\nnode[3:1:0]\n", "begin, end and step"),
        ("[a]\nnode[01:3]\n", "equal-length"),
    ],
)
def test_what_ansible_refuses_is_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_ansible_inventory(text, "hosts.ini")
    assert str(info.value).startswith("hosts.ini")


def test_yaml_inventories_still_read_and_expand_ranges() -> None:
    inv = parse_ansible_inventory("all:\n  children:\n    drbd:\n      hosts:\n        node[1:2]:\n", "inv.yaml")
    assert inv.groups["drbd"] == ("node1", "node2")


@given(st.integers(0, 200), st.integers(0, 200), st.integers(1, 7), st.booleans())
def test_numeric_ranges_expand_like_python_range(beg: int, end: int, step: int, padded: bool) -> None:
    width = len(str(max(beg, end))) + 1 if padded else 0
    b, e = (str(beg).zfill(width), str(end).zfill(width)) if padded else (str(beg), str(end))
    hosts = expand_host_range(f"n[{b}:{e}:{step}].x")
    assert hosts == [f"n{str(i).zfill(width)}.x" for i in range(beg, end + 1, step)]
