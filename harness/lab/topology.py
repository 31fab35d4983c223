"""The embedded lab's shape, derived from its inventory.

Pure functions only: no processes, no files written.  The inventory (inventories/lab.yaml)
names the nodes, their AZs and addresses; from it we derive

* one management bridge that carries SSH (the namespace itself has an address on it);
* one bridge per AZ that carries replication traffic;
* a router guest with one leg on every AZ bridge, whose netem/rate emulate AZ distance —
  kept off the nodes' own qdiscs, where the harness puts its impairment;
* per guest: taps, addresses, routes, disks, and the host CPU it runs on.

What each guest boots with (its ``boot.sh``, the router's netem, the UML command line) is
rendered from this shape by :mod:`harness.lab.render`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import ConfigError
from harness.inventory.models import Inventory, LabSpec, NodeSpec

__all__ = [
    "GUEST_LABDIR",
    "REPLICATION_IFACE",
    "ROUTER",
    "Bridge",
    "Guest",
    "LabTopology",
    "Nic",
    "build_topology",
    "drbd_disks",
    "guest_cpus",
    "guest_dir",
    "lab_spec",
]

ROUTER = "router"
# Where a guest sees the lab state directory (init2.sh bind-mounts it there).
GUEST_LABDIR = "/lab"
REPLICATION_IFACE = "vec1"
# Host addresses the lab reserves in each subnet: .1 for the namespace on the management
# bridge and for the router on every AZ bridge; .2 for the router's management leg.
_NS_HOST = 1
_ROUTER_MGMT_HOST = 2
_ROUTER_AZ_HOST = 1


@dataclass(frozen=True)
class Nic:
    """One guest network interface (``vecN`` in the guest) and its tap on a bridge."""

    guest_iface: str
    tap: str
    bridge: str
    address: ipaddress.IPv4Interface


@dataclass(frozen=True)
class Bridge:
    """A bridge in the lab namespace; ``address`` is the namespace's own address on it."""

    name: str
    purpose: str
    address: ipaddress.IPv4Interface | None


@dataclass(frozen=True)
class Guest:
    """A user-mode-linux guest: a cluster node or the AZ router."""

    name: str
    role: Literal["node", "router"]
    az: str | None
    nics: tuple[Nic, ...]
    routes: tuple[tuple[ipaddress.IPv4Network, ipaddress.IPv4Address], ...]
    disks: tuple[str, ...]

    @property
    def mgmt_ip(self) -> str:
        return str(self.nics[0].address.ip)

    def umid(self, netns: str) -> str:
        return f"{netns}-{self.name}"


@dataclass(frozen=True)
class LabTopology:
    """Everything needed to create the lab's network and guests."""

    netns: str
    mgmt_subnet: ipaddress.IPv4Network
    bridges: tuple[Bridge, ...]
    guests: tuple[Guest, ...]
    az_subnets: dict[str, ipaddress.IPv4Network]

    def guest(self, name: str) -> Guest:
        for g in self.guests:
            if g.name == name:
                return g
        raise KeyError(name)

    @property
    def nodes(self) -> tuple[Guest, ...]:
        return tuple(g for g in self.guests if g.role == "node")


def lab_spec(inv: Inventory) -> LabSpec:
    if inv.lab is None:
        raise ConfigError(f"inventory {inv.name!r} has no `lab:` section; it is not an embedded-lab inventory")
    return inv.lab


def _iface_in(net: ipaddress.IPv4Network, host: int) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(f"{net.network_address + host}/{net.prefixlen}")


def _raise_if(problems: list[str]) -> None:
    if problems:
        raise ConfigError("lab inventory problems:\n  " + "\n  ".join(problems))


def _mgmt_subnets(inv: Inventory, problems: list[str]) -> set[ipaddress.IPv4Network]:
    """The /24s the nodes' ssh.host addresses lie in; one is a lab's management subnet."""
    mgmt_nets = {
        ipaddress.IPv4Interface(f"{_ip(n.ssh.host, name, problems)}/24").network for name, n in inv.nodes.items()
    }
    if len(mgmt_nets) != 1:
        problems.append(
            f"all lab nodes' ssh.host must share one /24 management subnet, got {sorted(map(str, mgmt_nets))}"
        )
    return mgmt_nets


def _ssh_problems(name: str, node: NodeSpec, spec: LabSpec) -> list[str]:
    """A lab guest is reached in the lab's namespace, as root on port 22, with the lab's own key."""
    key_path = spec.state_dir / "keys" / "lab_key"
    known_hosts = spec.state_dir / "known_hosts"
    problems: list[str] = []
    if node.ssh.netns != spec.netns:
        problems.append(f"node {name!r}: ssh.netns must be the lab's namespace {spec.netns!r}")
    if node.ssh.key != key_path:
        problems.append(f"node {name!r}: ssh.key must be {key_path} (the lab generates it)")
    if node.ssh.known_hosts != known_hosts:
        problems.append(f"node {name!r}: ssh.known_hosts must be {known_hosts} (the lab writes it)")
    if node.ssh.port != 22 or node.ssh.user != "root":
        problems.append(f"node {name!r}: lab guests accept root on port 22 only")
    return problems


