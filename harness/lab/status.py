"""``harness lab status``: guests, DRBD resources, the AZ link and the RTT matrix.

The JSON form is an interface other tools rely on::

    {"up": true, "nodes": [{"name", "az", "pid", "ssh": bool, "root": "bullseye",
                            "userland": {"os", "codename", "debian_version", "versions": {...}}, ...}],
     "drbd": "DRBD 8.4 (the UML kernel's own module); /proc/drbd: 8.4.11 on a1, a2, a3, b1",
     "resources": [{"name", "connection", "disk", "role", ...}],
     "rtt_ms": {"a1-a2": 0.27, ...}, "az_link": {...}, "router": {...}}

States are DRBD's own words (``Connected``, ``UpToDate/UpToDate``, ``Primary/Secondary``).
"""

from __future__ import annotations

import itertools
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.lab.drbdrun import read_drbd_in_use
from harness.lab.lifecycle import Lab
from harness.lab.processes import find_lab_processes
from harness.lab.resources import PairRow
from harness.lab.state import LabState
from harness.lab.topology import ROUTER, Guest
from harness.lab.userland import KEY_TOOLS, PROBE_SCRIPT, Userland, parse_probe
from harness.probes.process import process_alive
from harness.probes.rtt import parse_ping, ping_argv
from harness.remote import SshNode

__all__ = ["GuestStatus", "LabStatus", "collect_status", "guest_memory_mib", "measure_rtt_matrix", "read_userlands"]


@dataclass(frozen=True)
class GuestStatus:
    name: str
    role: str
    az: str | None
    pid: int | None
    running: bool
    ssh: bool
    mgmt_ip: str
    replication_ip: str | None
    memory_mib: float | None
    host_cpus: str | None = None  # the CPUs the guest's process may run on (``lab.pin_pairs``)
    root: str = "host"  # the root filesystem it boots (``lab.nodes.<node>.root``)
    userland: Userland | None = None  # its distribution and tool versions, read over SSH


@dataclass(frozen=True)
class LinkStatus:
    iface: str
    towards_az: str
    qdisc: str


