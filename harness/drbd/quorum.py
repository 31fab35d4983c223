"""A DRBD 9 resource's quorum as one node sees it: its peers, the setting, and the margin.

Quorum decides whether a node may write: a device that loses it returns I/O errors or freezes
(``on-no-quorum``).  How DRBD 9.2 counts, per volume, is modelled here from what events2
prints, so a summary can say how many more peers the node can lose before writes stop:

* Every node with a disk votes: UpToDate, or present with another disk state.  A node the
  kernel knows to be diskless by design does not vote; it only breaks a tie.  The kernel knows
  it from the configuration it runs: ``client:yes`` on the tie-breaker itself, ``peer-client:yes``
  on its peers (a peer device kept without a bitmap).  A peer the configuration file makes
  diskless while this node's DRBD still prints ``peer-client:no`` (its configuration not
  adjusted yet) votes as a node whose disk is missing; the summary says so.
* A peer that is gone (replication ``Off``) still counts among the voters, unless every peer
  that is gone was last seen Outdated or worse: then none of them can be promoted elsewhere,
  and they all leave the count.  A tie-breaker that is gone counts as a missing tie-breaker.
* The node needs ``quorum`` of the voters present: ``majority`` is more than half, ``all`` all
  of them, a number that many; ``quorum-minimum-redundancy`` also needs that many UpToDate.
* Tie-breaker rule: with an even number of voters, one vote short, a node that had quorum
  keeps it while it reaches a majority of the tie-breakers.  That is how a 2+1 resource (two
  disks and a diskless third node) keeps writing on the side that still sees the third node.

The margin is the worst case: the largest number of connected peers such that losing *any*
that many keeps quorum.  The model is checked against the ``quorum:`` DRBD printed in every
recorded state (tests/data/drbd/drbd-9.2.18).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from itertools import combinations
from typing import Final

from harness.drbd.layout import Options
from harness.drbd.state import DISKLESS, UP_TO_DATE, PeerDevice, ResourceState

__all__ = ["PeerSummary", "QuorumSetting", "QuorumSummary", "quorum_setting", "summarize_quorum", "votes_needed"]

#: disk states no better than Outdated: a missing peer last seen so cannot be promoted
_OUTDATED_OR_WORSE: Final = frozenset(
    {"Diskless", "Attaching", "Detaching", "Failed", "Negotiating", "Inconsistent", "Outdated"}
)


def votes_needed(setting: str, voters: int) -> int:
    """Votes a node needs among ``voters`` for ``quorum SETTING`` (0 for ``off``); a word this
    model does not know needs them all, so a reading of it errs on the side of losing quorum."""
    if setting == "off":
        return 0
    if setting == "majority":
        return voters // 2 + 1
    return int(setting) if setting.isdigit() else voters


@dataclass(frozen=True)
class QuorumSetting:
    """``options { quorum ...; on-no-quorum ...; quorum-minimum-redundancy ...; }``."""

    quorum: str = "off"
    on_no_quorum: str | None = None
    minimum_redundancy: str = "off"

    @property
    def enabled(self) -> bool:
        return self.quorum != "off"

    def describe(self) -> str:
        if not self.enabled:
            return "quorum off"
        parts = [f"quorum {self.quorum}", f"on-no-quorum {self.on_no_quorum or '(not shown)'}"]
        if self.minimum_redundancy != "off":
            parts.append(f"quorum-minimum-redundancy {self.minimum_redundancy}")
        return ", ".join(parts)


def quorum_setting(options: Options) -> QuorumSetting:
    """The setting in a layout's resource options (the last value of each key wins)."""

    def last(key: str) -> str | None:
        values = [args[0] for args in options.get(key, ()) if args]
        return values[-1] if values else None

    return QuorumSetting(
        quorum=last("quorum") or "off",
        on_no_quorum=last("on-no-quorum"),
        minimum_redundancy=last("quorum-minimum-redundancy") or "off",
    )


@dataclass(frozen=True)
class _Count:
    up_to_date: int = 0
    present: int = 0
    outdated: int = 0
    unknown: int = 0
    tie_breakers: int = 0
    missing_tie_breakers: int = 0


def _local(disk: str, client: bool | None) -> _Count:
    if disk in {DISKLESS, "Attaching"}:
        return _Count(tie_breakers=1) if client is True else _Count(unknown=1)
    return _Count(up_to_date=1) if disk == UP_TO_DATE else _Count(present=1)


def _peer(replication: str, disk: str, tie_breaker: bool) -> _Count:
    if replication == "Off":
        if tie_breaker:
            return _Count(missing_tie_breakers=1)
        return _Count(outdated=1) if disk in _OUTDATED_OR_WORSE else _Count(unknown=1)
    if disk == DISKLESS and tie_breaker:
        return _Count(tie_breakers=1)
    return _Count(up_to_date=1) if disk == UP_TO_DATE else _Count(present=1)


def _sum(counts: Sequence[_Count]) -> _Count:
    return _Count(**{f.name: sum(getattr(c, f.name) for c in counts) for f in fields(_Count)})


def _quorate(setting: QuorumSetting, count: _Count, had_quorum: bool) -> tuple[bool, bool]:
    """(has quorum, only through the tie-breaker rule)."""
    if not setting.enabled:
        return True, False
    seen = count.up_to_date + count.present
    voters = seen + (count.outdated + count.unknown if count.unknown else 0)
    need = votes_needed(setting.quorum, voters)
    if seen >= need and count.up_to_date >= votes_needed(setting.minimum_redundancy, voters):
        return True, False
    all_tie_breakers = count.tie_breakers + count.missing_tie_breakers
    tie = voters > 0 and voters % 2 == 0 and seen == need - 1
    broken = tie and had_quorum and count.tie_breakers >= votes_needed("majority", all_tie_breakers)
    return broken, broken


