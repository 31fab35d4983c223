"""The embedded lab's shape, derived from its inventory, and the files each guest boots with.

Pure functions only: no processes, no files written.  The inventory (inventories/lab.yaml)
names the nodes, their AZs and addresses; from it we derive

* one management bridge that carries SSH (the namespace itself has an address on it);
* one bridge per AZ that carries replication traffic;
* a router guest with one leg on every AZ bridge, whose netem/rate emulate AZ distance —
  kept off the nodes' own qdiscs, where the harness puts its impairment;
* per guest: taps, addresses, routes, disks, and a rendered ``boot.sh``;
* one ``drbd.conf`` (DRBD 8.4 syntax) with a resource per inventory pair.
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import ConfigError
from harness.inventory.models import Inventory, LabSpec
from harness.lab.xstate import XSTATE_SHIM
from harness.units import format_duration, format_rate_bits

__all__ = [
    "ROUTER",
    "Bridge",
    "Guest",
    "LabTopology",
    "Nic",
    "build_topology",
    "render_boot_script",
    "render_drbd_conf",
    "uml_argv",
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


def _lab_spec(inv: Inventory) -> LabSpec:
    if inv.lab is None:
        raise ConfigError(f"inventory {inv.name!r} has no `lab:` section; it is not an embedded-lab inventory")
    return inv.lab


def _iface_in(net: ipaddress.IPv4Network, host: int) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(f"{net.network_address + host}/{net.prefixlen}")


def build_topology(inv: Inventory) -> LabTopology:
    """Derive bridges, guests and addresses; ConfigError if the inventory cannot be a lab."""
    spec = _lab_spec(inv)
    problems: list[str] = []
    if ROUTER in inv.nodes:
        problems.append(f"node name {ROUTER!r} is reserved for the lab's AZ router")
    mgmt_nets = {
        ipaddress.IPv4Interface(f"{_ip(n.ssh.host, name, problems)}/24").network for name, n in inv.nodes.items()
    }
    if len(mgmt_nets) != 1:
        problems.append(
            f"all lab nodes' ssh.host must share one /24 management subnet, got {sorted(map(str, mgmt_nets))}"
        )
    key_path = spec.state_dir / "keys" / "lab_key"
    known_hosts = spec.state_dir / "known_hosts"
    az_subnets: dict[str, ipaddress.IPv4Network] = {}
    for name, node in sorted(inv.nodes.items()):
        if node.ssh.netns != spec.netns:
            problems.append(f"node {name!r}: ssh.netns must be the lab's namespace {spec.netns!r}")
        if node.ssh.key != key_path:
            problems.append(f"node {name!r}: ssh.key must be {key_path} (the lab generates it)")
        if node.ssh.known_hosts != known_hosts:
            problems.append(f"node {name!r}: ssh.known_hosts must be {known_hosts} (the lab writes it)")
        if node.ssh.port != 22 or node.ssh.user != "root":
            problems.append(f"node {name!r}: lab guests accept root on port 22 only")
        if node.replication.iface != REPLICATION_IFACE:
            problems.append(f"node {name!r}: replication.iface must be {REPLICATION_IFACE} in the lab")
        net = ipaddress.IPv4Interface(f"{node.replication.ip}/24").network
        if node.az in az_subnets and az_subnets[node.az] != net:
            problems.append(f"node {name!r}: AZ {node.az!r} already uses {az_subnets[node.az]}, not {net}")
        az_subnets.setdefault(node.az, net)
        if int(ipaddress.IPv4Address(node.replication.ip)) - int(net.network_address) == _ROUTER_AZ_HOST:
            problems.append(f"node {name!r}: {node.replication.ip} is reserved for the router")
        extra = tuple(f"/dev/ubd{chr(ord('b') + i)}" for i in range(spec.extra_disks))
        for dev in node.scratch_devices:
            if dev not in extra:
                problems.append(f"node {name!r}: scratch device {dev} does not exist in the lab (it has {list(extra)})")
    if len(set(az_subnets.values())) != len(az_subnets):
        problems.append("two AZs share one replication subnet")
    if problems:
        raise ConfigError("lab inventory problems:\n  " + "\n  ".join(problems))
    mgmt = next(iter(mgmt_nets))
    for name, node in inv.nodes.items():
        offset = int(ipaddress.IPv4Address(node.ssh.host)) - int(mgmt.network_address)
        if offset in (_NS_HOST, _ROUTER_MGMT_HOST):
            problems.append(f"node {name!r}: {node.ssh.host} is reserved (namespace or router)")
    if mgmt in az_subnets.values():
        problems.append(f"management subnet {mgmt} must differ from every AZ subnet")
    if problems:
        raise ConfigError("lab inventory problems:\n  " + "\n  ".join(problems))

    azs = sorted(az_subnets)
    bridges = [Bridge("br0", "management (ssh)", _iface_in(mgmt, _NS_HOST))]
    az_bridge = {az: f"br{i + 1}" for i, az in enumerate(azs)}
    bridges += [Bridge(az_bridge[az], f"AZ {az} (replication)", None) for az in azs]

    guests: list[Guest] = []
    disks_per_node = 1 + spec.extra_disks
    for gi, (name, node) in enumerate(sorted(inv.nodes.items())):
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
        routes = tuple((az_subnets[other], via) for other in azs if other != node.az)
        disks = tuple(f"{name}-{d}.img" for d in range(disks_per_node))
        guests.append(Guest(name, "node", node.az, nics, routes, disks))
    ri = len(guests)
    router_nics = [Nic("vec0", f"t{ri}m", "br0", _iface_in(mgmt, _ROUTER_MGMT_HOST))]
    for i, az in enumerate(azs):
        router_nics.append(Nic(f"vec{i + 1}", f"t{ri}z{i}", az_bridge[az], _iface_in(az_subnets[az], _ROUTER_AZ_HOST)))
    guests.append(Guest(ROUTER, "router", None, tuple(router_nics), (), ()))
    return LabTopology(spec.netns, mgmt, tuple(bridges), tuple(guests), az_subnets)


def _ip(text: str, node: str, problems: list[str]) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ipaddress.AddressValueError:
        problems.append(f"node {node!r}: lab ssh.host must be an IPv4 address, got {text!r}")
        return "0.0.0.0"


def _netem_args(spec: LabSpec) -> list[str]:
    args = ["netem", "delay", format_duration(spec.az_link.delay)]
    if spec.az_link.jitter:
        args.append(format_duration(spec.az_link.jitter))
    if spec.az_link.rate:
        args += ["rate", format_rate_bits(spec.az_link.rate)]
    # Large limit: at 1 ms and multi-Gbit/s the default 1000 packets would tail-drop (P11).
    return [*args, "limit", "20000"]


def router_link_commands(spec: LabSpec, topo: LabTopology) -> list[list[str]]:
    """tc commands that set AZ distance on every AZ leg of the router (idempotent)."""
    router = topo.guest(ROUTER)
    return [
        ["tc", "qdisc", "replace", "dev", nic.guest_iface, "root", "handle", "1:", *_netem_args(spec)]
        for nic in router.nics[1:]
    ]


def render_boot_script(inv: Inventory, topo: LabTopology, guest: Guest) -> str:
    """The guest-specific part of boot (sourced by init2.sh): network, then DRBD or routing."""
    spec = _lab_spec(inv)
    q = shlex.join
    lines = [
        "# rendered by harness.lab.topology; sourced by init2.sh in a background subshell",
        "set -ex",
        # Any failing step leaves /run/lab-failed, which `lab up` reports with this log.
        "trap 'echo failed > /run/lab-failed' EXIT",
    ]
    for nic in guest.nics:
        lines.append(q(["ip", "addr", "add", str(nic.address), "dev", nic.guest_iface]))
        lines.append(q(["ip", "link", "set", nic.guest_iface, "up"]))
    if guest.role == "node":
        # Lab quirk: a UML guest that is not scheduled for a moment drops received frames in
        # its vector driver; under two parallel cells on a 2-core host that costs a TCP
        # retransmission timeout, whose 200 ms floor shows up as p99 ≈ 213 ms stalls in
        # single-AZ QD1 writes.  A 5 ms floor on the replication routes keeps a lost frame a
        # lost frame, not a stall.  (Real cloud networks do not drop like this.)
        repl = guest.nics[1]
        lines.append(
            q(
                [
                    "ip",
                    "route",
                    "replace",
                    str(repl.address.network),
                    "dev",
                    REPLICATION_IFACE,
                    "proto",
                    "kernel",
                    "scope",
                    "link",
                    "src",
                    str(repl.address.ip),
                    "rto_min",
                    "5ms",
                ]
            )
        )
    for net, via in guest.routes:
        lines.append(q(["ip", "route", "add", str(net), "via", str(via), "dev", REPLICATION_IFACE, "rto_min", "5ms"]))
    if guest.role == "router":
        lines.append("echo 1 > /proc/sys/net/ipv4/ip_forward")
        lines.append("modprobe sch_netem")
        lines += [q(cmd) for cmd in router_link_commands(spec, topo)]
        lines += ["trap - EXIT", "echo ready > /run/lab-ready"]
        return "\n".join(lines) + "\n"
    # Load what the harness's impairment and the disk studies use; real nodes autoload these.
    lines.append("modprobe -a drbd sch_netem sch_tbf sch_prio sch_htb cls_u32 raid0")
    lines.append(q(["cp", f"{GUEST_LABDIR}/drbd.conf", "/etc/drbd.conf"]))
    # A guest that comes back keeps its DRBD metadata: restarted by the lab after a crash
    # (labrejoin=1 on its command line), or rebooted in place by its own kernel after a panic
    # (a sysrq crash: the same command line, but this guest has booted before).
    booted = f"{GUEST_LABDIR}/guests/{guest.name}/booted-once"
    lines.append(
        f"if grep -q labrejoin=1 /proc/cmdline || [ -e {shlex.quote(booted)} ]; then rejoin=1; else rejoin=0; fi"
    )
    for pname, pair in sorted(inv.pairs.items()):
        if guest.name not in (pair.primary, pair.secondary):
            continue
        res = pair.resource
        # A guest restarted after a crash (labrejoin=1 on its kernel command line) keeps its
        # DRBD metadata: it attaches, reconnects and resyncs; it never becomes primary itself.
        lines.append(
            f'if [ "$rejoin" = 1 ]; then drbdadm up {shlex.quote(res)}; '
            f"else drbdadm create-md --force {shlex.quote(res)} && drbdadm up {shlex.quote(res)}; fi"
        )
        if guest.name == pair.primary:
            # Both backing disks are fresh all-zero sparse files, so skipping the initial sync
            # is correct here (LAB-NOTES §4); never do this on disks that held data.
            lines.append('if [ "$rejoin" = 0 ]; then')
            lines.append(
                "for i in $(seq 600); do "
                f'[ "$(drbdadm cstate {shlex.quote(res)})" = Connected ] && break; sleep 0.1; done'
            )
            lines.append(f'[ "$(drbdadm cstate {shlex.quote(res)})" = Connected ]')
            lines.append(f"drbdadm new-current-uuid --clear-bitmap {shlex.quote(res)}")
            lines.append(f"drbdadm primary {shlex.quote(res)}")
            lines.append("fi")
        lines.append(f"# pair {pname}")
    lines += [q(["touch", booted]), "trap - EXIT", "echo ready > /run/lab-ready"]
    return "\n".join(lines) + "\n"


def render_drbd_conf(inv: Inventory) -> str:
    """DRBD 8.4 configuration with one resource per pair (backing disk: the node's first ubd)."""
    out = [
        "# rendered by harness.lab.topology for the embedded lab (DRBD 8.4)",
        "global { usage-count no; }",
        "common {",
        # ping-int 1 / ping-timeout 1 s: a lost peer is noticed in about 2 s instead of 11-20 s
        # (LAB-NOTES P7), which the failover scenario relies on.
        "  net { ping-int 1; ping-timeout 10; }",
        # The 8.4 default resync controller manages ~250 KiB/s to ~24 MiB/s here; after a
        # failover the old primary must catch up in seconds, not minutes (P7).
        "  disk { c-plan-ahead 0; resync-rate 1000M; }",
        "}",
    ]
    for _pname, pair in sorted(inv.pairs.items()):
        out.append(f"resource {pair.resource} {{")
        out.append(f"  net {{ protocol {pair.protocol}; }}")
        out.append(f"  device {pair.device};")
        out.append("  disk /dev/ubda;")
        out.append("  meta-disk internal;")
        for node_name in (pair.primary, pair.secondary):
            node = inv.nodes[node_name]
            out.append(f"  on {node_name} {{ address {node.replication.ip}:{pair.port}; }}")
        out.append("}")
    return "\n".join(out) + "\n"


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


def uml_argv(
    inv: Inventory,
    topo: LabTopology,
    guest: Guest,
    linux: str = "/usr/bin/linux.uml",
    *,
    rejoin: bool = False,
    cpu: int | None = None,
) -> list[str]:
    """Command that boots ``guest`` as the unprivileged lab uid inside the lab namespace
    (``rejoin``: after a crash, keep the DRBD metadata on its disks; ``cpu``: the host CPU
    it runs on, see :func:`guest_cpus`)."""
    spec = _lab_spec(inv)
    state = spec.state_dir
    uid = str(spec.guest_uid)
    # taskset first: the affinity is inherited through every exec and by every process the
    # guest forks (UML runs each guest address space as a host process)
    argv = ["taskset", "--cpu-list", str(cpu)] if cpu is not None else []
    argv += [
        "ip",
        "netns",
        "exec",
        topo.netns,
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
    ]
    argv += [
        # a panicking guest aborts (UML dumps core): no core file of guest memory on the host
        "prlimit",
        "--core=0",
        # UML 6.1 on hosts with a large XSAVE area (AVX-512, AMX): see harness.lab.xstate
        "env",
        f"LD_PRELOAD={state / 'guest' / XSTATE_SHIM}",
        linux,
        f"umid={guest.umid(topo.netns)}",
        f"uml_dir={state / 'uml'}",
        f"mem={spec.guest_memory // (1024 * 1024)}M",
        "rootfstype=hostfs",
        "rootflags=/",
        "ro",
        f"init={state / 'guest' / 'init1.sh'}",
        "con=null",
        "con0=fd:0,fd:1",
    ]
    for i, nic in enumerate(guest.nics):
        # gro=1 is required: without it GSO frames from the bridge are dropped (LAB-NOTES P3).
        argv.append(f"vec{i}:transport=tap,ifname={nic.tap},gro=1")
    for i, disk in enumerate(guest.disks):
        argv.append(f"ubd{i}d={state / 'disks' / disk}")
    argv += [f"labnode={guest.name}", f"labdir={state}"]
    if rejoin:
        argv.append("labrejoin=1")
    return argv


def guest_dir(state_dir: Path, guest: Guest) -> Path:
    return state_dir / "guests" / guest.name
