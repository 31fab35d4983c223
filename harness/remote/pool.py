"""One SSH connection per node per process, opened on first use and closed at the end.

xdist workers are separate processes, each with its own pool; a Connection is never shared
across processes (fabric connections are not picklable, and paramiko SFTP is not shared).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from harness.errors import ConfigError
from harness.remote.command import Runner
from harness.remote.spec import SshSpec
from harness.remote.ssh import SshNode

__all__ = ["ConnectionPool", "Node", "NodePool"]


class Node(Runner, Protocol):
    """A node as the pool hands it out: a :class:`Runner` that can also stream a command's
    output as it comes (a live SSH connection, or one being recorded or replayed)."""

    def stream(
        self, argv: Sequence[str], *, timeout: float, sudo: bool = True, sink: list[bytes] | None = None
    ) -> tuple[str, bool]: ...


class NodePool(Protocol):
    """Where the harness gets its nodes: SSH (:class:`ConnectionPool`), or a recorded session
    (:class:`~harness.remote.recorder.RecordingPool`, :class:`~harness.remote.replay.ReplayPool`)."""

    def get(self, name: str) -> Node: ...

    def open_all(self, names: list[str]) -> Mapping[str, Node]: ...

    def reset(self, name: str) -> None: ...

    def close_all(self) -> None: ...


class ConnectionPool:
    def __init__(self, specs: Mapping[str, SshSpec]) -> None:
        self._specs = dict(specs)
        self._nodes: dict[str, SshNode] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> SshNode:
        if name not in self._specs:
            raise ConfigError(f"unknown node {name!r} (inventory has {sorted(self._specs)})")
        with self._lock:
            node = self._nodes.get(name)
            if node is None:
                node = SshNode(name, self._specs[name])
                self._nodes[name] = node
        node.open()
        return node

    def open_all(self, names: list[str]) -> dict[str, SshNode]:
        """Open several connections in parallel; the first failure is raised."""
        with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
            nodes = list(pool.map(self.get, names))
        return dict(zip(names, nodes, strict=True))

    def reset(self, name: str) -> None:
        """Forget a node's connection (it crashed or rebooted); the next get() reconnects."""
        with self._lock:
            node = self._nodes.pop(name, None)
        if node is not None:
            node.close()

    def close_all(self) -> None:
        with self._lock:
            nodes, self._nodes = list(self._nodes.values()), {}
        for node in nodes:
            node.close()
