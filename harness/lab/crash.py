"""The lab's parts of the failover cell: crashing and recovering a guest, and switching the
replication protocol of a pair (the lab's ``Crasher`` and ``ProtocolSwitch``,
:mod:`harness.cell.failover`)."""

from __future__ import annotations

from typing import get_args

from harness.drbd.provision import set_protocol
from harness.fields import ReplicationProtocol
from harness.inventory.models import PairSpec
from harness.lab.lifecycle import Lab
from harness.mdnbd.commands import write_mode_script
from harness.remote.pool import ConnectionPool

__all__ = ["LabCrasher", "LabProtocols"]

PROTOCOLS: tuple[ReplicationProtocol, ...] = get_args(ReplicationProtocol)
MD_NBD_PROTOCOLS: tuple[ReplicationProtocol, ...] = ("A", "C")


class LabCrasher:
    """SIGKILL of every process of a guest (a power cut), then a reboot that keeps its disks."""

    def __init__(self, lab: Lab, pool: ConnectionPool) -> None:
        self.lab = lab
        self.pool = pool

    def prepare(self, node: str) -> None:
        """Nothing to check: the lab kills and boots its own guests, whatever their kernel says."""

    def crash(self, node: str) -> None:
        self.lab.crash_guest(node)
        self.pool.reset(node)

    def recover(self, node: str) -> None:
        self.lab.restart_guest(node)
        self.pool.reset(node)


class LabProtocols:
    """Any protocol, set in the lab's own DRBD configuration on every node of the resource (a
    restarted guest comes back with the protocol its file says, and DRBD 9 refuses a connection
    whose two ends disagree: a peer left on the old one would stay StandAlone)."""

    def __init__(self, pool: ConnectionPool, pair: PairSpec) -> None:
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
