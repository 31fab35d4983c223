"""How many acknowledged writes a replication mode may lose in a fault, and which term bounds it.

Synchronous modes (DRBD protocol C, md RAID1 without write-behind) acknowledge a write once it
is on both disks: they may lose none, whatever the fault (with flushes honoured).

DRBD protocol A acknowledges once the write is on the local disk and in the TCP send buffer.
When the primary dies, the peer lacks what was still in the send buffer (``sndbuf-size``; 0
means the kernel's autotuning, whose cap is ``tcp_wmem``'s maximum) plus what was on the wire
(the path's bandwidth × its RTT).  Worked example: sndbuf 4 MiB, 1 Gbit/s (125,000,000 B/s) at
10 ms RTT puts 1,250,000 B on the wire; 4,194,304 + 1,250,000 = 5,444,304 B, at 4 KiB a write
⌈5,444,304 / 4,096⌉ = 1,330 writes; the send buffer is the larger term, so it bounds.

DRBD protocol B acknowledges once the peer has received the write into memory: a single crash
loses nothing; a power cut of both loses what the peer held in memory unwritten, at most its
receive buffers (``max-buffers`` pages of 4 KiB).  Worked example: the default 2,048 buffers
hold 8,388,608 B, at 64 KiB a write 128 writes.  Protocol A on a power cut loses both terms.

md RAID1 with ``--write-behind N`` completes a write once the local leg has it while up to N
writes to the write-mostly leg are outstanding: a lost primary loses at most N writes (the
backlog count), whatever their size.  Worked example: ``--write-behind 256`` bounds at 256.

When the survivor is the primary (a crash of the peer) no mode loses anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from harness.durability.plan import Fault, Product

__all__ = ["DRBD_PAGE", "LossBound", "PathFigures", "ResourceConfig", "loss_bound"]

#: the size of one DRBD receive buffer (``max-buffers`` counts pages)
DRBD_PAGE: Final = 4096
#: faults after which the copy read back is the peer's (or the new primary's old peer's)
_PEER_SURVIVES: Final[frozenset[str]] = frozenset({"primary-crash", "resync-crash", "heal-crash", "new-primary-crash"})


@dataclass(frozen=True)
class ResourceConfig:
    """The replication settings the bound depends on."""

    product: Product
    protocol: str
    sndbuf_size: int = 0  # DRBD ``sndbuf-size``, bytes; 0: autotuned
    max_buffers: int = 2048  # DRBD ``max-buffers``
    write_behind: int = 256  # md ``--write-behind``


@dataclass(frozen=True)
class PathFigures:
    """The replication path: round trip, bandwidth, and the autotuned send buffer's cap."""

    rtt_s: float
    bandwidth_bytes_s: float
    tcp_wmem_max: int

    def __post_init__(self) -> None:
        if self.rtt_s < 0 or self.bandwidth_bytes_s < 0 or self.tcp_wmem_max < 0:
            raise ValueError(f"path figures must not be negative: {self}")


@dataclass(frozen=True)
class LossBound:
    """At most ``writes`` acknowledged writes lost; ``terms`` in bytes (or writes, for md's
    backlog) by name, ``binding`` the largest."""

    writes: int
    binding: str
    terms: tuple[tuple[str, float], ...] = ()

    def describe(self) -> str:
        if not self.terms:
            return f"0 writes ({self.binding})"
        parts = ", ".join(f"{name} {value:,.0f}" for name, value in self.terms)
        return f"{self.writes:,} writes, bound by the {self.binding} ({parts})"


def _writes(terms: list[tuple[str, float]], bs: int) -> LossBound:
    binding = max(terms, key=lambda t: t[1])[0]
    return LossBound(math.ceil(sum(v for _, v in terms) / bs), binding, tuple(terms))


def _drbd(config: ResourceConfig, path: PathFigures, fault: Fault, bs: int) -> LossBound:
    sndbuf = config.sndbuf_size or path.tcp_wmem_max
    window = [("send buffer", float(sndbuf)), ("wire", path.bandwidth_bytes_s * path.rtt_s)]
    buffers = [("peer receive buffers", float(config.max_buffers * DRBD_PAGE))]
    if config.protocol == "A" and fault in _PEER_SURVIVES:
        return _writes(window, bs)
    if config.protocol == "A" and fault == "power-cut":
        return _writes(window + buffers, bs)
    if config.protocol == "B" and fault == "power-cut":
        return _writes(buffers, bs)
    return LossBound(0, "single crash of protocol B" if config.protocol == "B" else "synchronous mode")


def loss_bound(config: ResourceConfig, path: PathFigures, fault: Fault, bs: int) -> LossBound:
    """The most acknowledged writes of ``bs`` bytes that ``fault`` may lose under ``config``."""
    if bs <= 0:
        raise ValueError(f"block size {bs} must be positive")
    if fault == "peer-crash":
        return LossBound(0, "surviving primary")
    if config.product == "drbd":
        if config.protocol not in ("A", "B", "C"):
            raise ValueError(f"drbd has no protocol {config.protocol!r}")
        return _drbd(config, path, fault, bs)
    if config.protocol == "write-behind":
        return LossBound(config.write_behind, "write-behind backlog", (("write-behind", float(config.write_behind)),))
    if config.protocol != "sync":
        raise ValueError(f"md-nbd has no mode {config.protocol!r}")
    return LossBound(0, "synchronous mode")
