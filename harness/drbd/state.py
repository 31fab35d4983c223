"""What a DRBD resource looks like right now: frozen records plus the two non-events2 sources.

The records mirror DRBD's own object model (one resource has connections to peers, local
devices per volume, and one peer device per connection and volume — the same split as
``drbdsetup events2`` and ``drbdsetup status --json``), and all states are kept in DRBD's own
words ("Connected", "UpToDate", "SyncSource"), so a message shows the operator what
``drbdadm status`` would show.  Sizes are KiB, as DRBD reports them.

Sources other than events2 live here too because they produce the same records:

* :func:`parse_proc_drbd` — ``/proc/drbd`` of DRBD 8.x, the fallback for 8.4 kernels older than
  8.4.6 where events2 does not exist.  Quirks handled: the resync line switches from ``K`` to
  ``M`` once the resync total exceeds 1 GiB (``drbd_proc.c``), speeds carry a thousands
  separator (``42,792``), and on DRBD 9 the file holds version lines only.
* :func:`parse_status_json` — ``drbdsetup status --json`` (DRBD 9 utils only), whose peer
  devices sit under ``peer_devices`` with an underscore while every other key is hyphenated.

The events2 parser and the fold that builds :class:`ResourceState` from a stream are in
:mod:`harness.drbd.events`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from harness.drbd.errors import DrbdOutputError

__all__ = [
    "CONGESTION_STATES",
    "FORBIDDEN_CONNECTION_STATES",
    "FORBIDDEN_DISK_STATES",
    "RESYNC_STATES",
    "VERIFY_STATES",
    "Connection",
    "Device",
    "DrbdadmWords",
    "PeerDevice",
    "ProcDrbd",
    "ProcDrbdMinor",
    "ResourceState",
    "SyncProgress",
    "parse_proc_drbd",
    "parse_status_json",
]

CONNECTED: Final = "Connected"
ESTABLISHED: Final = "Established"
UP_TO_DATE: Final = "UpToDate"

#: Replication states of a running, paused or imminent resync (UG9 "Replication states").
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
#: Connection states that only appear after a failure (reliability.md §4 row 22).
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
    #: DRBD 9 utils print ``sync-state:SplitBrain`` (or ``Unrelated``) on a StandAlone connection.
    sync_state: str | None = None

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
    #: ``no``, ``upper``, ``lower`` or ``upper,lower`` (UG9 "Performance indicators").
    blocked: str = "no"
    client: bool | None = None
    quorum: bool | None = None
    backing_dev: str | None = None


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
        """UpToDate, or an intentionally diskless peer (a DRBD 9 tie-breaker/client node)."""
        return self.peer_disk == UP_TO_DATE or (self.peer_client is True and self.peer_disk == "Diskless")


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
            return "Diskless"
        return next((d.disk for d in self.devices if d.disk != UP_TO_DATE), UP_TO_DATE)

    @property
    def peer_disk_state(self) -> str:
        """The peers' disk state; ``DUnknown`` when no peer device exists (not connected)."""
        if not self.peer_devices:
            return "DUnknown"
        return next((p.peer_disk for p in self.peer_devices if not p.peer_disk_ok), UP_TO_DATE)

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
        """Data not in sync with the peers, according to DRBD's bitmaps (sum over peer devices)."""
        return sum(p.out_of_sync_kib or 0 for p in self.peer_devices)

    @property
    def is_suspended(self) -> bool:
        return self.suspended != "no"

    @property
    def split_brain(self) -> bool:
        """DRBD reported split brain on a connection (only DRBD 9 utils print it in events2)."""
        return any(c.sync_state == "SplitBrain" for c in self.connections)

    # -- verdicts --------------------------------------------------------------------------
    def problems(self) -> tuple[str, ...]:
        """Why the resource is not healthy, one phrase per finding (empty when healthy)."""
        found: list[str] = []
        if not self.connections:
            found.append("no connection to a peer (StandAlone)")
        found.extend(f"connection to {c.label} is {c.state}" for c in self.connections if c.state != CONNECTED)
        found.extend(f"split brain with {c.label}" for c in self.connections if c.sync_state == "SplitBrain")
        if not self.devices:
            found.append("no local volume (Diskless)")
        found.extend(f"local disk of volume {d.volume} is {d.disk}" for d in self.devices if d.disk != UP_TO_DATE)
        if self.connections and not self.peer_devices:
            found.append("no peer device")
        for p in self.peer_devices:
            if p.replication != ESTABLISHED:
                found.append(f"replication to {p.label} is {p.replication}")
            if not p.peer_disk_ok:
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
        return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# /proc/drbd (DRBD 8.x)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SyncProgress:
    """The resync (or verify) progress lines under a minor in /proc/drbd.

    ``left_kib``/``total_kib`` are in KiB whatever the unit printed; with ``unit == "M"`` the
    kernel truncated them to whole MiB, so they are exact only to 1 MiB.
    """

    kind: Literal["sync'ed", "verified"]
    percent: float
    left_kib: int
    total_kib: int
    unit: Literal["K", "M"]
    finish_s: int | None = None
    speed_kib_s: int | None = None
    average_kib_s: int | None = None
    want_kib_s: int | None = None
    stalled: bool = False


