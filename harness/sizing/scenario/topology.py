"""Where each peer of a DRBD 9 resource is, and whether it holds the data.

A resource of more than two nodes has its primary's peers each at a placement of its own (a
second replica in the same AZ, a third across), and some of them may be diskless tie-breakers:
they vote for quorum but hold no replica, so the primary sends them no data, their writes cost
no time, and they need no volume.  A peer may also have its own DRBD protocol (DRBD 9 sets it per
connection): a DR replica across a region under protocol A beside a synchronous one in the next
zone.  ``--topology same-az,cross-az:diskless`` or ``cross-az,rtt=60ms:A`` names them in order,
one entry per peer, each a catalog placement (a region pair ``region:us-east-1/us-west-2`` too) or
``rtt=2ms``, optionally ``:diskless`` or ``:A``/``:B``/``:C``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, get_args

from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.sizing.catalog.region_readers import REGION_PREFIX
from harness.units import UnitError, parse_duration

__all__ = ["DISKLESS", "MAX_PEERS", "PeerSlot", "check_topology", "parse_topology"]

#: DRBD 9 allows 32 nodes in a resource: the primary and 31 peers
MAX_PEERS: Final = 31
#: the suffix of a peer that holds no replica (a tie-breaker)
DISKLESS: Final = "diskless"


@dataclass(frozen=True)
class PeerSlot:
    """One peer of the primary: its placement (a catalog name, or ``custom`` with ``rtt_s``),
    whether it is diskless, and its own protocol (``None``: the resource's)."""

    placement: str
    rtt_s: float | None = None
    diskless: bool = False
    protocol: ReplicationProtocol | None = None

    def describe(self) -> str:
        where = self.placement if self.rtt_s is None else f"rtt={self.rtt_s * 1000:g}ms"
        if self.diskless:
            return f"{where}:{DISKLESS}"
        return f"{where}:{self.protocol}" if self.protocol is not None else where


_PROTOCOLS: dict[str, ReplicationProtocol] = {p: p for p in get_args(ReplicationProtocol)}
_SUFFIXES = (DISKLESS, *_PROTOCOLS)


def _slot(entry: str, where: str, index: int) -> PeerSlot:
    text = entry.strip()
    if not text:
        raise ConfigError(f"{where}: peer {index} is empty; give PLACEMENT[:{DISKLESS}] for each peer")
    # a region pair's name has a colon of its own: the suffix is what follows the pair
    prefix = REGION_PREFIX if text.startswith(REGION_PREFIX) else ""
    place, sep, suffix = text[len(prefix) :].partition(":")
    place = prefix + place if place else ""
    if sep and suffix not in _SUFFIXES:
        raise ConfigError(
            f"{where}: peer {index} {text!r}: after the placement only ':{DISKLESS}', ':A', ':B' or ':C' may follow"
        )
    diskless = suffix == DISKLESS
    protocol = _PROTOCOLS.get(suffix)
    if place.startswith("rtt="):
        try:
            rtt = parse_duration(place[4:])
        except UnitError as exc:
            raise ConfigError(f"{where}: peer {index} {text!r}: {exc}") from None
        return PeerSlot("custom", rtt, diskless, protocol)
    if not place:
        raise ConfigError(f"{where}: peer {index} {text!r} names no placement")
    return PeerSlot(place, None, diskless, protocol)


def parse_topology(text: str, option: str = "--topology") -> tuple[PeerSlot, ...]:
    """``PLACEMENT[:diskless|:A|:B|:C][,...]``, one entry per peer of the primary."""
    where = f"{option} {text!r}"
    slots = tuple(_slot(entry, where, i) for i, entry in enumerate(text.split(","), 1))
    check_topology(slots, where)
    return slots


def check_topology(slots: tuple[PeerSlot, ...], where: str = "topology") -> None:
    """At least one peer holds the data (a resource of tie-breakers alone replicates nothing),
    and at most :data:`MAX_PEERS` peers."""
    if len(slots) > MAX_PEERS:
        raise ConfigError(f"{where}: {len(slots)} peers; DRBD 9 allows at most {MAX_PEERS} per resource")
    if not any(not slot.diskless for slot in slots):
        raise ConfigError(f"{where}: every peer is {DISKLESS}; at least one must hold a replica")
