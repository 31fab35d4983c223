"""The lab's parts of the failover cell: crashing and recovering a guest, and switching the
replication protocol of a pair (the lab's ``Crasher`` and ``ProtocolSwitch``,
:mod:`harness.cell.failover`).

The lab's host kills and boots its guests itself, not through a guest's SSH; :class:`LabHost`
makes those two acts commands of a node of their own (``lab-host``: ``crash-guest NAME``,
``restart-guest NAME``), so a session recording keeps them beside every node's commands and its
replay serves them like any other.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final, get_args

from harness.drbd.provision import set_protocol
from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.inventory.models import PairSpec
from harness.lab.lifecycle import Lab
from harness.mdnbd.commands import write_mode_script
from harness.remote.command import CommandResult, Runner
from harness.remote.pool import NodePool

__all__ = ["LAB_HOST", "LabCrasher", "LabHost", "LabProtocols"]

#: the name the lab's host goes by among the nodes of a session recording
LAB_HOST: Final = "lab-host"

PROTOCOLS: tuple[ReplicationProtocol, ...] = get_args(ReplicationProtocol)
MD_NBD_PROTOCOLS: tuple[ReplicationProtocol, ...] = ("A", "C")
#: what a crash or a restart may take (the restart waits for the guest's boot, bounded by the lab)
GUEST_ACT_S: Final = 600.0


class LabHost:
    """The lab's host as a :class:`~harness.remote.Runner` of two commands: ``crash-guest NAME``
    (SIGKILL of the guest's every process) and ``restart-guest NAME`` (boot it again)."""

    name = LAB_HOST

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        acts = {"crash-guest": self.lab.crash_guest, "restart-guest": self.lab.restart_guest}
        if len(argv) != 2 or argv[0] not in acts:
            raise ConfigError(
                f"{LAB_HOST}: no command {' '.join(argv)!r} (it has crash-guest NAME, restart-guest NAME)"
            )
        start = time.monotonic()
        acts[argv[0]](argv[1])
        return CommandResult(LAB_HOST, " ".join(argv), 0, "", "", time.monotonic() - start)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        raise ConfigError(f"{LAB_HOST} runs no scripts, only crash-guest NAME and restart-guest NAME")


class LabCrasher:
    """SIGKILL of every process of a guest (a power cut), then a reboot that keeps its disks,
    by the lab's ``host`` (a :class:`LabHost`, or its recording or replay)."""

    def __init__(self, host: Runner, pool: NodePool) -> None:
        self.host = host
        self.pool = pool

    def prepare(self, node: str) -> None:
        """Nothing to check: the lab kills and boots its own guests, whatever their kernel says."""

    def crash(self, node: str) -> None:
        self.host.run(["crash-guest", node], timeout=GUEST_ACT_S)
        self.pool.reset(node)

    def recover(self, node: str) -> None:
        self.host.run(["restart-guest", node], timeout=GUEST_ACT_S)
        self.pool.reset(node)


class LabProtocols:
    """Any protocol, set in the lab's own DRBD configuration on every node of the resource (a
    restarted guest comes back with the protocol its file says, and DRBD 9 refuses a connection
    whose two ends disagree: a peer left on the old one would stay StandAlone)."""

    def __init__(self, pool: NodePool, pair: PairSpec) -> None:
        self.pool = pool
        self.pair = pair

    def refusal(self, protocol: str) -> str | None:
        if self.pair.replication == "md-nbd" and protocol not in MD_NBD_PROTOCOLS:
            return f"md-nbd replicates synchronously (C) or asynchronously (A), it has no protocol {protocol!r}"
        return None if protocol in PROTOCOLS else f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}"

    def set(self, protocol: str) -> None:
        chosen = next(p for p in PROTOCOLS if p == protocol)
        if self.pair.replication == "md-nbd":
            # the array runs on whichever node holds the primary role now
            script = write_mode_script(self.pair.resource, self.pair.nbd, asynchronous=chosen == "A")
            for node in (self.pair.primary, self.pair.secondary):
                self.pool.get(node).run_script(f"[ -e /dev/md/{self.pair.resource} ] || exit 0; {script}", timeout=30)
            return
        set_protocol([self.pool.get(node) for node in self.pair.nodes], self.pair.resource, chosen)
