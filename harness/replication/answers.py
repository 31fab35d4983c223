"""What the replication seam answers (:mod:`harness.replication`), as protocols.

Each product keeps its own records in its own words (DRBD's ``ResourceState``, md-nbd's
``MdNbdStatus``); the harness reads them only through these: a device's state now, the node
identity it answers to, a measurement window's verdict and the watcher that produced it, how
long a silent path is tolerated, a comparison of both replicas, the configuration audit, and
every peer of the device with the quorum they make.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = [
    "ConfigFindings",
    "EventWatch",
    "IdentityVerdict",
    "PeerView",
    "ReplicaStatus",
    "SilenceTimeouts",
    "VerifyOutcome",
    "WindowVerdict",
]


class ReplicaStatus(Protocol):
    """One replicated device on one node, now."""

    @property
    def role(self) -> str: ...

    @property
    def healthy(self) -> bool:
        """Replicating, both copies current, I/O neither suspended nor blocked."""
        ...

    @property
    def connected(self) -> bool:
        """The peer is reachable and replication runs (it may still be resyncing)."""
        ...

    @property
    def out_of_sync_kib(self) -> int: ...

    @property
    def may_promote(self) -> bool | None:
        """Whether the product says this node may take the primary role now (DRBD 9 weighs its
        quorum and the peers' roles); None where the product does not say."""
        ...

    @property
    def words(self) -> tuple[str, str, str]:
        """(connection, disk, role) in the product's own words, for status tables."""
        ...

    def problems(self) -> tuple[str, ...]:
        """Why it is not healthy, one phrase per finding (empty when healthy)."""
        ...

    def describe(self) -> str: ...


class PeerView(Protocol):
    """Every peer of a replicated device as one node sees it: each with its connection, role
    and disk, the quorum setting and state, and how many peers it can lose and still write."""

    @property
    def holds_quorum(self) -> bool:
        """Whether this node may write (always, where quorum is off)."""
        ...

    @property
    def margin(self) -> int | None:
        """Connected peers it can lose, any of them, before its writes stop; None: never."""
        ...

    def problems(self) -> tuple[str, ...]:
        """Quorum lost, a peer away, a peer without the disk it should have; empty when none."""
        ...

    def verdict(self) -> str:
        """Whether quorum holds and through whom, in a line."""
        ...

    def describe(self) -> str: ...


class IdentityVerdict(Protocol):
    """Whether the node is the one the inventory pins, as the product knows it, in one line."""

    @property
    def ok(self) -> bool: ...

    @property
    def detail(self) -> str: ...


class WindowVerdict(Protocol):
    """Whether the replication stayed healthy for a whole measurement window, and why not."""

    @property
    def valid(self) -> bool: ...

    @property
    def reason(self) -> str: ...


class EventWatch(Protocol):
    """A node-side watcher of one measurement window, as shell the caller runs in its round trips."""

    def start_script(self) -> str:
        """Starts the watcher detached, bounded by its own deadline; returns at once."""
        ...

    def stop_script(self) -> str:
        """Stops the watcher if it still runs and prints what :meth:`judge` reads."""
        ...

    def judge(self, output: str) -> WindowVerdict: ...


class SilenceTimeouts(Protocol):
    """How long the replication tolerates a silent path (the product's own settings)."""

    @property
    def silence_tolerated_s(self) -> float:
        """A silence shorter than this never drops the connection."""
        ...

    @property
    def silence_detected_s(self) -> float:
        """A silence longer than this always drops the connection."""
        ...

    @property
    def answer_timeout_s(self) -> float:
        """How long a keep-alive may wait for its answer: a round trip grown this much disconnects."""
        ...

    @property
    def request_timeout_s(self) -> float:
        """How long the peer may take to answer a replicated write."""
        ...

    def describe(self) -> str: ...


class VerifyOutcome(Protocol):
    """A finished comparison of both replicas over a range."""

    @property
    def out_of_sync_kib(self) -> int: ...

    @property
    def duration_s(self) -> float: ...

    @property
    def identical(self) -> bool: ...

    def describe(self) -> str: ...


class ConfigFindings(Protocol):
    """The configuration audit of a node: risks per replicated resource and of the node's
    cluster managers (each risk prints as one line)."""

    @property
    def resources(self) -> Mapping[str, Sequence[object]]: ...

    @property
    def managers(self) -> Sequence[object]: ...

    @property
    def notes(self) -> Sequence[str]:
        """What was found that is no risk (a cluster manager that manages other resources)."""
        ...

    @property
    def resource_notes(self) -> Mapping[str, Sequence[str]]:
        """Per resource, what it sets that is no risk but must be said (quorum it keeps)."""
        ...

    def risks(self) -> Sequence[object]:
        """Every risk: the cluster managers', then each resource's."""
        ...
