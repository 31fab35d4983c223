"""The replication seam: the only way from the harness to a replicated device.

A :class:`Replication` is one replicated device on one node of a pair (a DRBD resource today;
md RAID1 over NBD and others later).  Cells, calibration, the failover, preflight, the device
guard, the sysrq crash and the lab's status all ask it, never the product's tools, so another
product plugs in here, in :func:`replication_for`, without touching any of them.

What a caller may ask:

* **state** — :meth:`~Replication.state`, :meth:`~Replication.healthy`,
  :meth:`~Replication.wait_healthy`; and the same question as a read-only command plus its
  reader (:meth:`~Replication.state_probe`, :meth:`~Replication.read_state`), so it can ride in a
  round trip the caller makes anyway (the device guard's, preflight's);
* **identity** — which device the product says is its own and which devices back it (they must
  never be written): :meth:`~Replication.identity_probes`, :meth:`~Replication.read_identity`;
* **changes** — :meth:`~Replication.disconnect`/:meth:`~Replication.connect` (the local-disk
  cells), :meth:`~Replication.promote`/:meth:`~Replication.demote` and
  :meth:`~Replication.ensure_up` (the failover); nothing that discards data or forces a role;
* **event watch** — :meth:`~Replication.watch` plans a node-side watcher for one measurement
  window; its scripts ride in the cell's fio round trips and its judgement says whether the
  replication stayed healthy for the whole window;
* **partitions** — :meth:`~Replication.timeouts` says how long a silent replication path is
  tolerated before the peer is declared lost, and :meth:`~Replication.verify` (online verify)
  whether both replicas hold the same data afterwards;
* **configuration audit** — risky settings (fencing, automatic split-brain recovery, quorum,
  dual primary, a cluster manager acting on its own) for disruptive scenarios and preflight;
* **every peer** — :meth:`~Replication.peers` (and its probes and reader): the device's other
  peers beyond the pair, each with its disk and role, and the quorum they make (a DRBD 9
  resource of three nodes, a diskless tie-breaker); None where the product has no such peers.

Answers are protocols too (:mod:`harness.replication.answers`: :class:`ReplicaStatus`,
:class:`WindowVerdict`, :class:`ConfigFindings`, :class:`PeerView`, ...): each product keeps its
own records, in its own words.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.drbd import commands as drbd_commands
from harness.drbd.errors import DrbdOutputError
from harness.drbd.layout import Endpoint, PairEnds
from harness.drbd.replication import DrbdReplication
from harness.errors import ConfigError
from harness.inventory.models import NodeSpec, PairSpec
from harness.mdnbd import commands as md_nbd_commands
from harness.mdnbd.replication import MdNbdEnds, MdNbdReplication
from harness.remote import CommandResult, Runner
from harness.replication.answers import (
    ConfigFindings,
    EventWatch,
    IdentityVerdict,
    PeerView,
    ReplicaStatus,
    SilenceTimeouts,
    VerifyOutcome,
    WindowVerdict,
)

__all__ = [
    "ConfigFindings",
    "EventWatch",
    "IdentityVerdict",
    "PeerView",
    "ReplicaStatus",
    "Replication",
    "SilenceTimeouts",
    "ToolProbe",
    "VerifyOutcome",
    "WindowVerdict",
    "backing_devices_probe",
    "read_backing_devices",
    "read_product_version",
    "replication_for",
    "tool_probe",
    "version_probe",
]


class Replication(Protocol):
    """A replicated device on one node, as the harness uses it."""

    @property
    def node(self) -> str: ...

    @property
    def resource(self) -> str: ...

    @property
    def device(self) -> str: ...

    # -- state
    def state_probe(self) -> Sequence[str]: ...

    def read_state(self, output: str) -> ReplicaStatus | None:
        """The state from :meth:`state_probe`'s output; None when not configured on the node."""
        ...

    def state(self) -> ReplicaStatus:
        """Raises a :class:`~harness.errors.RefusedError` when it is not configured on the node."""
        ...

    def healthy(self) -> bool: ...

    def wait_healthy(self, deadline_s: float) -> ReplicaStatus:
        """Poll until healthy; raise (a :class:`~harness.errors.RefusedError`) at the deadline."""
        ...

    # -- identity
    def identity_probes(self) -> Mapping[str, Sequence[str]]: ...

    def read_identity(self, results: Mapping[str, CommandResult]) -> tuple[str | None, tuple[str, ...]]:
        """(the device as the node resolves it, or None; the devices that back it)."""
        ...

    def node_identity_probes(self) -> Mapping[str, Sequence[str]]:
        """Read-only commands that say which node the product takes this one for."""
        ...

    def read_node_identity(
        self, results: Mapping[str, CommandResult], *, node_id: int | None, ip: str, port: int
    ) -> IdentityVerdict:
        """The pinned node id (where the product has one) and the replication address and port
        against :meth:`node_identity_probes`' answers."""
        ...

    # -- changes
    def disconnect(self) -> None: ...

    def connect(self) -> None: ...

    def promote(self) -> ReplicaStatus: ...

    def demote(self) -> ReplicaStatus: ...

    def ensure_up(self) -> None:
        """Bring the device up on a node whose boot did not (after a crash)."""
        ...

    # -- partitions
    def timeouts(self) -> SilenceTimeouts: ...

    def verify(self, deadline_s: float, *, start_bytes: int = 0, stop_bytes: int | None = None) -> VerifyOutcome:
        """Compare both replicas over ``[start_bytes, stop_bytes)``; raises a
        :class:`~harness.errors.RefusedError` when the replication cannot verify (not healthy,
        not configured for it)."""
        ...

    def diverged_from(self, peer: Replication) -> str | None:
        """Why this replica and ``peer`` both took writes the other lacks (split brain), or
        None.  Answerable while the two cannot talk to each other."""
        ...

    # -- event watch
    def watch(self, run_id: str, name: str, *, max_duration_s: float) -> EventWatch: ...

    # -- every peer
    def peers_probes(self) -> Mapping[str, Sequence[str]]: ...

    def read_peers(self, results: Mapping[str, CommandResult]) -> PeerView | None:
        """The peers from :meth:`peers_probes`' results; None when the product has none beyond
        the pair to tell of, or the device is not configured on the node."""
        ...

    def peers(self) -> PeerView | None: ...

    # -- configuration audit
    def audit_commands(self) -> Mapping[str, Sequence[str]]: ...

    def read_audit(self, results: Mapping[str, CommandResult]) -> ConfigFindings: ...

    def audit(self) -> ConfigFindings: ...