@dataclass(frozen=True)
class PeerSummary:
    """One peer as this node sees it."""

    name: str
    node_id: int | None
    connection: str
    role: str
    disk: str
    tie_breaker: bool

    def describe(self) -> str:
        disk = f"{self.disk} (tie-breaker)" if self.tie_breaker else self.disk
        return f"{self.name}: {self.connection}, {self.role}, {disk}"


@dataclass(frozen=True)
class QuorumSummary:
    """This node's resource: its peers, the quorum setting and state, and the margin."""

    resource: str
    role: str
    disk: str
    tie_breaker: bool
    peers: tuple[PeerSummary, ...]
    setting: QuorumSetting
    #: DRBD's own word (``quorum:`` of every volume), None where it prints none
    quorate: bool | None
    #: what the model gives from the same state
    computed: bool
    by_tie_breaker: bool
    #: connected peers whose presence holds the quorum
    held_through: tuple[str, ...]
    #: connected peers this node can lose, whichever they are, and still write; None: quorum off
    margin: int | None
    #: what the summary noticed besides (a tie-breaker by configuration the kernel counts as a voter)
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        me = f"{self.resource}: this node {self.role}, {self.disk}{' (tie-breaker)' if self.tie_breaker else ''}"
        peers = "; ".join(p.describe() for p in self.peers) or "no peer"
        notes = "".join(f"; {note}" for note in self.notes)
        return f"{me}; peers {peers}; {self.setting.describe()}: {self.verdict()}{notes}"

    def verdict(self) -> str:
        if self.margin is None:
            return "losing peers never stops writes"
        if not self.computed:
            return "no quorum, writes stop"
        through = ", ".join(self.held_through) or "itself alone"
        rule = " (tie-breaker rule)" if self.by_tie_breaker else ""
        lose = "cannot lose any peer" if self.margin == 0 else f"can lose any {self.margin}"
        return f"quorum held through {through}{rule}; {lose} before writes stop"


def _volume(state: ResourceState, volume: int) -> list[tuple[PeerDevice, bool]]:
    """The volume's peer devices, each with whether the kernel counts it as a tie-breaker."""
    return [(p, p.peer_client is True) for p in state.peer_devices if p.volume == volume]


def _margin(setting: QuorumSetting, local: _Count, peers: list[tuple[PeerDevice, bool]]) -> int:
    """Connected peers that can be lost, any of them, with quorum kept (0 when it is lost now)."""
    counts = [_peer(p.replication, p.peer_disk, tb) for p, tb in peers]
    if not _quorate(setting, _sum([local, *counts]), True)[0]:
        return 0
    connected = [i for i, (p, _) in enumerate(peers) if p.replication != "Off"]
    for k in range(1, len(connected) + 1):
        for lost in combinations(connected, k):
            after = [_peer("Off", "DUnknown", peers[i][1]) if i in lost else c for i, c in enumerate(counts)]
            if not _quorate(setting, _sum([local, *after]), True)[0]:
                return k - 1
    return len(connected)


def summarize_quorum(state: ResourceState, setting: QuorumSetting, diskless: Collection[str] = ()) -> QuorumSummary:
    """The summary of ``state`` (the fold of this node's events2), ``setting`` from the
    configuration, ``diskless`` the peers diskless by configuration (with those the state
    already knows of)."""
    tie_breakers = frozenset(diskless) | state.diskless_peers
    quorate: list[bool] = []
    by_rule = False
    margins: list[int] = []
    for device in state.devices:
        local = _local(device.disk, device.client)
        peers = _volume(state, device.volume)
        count = _sum([local, *(_peer(p.replication, p.peer_disk, tb) for p, tb in peers)])
        has, rule = _quorate(setting, count, device.quorum is not False)
        quorate.append(has)
        by_rule = by_rule or rule
        margins.append(_margin(setting, local, peers))
    up = {p.conn_name or p.label for p in state.peer_devices if p.replication != "Off"}
    return QuorumSummary(
        resource=state.name,
        role=state.role,
        disk=state.disk_state,
        tie_breaker=any(d.disk == DISKLESS and d.client is True for d in state.devices),
        peers=_peers(state, tie_breakers),
        setting=setting,
        quorate=None if any(d.quorum is None for d in state.devices) else all(d.quorum for d in state.devices),
        computed=bool(quorate) and all(quorate),
        by_tie_breaker=by_rule,
        held_through=tuple(c.label for c in state.connections if c.label in up),
        margin=None if not setting.enabled else min(margins, default=0),
        notes=_notes(state, tie_breakers),
    )


def _notes(state: ResourceState, tie_breakers: frozenset[str]) -> tuple[str, ...]:
    voting = {p.conn_name for p in state.peer_devices if p.conn_name is not None and p.peer_client is not True}
    return tuple(
        f"{name} is diskless by configuration but DRBD here keeps a bitmap for it (peer-client:no): it votes "
        f"as a node whose disk is missing, not as a tie-breaker, until `drbdadm adjust {state.name}` runs here"
        for name in sorted(voting & tie_breakers)
    )


def _peers(state: ResourceState, tie_breakers: frozenset[str]) -> tuple[PeerSummary, ...]:
    out: list[PeerSummary] = []
    for c in state.connections:
        mine = [p for p in state.peer_devices if p.peer_node_id == c.peer_node_id and p.conn_name == c.conn_name]
        disks = [p.peer_disk for p in mine]
        worst = next((d for d in disks if d != UP_TO_DATE), UP_TO_DATE) if disks else "DUnknown"
        tie = bool(mine) and all(p.diskless_by_design(tie_breakers) for p in mine)
        out.append(PeerSummary(c.label, c.peer_node_id, c.state, c.peer_role, worst, tie))
    return tuple(out)
