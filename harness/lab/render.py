"""What each lab guest boots with: its ``boot.sh``, the router's AZ link, the UML command line.

Pure functions of the inventory and the shape :mod:`harness.lab.topology` derives from it; the
DRBD parts (configuration, resource creation) come from :mod:`harness.drbd.provision`.
"""

from __future__ import annotations

import shlex

from harness.drbd.provision import boot_lines
from harness.inventory.models import Inventory, LabSpec
from harness.lab.drbd9 import GUEST_MODULES, DrbdModules
from harness.lab.roots import STAGE0_PATH, node_root
from harness.lab.topology import GUEST_LABDIR, REPLICATION_IFACE, ROUTER, Guest, LabTopology, lab_spec
from harness.lab.xstate import XSTATE_SHIM
from harness.mdnbd.provision import boot_lines as md_nbd_boot_lines
from harness.units import MIB, format_duration, format_rate_bits

__all__ = ["render_boot_script", "router_link_commands", "uml_argv"]


def _netem_args(spec: LabSpec) -> list[str]:
    args = ["netem", "delay", format_duration(spec.az_link.delay)]
    if spec.az_link.jitter:
        args.append(format_duration(spec.az_link.jitter))
    if spec.az_link.rate:
        args += ["rate", format_rate_bits(spec.az_link.rate)]
    # Large limit: at 1 ms and multi-Gbit/s the default 1000 packets would tail-drop.
    return [*args, "limit", "20000"]


def router_link_commands(spec: LabSpec, topo: LabTopology) -> list[list[str]]:
    """tc commands that set AZ distance on every AZ leg of the router (idempotent)."""
    router = topo.guest(ROUTER)
    return [
        ["tc", "qdisc", "replace", "dev", nic.guest_iface, "root", "handle", "1:", *_netem_args(spec)]
        for nic in router.nics[1:]
    ]


def _drbd_modules(modules: DrbdModules | None) -> list[str]:
    """Load what the harness's impairment and the disk studies use (real nodes autoload these),
    and DRBD: the kernel's own 8.4, or the supplied DRBD 9 modules in their order."""
    if modules is None:
        return ["modprobe -a drbd sch_netem sch_tbf sch_prio sch_htb cls_u32 raid0"]
    return ["modprobe -a sch_netem sch_tbf sch_prio sch_htb cls_u32 raid0", *modules.guest_lines(_MODULES_DIR)]


#: where a guest reads the supplied DRBD 9 modules (the lab copies them into its state directory)
_MODULES_DIR = f"{GUEST_LABDIR}/{GUEST_MODULES}"


def render_boot_script(inv: Inventory, topo: LabTopology, guest: Guest, modules: DrbdModules | None = None) -> str:
    """The guest-specific part of boot (sourced by init2.sh): network, then DRBD (its kernel's,
    or the DRBD 9 ``modules``) or routing."""
    spec = lab_spec(inv)
    q = shlex.join
    lines = [
        "# rendered by harness.lab.render; sourced by init2.sh in a background subshell",
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
    lines += _drbd_modules(modules)
    lines.append(q(["cp", f"{GUEST_LABDIR}/drbd.conf", "/etc/drbd.conf"]))
    # A guest that comes back keeps its DRBD metadata: restarted by the lab after a crash
    # (labrejoin=1 on its command line), or rebooted in place by its own kernel after a panic
    # (a sysrq crash: the same command line, but this guest has booted before).
    booted = f"{GUEST_LABDIR}/guests/{guest.name}/booted-once"
    lines.append(
        f"if grep -q labrejoin=1 /proc/cmdline || [ -e {shlex.quote(booted)} ]; then rejoin=1; else rejoin=0; fi"
    )
    if any(pair.replication == "md-nbd" for pair in inv.pairs.values()):
        lines.append("modprobe -a nbd raid1")
    for pname, pair in sorted(inv.pairs.items()):
        if guest.name not in pair.nodes:
            continue
        # every backing disk is a fresh all-zero sparse file (see harness.drbd.provision)
        if pair.replication == "md-nbd":
            lines += md_nbd_boot_lines(inv, pair, guest.name)
        else:
            lines += boot_lines(
                pair.resource,
                primary=guest.name == pair.primary,
                diskless=guest.name in pair.tiebreakers,
                peers=1 + len(pair.peers),
            )
        lines.append(f"# pair {pname}")
    lines += [q(["touch", booted]), "trap - EXIT", "echo ready > /run/lab-ready"]
    return "\n".join(lines) + "\n"


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
    spec = lab_spec(inv)
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
        f"mem={spec.guest_memory // MIB}M",
        "rootfstype=hostfs",
    ]
    # The host's own root, or a built one (harness.lab.roots) whose stage 0 reaches the lab's files
    root = node_root(spec, guest.name) if guest.role == "node" else None
    if root is None:
        argv += ["rootflags=/", "ro", f"init={state / 'guest' / 'init1.sh'}"]
    else:
        argv += [f"rootflags={root}", "ro", f"init={STAGE0_PATH}"]
    argv += [
        "con=null",
        "con0=fd:0,fd:1",
    ]
    for i, nic in enumerate(guest.nics):
        # gro=1 is required: without it GSO frames from the bridge are dropped ("Incoming GSO frames and
        # GRO disabled" on the guest console).
        argv.append(f"vec{i}:transport=tap,ifname={nic.tap},gro=1")
    for i, disk in enumerate(guest.disks):
        argv.append(f"ubd{i}d={state / 'disks' / disk}")
    argv += [f"labnode={guest.name}", f"labdir={state}"]
    if rejoin:
        argv.append("labrejoin=1")
    return argv
