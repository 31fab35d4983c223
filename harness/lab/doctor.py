"""``harness lab doctor``: is the running lab fit to measure, and if not, where is it broken?

``lab status`` shows the lab; the doctor judges it and, when something is wrong, gathers what
it takes to find the cause: each guest's process, each pair's state in the product's own
words, and every hop of each pair's replication path (the primary to its peer; across AZs
also the primary to the router's leg and the router to the peer).  For a hop that does not
answer, the interfaces on both ends (the guest's counters, neighbours and qdiscs, the host's
tap counters) and the last console lines of the guests involved.

It never changes anything; ``--repair`` (the CLI's) restarts a lab the doctor found unfit,
as one replaces a broken cloud host, and judges it again.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from harness.errors import HarnessError
from harness.lab.lifecycle import Lab
from harness.lab.processes import process_alive
from harness.lab.topology import ROUTER, Guest, Nic
from harness.reach import Reach, reach_argv, read_reach
from harness.remote import Runner, SshNode

__all__ = ["Hop", "LabDiagnosis", "diagnose"]

_CONSOLE_LINES = 12


@dataclass(frozen=True)
class Hop:
    """One leg of a pair's replication path and whether it answered."""

    pair: str
    src: str
    dst: str
    reach: Reach | None
    """None: the probe could not run (no SSH to ``src``)."""

    @property
    def dead(self) -> bool:
        return self.reach is None or not self.reach.answers

    def describe(self) -> str:
        if self.reach is None:
            return f"{self.pair}: {self.src} -> {self.dst}: not probed (no SSH to {self.src})"
        return f"{self.pair}: {self.src} -> {self.dst}: {self.reach.describe()}"


@dataclass
class LabDiagnosis:
    """The doctor's findings (empty: fit to measure) and the evidence behind them."""

    findings: list[str] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.findings

    def render(self, *, evidence: bool = True) -> str:
        if self.healthy:
            lines = ["lab is fit to measure: every guest runs, every pair is healthy, every path answers"]
        else:
            lines = ["lab is NOT fit to measure:", *(f"  - {f}" for f in self.findings)]
        lines += ["paths:", *(f"  {'DEAD' if h.dead else 'ok  '} {h.describe()}" for h in self.hops)]
        if evidence and self.evidence:
            lines += ["evidence:", *self.evidence]
        return "\n".join(lines)


def _replication_nic(guest: Guest) -> Nic:
    return guest.nics[1]


def _router_leg(lab: Lab, bridge: str) -> Nic | None:
    router = next((g for g in lab.topology.guests if g.role == "router"), None)
    return None if router is None else next((n for n in router.nics if n.bridge == bridge), None)


def _probe(conns: Mapping[str, Runner], src: str, src_ip: str, dst_ip: str) -> Reach | None:
    node = conns.get(src)
    if node is None:
        return None
    try:
        result = node.run(reach_argv(dst_ip, src_ip), timeout=15, check=False)
    except HarnessError:
        return None
    return read_reach(src, src_ip, dst_ip, result)


def _hops(lab: Lab, conns: Mapping[str, Runner]) -> list[Hop]:
    """Every hop of every pair's replication path, probed in parallel."""
    plans: list[tuple[str, str, str, str, str]] = []  # pair, src, src ip, dst, dst ip
    for name, pair in sorted(lab.inventory.pairs.items()):
        primary, peer = lab.topology.guest(pair.primary), lab.topology.guest(pair.secondary)
        p_nic, s_nic = _replication_nic(primary), _replication_nic(peer)
        p_ip, s_ip = str(p_nic.address.ip), str(s_nic.address.ip)
        plans.append((name, primary.name, p_ip, peer.name, s_ip))
        if p_nic.bridge != s_nic.bridge:
            there, back = _router_leg(lab, p_nic.bridge), _router_leg(lab, s_nic.bridge)
            if there is not None and back is not None:
                plans.append((name, primary.name, p_ip, f"{ROUTER}:{there.guest_iface}", str(there.address.ip)))
                plans.append((name, f"{ROUTER}:{back.guest_iface}", str(back.address.ip), peer.name, s_ip))
    # pairs of the same nodes and addresses share their hops: probe each once, name every pair
    shared: dict[tuple[str, str, str, str], list[str]] = {}
    for pair_name, src, src_ip, dst, dst_ip in plans:
        shared.setdefault((src, src_ip, dst, dst_ip), []).append(pair_name)
    hops = list(shared)
    with ThreadPoolExecutor(max_workers=max(1, len(hops))) as pool:
        reaches = list(pool.map(lambda h: _probe(conns, h[0].split(":")[0], h[1], h[3]), hops))
    return [Hop(", ".join(shared[hop]), hop[0], hop[2], reach) for hop, reach in zip(hops, reaches, strict=True)]


