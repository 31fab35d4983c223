"""Risky DRBD and cluster configuration for scenarios that disrupt a resource.

A crash, a cut replication link or latency at DRBD's timeouts is harmless on a scratch pair
that only DRBD manages.  With any of these it is not:

* ``fencing resource-only|resource-and-stonith`` or a ``fence-peer`` handler: on losing the
  peer the primary calls the handler, which outdates the peer or has it STONITHed, and with
  ``resource-and-stonith`` freezes all I/O until then;
* DRBD 9 ``quorum`` on two nodes: a partition leaves neither side with quorum and the primary
  returns I/O errors or freezes (``on-no-quorum``);
* ``after-sb-*`` other than ``disconnect``, ``rr-conflict`` that discards: automatic
  split-brain recovery, which resolves a split brain by throwing one node's writes away;
* ``allow-two-primaries``: both sides may write, and a cut ends in two diverged copies;
* a protocol other than the inventory's: the failover oracle would judge the wrong promise;
* Pacemaker or drbd-reactor running on the node: they react to the fault themselves
  (promote the peer, fence, restart the resource).  Pacemaker is judged per resource: only
  the DRBD resources its CIB manages are flagged (:mod:`harness.drbd.pacemaker`).

Two views of a resource are read on each node: ``drbdsetup show --show-defaults`` (what the
kernel runs now) and ``drbdadm dump`` (what the configuration file says: what a crashed node
comes back with, and the only place handlers are kept).  :class:`AuditPlan` names the
commands, so preflight can fold them into its one round trip per node, and judges the answers.
Anything that cannot be read is itself a risk: the audit fails closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from harness.drbd.commands import dump_argv, show_defaults_argv
from harness.drbd.config import Statement, find_resources, parse_config
from harness.drbd.errors import DrbdOutputError
from harness.drbd.layout import (
    Options,
    PairEnds,
    ResourceLayout,
    layout_of_dump,
    layout_of_show,
    option_leaves,
)
from harness.drbd.pacemaker import CIB_RESOURCES_ARGV, pacemaker_view
from harness.drbd.quorum import votes_needed
from harness.remote import CommandResult

__all__ = ["AuditPlan", "NodeAudit", "Risk", "audit_dump", "audit_managers", "audit_show"]

#: DRBD's default protocol (8.4 and 9): ``drbdsetup show`` without defaults omits it.
DEFAULT_PROTOCOL: Final = "C"
#: systemd units and the process names (``comm``, at most 15 characters) of cluster managers
#: that act on DRBD resources by themselves.
MANAGERS: Final = {"pacemaker": "pacemakerd", "drbd-reactor": "drbd-reactor"}
_RUNNING_UNIT_STATES: Final = frozenset({"active", "activating", "reloading", "refreshing", "deactivating"})
_AFTER_SB: Final = ("after-sb-0pri", "after-sb-1pri", "after-sb-2pri")
# rr-conflict values that resolve a role conflict by throwing data away or killing a node
# (8.4: violently, call-pri-lost; 9.1+: auto-discard).
_RR_CONFLICT_LOSSY: Final = frozenset({"violently", "call-pri-lost", "auto-discard"})
# `outdate-peer` is the handler's name before 8.4; drbdadm still accepts it.
_FENCE_HANDLERS: Final = ("fence-peer", "outdate-peer")

_CHECK_ORDER: Final = (
    "audit",
    "protocol",
    "fencing",
    "fence-peer handler",
    "quorum",
    "split-brain policy",
    "two primaries",
)


@dataclass(frozen=True)
class Risk:
    """One risky setting: ``check`` names the kind, ``detail`` what it is and why it matters."""

    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def _value(args: tuple[str, ...]) -> str:
    # a bare flag (`allow-two-primaries;` in drbd.conf) means yes
    return args[0] if args else "yes"


def _values(options: Options, key: str) -> set[str]:
    return {_value(a) for a in options.get(key, ())}


def _connection_risks(options: Options) -> list[Risk]:
    """Settings of one connection that make a fault on it dangerous (DRBD 9 keeps them per peer)."""
    risks: list[Risk] = []
    for fencing in sorted(_values(options, "fencing") - {"dont-care"}):
        why = {
            "resource-and-stonith": "on losing the peer the primary freezes all I/O and calls fence-peer, "
            "which is expected to STONITH the peer",
            "resource-only": "on losing the peer the primary calls fence-peer to outdate it",
        }.get(fencing, "DRBD calls fence-peer on losing the peer")
        risks.append(Risk("fencing", f"fencing {fencing}: {why}"))
    for key in _AFTER_SB:
        for policy in sorted(_values(options, key) - {"disconnect"}):
            risks.append(
                Risk(
                    "split-brain policy",
                    f"automatic data loss configured: {key} {policy} (after a split brain DRBD throws one "
                    "node's changes away by itself)",
                )
            )
    for policy in sorted(_values(options, "rr-conflict") & _RR_CONFLICT_LOSSY):
        risks.append(Risk("split-brain policy", f"automatic data loss configured: rr-conflict {policy}"))
    if "yes" in _values(options, "allow-two-primaries"):
        risks.append(
            Risk(
                "two primaries",
                "allow-two-primaries yes: both nodes may be Primary at once; a crash or a cut can end in "
                "two diverged copies",
            )
        )
    return risks


def _quorum_risk(layout: ResourceLayout) -> Risk | None:
    """Quorum that the primary loses when it loses only its peer in the pair.

    Cut off from the peer, the primary still reaches every other node of the resource: N - 1
    of N, itself included.  On two nodes no side keeps a majority; on three it does, a diskless
    third node included (it does not vote, but it breaks the tie of the two disks)."""
    options = layout.resource_options
    settings = _values(options, "quorum") - {"off"}
    nodes = layout.nodes
    short = sorted(q for q in settings if nodes - 1 < votes_needed(q, nodes))
    if not short:
        return None
    on_loss = sorted(_values(options, "on-no-quorum")) or ["(not shown)"]
    effect = "returns I/O errors" if on_loss == ["io-error"] else "freezes its I/O"
    head = f"quorum {'/'.join(short)} with on-no-quorum {'/'.join(on_loss)}"
    if nodes == 2:
        return Risk(
            "quorum", f"{head}: on two nodes a partition leaves neither side with quorum and the primary {effect}"
        )
    need = max(votes_needed(q, nodes) for q in short)
    return Risk(
        "quorum",
        f"{head}: on {nodes} nodes the primary needs {need} of them; cut off from its peer it reaches "
        f"{nodes - 1} and {effect}",
    )


def _protocol_risk(layout: ResourceLayout, ends: PairEnds | None, expected: str) -> Risk | None:
    pair = layout.pair_connection(ends)
    own = layout.own(ends.local) if ends is not None else layout.connections
    if pair is None:
        labels = ", ".join(c.label(ends.local if ends else None) for c in own)
        peer = (
            ", ".join(sorted(ends.peer.names | ({ends.peer.address} if ends.peer.address else set()))) if ends else ""
        )
        return Risk(
            "audit",
            f"cannot tell which connection is the pair's ({labels}; peer {peer or 'not given'}): its protocol "
            "cannot be checked",
        )
    protocol = next((p for p in (_value(a).upper() for a in pair.options.get("protocol", ())[-1:])), DEFAULT_PROTOCOL)
    if protocol == expected.upper():
        return None
    where = "the resource" if len(own) == 1 else f"the connection to {pair.label(ends.local if ends else None)}"
    return Risk(
        "protocol",
        f"{where} runs protocol {protocol}, the inventory says {expected}: results would be judged against the "
        "wrong replication guarantee",
    )


def _judge(layout: ResourceLayout, ends: PairEnds | None, expected: str) -> list[Risk]:
    risks = [r for r in (_protocol_risk(layout, ends, expected), _quorum_risk(layout)) if r is not None]
    local = ends.local if ends is not None else None
    own = layout.own(local) if local is not None else layout.connections
    per_connection = [(c, _connection_risks(c.options)) for c in own]
    for risk in dict.fromkeys(r for _, found in per_connection for r in found):
        holders = [c.label(local) for c, found in per_connection if risk in found]
        # on some connections only: say which
        where = f"connection to {', '.join(holders)}: " if len(holders) < len(own) else ""
        risks.append(Risk(risk.check, where + risk.detail))
    for handler in _FENCE_HANDLERS:
        for args in layout.resource_options.get(handler, ()):
            risks.append(
                Risk(
                    "fence-peer handler",
                    f"{handler} {' '.join(args)}: runs when the peer is lost; it outdates the peer or has it "
                    "STONITHed, and a cluster manager may move services",
                )
            )
    return sorted(risks, key=lambda r: _CHECK_ORDER.index(r.check))


def _resource(
    text: str, resource: str, what: str, missing: str
) -> tuple[tuple[Statement, ...], list[Statement]] | Risk:
    """(everything parsed, the resource's blocks), or the risk of not being able to tell."""
    try:
        parsed = parse_config(text)
    except DrbdOutputError as exc:
        return Risk("audit", f"cannot read `{what}`: {exc}")
    blocks = find_resources(parsed, resource)
    if not blocks:
        return Risk("audit", f"`{what}` does not {missing}")
    return parsed, blocks


def _statements(blocks: list[Statement]) -> tuple[Statement, ...]:
    return tuple(s for block in blocks for s in block.block or ())


def audit_show(text: str, resource: str, expected_protocol: str, ends: PairEnds | None = None) -> list[Risk]:
    """Risks in ``drbdsetup show [--show-defaults] RESOURCE``: the running configuration, the
    pair ``ends`` judged by its own connection."""
    found = _resource(
        text,
        resource,
        f"drbdsetup show {resource}",
        f"list {resource}: its running configuration cannot be checked",
    )
    if isinstance(found, Risk):
        return [found]
    return _judge(layout_of_show(_statements(found[1])), ends, expected_protocol)


def audit_dump(text: str, resource: str, expected_protocol: str, ends: PairEnds | None = None) -> list[Risk]:
    """Risks in ``drbdadm dump RESOURCE``: the configuration file, ``common`` section included
    (the resource's own settings win over ``common``'s, as drbdadm applies them)."""
    found = _resource(
        text,
        resource,
        f"drbdadm dump {resource}",
        f"show {resource}: its configuration file cannot be checked",
    )
    if isinstance(found, Risk):
        return [found]
    parsed, blocks = found
    common = option_leaves(s for s in parsed if s.block is not None and s.words == ("common",))
    return _judge(layout_of_dump(_statements(blocks), common), ends, expected_protocol)


def _running_managers(units: CommandResult, processes: CommandResult) -> dict[str, str] | Risk:
    """Manager -> the evidence that it runs, or the risk of not being able to tell."""
    running: dict[str, str] = {}
    states = units.stdout.split()
    if len(states) == len(MANAGERS):
        for unit, state in zip(MANAGERS, states, strict=True):
            if state in _RUNNING_UNIT_STATES:
                running[unit] = f"unit {unit} is {state}"
    if processes.ok:
        by_comm = {comm: unit for unit, comm in MANAGERS.items()}
        for line in processes.stdout.splitlines():
            pid, _, comm = line.strip().partition(" ")
            manager = by_comm.get(comm.strip())
            if manager is not None and manager not in running:
                running[manager] = f"process {comm.strip()} (pid {pid}) is running"
    elif len(states) != len(MANAGERS):
        detail = (processes.stderr.strip() or units.stderr.strip() or "no output").splitlines()[0]
        return Risk("audit", f"cannot tell whether Pacemaker or drbd-reactor run here ({detail})")
    return running


def _manager_risk(evidence: str) -> Risk:
    return Risk(
        "cluster manager",
        f"{evidence}: it may manage the resource and react to the fault itself (promote the peer, fence, restart)",
    )


def audit_managers(units: CommandResult, processes: CommandResult) -> list[Risk]:
    """Pacemaker or drbd-reactor running on the node, from ``systemctl is-active`` (one state
    per unit, in order) and ``ps -e -o pid=,comm=``.  Without systemd (the lab's guests)
    systemctl prints nothing and the process list decides; with neither, the answer is unknown."""
    running = _running_managers(units, processes)
    if isinstance(running, Risk):
        return [running]
    return [_manager_risk(evidence) for evidence in running.values()]


def _ident(resource: str) -> str:
    """``resource`` as an identifier, one to one: every character but a letter or a digit is
    written as ``_xx`` (its code in hex), ``_`` itself included."""
    return "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):02x}" for c in resource)