@dataclass
class LabStatus:
    up: bool
    phase: str
    netns: str
    state_dir: str
    uptime_s: float | None = None
    nodes: list[GuestStatus] = field(default_factory=list)
    router: GuestStatus | None = None
    resources: list[PairRow] = field(default_factory=list)
    az_link: list[LinkStatus] = field(default_factory=list)
    rtt_ms: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: which DRBD the lab booted (the kernel's 8.4 or supplied DRBD 9 modules) and the nodes report
    drbd: str = ""

    @property
    def healthy(self) -> bool:
        return (
            self.up and not self.problems and all(n.ssh for n in self.nodes) and all(r.healthy for r in self.resources)
        )

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["resources"] = [asdict(r) for r in self.resources]
        out["healthy"] = self.healthy
        return out

    def render_text(self) -> str:
        if not self.up:
            lines = [f"lab is down (namespace {self.netns}, state {self.state_dir})"]
            lines += [f"  leftover: {p}" for p in self.problems]
            return "\n".join(lines)
        guests = [*self.nodes, *([self.router] if self.router else [])]
        parts = [
            f"lab {self.phase} in namespace {self.netns}, up {self.uptime_s or 0:.0f} s, state {self.state_dir}",
            tabulate(
                [
                    [
                        g.name,
                        g.role,
                        g.az or "-",
                        g.pid,
                        "yes" if g.running else "NO",
                        "yes" if g.ssh else "NO",
                        g.mgmt_ip,
                        g.replication_ip or "-",
                        f"{g.memory_mib:.0f}" if g.memory_mib else "-",
                        g.host_cpus or "-",
                    ]
                    for g in guests
                ],
                headers=[
                    "guest",
                    "role",
                    "az",
                    "pid",
                    "running",
                    "ssh",
                    "ssh ip",
                    "replication ip",
                    "host MiB",
                    "host CPU",
                ],
            ),
            "",
            tabulate(
                [[g.name, g.root, *_userland_cells(g.userland)] for g in guests],
                headers=["guest", "root", "distribution", *KEY_TOOLS],
            ),
            "",
            f"DRBD: {self.drbd}",
            tabulate(
                [[r.name, f"{r.primary} -> {r.secondary}", r.connection, r.disk, r.role] for r in self.resources],
                headers=["resource", "pair", "connection", "disk", "role"],
            ),
            "",
            "AZ link (router): "
            + "; ".join(f"{link.towards_az} via {link.iface}: {link.qdisc}" for link in self.az_link),
            "",
            "RTT over the replication path (median ms): "
            + ", ".join(f"{pair} {ms:.2f}" for pair, ms in sorted(self.rtt_ms.items())),
        ]
        parts += [f"problem: {p}" for p in self.problems]
        return "\n".join(parts)


def _userland_cells(userland: Userland | None) -> list[str]:
    if userland is None:
        return ["?"] + ["-"] * len(KEY_TOOLS)
    name = f"Debian {userland.debian_version} ({userland.codename})" if userland.codename else userland.os
    return [name or "?", *(userland.versions.get(tool, "missing") for tool in KEY_TOOLS)]


def read_userlands(conns: dict[str, SshNode]) -> dict[str, Userland]:
    """Each guest's distribution and tool versions (:mod:`harness.lab.userland`), in parallel."""

    def probe(name: str) -> tuple[str, Userland]:
        return name, parse_probe(conns[name].run_script(PROBE_SCRIPT, timeout=30, check=False).stdout)

    with ThreadPoolExecutor(max_workers=len(conns) or 1) as pool:
        return dict(pool.map(probe, sorted(conns)))


def guest_memory_mib(lab: Lab, guest_name: str) -> float | None:
    """Host memory (PSS) of all of one guest's processes, in MiB."""

    # UML's I/O helpers are clone(CLONE_VM) children that share the kernel's address space
    # (same VmSize, same PSS); count that address space once, plus each stub process.
    def field(pid: int, name: str, fname: str) -> int | None:
        try:
            text = Path(f"/proc/{pid}/{fname}").read_text()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(name):
                return int(line.split()[1])
        return None

    procs = [p for p in find_lab_processes(lab.spec.netns, lab.state_dir) if p.guest == guest_name]
    main = next((p for p in procs if p.pid == p.sid), None)
    if main is None:
        return None
    main_size = field(main.pid, "VmSize:", "status")
    total_kib = 0
    for proc in procs:
        if proc.pid != main.pid and field(proc.pid, "VmSize:", "status") == main_size:
            continue
        total_kib += field(proc.pid, "Pss:", "smaps_rollup") or 0
    return total_kib / 1024


def measure_rtt_matrix(lab: Lab, conns: dict[str, SshNode], count: int = 10) -> dict[str, float]:
    """Median RTT in ms between every two nodes over their replication addresses."""
    nodes = sorted(lab.inventory.nodes)
    pairs = list(itertools.combinations(nodes, 2))

    def probe(pair: tuple[str, str]) -> tuple[str, float]:
        src, dst = pair
        res = conns[src].run(ping_argv(lab.inventory.nodes[dst].replication.ip, count=count), timeout=30, check=False)
        try:
            return f"{src}-{dst}", round(parse_ping(res.stdout).median_ms, 3)
        except ValueError:
            return f"{src}-{dst}", float("nan")

    with ThreadPoolExecutor(max_workers=len(pairs) or 1) as pool:
        return dict(pool.map(probe, pairs))


def _az_links(lab: Lab, conn: SshNode) -> list[LinkStatus]:
    router = lab.topology.guest(ROUTER)
    links: list[LinkStatus] = []
    az_by_bridge = {f"br{i + 1}": az for i, az in enumerate(sorted(lab.topology.az_subnets))}
    for nic in router.nics[1:]:
        res = conn.run(["tc", "-j", "qdisc", "show", "dev", nic.guest_iface], timeout=15, check=False)
        try:
            qdiscs = json.loads(res.stdout or "[]")
        except ValueError:
            qdiscs = []
        links.append(LinkStatus(nic.guest_iface, az_by_bridge.get(nic.bridge, "?"), describe_root_qdisc(qdiscs)))
    return links


def describe_root_qdisc(qdiscs: list[dict[str, Any]]) -> str:
    """Short text for the root qdisc of a `tc -j qdisc show` listing (router links)."""
    for q in qdiscs:
        if not q.get("root"):
            continue
        opts = q.get("options", {})
        if q.get("kind") != "netem":
            return str(q.get("kind"))
        parts = ["netem"]
        delay = opts.get("delay", {})
        if delay:
            parts.append(f"delay {delay.get('delay', 0) * 1e3:g}ms")
            if delay.get("jitter"):
                parts.append(f"jitter {delay['jitter'] * 1e3:g}ms")
        if "rate" in opts:
            parts.append(f"rate {opts['rate']['rate'] * 8 / 1e6:g}mbit")
        return " ".join(parts)
    return "none"


def _guest_status(
    lab: Lab, guest: Guest, state: LabState | None, ssh_ok: set[str], userlands: dict[str, Userland]
) -> GuestStatus:
    pid = state.pids.get(guest.name) if state else None
    running = pid is not None and process_alive(pid)
    repl = str(guest.nics[1].address.ip) if guest.role == "node" else None
    return GuestStatus(
        guest.name,
        guest.role,
        guest.az,
        pid,
        running,
        guest.name in ssh_ok,
        guest.mgmt_ip,
        repl,
        guest_memory_mib(lab, guest.name) if running else None,
        _affinity(pid) if running and pid is not None else None,
        lab.spec.root_of(guest.name) if guest.role == "node" else "host",
        userlands.get(guest.name),
    )


def _affinity(pid: int) -> str | None:
    """The CPUs ``pid`` may run on, as a list (``0`` or ``0,1``); None if it is gone."""
    try:
        return ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(pid)))
    except OSError:
        return None


def collect_status(lab: Lab, *, rtt_count: int = 10) -> LabStatus:
    """Everything ``harness lab status`` shows; never changes anything."""
    state = lab.state()
    status = LabStatus(up=False, phase="down", netns=lab.spec.netns, state_dir=str(lab.state_dir))
    if state is None:
        status.problems = lab.leftovers()
        return status
    status.up = True
    status.phase = state.phase
    status.uptime_s = round(time.time() - state.started_at, 1)
    with lab.guests.open_each() as (conns, errors):
        status.problems += [f"{name}: {why}" for name, why in errors.items()]
        ssh_ok = set(conns)
        userlands = read_userlands(conns)
        guests = [_guest_status(lab, g, state, ssh_ok, userlands) for g in lab.topology.guests]
        status.nodes = [g for g in guests if g.role == "node"]
        status.router = next((g for g in guests if g.role == "router"), None)
        nodes = {g.name: conns[g.name] for g in lab.topology.nodes if g.name in conns}
        in_use = read_drbd_in_use(state.drbd, nodes)
        status.drbd = in_use.describe()
        status.problems += in_use.mismatches()
        if all(n.name in conns for n in lab.topology.nodes):
            status.resources = lab.resource_states(conns)
            status.rtt_ms = measure_rtt_matrix(lab, conns, rtt_count)
        if ROUTER in conns:
            status.az_link = _az_links(lab, conns[ROUTER])
    if os.geteuid() != 0:
        status.problems.append("not root: guest memory and namespace access may be incomplete")
    return status