def _guest_evidence(lab: Lab, conns: Mapping[str, Runner], name: str) -> list[str]:
    guest = lab.topology.guest(name)
    out = [f"--- {name}"]
    node = conns.get(name)
    ifaces = [n.guest_iface for n in guest.nics[1:]]
    if node is not None:
        script = "; ".join(f"ip -s link show dev {i}; ip neigh show dev {i}; tc -s qdisc show dev {i}" for i in ifaces)
        try:
            out.append(node.run_script(script, timeout=15, check=False).stdout.rstrip())
        except HarnessError as exc:
            out.append(f"(cannot read its interfaces: {exc})")
    for nic in guest.nics[1:]:
        host = subprocess.run(
            ["ip", "netns", "exec", lab.spec.netns, "ip", "-s", "link", "show", "dev", nic.tap],
            capture_output=True,
            text=True,
            check=False,
        )
        out.append(
            f"host tap {nic.tap} ({nic.guest_iface} on {nic.bridge}):\n{host.stdout.rstrip() or host.stderr.strip()}"
        )
    try:
        console = lab.guests.console_log(guest).read_text(errors="replace").splitlines()[-_CONSOLE_LINES:]
    except OSError:
        console = ["(no console log)"]
    out += ["console:", *(f"  {line}" for line in console)]
    return out


def diagnose(lab: Lab) -> LabDiagnosis:
    """Judge the running lab; read-only."""
    diagnosis = LabDiagnosis()
    state = lab.state()
    if state is None or state.phase != "up":
        diagnosis.findings.append(f"the lab is not up (phase {state.phase if state else 'down'})")
        return diagnosis
    for name, pid in sorted(state.pids.items()):
        if not process_alive(pid):
            diagnosis.findings.append(f"guest {name} is not running (pid {pid} is gone)")
    nodes = {g.name: SshNode(g.name, lab.ssh_spec(g)) for g in lab.topology.guests if g.name in state.pids}

    def open_or_say(node: SshNode) -> str | None:
        try:
            node.open()
        except HarnessError as exc:
            return str(exc)
        return None

    try:
        with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
            errors = dict(zip(nodes, pool.map(open_or_say, nodes.values()), strict=True))
        diagnosis.findings += [f"no SSH to guest {name}: {why}" for name, why in errors.items() if why is not None]
        conns = {name: node for name, node in nodes.items() if errors[name] is None}
        return _judge(lab, conns, diagnosis)
    finally:
        for node in nodes.values():
            node.close()


def _judge(lab: Lab, conns: dict[str, SshNode], diagnosis: LabDiagnosis) -> LabDiagnosis:
    for row in lab.resource_states(conns):
        if not row.healthy:
            diagnosis.findings.append(f"pair {row.pair}: {row.connection} {row.disk} {row.role} on {row.primary}")
    diagnosis.hops = _hops(lab, conns)
    dead = [h for h in diagnosis.hops if h.dead]
    diagnosis.findings += [f"path {h.describe()}" for h in dead]
    involved = sorted({end.split(":")[0] for h in dead for end in (h.src, h.dst)})
    for name in involved:
        diagnosis.evidence += _guest_evidence(lab, conns, name)
    return diagnosis
