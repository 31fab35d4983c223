"""``harness lab doctor``: is the running lab fit to measure, and if not, where is it broken?

``lab status`` shows the lab; the doctor judges it and, when something is wrong, gathers what
it takes to find the cause: each guest's process, which DRBD its nodes run (the lab's
kernel's 8.4 or the DRBD 9 modules it booted; a node that reports another is a finding), each
pair's state in the product's own words, and every hop of each pair's replication path (the
primary to its peer; across AZs also the primary to the router's leg and the router to the
peer).  For a hop that does not answer, the interfaces on both ends (the guest's counters,
neighbours and qdiscs, the host's tap counters) and the last console lines of the guests
involved.

It never changes anything; ``--repair`` (the CLI's) restarts a lab the doctor found unfit,
as one replaces a broken cloud host, and judges it again.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from harness.lab.drbdrun import read_drbd_in_use
from harness.lab.lifecycle import Lab
from harness.lab.topology import ROUTER, Guest, Nic
from harness.probes.process import process_alive
from harness.probes.reach import Reach, probe_reach
from harness.remote import Runner, SshNode

__all__ = ["Hop", "LabDiagnosis", "diagnose", "diagnose_and_keep"]

_CONSOLE_LINES = 12


@dataclass(frozen=True)
class Hop:
    """One leg of a pair's replication path and whether it answered."""

    pair: str
    src: str
    dst: str
    reach: Reach | None
    """None: the probe could not run (no SSH to ``src``)."""
    guests: tuple[str, str] = ("", "")
    """The guests at its two ends (``src`` and ``dst`` name an interface of the router)."""

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
    #: which DRBD the lab booted and its nodes report (empty: not read)
    drbd: str = ""

    @property
    def healthy(self) -> bool:
        return not self.findings

    def render(self, *, evidence: bool = True) -> str:
        if self.healthy:
            lines = ["lab is fit to measure: every guest runs, every pair is healthy, every path answers"]
        else:
            lines = ["lab is NOT fit to measure:", *(f"  - {f}" for f in self.findings)]
        if self.drbd:
            lines.append(f"DRBD: {self.drbd}")
        lines += ["paths:", *(f"  {'DEAD' if h.dead else 'ok  '} {h.describe()}" for h in self.hops)]
        if evidence and self.evidence:
            lines += ["evidence:", *self.evidence]
        return "\n".join(lines)


def _replication_nic(guest: Guest) -> Nic:
    return guest.nics[1]


def _router_leg(lab: Lab, bridge: str) -> Nic | None:
    router = next((g for g in lab.topology.guests if g.role == "router"), None)
    return None if router is None else next((n for n in router.nics if n.bridge == bridge), None)


def _hops(lab: Lab, conns: Mapping[str, Runner]) -> list[Hop]:
    """Every hop of every pair's replication path, probed in parallel; pairs of the same nodes
    and addresses share their hops (probed once, every pair named)."""
    # (src label, src guest, src ip, dst label, dst guest, dst ip) -> pairs
    shared: dict[tuple[str, str, str, str, str, str], list[str]] = {}
    for name, pair in sorted(lab.inventory.pairs.items()):
        primary, peer = lab.topology.guest(pair.primary), lab.topology.guest(pair.secondary)
        p_nic, s_nic = _replication_nic(primary), _replication_nic(peer)
        p_ip, s_ip = str(p_nic.address.ip), str(s_nic.address.ip)
        plans = [(primary.name, primary.name, p_ip, peer.name, peer.name, s_ip)]
        there, back = _router_leg(lab, p_nic.bridge), _router_leg(lab, s_nic.bridge)
        if p_nic.bridge != s_nic.bridge and there is not None and back is not None:
            plans.append(
                (primary.name, primary.name, p_ip, f"{ROUTER}:{there.guest_iface}", ROUTER, str(there.address.ip))
            )
            plans.append((f"{ROUTER}:{back.guest_iface}", ROUTER, str(back.address.ip), peer.name, peer.name, s_ip))
        for plan in plans:
            shared.setdefault(plan, []).append(name)

    def probe(plan: tuple[str, str, str, str, str, str]) -> Reach | None:
        _, src, src_ip, _, _, dst_ip = plan
        node = conns.get(src)
        return None if node is None else probe_reach(node, src_ip, dst_ip)

    with ThreadPoolExecutor(max_workers=max(1, len(shared))) as pool:
        reaches = list(pool.map(probe, shared))
    return [
        Hop(", ".join(shared[plan]), plan[0], plan[3], reach, (plan[1], plan[4]))
        for plan, reach in zip(shared, reaches, strict=True)
    ]


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
    started = tuple(g for g in lab.topology.guests if g.name in state.pids)
    with lab.guests.open_each(started) as (conns, errors):
        diagnosis.findings += [f"no SSH to guest {name}: {why}" for name, why in errors.items()]
        return _judge(lab, conns, diagnosis)


def diagnose_and_keep(lab: Lab, kept: Path) -> tuple[bool, str]:
    """Judge the lab and keep the whole verdict, evidence included, in ``kept``: whether it is fit
    to measure, and the findings without the evidence.  A lab the doctor cannot judge is not."""
    try:
        diagnosis = diagnose(lab)
    except HarnessError as exc:
        findings = f"the lab doctor could not judge the lab: {exc}"
        kept.write_text(findings + "\n")
        return False, findings
    kept.write_text(diagnosis.render() + "\n")
    return diagnosis.healthy, diagnosis.render(evidence=False)


def _judge(lab: Lab, conns: dict[str, SshNode], diagnosis: LabDiagnosis) -> LabDiagnosis:
    state = lab.state()
    nodes = {g.name: conns[g.name] for g in lab.topology.nodes if g.name in conns}
    in_use = read_drbd_in_use(state.drbd if state is not None else None, nodes)
    diagnosis.drbd = in_use.describe()
    diagnosis.findings += in_use.mismatches()
    for row in lab.resource_states(conns):
        if not row.healthy:
            diagnosis.findings.append(f"pair {row.pair}: {row.connection} {row.disk} {row.role} on {row.primary}")
    diagnosis.hops = _hops(lab, conns)
    dead = [h for h in diagnosis.hops if h.dead]
    diagnosis.findings += [f"path {h.describe()}" for h in dead]
    involved = sorted({guest for h in dead for guest in h.guests})
    for name in involved:
        diagnosis.evidence += _guest_evidence(lab, conns, name)
    return diagnosis
