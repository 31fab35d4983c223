"""Preflight: every read-only check, on every node, before a run changes anything.

One round trip per node collects identity, tools, interfaces, qdiscs, the DRBD/cluster
configuration audit of its replicated resources, harness leftovers and the lock; one per pair
collects the replication's state and the device guard's facts.  Everything about the
replication is asked through its seam (:mod:`harness.replication`).  Findings are ``ok``, ``warn`` or
``BLOCK``; any BLOCK stops the run before a single change (all-or-nothing: a run never
starts on some nodes because others were fine).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from tabulate import tabulate

from harness.errors import HarnessError
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root, explain_root
from harness.inventory.models import Inventory, NodeSpec
from harness.probes.reach import Reach, reach_argv, read_reach
from harness.probes.toolversions import PROBES, node_version_checks, parse_tool_version
from harness.remote import CommandResult, Runner, run_batch
from harness.remote.pool import NodePool
from harness.remote.trust import shared_host_keys
from harness.replication import ConfigFindings, Replication, ToolProbe, replication_for, tool_probe
from harness.safety.clock import CLOCK_PROBE, judge_offset, read_offset
from harness.safety.device import evaluate_drbd_target, probe_device
from harness.safety.lock import LockOwner, read_lock
from harness.safety.peercheck import peers_check
from harness.safety.sharedpath import PROBES as SHARED_PATH_PROBES
from harness.safety.sharedpath import pair_paths, shared_path_checks
from harness.safety.sweep import leftover_check

__all__ = ["Finding", "PreflightReport", "run_preflight"]

Status = Literal["ok", "warn", "BLOCK"]


@dataclass(frozen=True)
class Finding:
    node: str
    check: str
    status: Status
    detail: str


@dataclass
class PreflightReport:
    findings: list[Finding]

    @property
    def blockers(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "BLOCK"]

    @property
    def ok(self) -> bool:
        return not self.blockers

    def render(self) -> str:
        rows = [[f.node, f.check, f.status, f.detail] for f in self.findings]
        verdict = "preflight passed" if self.ok else f"preflight BLOCKED by {len(self.blockers)} finding(s)"
        return tabulate(rows, headers=["node", "check", "status", "detail"]) + f"\n{verdict}"


def _version(res: CommandResult) -> str:
    lines = (res.stdout.strip() or res.stderr.strip()).splitlines()
    return lines[0] if res.ok and lines else ""


_NO_RISK = "no fencing, quorum, automatic split-brain recovery or dual primary"


def _audit_findings(name: str, audits: Sequence[ConfigFindings], risky: Status) -> list[Finding]:
    """Risky replication/cluster configuration warns, and blocks a disruptive run."""
    out = []
    resources = {res: risks for audit in audits for res, risks in audit.resources.items()}
    for resource, risks in sorted(resources.items()):
        # quorum that is set but no risk is said, never read as absent
        notes = [note for audit in audits for note in audit.resource_notes.get(resource, ())]
        clean = "no fencing, automatic split-brain recovery or dual primary" if notes else _NO_RISK
        detail = "; ".join(map(str, risks)) or "; ".join([*notes, clean])
        out.append(Finding(name, f"config {resource}", risky if risks else "ok", detail))
    # every resource's audit reads the same node-wide cluster managers: each one counts once
    managers = list(dict.fromkeys(str(risk) for audit in audits for risk in audit.managers))
    notes = list(dict.fromkeys(note for audit in audits for note in audit.notes))
    detail = "; ".join(managers) or "; ".join(notes) or "no Pacemaker or drbd-reactor running"
    out.append(Finding(name, "cluster manager", risky if managers else "ok", detail))
    return out


def _replications(inv: Inventory, node: Runner, pairs: Sequence[str]) -> list[Replication]:
    """The node's replicated devices among ``pairs``, by resource name."""
    specs = [inv.pairs[p] for p in pairs]
    found = {spec.resource: spec for spec in specs if node.name in (spec.primary, spec.secondary)}
    return [replication_for(spec, node, nodes=inv.nodes) for _, spec in sorted(found.items())]