def _replication_problems(name: str, node: NodeSpec, az_subnets: dict[str, ipaddress.IPv4Network]) -> list[str]:
    """The node's replication leg: the lab's interface, its AZ's one subnet, not the router's address.

    Records the node's AZ subnet in ``az_subnets`` when it is the AZ's first node."""
    problems: list[str] = []
    if node.replication.iface != REPLICATION_IFACE:
        problems.append(f"node {name!r}: replication.iface must be {REPLICATION_IFACE} in the lab")
    net = ipaddress.IPv4Interface(f"{node.replication.ip}/24").network
    if node.az in az_subnets and az_subnets[node.az] != net:
        problems.append(f"node {name!r}: AZ {node.az!r} already uses {az_subnets[node.az]}, not {net}")
    az_subnets.setdefault(node.az, net)
    if int(ipaddress.IPv4Address(node.replication.ip)) - int(net.network_address) == _ROUTER_AZ_HOST:
        problems.append(f"node {name!r}: {node.replication.ip} is reserved for the router")
    return problems


def _scratch_problems(name: str, node: NodeSpec, spec: LabSpec) -> list[str]:
    extra = tuple(f"/dev/ubd{chr(ord('b') + i)}" for i in range(spec.extra_disks))
    return [
        f"node {name!r}: scratch device {dev} does not exist in the lab (it has {list(extra)})"
        for dev in node.scratch_devices
        if dev not in extra
    ]


def _ubd(index: int) -> str:
    return f"/dev/ubd{chr(ord('a') + index)}"


def drbd_disks(inv: Inventory) -> dict[str, str]:
    """Each DRBD resource's backing disk on its nodes: the first disk for a pair's resource, and
    one disk of its own, after the scratch disks and the md-nbd leg, for each resource of more
    nodes (a node of such a resource is also in a pair of its own, which holds the first)."""
    spec = lab_spec(inv)
    md = any(pair.replication == "md-nbd" for pair in inv.pairs.values())
    first_own = 1 + spec.extra_disks + (1 if md else 0)
    drbd = sorted((name, pair) for name, pair in inv.pairs.items() if pair.replication == "drbd")
    multi = [pair.resource for _, pair in drbd if pair.peers]
    disks = {pair.resource: _ubd(0) for _, pair in drbd if not pair.peers}
    disks.update({resource: _ubd(first_own + i) for i, resource in enumerate(multi)})
    return disks


def _md_nbd_nodes(inv: Inventory, spec: LabSpec, problems: list[str]) -> list[str]:
    """The nodes of the md-nbd pairs, once per pair: each takes one more disk, after the scratch disks."""
    md_leg = _ubd(1 + spec.extra_disks)
    md_nodes: list[str] = []
    for pname, pair in sorted(inv.pairs.items()):
        if pair.replication != "md-nbd":
            continue
        if pair.disk != md_leg:
            problems.append(f"pair {pname!r}: an md-nbd pair's disk is the lab's leg disk {md_leg}, not {pair.disk}")
        md_nodes += [pair.primary, pair.secondary]
    for name in sorted({n for n in md_nodes if md_nodes.count(n) > 1}):
        problems.append(f"node {name!r}: in more than one md-nbd pair (the lab gives each node one leg)")
    return md_nodes


def _reserved_problems(
    inv: Inventory, mgmt: ipaddress.IPv4Network, az_subnets: dict[str, ipaddress.IPv4Network]
) -> list[str]:
    """The namespace's and the router's own management addresses, and the AZ subnets, are not the nodes'."""
    problems: list[str] = []
    for name, node in inv.nodes.items():
        offset = int(ipaddress.IPv4Address(node.ssh.host)) - int(mgmt.network_address)
        if offset in (_NS_HOST, _ROUTER_MGMT_HOST):
            problems.append(f"node {name!r}: {node.ssh.host} is reserved (namespace or router)")
    if mgmt in az_subnets.values():
        problems.append(f"management subnet {mgmt} must differ from every AZ subnet")
    return problems


def _node_guest(
    gi: int,
    name: str,
    node: NodeSpec,
    *,
    mgmt: ipaddress.IPv4Network,
    az_subnets: dict[str, ipaddress.IPv4Network],
    az_bridge: dict[str, str],
    disks_per_node: int,
) -> Guest:
    net = az_subnets[node.az]
    nics = (
        Nic("vec0", f"t{gi}m", "br0", ipaddress.IPv4Interface(f"{node.ssh.host}/{mgmt.prefixlen}")),
        Nic(
            "vec1",
            f"t{gi}r",
            az_bridge[node.az],
            ipaddress.IPv4Interface(f"{node.replication.ip}/{net.prefixlen}"),
        ),
    )
    via = net.network_address + _ROUTER_AZ_HOST
    routes = tuple((az_subnets[other], via) for other in sorted(az_subnets) if other != node.az)
    disks = tuple(f"{name}-{d}.img" for d in range(disks_per_node))
    return Guest(name, "node", node.az, nics, routes, disks)


