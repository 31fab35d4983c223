"""What a DRBD resource looks like right now: frozen records in DRBD's own words.

The records mirror DRBD's own object model (one resource has connections to peers, local
devices per volume, and one peer device per connection and volume — the same split as
``drbdsetup events2`` and ``drbdsetup status --json``), and all states are kept in DRBD's own
words ("Connected", "UpToDate", "SyncSource"), so a message shows the operator what
``drbdadm status`` would show.  Sizes are KiB, as DRBD reports them.

Three sources produce these records: ``drbdsetup events2`` (the main one; parsed in
:mod:`harness.drbd.events` and folded in :mod:`harness.drbd.fold`), ``/proc/drbd`` of DRBD 8.x
(:mod:`harness.drbd.procfs`) and ``drbdsetup status --json`` of DRBD 9
(:mod:`harness.drbd.status_json`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Final

__all__ = [
    "CONGESTION_STATES",
    "CONNECTED",
    "DISKLESS",
    "ESTABLISHED",
    "FORBIDDEN_CONNECTION_STATES",
    "FORBIDDEN_DISK_STATES",
    "RESYNC_STATES",
    "UP_TO_DATE",
    "VERIFY_STATES",
    "Connection",
    "Device",
    "DrbdadmWords",
    "PeerDevice",
    "ResourceState",
]

CONNECTED: Final = "Connected"
DISKLESS: Final = "Diskless"
ESTABLISHED: Final = "Established"
UP_TO_DATE: Final = "UpToDate"

#: Replication states of a running, paused or imminent resync.
#: Any of them means writes are not only replication: the numbers include resync traffic.
RESYNC_STATES: Final = frozenset(
    {
        "StartingSyncS",
        "StartingSyncT",
        "WFBitMapS",
        "WFBitMapT",
        "WFSyncUUID",
        "SyncSource",
        "SyncTarget",
        "PausedSyncS",
        "PausedSyncT",
    }
)
#: Online verify competes with the workload for disk and network.
VERIFY_STATES: Final = frozenset({"VerifyS", "VerifyT"})
#: on-congestion pull-ahead: replication stopped, the peer will need a resync.
CONGESTION_STATES: Final = frozenset({"Ahead", "Behind"})
#: Connection states that only appear after a failure: a window that meets one saw the link break.
FORBIDDEN_CONNECTION_STATES: Final = frozenset({"Timeout", "ProtocolError", "NetworkFailure", "BrokenPipe"})
#: A local I/O error report; the next state is Diskless.
FORBIDDEN_DISK_STATES: Final = frozenset({"Failed"})


# ---------------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Connection:
    """The link to one peer (events2 ``connection``)."""

    peer_node_id: int | None
    conn_name: str | None
    state: str
    peer_role: str = "Unknown"
    congested: bool | None = None
    ap_in_flight_sectors: int | None = None
    rs_in_flight_sectors: int | None = None
    #: Some DRBD 9 utils print ``sync-state:SplitBrain`` (or ``Unrelated``) on a StandAlone connection.
    sync_state: str | None = None
    #: DRBD called its split-brain handler for this connection and it has not connected since
    #: (the fold of a stream sees the call; a ``--now`` snapshot never does).
    split_brain: bool = False

    @property
    def label(self) -> str:
        """How messages name the peer: its connection name, else its node id."""
        if self.conn_name:
            return self.conn_name
        return f"node {self.peer_node_id}" if self.peer_node_id is not None else "peer"


@dataclass(frozen=True)
class Device:
    """One local volume (events2 ``device``)."""

    volume: int
    minor: int | None
    disk: str
    size_kib: int | None = None
    read_kib: int | None = None
    written_kib: int | None = None
    al_writes: int | None = None
    bm_writes: int | None = None
    upper_pending: int | None = None
    lower_pending: int | None = None
    al_suspended: bool | None = None
    #: ``no``, ``upper``, ``lower`` or ``upper,lower``: which side of DRBD holds requests back.
    blocked: str = "no"
    #: DRBD 9: ``client:yes`` when this node is diskless by configuration (a tie-breaker, a client)
    client: bool | None = None
    quorum: bool | None = None
    backing_dev: str | None = None

    @property
    def disk_ok(self) -> bool:
        """UpToDate, or Diskless on a node that is diskless by configuration (``client:yes``)."""
        return self.disk == UP_TO_DATE or (self.disk == DISKLESS and self.client is True)


@dataclass(frozen=True)
class PeerDevice:
    """One volume as seen over one connection (events2 ``peer-device``)."""

    peer_node_id: int | None
    conn_name: str | None
    volume: int
    replication: str
    peer_disk: str
    resync_suspended: str = "no"
    received_kib: int | None = None
    sent_kib: int | None = None
    out_of_sync_kib: int | None = None
    pending: int | None = None
    unacked: int | None = None
    done_percent: float | None = None
    peer_client: bool | None = None

    @property
    def label(self) -> str:
        peer = self.conn_name or (f"node {self.peer_node_id}" if self.peer_node_id is not None else "peer")
        return f"{peer} volume {self.volume}"

    @property
    def peer_disk_ok(self) -> bool:
        """UpToDate, or Diskless on a peer that says it is a client (``peer-client:yes``)."""
        return self.diskless_ok(())

    def diskless_by_design(self, diskless_peers: Collection[str]) -> bool:
        """The peer has no disk on purpose: DRBD says it is a client, or the configuration (or
        the inventory) names it among ``diskless_peers``.  A diskful node prints its peer
        ``peer-client:yes`` only while it keeps no bitmap for it; until its own configuration is
        adjusted to the peer's ``disk none`` (as on the recorded 9.2.18 lab) it prints
        ``peer-client:no``, and only the configuration can tell."""
        return self.peer_client is True or (self.conn_name is not None and self.conn_name in diskless_peers)

    def diskless_ok(self, diskless_peers: Collection[str]) -> bool:
        """UpToDate, or Diskless on a peer that is diskless by design; a Diskless peer that
        should have a disk is not."""
        if self.peer_disk == UP_TO_DATE:
            return True
        return self.peer_disk == DISKLESS and self.diskless_by_design(diskless_peers)


@dataclass(frozen=True)
class DrbdadmWords:
    """The DRBD 8.4 one-liner words: ``drbdadm cstate`` / ``dstate`` / ``role``.

    ``connection`` is the 8.4 connection state, which folds the replication state in
    (``SyncSource`` rather than ``Connected`` during a resync, ``WFConnection`` for DRBD 9's
    ``Connecting``); ``disk`` and ``role`` are ``local/peer``.
    """

    connection: str
    disk: str
    role: str


# 8.4 spells two connection states differently from events2/DRBD 9.
_CONN_TO_84: Final = {"Connecting": "WFConnection"}


@dataclass(frozen=True)
class ResourceState:
    """A resource and everything below it, as one immutable snapshot."""

    name: str
    role: str
    #: DRBD's word: ``no``, or the reasons joined by commas (``user``, ``no-data``, ``fencing``,
    #: ``quorum`` — drbdsetup ``susp_str``).
    suspended: str = "no"
    connections: tuple[Connection, ...] = ()
    devices: tuple[Device, ...] = ()
    peer_devices: tuple[PeerDevice, ...] = ()
    write_ordering: str | None = None
    may_promote: bool | None = None
    promotion_score: int | None = None
    #: Set by :meth:`toward`: connections outside the pair's view that are not Connected, one
    #: phrase each.  They are not the pair's problems (a DR node may be away) but are shown.
    other_connections: tuple[str, ...] = ()
    #: Set by :meth:`toward` when the pair's connection cannot be told among several: a problem.
    unmatched_peer: str | None = None
    #: Peers (connection names) diskless by configuration, set by :meth:`with_diskless`: their
    #: Diskless is what they should be, and nothing is out of sync on a peer without a disk.
    diskless_peers: frozenset[str] = frozenset()

    def with_diskless(self, peers: Collection[str]) -> ResourceState:
        """The same state, knowing which peers the configuration (or the inventory) makes diskless."""
        return replace(self, diskless_peers=frozenset(peers))

    # -- aggregated states (the worst one wins, so a multi-volume/multi-peer resource is only
    #    "Connected" when every part is) -----------------------------------------------------
    @property
    def connection_state(self) -> str:
        """``Connected`` when every connection is; otherwise the first one that is not.

        With no connection object at all the resource is StandAlone: DRBD 8.4 destroys the
        connection after ``drbdadm disconnect`` (see the recorded disconnect stream).
        """
        if not self.connections:
            return "StandAlone"
        return next((c.state for c in self.connections if c.state != CONNECTED), CONNECTED)

    @property
    def disk_state(self) -> str:
        """Local disk state: ``UpToDate`` when every volume is; ``Diskless`` with no volume."""
        if not self.devices:
            return DISKLESS
        return next((d.disk for d in self.devices if d.disk != UP_TO_DATE), UP_TO_DATE)

    @property
    def peer_disk_state(self) -> str:
        """The peers' disk state; ``DUnknown`` when no peer device exists (not connected)."""
        if not self.peer_devices:
            return "DUnknown"
        return next((p.peer_disk for p in self.peer_devices if not p.diskless_ok(self.diskless_peers)), UP_TO_DATE)

    @property
    def replication_state(self) -> str:
        """``Established`` when every peer device is; ``Off`` with no peer device."""
        if not self.peer_devices:
            return "Off"
        return next((p.replication for p in self.peer_devices if p.replication != ESTABLISHED), ESTABLISHED)

    @property
    def peer_role(self) -> str:
        """The peer's role (``Primary`` if any peer is), ``Unknown`` without a connection."""
        if not self.connections:
            return "Unknown"
        if any(c.peer_role == "Primary" for c in self.connections):
            return "Primary"
        return self.connections[0].peer_role

    @property
    def out_of_sync_kib(self) -> int:
        """Data not in sync with the peers, according to DRBD's bitmaps (sum over peer devices).

        A peer diskless by design holds no replica, so nothing on it can be out of sync: what
        DRBD counts toward it is left out."""
        return sum(p.out_of_sync_kib or 0 for p in self.peer_devices if not p.diskless_by_design(self.diskless_peers))

    @property
    def is_suspended(self) -> bool:
        return self.suspended != "no"

    @property
    def connected(self) -> bool:
        """Replicating to every peer (DRBD's word: ``Connected``)."""
        return self.connection_state == CONNECTED

    @property
    def words(self) -> tuple[str, str, str]:
        """(connection, disk, role) as DRBD 8.4's ``drbdadm cstate/dstate/role`` print them."""
        w = self.drbdadm_words
        return w.connection, w.disk, w.role

    @property
    def split_brain(self) -> bool:
        """DRBD reported split brain on a connection: the split-brain handler's call seen in a
        stream, or the ``sync-state:SplitBrain`` some DRBD 9 utils print."""
        return any(_split(c) for c in self.connections)

    # -- verdicts --------------------------------------------------------------------------
    def problems(self) -> tuple[str, ...]:
        """Why the resource is not healthy, one phrase per finding (empty when healthy)."""
        found: list[str] = []
        if self.unmatched_peer is not None:
            found.append(self.unmatched_peer)
        if not self.connections:
            found.append("no connection to a peer (StandAlone)")
        found.extend(f"connection to {c.label} is {c.state}" for c in self.connections if c.state != CONNECTED)
        found.extend(f"split brain with {c.label}" for c in self.connections if _split(c))
        if not self.devices:
            found.append("no local volume (Diskless)")
        found.extend(f"local disk of volume {d.volume} is {d.disk}" for d in self.devices if not d.disk_ok)
        # DRBD 9: a device without quorum fails or freezes I/O (on-no-quorum), even UpToDate
        found.extend(f"volume {d.volume} has lost quorum" for d in self.devices if d.quorum is False)
        if self.connections and not self.peer_devices:
            found.append("no peer device")
        for p in self.peer_devices:
            if p.replication != ESTABLISHED:
                found.append(f"replication to {p.label} is {p.replication}")
            if not p.diskless_ok(self.diskless_peers):
                found.append(f"peer disk of {p.label} is {p.peer_disk}")
        if self.is_suspended:
            found.append(f"I/O suspended ({self.suspended})")
        found.extend(f"I/O blocked ({d.blocked}) on volume {d.volume}" for d in self.devices if d.blocked != "no")
        return tuple(found)

    @property
    def healthy(self) -> bool:
        """Connected, Established, UpToDate on both sides, not suspended, nothing blocked."""
        return not self.problems()

    @property
    def drbdadm_words(self) -> DrbdadmWords:
        """What DRBD 8.4's ``drbdadm cstate/dstate/role`` would print for this resource."""
        conn = self.connection_state
        repl = self.replication_state
        if conn == CONNECTED and repl not in {ESTABLISHED, "Off"}:
            conn = repl
        return DrbdadmWords(
            connection=_CONN_TO_84.get(conn, conn),
            disk=f"{self.disk_state}/{self.peer_disk_state}",
            role=f"{self.role}/{self.peer_role}",
        )

    def describe(self) -> str:
        """One line in DRBD's words, e.g. ``Connected UpToDate/UpToDate Primary/Secondary``.

        Extras are appended only when they are not the normal value, so a healthy resource
        reads exactly like ``drbdadm cstate; dstate; role``.
        """
        w = self.drbdadm_words
        # drbdadm's words, except that DRBD 9's "Connecting" is not renamed to 8.4's
        # "WFConnection": the line should read the same as events2 does on either version.
        connection = "Connecting" if w.connection == "WFConnection" else w.connection
        parts = [connection, w.disk, w.role]
        if self.is_suspended:
            parts.append(f"suspended:{self.suspended}")
        blocked = sorted({d.blocked for d in self.devices if d.blocked != "no"})
        if blocked:
            parts.append(f"blocked:{'+'.join(blocked)}")
        if self.out_of_sync_kib:
            parts.append(f"out-of-sync:{self.out_of_sync_kib}KiB")
        if self.split_brain:
            parts.append("SplitBrain")
        if any(d.quorum is False for d in self.devices):
            parts.append("quorum:no")
        return " ".join(parts)

    def toward(self, peer_names: Collection[str]) -> ResourceState:
        """The resource as the pair under test sees it: only the connection to the peer named
        one of ``peer_names`` (DRBD 9's connection name is the peer's host name) and its peer
        devices, so a third node being away or resyncing does not make the pair unhealthy.

        A resource with at most one connection is returned as is (DRBD 8.4; a DRBD 9 pair).
        With several and none of them named so, the state says that it cannot tell, as a
        problem: guessing would judge the wrong link."""
        if len(self.connections) <= 1:
            return self
        mine = next((c for c in self.connections if c.conn_name in peer_names), None)
        if mine is None:
            labels = ", ".join(c.label for c in self.connections)
            return replace(
                self,
                unmatched_peer=f"cannot tell which connection is the pair's: none of {labels} "
                f"is named {' or '.join(sorted(peer_names)) or '(no name given)'}",
            )
        return replace(
            self,
            connections=(mine,),
            peer_devices=tuple(p for p in self.peer_devices if _same_peer(p, mine)),
            other_connections=tuple(
                f"{c.label} is {c.state}" for c in self.connections if c is not mine and c.state != CONNECTED
            ),
        )


def _split(connection: Connection) -> bool:
    return connection.split_brain or connection.sync_state == "SplitBrain"


def _same_peer(peer_device: PeerDevice, connection: Connection) -> bool:
    if peer_device.peer_node_id is not None and connection.peer_node_id is not None:
        return peer_device.peer_node_id == connection.peer_node_id
    return peer_device.conn_name == connection.conn_name