def _pinned_identity(
    inv: Inventory,
    name: str,
    res: Mapping[str, CommandResult],
    replications: Sequence[Replication],
    pairs: Sequence[str],
) -> list[Finding]:
    """The machine (/etc/machine-id) and the DRBD node (its node-id, its address) the
    inventory pins; a re-imaged or another machine under the same name blocks here."""
    spec = inv.nodes[name]
    out: list[Finding] = []
    if spec.machine_id is not None:
        result = res["machine_id"]
        found = result.stdout.strip()
        if not result.ok or not found:
            why = result.stderr.strip().splitlines()[0] if result.stderr.strip() else "it is empty"
            out.append(Finding(name, "machine-id", "BLOCK", f"{name}: cannot read /etc/machine-id: {why}"))
        elif found != spec.machine_id:
            detail = f"{name}: /etc/machine-id is {found}, the inventory pins {spec.machine_id} (another machine)"
            out.append(Finding(name, "machine-id", "BLOCK", detail))
        else:
            out.append(Finding(name, "machine-id", "ok", found))
    if spec.drbd_node_id is not None:
        ports = {inv.pairs[p].resource: inv.pairs[p].port for p in pairs}
        for replication in replications:
            verdict = replication.read_node_identity(
                res, node_id=spec.drbd_node_id, ip=spec.replication.ip, port=ports[replication.resource]
            )
            out.append(Finding(name, "drbd identity", "ok" if verdict.ok else "BLOCK", verdict.detail))
    return out


def _clock_finding(name: str, result: CommandResult, sent: float, received: float) -> Finding:
    try:
        return Finding(name, "clock", *judge_offset(read_offset(result.stdout, sent, received)))
    except ValueError as exc:
        return Finding(name, "clock", "warn", f"cannot read the node's clock: {exc}")


def _node_commands(spec: NodeSpec, tool: ToolProbe, replications: Sequence[Replication]) -> dict[str, Sequence[str]]:
    """Everything the node checks read, asked in one round trip."""
    iface = spec.replication.iface
    commands: dict[str, Sequence[str]] = {
        "hostname": ["uname", "-n"],
        "fio": ["fio", "--version"],
        "product": tool.argv,
        "tc": ["tc", "-V"],
        "netem": ["sh", "-c", "[ -d /sys/module/sch_netem ] || modinfo -n sch_netem"],
        "tbf": ["sh", "-c", "[ -d /sys/module/sch_tbf ] || modinfo -n sch_tbf"],
        "addr": ["ip", "-o", "-4", "addr", "show", "dev", iface],
        "qdisc": ["tc", "-j", "qdisc", "show", "dev", iface],
        "sshconn": ["sh", "-c", 'echo "$SSH_CONNECTION"'],
        "clock": CLOCK_PROBE,
    }
    commands.update({f"v_{tool}": argv for tool, argv in PROBES.items() if tool not in ("tc", "fio")})
    commands.update(SHARED_PATH_PROBES)
    if spec.ssh.sudo and spec.ssh.user != "root":
        commands["sudo"] = ["sudo", "-n", "true"]
    for replication in replications:
        commands.update(replication.audit_commands())
    if spec.machine_id is not None:
        commands["machine_id"] = ["cat", "/etc/machine-id"]
    if spec.drbd_node_id is not None:
        for replication in replications:
            commands.update(replication.node_identity_probes())
    return commands


def _identity_finding(name: str, spec: NodeSpec, res: Mapping[str, CommandResult]) -> Finding:
    host = res["hostname"].stdout.strip()
    if spec.hostname and host != spec.hostname:
        return Finding(name, "identity", "BLOCK", f"uname -n is {host!r}, inventory expects {spec.hostname!r}")
    return Finding(name, "identity", "ok", f"uname -n {host}")


def _sudo_findings(name: str, res: Mapping[str, CommandResult]) -> list[Finding]:
    if "sudo" not in res:
        return []
    ok = res["sudo"].ok
    return [Finding(name, "sudo -n", "ok" if ok else "BLOCK", "works" if ok else res["sudo"].stderr.strip())]


def _tool_findings(name: str, res: Mapping[str, CommandResult], tool: ToolProbe) -> list[Finding]:
    """fio, the replication's own tool and tc answer, at versions the harness can drive."""
    out: list[Finding] = []
    for key, label in (("fio", "fio"), ("product", tool.name), ("tc", "tc")):
        version = _version(res[key])
        if key == "product" and version:
            version = tool.describe(res[key].stdout)
        status: Status = "ok" if version else "BLOCK"
        detail = version if version else f"`{label}` missing or failing on the node: {res[key].stderr.strip()}"
        out.append(Finding(name, label, status, detail[:80]))
    outputs = {"tc": res["tc"], "fio": res["fio"], **{k[2:]: v for k, v in res.items() if k.startswith("v_")}}
    out += [Finding(name, check, status, detail) for check, status, detail in node_version_checks(outputs)]
    return out


