"""What an md-nbd replica looks like right now, read from the kernel's own md and socket views.

The md-nbd architecture (what SIOS DataKeeper for Linux builds on): the primary assembles an md
RAID1 over a local leg and an NBD device connected to the peer, whose ``nbd-server`` exports
the peer's own leg.  The primary's state is the array's (``/sys/block/mdN/md``: array state,
degraded count, sync action and progress, each member's state); the secondary's state is its
export (the ``nbd-server`` the harness started still runs, and the primary is connected to it).

The probe (:func:`harness.mdnbd.commands.state_script`) prints ``key=value`` lines and one
``member NAME slot=.. state=.. errors=..`` line per member; this module reads them.  Words
follow md's own (``in_sync``, ``faulty``, ``write_mostly``, ``recover``), so a message shows
what ``/proc/mdstat`` and ``mdadm --detail`` would show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from harness.errors import InfraError

__all__ = ["ABSENT", "ArrayMember", "MdNbdStatus", "parse_state"]

ABSENT: Final = "absent"
#: md sync actions that copy or compare data while the workload runs
_BUSY_ACTIONS: Final = frozenset({"resync", "recover", "check", "repair", "reshape"})
_STOPPED: Final = frozenset({"clear", "inactive"})
#: running array states: read-auto is an assembled array that has not been written yet
_RUNNING: Final = frozenset({"clean", "active", "write-pending", "active-idle", "read-auto"})


class MdNbdOutputError(InfraError):
    """The state probe printed something this reader does not understand."""


@dataclass(frozen=True)
class ArrayMember:
    """One leg of the array (``/sys/block/mdN/md/dev-NAME``)."""

    name: str
    slot: str
    states: frozenset[str]
    errors: int

    @property
    def in_sync(self) -> bool:
        return "in_sync" in self.states and "faulty" not in self.states

    @property
    def remote(self) -> bool:
        return self.name.startswith("nbd")


@dataclass(frozen=True)
class MdNbdStatus:
    """One node's side of an md-nbd pair: the array (on the primary) or the export (on the
    secondary); ``array`` is the kernel device or ``absent``."""

    array: str
    array_state: str = ""
    degraded: int = 0
    sync_action: str = ""
    sync_done_sectors: int | None = None
    sync_total_sectors: int | None = None
    mismatch_sectors: int = 0
    members: tuple[ArrayMember, ...] = ()
    write_behind: int = 0
    exporting: bool = False
    export_peers: int = 0
    #: on an exporting node asked about its peer: whether the peer answers (None: not asked)
    peer_up: bool | None = None
    #: the NBD leg was taken out on request (``disconnect``) and stays out until ``connect``
    standalone: bool = False
    #: degraded: the write-intent bitmap's dirty chunks and their size, what md will resync
    bitmap_dirty: int = 0
    bitmap_chunk_bytes: int = 0

    @property
    def assembled(self) -> bool:
        # a stopped array can leave its md device behind, inactive ("clear")
        return self.array != ABSENT and self.array_state not in _STOPPED

    @property
    def role(self) -> str:
        return "Primary" if self.assembled else "Secondary"

    @property
    def may_promote(self) -> None:
        """md-nbd has no word for it: the harness's own promote decides."""
        return None

    @property
    def remote_leg(self) -> ArrayMember | None:
        return next((m for m in self.members if m.remote), None)

    @property
    def connected(self) -> bool:
        if not self.assembled:
            return self.exporting and self.export_peers > 0 and self.peer_up is not False
        leg = self.remote_leg
        return leg is not None and "faulty" not in leg.states

    @property
    def out_of_sync_kib(self) -> int:
        """What the other leg lacks: a running recovery's remaining sectors (md reports 512-byte
        sectors), or while degraded the bitmap's dirty chunks (md's own granularity: an upper
        bound of what was written meanwhile)."""
        if self.sync_action in ("resync", "recover") and self.sync_total_sectors:
            return max(0, self.sync_total_sectors - (self.sync_done_sectors or 0)) // 2
        if self.degraded:
            return self.bitmap_dirty * self.bitmap_chunk_bytes // 1024
        return 0

    @property
    def healthy(self) -> bool:
        return not self.problems()

    @property
    def words(self) -> tuple[str, str, str]:
        """(connection, legs, role) as status tables show them."""
        if not self.assembled:
            connection = "Exporting" if self.connected else ("Listening" if self.exporting else "NotExporting")
            return connection, "-", "Secondary"
        if self.sync_action in _BUSY_ACTIONS:
            connection = self.sync_action.capitalize()
        else:
            connection = "Connected" if self.connected else "Degraded"
        legs = "/".join("InSync" if m.in_sync else "+".join(sorted(m.states)) for m in self.members) or "-"
        return connection, legs, "Primary"

    def problems(self) -> tuple[str, ...]:
        if not self.assembled:
            if not self.exporting:
                return ("nbd-server does not export the leg",)
            if self.export_peers == 0:
                return ("no primary is connected to the export",)
            if self.peer_up is False:
                return ("the primary connected to the export does not answer",)
            return ()
        found = []
        if self.standalone:
            found.append("the NBD leg was disconnected on request")
        if self.degraded:
            found.append(f"array degraded ({self.degraded} leg missing)")
        for member in self.members:
            if not member.in_sync:
                found.append(f"leg {member.name} is {','.join(sorted(member.states)) or 'in no state'}")
        if self.remote_leg is None:
            found.append("no NBD leg in the array")
        if self.sync_action in _BUSY_ACTIONS:
            found.append(f"md is running {self.sync_action} ({self.out_of_sync_kib} KiB left)")
        if self.array_state not in _RUNNING:
            found.append(f"array state {self.array_state or 'unknown'}")
        return tuple(found)

    def describe(self) -> str:
        connection, legs, role = self.words
        what = f"{role}, {connection}, legs {legs}" if self.assembled else f"{role}, {connection}"
        problems = self.problems()
        return what + (f" ({'; '.join(problems)})" if problems else "")


