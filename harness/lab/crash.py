"""Crashing and recovering lab guests for the failover scenario (the lab's ``Crasher``)."""

from __future__ import annotations

from harness.connections import ConnectionPool
from harness.lab.lifecycle import Lab

__all__ = ["LabCrasher"]


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