@dataclass(frozen=True)
class ProcDrbdMinor:
    """One minor's block in /proc/drbd (8.x)."""

    minor: int
    cs: str
    role: str = "Unknown"
    peer_role: str = "Unknown"
    disk: str = "DUnknown"
    peer_disk: str = "DUnknown"
    protocol: str | None = None
    io_flags: str = ""
    counters: Mapping[str, int | str] = field(default_factory=dict)
    sync: SyncProgress | None = None

    @property
    def out_of_sync_kib(self) -> int:
        oos = self.counters.get("oos", 0)
        return oos if isinstance(oos, int) else 0

    def to_resource_state(self, name: str) -> ResourceState:
        """The same minor as a :class:`ResourceState`, so one health logic serves both sources.

        /proc/drbd has no resource names, so the caller supplies one (from ``drbdadm sh-dev``
        or the inventory).  8.4's ``cs:`` mixes connection and replication states; they are
        split back apart here (``cs:SyncSource`` → Connected + SyncSource).
        """
        if self.cs == "Unconfigured":
            return ResourceState(name=name, role="Unknown")
        if self.cs == CONNECTED:
            conn, repl = CONNECTED, ESTABLISHED
        elif self.cs in RESYNC_STATES | VERIFY_STATES | CONGESTION_STATES | {"SkippedSyncS", "SkippedSyncT"}:
            conn, repl = CONNECTED, self.cs
        elif self.cs in {"WFConnection", "WFReportParams"}:
            conn, repl = "Connecting", "Off"
        else:
            conn, repl = self.cs, "Off"
        flags = self.io_flags.ljust(6, "-")
        # Flag 1 is r/s (I/O running or suspended), flag 5 the local blocking reason
        # (UG8.4 "I/O state flags"): d = DRBD-internal, b = backing device, n = network
        # congestion, a = backing device and network.
        suspended = "yes" if flags[0] == "s" else "no"
        blocked = {"d": "upper", "b": "lower", "a": "lower"}.get(flags[4], "no")
        congested = flags[4] in {"n", "a"}

        def counter(key: str) -> int | None:
            value = self.counters.get(key)
            return value if isinstance(value, int) else None

        connection = Connection(
            peer_node_id=None, conn_name=None, state=conn, peer_role=self.peer_role, congested=congested
        )
        device = Device(
            volume=0,
            minor=self.minor,
            disk=self.disk,
            read_kib=counter("dr"),
            written_kib=counter("dw"),
            al_writes=counter("al"),
            bm_writes=counter("bm"),
            lower_pending=counter("lo"),
            upper_pending=counter("ap"),
            blocked=blocked,
        )
        peer_devices: tuple[PeerDevice, ...] = ()
        if conn != "StandAlone" or self.peer_disk != "DUnknown" or self.out_of_sync_kib:
            peer_devices = (
                PeerDevice(
                    peer_node_id=None,
                    conn_name=None,
                    volume=0,
                    replication=repl,
                    peer_disk=self.peer_disk,
                    received_kib=counter("nr"),
                    sent_kib=counter("ns"),
                    out_of_sync_kib=counter("oos"),
                    pending=counter("pe"),
                    unacked=counter("ua"),
                    done_percent=self.sync.percent if self.sync else None,
                ),
            )
        return ResourceState(
            name=name,
            role=self.role,
            suspended=suspended,
            connections=(connection,),
            devices=(device,),
            peer_devices=peer_devices,
            write_ordering=str(self.counters["wo"]) if "wo" in self.counters else None,
        )


@dataclass(frozen=True)
class ProcDrbd:
    """All of /proc/drbd: the module version and (8.x only) one block per minor."""

    version: str
    api: int | None
    proto: str | None
    minors: tuple[ProcDrbdMinor, ...] = ()

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    def minor(self, number: int) -> ProcDrbdMinor | None:
        return next((m for m in self.minors if m.minor == number), None)