def _int(value: str, key: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise MdNbdOutputError(f"md-nbd state: {key}={value!r} is not a number") from None


def _member(line: str) -> ArrayMember:
    name, *fields = line.split()[1:]
    values = dict(f.split("=", 1) for f in fields if "=" in f)
    return ArrayMember(
        name=name,
        slot=values.get("slot", "none"),
        states=frozenset(s for s in values.get("state", "").split(",") if s),
        errors=_int(values.get("errors", "0") or "0", "errors"),
    )


def parse_state(output: str) -> MdNbdStatus:
    """Read :func:`~harness.mdnbd.commands.state_script`'s output."""
    values: dict[str, str] = {}
    members: list[ArrayMember] = []
    for raw in output.splitlines():
        line = raw.strip()
        if line.startswith("member "):
            members.append(_member(line))
        elif "=" in line:
            key, _, value = line.partition("=")
            values[key] = value.strip()
    if "array" not in values:
        raise MdNbdOutputError(f"md-nbd state: no array line in {output[:200]!r}")
    done: int | None = None
    total: int | None = None
    completed = values.get("sync_completed", "none")
    if "/" in completed:
        left, _, right = completed.partition("/")
        done, total = _int(left.strip(), "sync_completed"), _int(right.strip(), "sync_completed")
    backlog = values.get("bitmap_backlog", "") or "0"
    return MdNbdStatus(
        array=values["array"],
        array_state=values.get("array_state", ""),
        degraded=_int(values.get("degraded", "0") or "0", "degraded"),
        sync_action=values.get("sync_action", ""),
        sync_done_sectors=done,
        sync_total_sectors=total,
        mismatch_sectors=_int(values.get("mismatch_cnt", "0") or "0", "mismatch_cnt"),
        members=tuple(sorted(members, key=lambda m: m.name)),
        write_behind=_int(backlog, "bitmap_backlog") if backlog.isdigit() else 0,
        exporting=values.get("export", "") == "running",
        export_peers=_int(values.get("export_peers", "0") or "0", "export_peers"),
        peer_up={"up": True, "down": False}.get(values.get("peer", "")),
        standalone=values.get("standalone") == "1",
        bitmap_dirty=_int(values.get("bitmap_dirty") or "0", "bitmap_dirty"),
        bitmap_chunk_bytes=_int(values.get("bitmap_chunk") or "0", "bitmap_chunk"),
    )