def _router_guest(
    ri: int, mgmt: ipaddress.IPv4Network, az_subnets: dict[str, ipaddress.IPv4Network], az_bridge: dict[str, str]
) -> Guest:
    router_nics = [Nic("vec0", f"t{ri}m", "br0", _iface_in(mgmt, _ROUTER_MGMT_HOST))]
    for i, az in enumerate(sorted(az_subnets)):
        router_nics.append(Nic(f"vec{i + 1}", f"t{ri}z{i}", az_bridge[az], _iface_in(az_subnets[az], _ROUTER_AZ_HOST)))
    return Guest(ROUTER, "router", None, tuple(router_nics), (), ())


def build_topology(inv: Inventory) -> LabTopology:
    """Derive bridges, guests and addresses; ConfigError if the inventory cannot be a lab."""
    spec = lab_spec(inv)
    problems: list[str] = []
    if ROUTER in inv.nodes:
        problems.append(f"node name {ROUTER!r} is reserved for the lab's AZ router")
    mgmt_nets = _mgmt_subnets(inv, problems)
    az_subnets: dict[str, ipaddress.IPv4Network] = {}
    for name, node in sorted(inv.nodes.items()):
        problems += _ssh_problems(name, node, spec)
        problems += _replication_problems(name, node, az_subnets)
        problems += _scratch_problems(name, node, spec)
    md_nodes = _md_nbd_nodes(inv, spec, problems)
    for name in sorted(set(spec.nodes) - set(inv.nodes)):
        problems.append(f"lab.nodes.{name}: no node {name!r} in `nodes:`")
    if len(set(az_subnets.values())) != len(az_subnets):
        problems.append("two AZs share one replication subnet")
    _raise_if(problems)
    mgmt = next(iter(mgmt_nets))
    _raise_if(_reserved_problems(inv, mgmt, az_subnets))

    azs = sorted(az_subnets)
    bridges = [Bridge("br0", "management (ssh)", _iface_in(mgmt, _NS_HOST))]
    az_bridge = {az: f"br{i + 1}" for i, az in enumerate(azs)}
    bridges += [Bridge(az_bridge[az], f"AZ {az} (replication)", None) for az in azs]

    # a resource of more than two nodes has a disk of its own on every node (see drbd_disks)
    multi = sum(1 for pair in inv.pairs.values() if pair.peers)
    disks_per_node = 1 + spec.extra_disks + (1 if md_nodes else 0) + multi
    guests = [
        _node_guest(
            gi, name, node, mgmt=mgmt, az_subnets=az_subnets, az_bridge=az_bridge, disks_per_node=disks_per_node
        )
        for gi, (name, node) in enumerate(sorted(inv.nodes.items()))
    ]
    guests.append(_router_guest(len(guests), mgmt, az_subnets, az_bridge))
    return LabTopology(spec.netns, mgmt, tuple(bridges), tuple(guests), az_subnets)


def _ip(text: str, node: str, problems: list[str]) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ipaddress.AddressValueError:
        problems.append(f"node {node!r}: lab ssh.host must be an IPv4 address, got {text!r}")
        return "0.0.0.0"


def guest_cpus(inv: Inventory, topo: LabTopology, cpus: Sequence[int]) -> dict[str, int]:
    """The host CPU each guest runs on when the lab pins pairs (``lab.pin_pairs``).

    Why: a UML guest is one host process with one vCPU.  Unpinned, a replicated write on a
    pair wakes the peer's process on whichever CPU the scheduler picks, and the cross-CPU
    wake-up (an IPI, and on a VM host a halted vCPU) made QD1 replicated writes swing 1.7x
    between identical 5 s cells (1,171-1,987 IOPS, measured 2026-11-21).  Both guests of a
    pair on one CPU hand over on that CPU: 3,663-3,847 IOPS, and the pairs, on different
    CPUs, no longer slow each other when two cells run at once.

    Pairs take the CPUs in inventory order, round robin; a node of several pairs keeps its
    first pair's CPU; the AZ router goes with the first pair whose traffic crosses it.
    Guests of no pair stay unpinned.
    """
    if not cpus:
        return {}
    placed: dict[str, int] = {}
    router_cpu: int | None = None
    for i, pair in enumerate(inv.pairs.values()):
        cpu = cpus[i % len(cpus)]
        for node in (pair.primary, pair.secondary):
            placed.setdefault(node, cpu)
        if router_cpu is None and inv.nodes[pair.primary].az != inv.nodes[pair.secondary].az:
            router_cpu = cpu
    if router_cpu is not None and any(g.role == "router" for g in topo.guests):
        placed[ROUTER] = router_cpu
    return placed


def guest_dir(state_dir: Path, guest: Guest) -> Path:
    return state_dir / "guests" / guest.name