_VERSION_RE: Final = re.compile(
    r"^version:\s+(?P<v>\d+\.\d+\.\d+\S*)(?:\s+\(api:(?P<api>\d+)/proto:(?P<proto>[\d-]+)\))?"
)
_MINOR_RE: Final = re.compile(
    r"^\s*(?P<minor>\d+):\s+cs:(?P<cs>\w+)"
    r"(?:\s+(?:ro|st):(?P<role>\w+)/(?P<peer_role>\w+)"
    r"\s+ds:(?P<disk>\w+)/(?P<peer_disk>\w+)"
    r"(?:\s+(?P<protocol>[ABC]))?"
    r"(?:\s+(?P<flags>[-a-z]{1,8}))?)?\s*$"
)
_COUNTER_RE: Final = re.compile(r"(?P<key>[a-z]+):(?P<value>\S+)")
_PROGRESS_RE: Final = re.compile(
    r"\[[=>.]*\]\s+(?P<kind>sync'ed|verified):\s*(?P<pct>\d+(?:\.\d+)?)%\s+"
    r"\((?P<left>[\d,]+)/(?P<total>[\d,]+)\)(?P<unit>[KM])"
)
_FINISH_RE: Final = re.compile(
    r"finish:\s+(?P<h>\d+):(?P<m>\d{2}):(?P<s>\d{2})\s+speed:\s+(?P<speed>[\d,]+)\s+\((?P<avg>[\d,]+)\)"
    r"(?:\s+want:\s+(?P<want>[\d,]+))?\s+K/sec(?P<rest>.*)$"
)


def _num(text: str) -> int:
    # drbd_proc.c prints "%ld,%03ld" (one separator, so 1234567 appears as "1234,567");
    # dropping every comma handles that and any future full grouping alike.
    return int(text.replace(",", ""))


def _progress(line: str) -> SyncProgress | None:
    m = _PROGRESS_RE.search(line)
    if not m:
        return None
    unit: Literal["K", "M"] = "M" if m["unit"] == "M" else "K"
    scale = 1024 if unit == "M" else 1
    kind: Literal["sync'ed", "verified"] = "verified" if m["kind"] == "verified" else "sync'ed"
    return SyncProgress(
        kind=kind,
        percent=float(m["pct"]),
        left_kib=_num(m["left"]) * scale,
        total_kib=_num(m["total"]) * scale,
        unit=unit,
    )


def _with_finish(progress: SyncProgress, line: str) -> SyncProgress:
    m = _FINISH_RE.search(line)
    if not m:
        return progress
    return replace(
        progress,
        finish_s=int(m["h"]) * 3600 + int(m["m"]) * 60 + int(m["s"]),
        speed_kib_s=_num(m["speed"]),
        average_kib_s=_num(m["avg"]),
        want_kib_s=_num(m["want"]) if m["want"] else None,
        stalled="stalled" in m["rest"],
    )


def parse_proc_drbd(text: str) -> ProcDrbd:
    """Parse /proc/drbd (8.x with minors, or DRBD 9's version-only file)."""
    version: re.Match[str] | None = None
    minors: list[ProcDrbdMinor] = []
    current: ProcDrbdMinor | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if version is None:
            version = _VERSION_RE.match(line)
            if version is None:
                raise DrbdOutputError(f"/proc/drbd: first line is not a DRBD version line: {line!r}")
            continue
        if re.match(r"^\s*\d+:", line):
            m = _MINOR_RE.match(line)
            if not m:
                raise DrbdOutputError(f"/proc/drbd: cannot parse minor line {line!r}")
            if current is not None:
                minors.append(current)
            current = ProcDrbdMinor(
                minor=int(m["minor"]),
                cs=m["cs"],
                role=m["role"] or "Unknown",
                peer_role=m["peer_role"] or "Unknown",
                disk=m["disk"] or "DUnknown",
                peer_disk=m["peer_disk"] or "DUnknown",
                protocol=m["protocol"],
                io_flags=m["flags"] or "",
            )
            continue
        if current is None:
            continue  # GIT-hash:, srcversion:, Transports: — build information only
        if line.lstrip().startswith("ns:"):
            counters: dict[str, int | str] = {}
            for cm in _COUNTER_RE.finditer(line):
                value = cm["value"]
                counters[cm["key"]] = _num(value) if re.fullmatch(r"[\d,]+", value) else value
            current = replace(current, counters=counters)
        elif (progress := _progress(line)) is not None:
            current = replace(current, sync=progress)
        elif "finish:" in line and current.sync is not None:
            current = replace(current, sync=_with_finish(current.sync, line))
        # Other indented lines (act_log/resync details with verbose settings) are ignored.
    if version is None:
        raise DrbdOutputError("/proc/drbd is empty (is the drbd module loaded?)")
    if current is not None:
        minors.append(current)
    return ProcDrbd(
        version=version["v"],
        api=int(version["api"]) if version["api"] else None,
        proto=version["proto"],
        minors=tuple(minors),
    )


