"""``/proc/drbd`` of DRBD 8.x, parsed into the same records as events2.

The fallback for 8.4 kernels older than 8.4.6, where events2 does not exist.  Quirks handled:
the resync line switches from ``K`` to ``M`` once the resync total exceeds 1 GiB, speeds carry
a thousands separator (``42,792``), and on DRBD 9 the file holds version lines only.

A stalled resync (no progress for longer than DRBD's sync marks span) is printed as
``(stalled)`` after ``K/sec``.  Where that text lands differs: in the ``M`` layout the kernel
prints no newline before ``finish:``, so progress, speeds and ``(stalled)`` share one line
(``(left/total)M`` is not followed by the newline and tab of the ``K`` form), and a consumer that
wraps or cuts lines finds ``stalled`` on a line of its own.  Any ``stalled`` word in a minor's
progress block therefore marks the resync stalled, whatever line it is on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from harness.drbd.errors import DrbdOutputError
from harness.drbd.state import (
    CONGESTION_STATES,
    CONNECTED,
    ESTABLISHED,
    RESYNC_STATES,
    VERIFY_STATES,
    Connection,
    Device,
    PeerDevice,
    ResourceState,
)

__all__ = ["ProcDrbd", "ProcDrbdMinor", "SyncProgress", "parse_proc_drbd"]


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
    def resync_stalled(self) -> bool:
        """DRBD printed ``(stalled)`` for this minor's resync or verify."""
        return self.sync is not None and self.sync.stalled

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
        # Flag 1 is r/s (I/O running or suspended), flag 5 the local blocking reason:
        # d = DRBD-internal, b = backing device, n = network
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
_STALLED_RE: Final = re.compile(r"\bstalled\b")
_FINISH_RE: Final = re.compile(
    r"finish:\s+(?P<h>\d+):(?P<m>\d{2}):(?P<s>\d{2})\s+speed:\s+(?P<speed>[\d,]+)\s+\((?P<avg>[\d,]+)\)"
    r"(?:\s+want:\s+(?P<want>[\d,]+))?\s+K/sec(?P<rest>.*)$"
)


def _num(text: str) -> int:
    # the kernel prints "%ld,%03ld" (one separator, so 1234567 appears as "1234,567");
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


def _minor(line: str) -> ProcDrbdMinor:
    m = _MINOR_RE.match(line)
    if not m:
        raise DrbdOutputError(f"/proc/drbd: cannot parse minor line {line!r}")
    return ProcDrbdMinor(
        minor=int(m["minor"]),
        cs=m["cs"],
        role=m["role"] or "Unknown",
        peer_role=m["peer_role"] or "Unknown",
        disk=m["disk"] or "DUnknown",
        peer_disk=m["peer_disk"] or "DUnknown",
        protocol=m["protocol"],
        io_flags=m["flags"] or "",
    )


def _counters(line: str) -> dict[str, int | str]:
    counters: dict[str, int | str] = {}
    for cm in _COUNTER_RE.finditer(line):
        value = cm["value"]
        counters[cm["key"]] = _num(value) if re.fullmatch(r"[\d,]+", value) else value
    return counters


def _detail(current: ProcDrbdMinor, line: str) -> ProcDrbdMinor:
    """``current`` with what one of its indented lines says (counters, resync progress)."""
    if line.lstrip().startswith("ns:"):
        current = replace(current, counters=_counters(line))
    elif (progress := _progress(line)) is not None:
        # the "M" layout carries finish/speed on the progress line itself
        current = replace(current, sync=_with_finish(progress, line))
    elif "finish:" in line and current.sync is not None:
        current = replace(current, sync=_with_finish(current.sync, line))
    if current.sync is not None and _STALLED_RE.search(line) and not current.sync.stalled:
        current = replace(current, sync=replace(current.sync, stalled=True))
    # Other indented lines (act_log/resync details with verbose settings) are ignored.
    return current


def _version(lines: list[str]) -> re.Match[str]:
    if not lines:
        raise DrbdOutputError("/proc/drbd is empty (is the drbd module loaded?)")
    version = _VERSION_RE.match(lines[0])
    if version is None:
        raise DrbdOutputError(f"/proc/drbd: first line is not a DRBD version line: {lines[0]!r}")
    return version


def parse_proc_drbd(text: str) -> ProcDrbd:
    """Parse /proc/drbd (8.x with minors, or DRBD 9's version-only file)."""
    lines = [line for line in (raw.rstrip() for raw in text.splitlines()) if line.strip()]
    version = _version(lines)
    minors: list[ProcDrbdMinor] = []
    for line in lines[1:]:
        if re.match(r"^\s*\d+:", line):
            minors.append(_minor(line))
        elif minors:
            minors[-1] = _detail(minors[-1], line)
        # before the first minor: GIT-hash:, srcversion:, Transports: (build information only)
    return ProcDrbd(
        version=version["v"],
        api=int(version["api"]) if version["api"] else None,
        proto=version["proto"],
        minors=tuple(minors),
    )