def _endpoint(name: str, nodes: Mapping[str, NodeSpec] | None) -> Endpoint:
    """How the product may know inventory node ``name``: by that name (the lab's), its host
    name and its replication address when the inventory gives them."""
    spec = nodes.get(name) if nodes is not None else None
    if spec is None:
        return Endpoint(frozenset({name}))
    names = {name, spec.hostname} if spec.hostname else {name}
    return Endpoint(frozenset(names), str(spec.replication.ip))


def replication_for(
    pair: PairSpec, node: Runner, *, poll_interval_s: float = 1.0, nodes: Mapping[str, NodeSpec] | None = None
) -> Replication:
    """The pair's replicated device on ``node`` (its primary or its secondary).

    ``nodes`` (the inventory's) lets the product find the pair's own link among more peers (a
    DRBD 9 resource with a third node) by host name and address as well as by node name.

    A pair's ``replication`` picks the product: DRBD, or md-nbd (md RAID1 over NBD, SIOS
    DataKeeper's architecture), which needs ``nodes`` for the replication addresses its
    export and its NBD client use.  A pair's diskless tie-breakers (its ``peers``) are
    diskless by configuration: DRBD is told, under every name DRBD may call them by."""
    if node.name not in (pair.primary, pair.secondary):
        raise ConfigError(f"node {node.name!r} is in no side of the pair of resource {pair.resource!r}")
    peer = pair.secondary if node.name == pair.primary else pair.primary
    if pair.replication == "md-nbd":
        return _md_nbd(pair, node, peer, nodes, poll_interval_s)
    return DrbdReplication(
        node,
        pair.resource,
        device=pair.device,
        protocol=pair.protocol,
        poll_interval_s=poll_interval_s,
        pair=PairEnds(_endpoint(node.name, nodes), _endpoint(peer, nodes)),
        diskless_peers={n for name in pair.tiebreakers for n in _endpoint(name, nodes).names} if pair.peers else None,
    )


def _md_nbd(
    pair: PairSpec, node: Runner, peer: str, nodes: Mapping[str, NodeSpec] | None, poll_interval_s: float
) -> Replication:
    def address(name: str) -> str:
        spec = nodes.get(name) if nodes is not None else None
        return str(spec.replication.ip) if spec is not None else ""

    assert pair.disk is not None  # the inventory requires it of an md-nbd pair
    ends = MdNbdEnds(pair.disk, pair.nbd, address(node.name), address(peer), pair.port, pair.nbd_timeout)
    return MdNbdReplication(node, pair.resource, ends, protocol=pair.protocol, poll_interval_s=poll_interval_s)


# -- about a node, whatever pairs it is in -----------------------------------------------------
def backing_devices_probe() -> list[str]:
    """Read-only command printing, one per line, every device that backs a replicated device on
    the node, the inventory's or not (a scratch disk must back none): DRBD's backing disks and
    the legs of the md-nbd exports the node serves (an md array's own members show as its
    holders).  Its exit status does not matter: a node without a product prints nothing."""
    drbd = shlex.join(drbd_commands.sh_ll_dev_all_argv())
    return ["sh", "-c", f"{drbd} 2>/dev/null; {md_nbd_commands.exported_legs_script()}; true"]


def read_backing_devices(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip()]


@dataclass(frozen=True)
class ToolProbe:
    """The replication product's tool on a node, for preflight: its name, a read-only command
    that prints its version, and how that output reads."""

    name: str
    argv: Sequence[str]
    describe: Callable[[str], str]


def tool_probe() -> ToolProbe:
    return ToolProbe("drbdadm", drbd_commands.version_argv(), drbd_commands.describe_version)


def version_probe() -> list[str]:
    """Read-only command whose output :func:`read_product_version` reads (cell provenance)."""
    return drbd_commands.proc_drbd_argv()


def read_product_version(output: str) -> str:
    """The replication product's version on the node, ``unknown`` when it says none."""
    try:
        return drbd_commands.parse_proc_drbd_version(output)
    except DrbdOutputError:
        return "unknown"