# ---------------------------------------------------------------------------------------------
# drbdsetup status --json (DRBD 9)
# ---------------------------------------------------------------------------------------------
_SUSPEND_REASONS: Final = (
    ("suspended-user", "user"),
    ("suspended-no-data", "no-data"),
    ("suspended-fencing", "fencing"),
    ("suspended-quorum", "quorum"),
)


def _opt_int(obj: Mapping[str, object], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_bool(obj: Mapping[str, object], key: str) -> bool | None:
    value = obj.get(key)
    return value if isinstance(value, bool) else None


def _req_str(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise DrbdOutputError(f"drbdsetup status --json: {where} has no string {key!r}")
    return value


def _objects(obj: Mapping[str, object], key: str, where: str) -> list[Mapping[str, object]]:
    value = obj.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DrbdOutputError(f"drbdsetup status --json: {where}.{key} is not a list of objects")
    return value


def _suspended_word(res: Mapping[str, object]) -> str:
    reasons = [word for key, word in _SUSPEND_REASONS if res.get(key) is True]
    if reasons:
        return ",".join(reasons)
    # Older utils only print the combined boolean.
    return "yes" if res.get("suspended") is True else "no"


def _resource_from_json(res: Mapping[str, object]) -> ResourceState:
    name = _req_str(res, "name", "resource")
    where = f"resource {name}"
    devices = tuple(
        Device(
            volume=_opt_int(d, "volume") or 0,
            minor=_opt_int(d, "minor"),
            disk=_req_str(d, "disk-state", f"{where} device"),
            size_kib=_opt_int(d, "size"),
            read_kib=_opt_int(d, "read"),
            written_kib=_opt_int(d, "written"),
            al_writes=_opt_int(d, "al-writes"),
            bm_writes=_opt_int(d, "bm-writes"),
            upper_pending=_opt_int(d, "upper-pending"),
            lower_pending=_opt_int(d, "lower-pending"),
            client=_opt_bool(d, "client"),
            quorum=_opt_bool(d, "quorum"),
        )
        for d in _objects(res, "devices", where)
    )
    connections: list[Connection] = []
    peer_devices: list[PeerDevice] = []
    for c in _objects(res, "connections", where):
        node_id = _opt_int(c, "peer-node-id")
        conn_name = c.get("name") if isinstance(c.get("name"), str) else None
        assert conn_name is None or isinstance(conn_name, str)
        connections.append(
            Connection(
                peer_node_id=node_id,
                conn_name=conn_name,
                state=_req_str(c, "connection-state", f"{where} connection"),
                peer_role=str(c.get("peer-role", "Unknown")),
                congested=_opt_bool(c, "congested"),
                ap_in_flight_sectors=_opt_int(c, "ap-in-flight"),
                rs_in_flight_sectors=_opt_int(c, "rs-in-flight"),
            )
        )
        for p in _objects(c, "peer_devices", f"{where} connection"):
            done = p.get("percent-resync-done")
            peer_devices.append(
                PeerDevice(
                    peer_node_id=node_id,
                    conn_name=conn_name,
                    volume=_opt_int(p, "volume") or 0,
                    replication=_req_str(p, "replication-state", f"{where} peer device"),
                    peer_disk=_req_str(p, "peer-disk-state", f"{where} peer device"),
                    resync_suspended=str(p.get("resync-suspended", "no")),
                    received_kib=_opt_int(p, "received"),
                    sent_kib=_opt_int(p, "sent"),
                    out_of_sync_kib=_opt_int(p, "out-of-sync"),
                    pending=_opt_int(p, "pending"),
                    unacked=_opt_int(p, "unacked"),
                    done_percent=float(done) if isinstance(done, int | float) else None,
                    peer_client=_opt_bool(p, "peer-client"),
                )
            )
    write_ordering = res.get("write-ordering")
    return ResourceState(
        name=name,
        role=_req_str(res, "role", where),
        suspended=_suspended_word(res),
        connections=tuple(connections),
        devices=devices,
        peer_devices=tuple(peer_devices),
        write_ordering=write_ordering if isinstance(write_ordering, str) else None,
    )


def parse_status_json(text: str) -> tuple[ResourceState, ...]:
    """Parse ``drbdsetup status --json [RES]`` (DRBD 9 only; a JSON array of resources)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DrbdOutputError(f"drbdsetup status --json: not JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DrbdOutputError("drbdsetup status --json: expected a JSON array of resource objects")
    return tuple(_resource_from_json(r) for r in data)