def _qdisc_module_findings(name: str, res: Mapping[str, CommandResult]) -> list[Finding]:
    netem_ok = res["netem"].ok
    netem = "sch_netem available" if netem_ok else "sch_netem kernel module not available"
    # tbf caps the rate; without it only the cells with a rate cap cannot run
    tbf_ok = res["tbf"].ok
    tbf = "sch_tbf available" if tbf_ok else "sch_tbf kernel module not available: cells with a rate cap are skipped"
    return [
        Finding(name, "netem", "ok" if netem_ok else "BLOCK", netem),
        Finding(name, "tbf", "ok" if tbf_ok else "warn", tbf),
    ]


def _iface_finding(name: str, spec: NodeSpec, res: Mapping[str, CommandResult]) -> Finding:
    iface, ip = spec.replication.iface, spec.replication.ip
    addresses = {
        word.split("/")[0]
        for line in res["addr"].stdout.splitlines()
        for key, word in zip(line.split(), line.split()[1:], strict=False)
        if key == "inet"
    }
    if ip not in addresses:
        detail = f"{iface} does not carry {ip}: {res['addr'].stdout.strip() or 'no address'}"
        return Finding(name, "replication iface", "BLOCK", detail)
    return Finding(name, "replication iface", "ok", f"{iface} has {ip}")


def _paths_finding(inv: Inventory, name: str, spec: NodeSpec, res: Mapping[str, CommandResult]) -> Finding:
    """SSH must not come from a replication address: impairing that path would cut the harness off."""
    ssh_parts = res["sshconn"].stdout.split()
    if len(ssh_parts) >= 3 and ssh_parts[2] == spec.replication.ip:
        return Finding(
            name,
            "paths",
            "warn",
            f"SSH arrives on the replication address {spec.replication.ip}; "
            "impairment is filtered to the peer's address only, so SSH is not shaped",
        )
    if len(ssh_parts) >= 1 and ssh_parts[0] in {n.replication.ip for n in inv.nodes.values()}:
        detail = "the harness connects from a replication address: impairing would cut its own SSH"
        return Finding(name, "paths", "BLOCK", detail)
    return Finding(name, "paths", "ok", "SSH and replication use different addresses")


def _qdisc_finding(name: str, iface: str, res: Mapping[str, CommandResult]) -> Finding:
    try:
        qdiscs = parse_qdiscs(res["qdisc"].stdout)
        root = classify_root(qdiscs)
        status: Status = "ok" if root is RootClass.DEFAULT else "BLOCK"
        return Finding(name, "qdisc", status, f"{iface}: {root}: {explain_root(qdiscs)}"[:100])
    except HarnessError as exc:
        # a tc too old to print JSON ends here: say which tc it was
        tc_found = parse_tool_version("tc", res["tc"].stdout, res["tc"].stderr).describe()
        return Finding(name, "qdisc", "BLOCK", f"cannot read qdiscs on {iface} with tc {tc_found}: {exc}")


def _lock_finding(name: str, node: Runner) -> Finding:
    owner = read_lock(node)
    if owner is None:
        return Finding(name, "lock", "ok", "free")
    text = owner.describe() if isinstance(owner, LockOwner) else str(owner)
    return Finding(name, "lock", "BLOCK", f"held: {text}")


def _node_checks(
    inv: Inventory, pool: NodePool, name: str, pairs: Sequence[str], risky: Status, *, clean_leftovers: bool
) -> list[Finding]:
    spec = inv.nodes[name]
    try:
        node = pool.get(name)
    except HarnessError as exc:
        return [Finding(name, "ssh", "BLOCK", str(exc))]
    out = [Finding(name, "ssh", "ok", f"{spec.ssh.user}@{spec.ssh.host}, host key pinned")]
    tool = tool_probe()
    replications = _replications(inv, node, pairs)
    commands = _node_commands(spec, tool, replications)
    # a crashed run's leftovers block, or are removed (before the qdiscs are read) and the
    # pre-state restored with --clean-leftovers
    leftovers = Finding(name, "leftovers", *leftover_check(node, clean=clean_leftovers))
    sent = time.time()
    res = run_batch(node, commands, timeout=60)
    out.append(_clock_finding(name, res["clock"], sent, time.time()))
    out.append(_identity_finding(name, spec, res))
    out += _pinned_identity(inv, name, res, replications, pairs)
    out += _sudo_findings(name, res)
    out += _tool_findings(name, res, tool)
    out += _qdisc_module_findings(name, res)
    out.append(_iface_finding(name, spec, res))
    out.append(_paths_finding(inv, name, spec, res))
    # who else talks to the peer over the replication path
    out += [Finding(name, c, st, d) for c, st, d in shared_path_checks(res, pair_paths(inv, name, pairs))]
    out.append(_qdisc_finding(name, spec.replication.iface, res))
    out += _audit_findings(name, [r.read_audit(res) for r in replications], risky)
    out.append(leftovers)
    out.append(_lock_finding(name, node))
    return out


