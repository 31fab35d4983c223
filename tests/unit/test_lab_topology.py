"""The lab's topology and rendered boot files, derived from inventories/lab.yaml."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from harness.drbd.provision import render_conf as render_drbd_conf
from harness.errors import ConfigError
from harness.inventory import Inventory, load_inventory, parse_inventory
from harness.lab.render import render_boot_script, router_link_commands, uml_argv
from harness.lab.topology import ROUTER, build_topology, guest_cpus

LAB = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"


@pytest.fixture(scope="module")
def inv() -> Inventory:
    return load_inventory(LAB)


def test_default_topology(inv: Inventory) -> None:
    topo = build_topology(inv)
    assert [g.name for g in topo.nodes] == ["a1", "a2", "a3", "b1"]
    assert {g.az for g in topo.nodes} == {"az-a", "az-b"}
    router = topo.guest(ROUTER)
    # one management leg plus one leg per AZ
    assert [n.bridge for n in router.nics] == ["br0", "br1", "br2"]
    taps = [nic.tap for g in topo.guests for nic in g.nics]
    assert len(taps) == len(set(taps)) and all(len(t) <= 15 for t in taps)
    a1 = topo.guest("a1")
    assert a1.routes == ((ipaddress.IPv4Network("10.213.2.0/24"), ipaddress.IPv4Address("10.213.1.1")),)
    assert topo.bridges[0].address == ipaddress.IPv4Interface("10.213.0.1/24")


def test_router_netem_is_on_az_legs_only(inv: Inventory) -> None:
    assert inv.lab is not None
    cmds = router_link_commands(inv.lab, build_topology(inv))
    assert [c[4] for c in cmds] == ["vec1", "vec2"]
    assert all("delay" in c and "1ms" in c and "limit" in c for c in cmds)


def test_drbd_conf_has_both_pairs(inv: Inventory) -> None:
    conf = render_drbd_conf(inv)
    assert "resource single-az {" in conf and "resource multi-az {" in conf
    assert "on a1 { address 10.213.1.11:7789; }" in conf
    assert "on b1 { address 10.213.2.21:7790; }" in conf
    assert conf.count("protocol C;") == 2


def test_boot_script_primary_skips_sync_only_on_primary(inv: Inventory) -> None:
    topo = build_topology(inv)
    primary = render_boot_script(inv, topo, topo.guest("a1"))
    secondary = render_boot_script(inv, topo, topo.guest("a2"))
    assert "drbdadm new-current-uuid --clear-bitmap single-az" in primary
    assert "drbdadm primary single-az" in primary
    assert "new-current-uuid" not in secondary and "primary" not in secondary.replace("# pair", "")
    assert "multi-az" not in primary  # a1 is not part of the multi-az pair


def test_uml_argv_is_unprivileged_with_gro(inv: Inventory) -> None:
    topo = build_topology(inv)
    argv = uml_argv(inv, topo, topo.guest("b1"))
    assert argv[:4] == ["ip", "netns", "exec", "hlab"]
    assert "--reuid=4242" in argv and "--clear-groups" in argv
    assert all("gro=1" in a for a in argv if a.startswith("vec"))
    # the DRBD backing disk, two scratch disks, the md-nbd leg
    assert sum(a.startswith("ubd") for a in argv) == 4
    assert "umid=hlab-b1" in argv


def test_each_pair_runs_on_one_cpu_and_the_router_with_the_cross_az_pair(inv: Inventory) -> None:
    topo = build_topology(inv)
    cpus = guest_cpus(inv, topo, [0, 1])
    assert cpus == {"a1": 0, "a2": 0, "a3": 1, "b1": 1, ROUTER: 1}
    assert set(guest_cpus(inv, topo, [3]).values()) == {3}  # one CPU: everyone shares it
    assert guest_cpus(inv, topo, []) == {}
    argv = uml_argv(inv, topo, topo.guest("a3"), cpu=cpus["a3"])
    # taskset first, so every process the guest forks inherits the CPU
    assert argv[:4] == ["taskset", "--cpu-list", "1", "ip"]


def _variant(inv_text: str, old: str, new: str) -> str:
    assert old in inv_text
    return inv_text.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("b1", "router", "reserved for the lab's AZ router"),
        ("{ip: 10.213.2.21, iface: vec1}", "{ip: 10.213.1.21, iface: vec1}", None),
        (
            "{ip: 10.213.1.12, iface: vec1}",
            "{ip: 10.213.1.12, iface: eth1}",
            "replication.iface must be vec1",
        ),
        ("host: 10.213.0.21}", "host: 10.213.9.21}", "share one /24 management subnet"),
        ("host: 10.213.0.12}", "host: 10.213.0.2}", r"reserved \(namespace or router\)"),
        ("{ip: 10.213.1.13, iface: vec1}", "{ip: 10.213.1.1, iface: vec1}", "reserved for the router"),
        (
            "scratch_devices: [/dev/ubdb, /dev/ubdc]\n  a2",
            "scratch_devices: [/dev/ubdb, /dev/sda]\n  a2",
            "does not exist in the lab",
        ),
        # an md-nbd pair's leg is the disk the lab adds after the scratch disks
        ("disk: /dev/ubdd, protocol: C, port: 10809", "disk: /dev/ubdc, protocol: C, port: 10809", "leg disk"),
        (
            "primary: a3, secondary: b1, resource: multi-az-md",
            "primary: a1, secondary: b1, resource: multi-az-md",
            "in more than one md-nbd pair",
        ),
    ],
)
def test_bad_lab_inventories(old: str, new: str, message: str | None) -> None:
    text = _variant(LAB.read_text(), old, new)
    if message is None:  # b1 moved into az-a's subnet but keeps AZ az-b: both AZs on one subnet
        with pytest.raises(ConfigError, match=r"share one replication subnet|already uses"):
            build_topology(parse_inventory(text))
        return
    with pytest.raises(ConfigError, match=message):
        build_topology(parse_inventory(text))


def test_non_lab_inventory_refused() -> None:
    text = LAB.read_text().split("\nlab:")[0] + "\n" + LAB.read_text().split("\nx-ssh:")[1].join(["x-ssh:", ""])
    inv = parse_inventory(text.replace("name: lab", "name: nolab"))
    with pytest.raises(ConfigError, match="no `lab:` section"):
        build_topology(inv)