@dataclass(frozen=True)
class NodeAudit:
    """What the audit found on one node: per resource, and about the node's cluster managers."""

    resources: Mapping[str, list[Risk]]
    managers: list[Risk]
    #: what was found that is not a risk (Pacemaker running, managing other resources only)
    notes: list[str] = field(default_factory=list)

    def risks(self) -> list[Risk]:
        return [*self.managers, *(r for risks in self.resources.values() for r in risks)]


@dataclass(frozen=True)
class AuditPlan:
    """The audit of the resources on one node: ``protocols`` maps each resource to the protocol
    the inventory says it runs, ``pairs`` to the ends of its pair under test (a DRBD 9 resource
    may have more connections than the pair's, each with its own settings)."""

    protocols: Mapping[str, str]
    pairs: Mapping[str, PairEnds] = field(default_factory=dict)

    def _keys(self) -> list[tuple[str, str, str]]:
        # run_batch wants identifiers: each resource's commands are named after it, spelled as
        # one (so the commands of several plans can share one round trip without clashing)
        return [(res, f"audit_show_{_ident(res)}", f"audit_dump_{_ident(res)}") for res in sorted(self.protocols)]

    def commands(self) -> dict[str, list[str]]:
        """Read-only commands, named for :func:`harness.remote.run_batch`."""
        out = {
            "audit_units": ["systemctl", "is-active", *MANAGERS],
            "audit_processes": ["ps", "-e", "-o", "pid=,comm="],
            # read only where Pacemaker runs (evaluate); a node without it has no cibadmin
            "audit_cib": [
                "sh",
                "-c",
                f"if command -v cibadmin >/dev/null; then exec {' '.join(CIB_RESOURCES_ARGV)}; "
                "else echo 'cibadmin: not installed' >&2; exit 127; fi",
            ],
        }
        for res, show, dump in self._keys():
            out[show] = show_defaults_argv(res)
            out[dump] = dump_argv(res)
        return out

    def evaluate(self, results: Mapping[str, CommandResult]) -> NodeAudit:
        per_resource: dict[str, list[Risk]] = {}
        for res, show, dump in self._keys():
            risks: list[Risk] = []
            for key, audit in ((show, audit_show), (dump, audit_dump)):
                result = results[key]
                if not result.ok:
                    error = (result.stderr.strip() or f"exit {result.exit_code}").splitlines()[0]
                    risks.append(Risk("audit", f"`{result.command}` failed: {error}"))
                    continue
                found = audit(result.stdout, res, self.protocols[res], self.pairs.get(res))
                risks += [r for r in found if r not in risks]
            per_resource[res] = risks
        running = _running_managers(results["audit_units"], results["audit_processes"])
        if isinstance(running, Risk):
            return NodeAudit(per_resource, [running])
        managers = [_manager_risk(evidence) for manager, evidence in running.items() if manager != "pacemaker"]
        notes: list[str] = []
        if "pacemaker" in running:
            view = pacemaker_view(running["pacemaker"], results["audit_cib"], sorted(per_resource))
            if view.unreadable is not None:
                managers.insert(0, _manager_risk(view.unreadable))
            for res, detail in view.managed.items():
                per_resource[res] = [Risk("cluster manager", detail), *per_resource[res]]
            notes = view.notes
        return NodeAudit(per_resource, managers, notes)