def _pair_checks(inv: Inventory, pool: NodePool, pair_name: str, needed_bytes: int) -> list[Finding]:
    pair = inv.pairs[pair_name]
    label = f"{pair_name} ({pair.primary})"
    try:
        node = pool.get(pair.primary)
    except HarnessError:
        return []  # reported by the node checks
    replication = replication_for(pair, node, nodes=inv.nodes)
    source, dest = inv.nodes[pair.primary].replication.ip, inv.nodes[pair.secondary].replication.ip
    probes = {"state": replication.state_probe(), "reach": reach_argv(dest, source)}
    if pair.peers:  # the resource's other nodes: asked only of a pair that names them
        probes.update(replication.peers_probes())
    facts = probe_device(node, pair.device, replication, extra=probes)
    out: list[Finding] = []
    state = replication.read_state(facts.extra["state"].stdout)
    reach = read_reach(pair.primary, source, dest, facts.extra["reach"])
    if state is None:
        out.append(Finding(label, "drbd", "BLOCK", f"resource {pair.resource} not configured on {pair.primary}"))
    else:
        problems = list(state.problems())
        if state.role != "Primary":
            problems.append(f"{pair.primary} is {state.role}, the inventory says Primary")
        status: Status = "BLOCK" if problems else "ok"
        out.append(Finding(label, "drbd", status, "; ".join(problems) if problems else state.describe()))
    if pair.peers and state is not None:
        out += _peers_findings(label, replication, facts.extra)
    out.append(_path_finding(label, pair.resource, reach, connected=state is not None and state.healthy))
    refusals = evaluate_drbd_target(facts, expected_device=pair.device, needed_bytes=needed_bytes)
    out.append(
        Finding(
            label,
            "device guard",
            "BLOCK" if refusals else "ok",
            "; ".join(refusals) if refusals else f"{pair.device} is the resource's own, unused device",
        )
    )
    return out


def _peers_findings(label: str, replication: Replication, results: Mapping[str, CommandResult]) -> list[Finding]:
    """The resource's other peers, their disks and roles, and the quorum (unreadable: a blocker)."""
    try:
        found = peers_check(replication.read_peers(results))
    except HarnessError as exc:
        return [Finding(label, "peers", "BLOCK", f"cannot read the resource's peers: {exc}")]
    return [] if found is None else [Finding(label, "peers", *found)]


def _path_finding(label: str, resource: str, reach: Reach, *, connected: bool) -> Finding:
    """The replication path from the primary to the peer: a dead one blocks and says it is
    the network; no answer while the replication is connected is ICMP filtered (a warning)."""
    if reach.answers:
        status: Status = "ok" if reach.received == reach.sent else "warn"
        return Finding(label, "replication path", status, reach.describe())
    if connected:
        return Finding(label, "replication path", "warn", reach.filtered())
    return Finding(label, "replication path", "BLOCK", reach.dead_path(resource))


def run_preflight(
    inv: Inventory,
    pool: NodePool,
    *,
    needed_bytes: int = 1,
    pairs: Sequence[str] | None = None,
    disruptive: bool = False,
    clean_leftovers: bool = False,
) -> PreflightReport:
    """All checks, nodes in parallel.  Read-only: runs nothing that changes a node, unless
    ``clean_leftovers`` asks it to remove a crashed run's leftovers (and warn that it did).

    ``disruptive``: the run will crash nodes or cut links, so risky configuration blocks."""
    selected = list(pairs or inv.pairs)
    names = sorted({n for p in selected for n in (inv.pairs[p].primary, inv.pairs[p].secondary)})
    risky: Status = "BLOCK" if disruptive else "warn"
    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool_exec:
        per_node = list(
            pool_exec.map(lambda n: _node_checks(inv, pool, n, selected, risky, clean_leftovers=clean_leftovers), names)
        )
    findings = [f for group in per_node for f in group]
    # connections are made against the pinned keys (RejectPolicy), so a key two nodes pin is
    # a key two "nodes" present: one machine the inventory names twice
    for key, nodes in shared_host_keys({n: inv.nodes[n].ssh for n in names}):
        detail = f"{' and '.join(nodes)} present the same host key {key}: one machine under two names?"
        findings.append(Finding(",".join(nodes), "host key", "BLOCK", detail))
    for pair in sorted(pairs or inv.pairs):
        findings += _pair_checks(inv, pool, pair, needed_bytes)
    return PreflightReport(findings)
